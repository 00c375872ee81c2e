"""The streams a node receives, in hardware (PROTOCOL.md 10.7, 10.10, 10.11); twin of
golden/fabric/destination.py."""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.params import E2E_CONTROL_WINDOW, check_int, check_window
from rtl.fabric.e2e import Arrival
from rtl.fabric.reorder import Reorder
from rtl.fabric.store import slot_of
from rtl.link.framer import FRAME_BITS

SEQ = enc.E2E_SEQ_BITS


class Destination(wiring.Component):
    """Per stream from ``others`` other nodes, each with ``user_classes`` user streams and a
    control stream (numbered as golden ``received_streams``: other node ``o``'s class ``c`` at
    ``o * (user_classes + 1) + c``, its control stream at ``c = user_classes``): the sequence
    expected next and what the last ACK carried, in registers, and a reorder buffer
    (:class:`Reorder`, ``e2e_window`` slots, ``E2E_CONTROL_WINDOW`` for a control stream); and
    the stream draining its reorder buffer.

    The reorder buffers keep their frames in one memory, a region of its window's slots per
    stream: in a clock at most one frame is held (the frame engine's) and at most one is read
    (the next frame of the stream that may drain in the next clock), so one write port and one
    read port serve every stream, and the memory fills its block RAMs instead of taking a set
    of them per stream.

    Ports (in), one frame a clock as the frame engine hands it: ``arrive``, ``stream``, ``seq``,
    ``frame`` and ``message_ok`` (whether the frame is a well-formed control message, kept
    with it if it is held) (golden :meth:`arrive`: a user or control frame for this node; none while a
    stream drains, as the frame engine drains first), or ``drain`` (golden :meth:`drain`; only
    while ``draining``); ``control_ack``, ``control_ack_origin`` (golden :meth:`record`: the
    control engine acknowledges the control stream of that other node). Out, combinational:
    ``control_ack_expected`` (that stream's next expected, what the ACK carries); what the
    clock's frame does (golden ``Arrived``): ``duplicate``,
    ``ack_copy``, ``held``, ``copy``, ``refused``, ``delivered``, ``expected``, ``last``,
    ``ack_due``; ``stream_expected`` (the arriving stream's next expected before the frame:
    what an ACK of a duplicate carries); ``drain_frame`` and ``drain_message_ok`` (the frame a drain delivers, and its
    ``message_ok`` as it arrived). Out, registers: ``draining``,
    ``drain_stream``, ``draining_control`` (the draining stream is a control stream).

    A user stream's ACK, due on a delivery or for a duplicate, is recorded as it is found due;
    the control engine's record lands at the clock's edge, after this clock's frame read the
    old one. Latency: the outcome is combinational and every record lands at the edge; the
    reorder memory is read a clock ahead, at the next expected of the stream that may drain.
    Failure behaviour: a frame a window or more ahead is refused (``refused``); ValueError at
    construction for bad parameters.
    """

    def __init__(self, others: int, user_classes: int, e2e_window: int, ack_every: int):
        self._others = check_int("others", others, 1, enc.MAX_NODES - 1)
        self._classes = check_int("user_classes", user_classes, 1, enc.MAX_CLASSES - 1)
        self._window = check_window("e2e_window", e2e_window)
        self._every = check_int("ack_every", ack_every, 1, e2e_window)
        self._streams = others * (user_classes + 1)
        super().__init__(
            {
                "arrive": In(1),
                "stream": In(range(self._streams)),
                "seq": In(SEQ),
                "frame": In(FRAME_BITS),
                "message_ok": In(1),
                "drain": In(1),
                "control_ack": In(1),
                "control_ack_origin": In(range(others)),
                "control_ack_expected": Out(SEQ),
                "duplicate": Out(1),
                "ack_copy": Out(1),
                "held": Out(1),
                "copy": Out(1),
                "refused": Out(1),
                "delivered": Out(1),
                "expected": Out(SEQ),
                "stream_expected": Out(SEQ),
                "last": Out(1),
                "ack_due": Out(1),
                "drain_frame": Out(FRAME_BITS),
                "drain_message_ok": Out(1),
                "draining": Out(1),
                "drain_stream": Out(range(self._streams)),
                "draining_control": Out(1),
            }
        )

    def _control(self, k: int) -> bool:
        return k % (self._classes + 1) == self._classes

    def elaborate(self, platform):
        m = Module()
        S, C = self._streams, self._classes
        expected = Array(Signal(SEQ, name=f"expected{k}") for k in range(S))
        acked = Array(Signal(SEQ, name=f"acked{k}") for k in range(S))
        acked_valid = Array(Signal(name=f"acked_valid{k}") for k in range(S))
        is_user = Array(int(not self._control(k)) for k in range(S))
        windows = [E2E_CONTROL_WINDOW if self._control(k) else self._window for k in range(S)]
        buffers = []
        for k in range(S):
            buffer = Reorder(windows[k])
            m.submodules[f"reorder{k}"] = buffer
            buffers.append(buffer)
        holds = Array(b.holds for b in buffers)
        accepted = Array(b.accepted for b in buffers)

        # Each stream's region of the reorder memory, the largest windows first: every region
        # then starts at a multiple of its own size, so its address is its base ORed with the
        # slot, no adder.
        base, at = [0] * S, 0
        for k in sorted(range(S), key=lambda k: -windows[k]):
            base[k], at = at, at + windows[k]
        # ``no_rw_check``: the read never meets the write (below), so yosys need not guard it.
        frames = memory.Memory(shape=FRAME_BITS + 1, depth=at, init=[], attrs={"no_rw_check": 1})
        m.submodules.frames = frames
        write, read = frames.write_port(), frames.read_port(domain="sync")
        address_bits = bits_for(at - 1)

        def address(k, seq):
            return Const(base[k], address_bits) | slot_of(seq, windows[k])

        # The stream this clock's frame belongs to: the arriving one, or the draining one.
        arriving = self.arrive & ~self.drain
        now = Signal(range(S), name="now")
        m.d.comb += now.eq(Mux(self.drain, self.drain_stream, self.stream))
        m.submodules.arrival = arrival = Arrival(self._every)
        m.d.comb += [
            arrival.seq.eq(self.seq),
            arrival.expected.eq(expected[self.stream]),
            arrival.acked.eq(acked[self.stream]),
            arrival.acked_valid.eq(acked_valid[self.stream]),
        ]
        early = arriving & ~arrival.duplicate & (arrival.ahead != 0)
        after = Signal(SEQ, name="after")  # the expected after a delivery
        m.d.comb += after.eq(expected[now] + 1)
        # Whether a user stream's ACK is due after the delivery: the same arithmetic on the
        # moved expected.
        m.submodules.due = due = Arrival(self._every)
        m.d.comb += [
            due.expected.eq(after),
            due.acked.eq(acked[now]),
            due.acked_valid.eq(acked_valid[now]),
        ]
        m.d.comb += [
            self.duplicate.eq(arriving & arrival.duplicate),
            self.ack_copy.eq(self.duplicate & arrival.ack_copy),
            self.copy.eq(early & holds[self.stream]),
            self.held.eq(early & accepted[self.stream]),
            self.refused.eq(early & ~accepted[self.stream]),
            self.delivered.eq((arriving & ~arrival.duplicate & (arrival.ahead == 0)) | self.drain),
            self.expected.eq(after),
            self.stream_expected.eq(expected[self.stream]),
            # Asked of the buffer when the clock's frame is not held (below): no hold, no query.
            self.last.eq(~holds[now]),
            self.ack_due.eq(self.delivered & self.last & is_user[now] & due.ack_due),
            self.drain_frame.eq(read.data[:FRAME_BITS]),
            self.drain_message_ok.eq(read.data[FRAME_BITS]),
            self.draining_control.eq(~is_user[self.drain_stream]),
            self.control_ack_expected.eq(expected[self.control_ack_origin * (C + 1) + C]),
        ]
        for k, buffer in enumerate(buffers):
            mine = now == k
            m.d.comb += [
                buffer.expected.eq(expected[k]),
                # An early frame asks about itself (a copy?); any other about the next expected.
                buffer.query_seq.eq(Mux(early, self.seq, expected[k] + 1)),
                buffer.hold.eq(early & mine),
                buffer.hold_seq.eq(self.seq),
                buffer.take.eq(self.drain & mine),
                buffer.take_seq.eq(expected[k]),
            ]
        # Read a clock ahead, for the stream that may drain in the next clock: the one delivered
        # now (at its new expected), or else the one draining (at its expected). A clock that
        # holds a frame delivers none and no stream drains, so it reads the draining stream at
        # its expected, and it writes a slot 1 to window - 1 ahead of the expected of its own
        # stream (``accepted``), in that stream's region: never the slot it reads. The read
        # port need not see the clock's write, and no write meets a read.
        read_stream = Signal(range(S), name="read_stream")
        read_seq = Signal(SEQ, name="read_seq")
        m.d.comb += [
            read_stream.eq(Mux(self.delivered, now, self.drain_stream)),
            read_seq.eq(Mux(self.delivered, after, expected[self.drain_stream])),
            read.addr.eq(Array(address(k, read_seq) for k in range(S))[read_stream]),
            write.addr.eq(Array(address(k, self.seq) for k in range(S))[self.stream]),
            write.data.eq(Cat(self.frame, self.message_ok)),
            write.en.eq(self.held),
        ]

        with m.If(self.delivered):
            m.d.sync += [
                expected[now].eq(after),
                self.draining.eq(~self.last),
                self.drain_stream.eq(now),
            ]
        with m.If(self.ack_due):
            m.d.sync += [acked[now].eq(after), acked_valid[now].eq(1)]
        with m.If(self.ack_copy & is_user[self.stream]):
            m.d.sync += [acked[self.stream].eq(expected[self.stream]), acked_valid[self.stream].eq(1)]
        with m.If(self.control_ack):
            k = self.control_ack_origin * (C + 1) + C
            m.d.sync += [acked[k].eq(expected[k]), acked_valid[k].eq(1)]
        return m
