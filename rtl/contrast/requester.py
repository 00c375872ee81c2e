"""The contrast link's requester and completer in hardware: twins of golden/contrast/requester.py
(docs/CONTRAST.md 6).

Both do in one cycle what their golden twins do in one ``PcieLink.step``, in the same order, as
combinational stages over a copy of the registers (as rtl/contrast/ltssm.py and rtl/contrast/dll.py): a simulation
model of the contrast link, not laid out for an FPGA clock.
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.pcie_params import COMPLETER_DELAY_BITS, PcieParams

_PAYLOAD = enc.FRAME_BYTES * 8
_NUMBER_BITS = 64  # a request's number: the first eight bytes of its payload
REQUESTER_COUNTERS = ("requests", "completions", "completion_timeouts", "unexpected_completions")


def _check(params):
    if not isinstance(params, PcieParams):
        raise ValueError(f"params must be a PcieParams, not {type(params).__name__}")


def request_payload(tag, number):
    """The payload of the request ``number`` on ``tag`` (golden ``request_payload``)."""
    pad = int.from_bytes(b"\x5a" * (enc.FRAME_BYTES - 9), "little")
    return Cat(number, tag, Const(pad, _PAYLOAD - _NUMBER_BITS - 8))


class Requester(wiring.Component):
    """Issues read requests and times them out (golden ``Requester``).

    Per tag: allocated, in flight, the request's number and the cycles left before its completion
    timeout; a ring of the tags waiting for the link, in request order.

    Ports: ``request`` (the user asks for a read this cycle; ``request_ok`` says a tag was free,
    ``request_tag`` which: the lowest free one), ``head_valid``/``head_tag``/``head_payload`` (the
    oldest queued request, combinational, including one asked for this cycle), ``pop`` (the data
    link layer took it: its timer starts), ``complete`` with ``complete_tag``/``complete_payload``
    (a COMPLETION arrived), ``completer_alive`` (the belief: falls at a completion timeout, rises
    at a completion) and the counters of golden ``Requester.counters``, wrapping at 2**16.
    Order in a cycle: request, pop, complete, the timers.
    """

    def __init__(self, params: PcieParams):
        _check(params)
        self.timeout = params.cycles("completion_timeout")
        self.tags = min(params.outstanding, 1 << enc.STP_REQ_TAG_BITS)
        tag = enc.STP_REQ_TAG_BITS
        members = {
            "request": In(1),
            "request_ok": Out(1),
            "request_tag": Out(tag),
            "head_valid": Out(1),
            "head_tag": Out(tag),
            "head_payload": Out(_PAYLOAD),
            "pop": In(1),
            "complete": In(1),
            "complete_tag": In(tag),
            "complete_payload": In(_PAYLOAD),
            "completer_alive": Out(1),
        }
        members.update({name: Out(enc.STATUS_COUNTER_BITS) for name in REQUESTER_COUNTERS})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        n, tag_bits = self.tags, enc.STP_REQ_TAG_BITS
        left_bits = bits_for(self.timeout)

        def regs(prefix, width, init=0):
            return [Signal(width, init=init, name=f"{prefix}{t}") for t in range(n)]

        busy, flying, left = regs("busy", 1), regs("flying", 1), regs("left", left_bits)
        number = regs("number", _NUMBER_BITS)
        queue = regs("queue", tag_bits)
        q_head, q_count = Signal(range(n), name="q_head"), Signal(range(n + 1), name="q_count")
        numbers = Signal(_NUMBER_BITS, name="numbers")
        alive = Signal(init=1, name="alive")
        counters = {name: Signal(enc.STATUS_COUNTER_BITS, name=name) for name in REQUESTER_COUNTERS}

        def ring(index):
            return Mux(index >= n, index - n, index)[: len(q_head)] if n > 1 else Const(0, len(q_head))

        # --- Request: the lowest free tag --------------------------------------------------------
        free = Signal(name="free_tag")
        tag = Signal(tag_bits, name="free_index")
        for t in reversed(range(n)):
            with m.If(~busy[t]):
                m.d.comb += [free.eq(1), tag.eq(t)]
        m.d.comb += [self.request_ok.eq(free), self.request_tag.eq(tag)]
        granted = Signal(name="granted")
        m.d.comb += granted.eq(self.request & free)
        busy1 = [Signal(name=f"busy_rq{t}") for t in range(n)]
        number1 = [Signal(_NUMBER_BITS, name=f"number_rq{t}") for t in range(n)]
        for t in range(n):
            hit = granted & (tag == t)
            m.d.comb += [busy1[t].eq(busy[t] | hit), number1[t].eq(Mux(hit, numbers, number[t]))]
        queue1 = [Signal(tag_bits, name=f"queue_rq{i}") for i in range(n)]
        tail = ring(q_head + q_count)
        for i in range(n):
            m.d.comb += queue1[i].eq(Mux(granted & (tail == i), tag, queue[i]))
        count1 = Signal.like(q_count, name="q_count_rq")
        m.d.comb += count1.eq(q_count + granted)

        # --- Pop: the data link layer takes the oldest queued request ---------------------------
        head = Signal(tag_bits, name="head")
        m.d.comb += [
            head.eq(Array(queue1)[q_head]),
            self.head_valid.eq(count1 != 0),
            self.head_tag.eq(head),
            self.head_payload.eq(request_payload(head, Array(number1)[head])),
        ]
        popped = Signal(name="popped")
        m.d.comb += popped.eq(self.pop & (count1 != 0))
        flying2 = [Signal(name=f"flying_pop{t}") for t in range(n)]
        left2 = [Signal(left_bits, name=f"left_pop{t}") for t in range(n)]
        for t in range(n):
            hit = popped & (head == t)
            m.d.comb += [flying2[t].eq(flying[t] | hit), left2[t].eq(Mux(hit, self.timeout, left[t]))]

        # --- Complete: a completion must answer the request in flight on its tag ----------------
        ctag = self.complete_tag
        slot = ctag[: max(1, bits_for(n - 1))]  # the tag's entry, when ``ctag < n``
        known = Signal(name="complete_known")
        m.d.comb += known.eq(
            (ctag < n) & Array(flying2)[slot] & (self.complete_payload == request_payload(ctag, Array(number1)[slot]))
        )
        good = Signal(name="complete_good")
        m.d.comb += good.eq(self.complete & known)
        busy3 = [Signal(name=f"busy_cpl{t}") for t in range(n)]
        flying3 = [Signal(name=f"flying_cpl{t}") for t in range(n)]
        for t in range(n):
            hit = good & (ctag == t)
            m.d.comb += [busy3[t].eq(busy1[t] & ~hit), flying3[t].eq(flying2[t] & ~hit)]

        # --- Timers --------------------------------------------------------------------------------
        expired = [Signal(name=f"expired{t}") for t in range(n)]
        for t in range(n):
            m.d.comb += expired[t].eq(flying3[t] & (left2[t] == 1))
            m.d.sync += [
                left[t].eq(Mux(flying3[t], left2[t] - 1, left2[t])),
                flying[t].eq(flying3[t] & ~expired[t]),
                busy[t].eq(busy3[t] & ~expired[t]),
                number[t].eq(number1[t]),
            ]
        timeouts = Signal(range(n + 1), name="timeouts")
        m.d.comb += timeouts.eq(sum(expired))
        for i in range(n):
            m.d.sync += queue[i].eq(queue1[i])
        m.d.sync += [
            q_head.eq(Mux(popped, ring(q_head + 1), q_head)),
            q_count.eq(count1 - popped),
            numbers.eq(numbers + granted),
            alive.eq(Mux(timeouts != 0, 0, Mux(good, 1, alive))),
            counters["requests"].eq(counters["requests"] + granted),
            counters["completions"].eq(counters["completions"] + good),
            counters["unexpected_completions"].eq(counters["unexpected_completions"] + (self.complete & ~known)),
            counters["completion_timeouts"].eq(counters["completion_timeouts"] + timeouts),
        ]
        m.d.comb += [self.completer_alive.eq(alive)]
        m.d.comb += [getattr(self, name).eq(counters[name]) for name in REQUESTER_COUNTERS]
        return m


class Completer(wiring.Component):
    """Answers each read request ``delay`` cycles after it arrived, in order (golden
    ``Completer``): a ring of ``outstanding`` entries (ready cycle, tag, payload) in a memory.

    Ports: ``delay`` (in, reset value ``completer_delay``: a simulation may make the completer
    slower or faster at any time; a request takes the value of the cycle it arrives in),
    ``head_ready``/``head_tag``/``head_payload`` (the oldest answer, due now), ``pop`` (the
    data link layer took it), ``push`` with ``push_tag``/``push_payload`` (a REQUEST arrived; one
    beyond ``outstanding`` is dropped and counted in ``dropped``), ``reset`` (DL_Down: the
    answers not yet sent are dropped, this cycle's arrival too). Order in a cycle: pop, push,
    reset.
    """

    def __init__(self, params: PcieParams):
        _check(params)
        self.capacity = params.outstanding
        tag = enc.STP_REQ_TAG_BITS
        super().__init__(
            {
                "delay": In(COMPLETER_DELAY_BITS, init=params.completer_delay),
                "head_ready": Out(1),
                "head_tag": Out(tag),
                "head_payload": Out(_PAYLOAD),
                "pop": In(1),
                "push": In(1),
                "push_tag": In(tag),
                "push_payload": In(_PAYLOAD),
                "reset": In(1),
                "dropped": Out(enc.STATUS_COUNTER_BITS),
            }
        )

    def elaborate(self, platform):
        m = Module()
        cap = self.capacity
        now = Signal(_NUMBER_BITS, name="now")
        m.d.sync += now.eq(now + 1)
        ready_bits, tag_bits = _NUMBER_BITS, enc.STP_REQ_TAG_BITS
        m.submodules.pending = mem = Memory(shape=ready_bits + tag_bits + _PAYLOAD, depth=cap, init=[])
        read, write = mem.read_port(domain="comb"), mem.write_port()
        head, count = Signal(range(cap), name="head"), Signal(range(cap + 1), name="count")

        def ring(index):
            return Mux(index >= cap, index - cap, index)[: len(head)] if cap > 1 else Const(0, len(head))

        entry = read.data
        m.d.comb += [
            read.addr.eq(head),
            self.head_ready.eq((count != 0) & (entry[:ready_bits] <= now)),
            self.head_tag.eq(entry[ready_bits : ready_bits + tag_bits]),
            self.head_payload.eq(entry[ready_bits + tag_bits :]),
        ]
        popped = Signal(name="popped")
        m.d.comb += popped.eq(self.pop & self.head_ready)
        head1, count1 = Signal.like(head, name="head_pop"), Signal.like(count, name="count_pop")
        m.d.comb += [head1.eq(Mux(popped, ring(head + 1), head)), count1.eq(count - popped)]
        room = Signal(name="room")
        m.d.comb += room.eq(count1 < cap)
        m.d.comb += [
            write.addr.eq(ring(head1 + count1)),
            write.en.eq(self.push & room & ~self.reset),
            write.data.eq(Cat((now + self.delay)[:ready_bits], self.push_tag, self.push_payload)),
        ]
        dropped = Signal(enc.STATUS_COUNTER_BITS, name="dropped_count")
        m.d.sync += dropped.eq(dropped + (self.push & ~room))
        with m.If(self.reset):
            m.d.sync += [head.eq(0), count.eq(0)]
        with m.Else():
            m.d.sync += [head.eq(head1), count.eq(count1 + (self.push & room))]
        m.d.comb += self.dropped.eq(dropped)
        return m
