"""What a node's frame engine handles in a cycle (PROTOCOL.md 10.11, step 3); twin of
golden/fabric/frame_choice.py."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.params import check_int


class Source(enum.Enum, shape=3):
    NONE = 0
    DRAIN = 1
    CONTROL = 2
    OFFER = 3
    USER = 4


class FrameEngineChoice(wiring.Component):
    """The choice of golden :func:`pick` for a node of ``ports`` ports and ``user_classes`` user
    classes, with the starts of the control and the user inboxes' turns in registers (reset 0,
    moved past each inbox taken).

    Ports (in): ``draining``, ``drain_waits`` (a bit each); ``control_valid``,
    ``control_waits``, ``offer_valid`` (a bit per port, in link order);
    ``user_valid``, ``user_waits`` (a bit per user inbox: port ``p``'s class ``c`` at
    ``p * user_classes + c``); ``enable`` (high by default: low, the engine takes nothing this
    clock, and the choice is none). Out: ``choice``, the source (``Source``) and its ``index``
    (the port, or the user inbox).

    ``ports``: 1..255; ``user_classes``: 1..3. Latency: the choice is combinational; the starts
    are registered. Failure behaviour: none; ValueError at construction for bad parameters.
    """

    def __init__(self, ports: int, user_classes: int):
        self._ports = check_int("ports", ports, 1, (1 << enc.NODE_ID_BITS) - 1)
        self._classes = check_int("user_classes", user_classes, 1, enc.MAX_CLASSES - 1)
        users = ports * user_classes
        self._users = users
        super().__init__(
            {
                "draining": In(1),
                "drain_waits": In(1),
                "control_valid": In(ports),
                "control_waits": In(ports),
                "offer_valid": In(ports),
                "user_valid": In(users),
                "user_waits": In(users),
                "enable": In(1, init=1),
                "choice": Out(data.StructLayout({"source": Source, "index": bits_for(users - 1)})),
            }
        )

    @staticmethod
    def _in_turn(m, name, ready, n):
        """The first bit of ``ready`` set from the registered start on, round: (found, index,
        the start register, which the caller moves past the inbox it takes)."""
        start = Signal(range(n), name=f"{name}_turn")
        found, index = Signal(name=f"{name}_found"), Signal(range(n), name=f"{name}_index")
        order = []  # the i-th inbox from the start, for each i
        for i in range(n):
            at = Signal(range(2 * n), name=f"{name}_at{i}")
            j = Signal(range(n), name=f"{name}_j{i}")
            m.d.comb += [at.eq(start + i), j.eq(Mux(at >= n, at - n, at))]
            order.append(j)
        for i, j in enumerate(order):
            cond = ready.bit_select(j, 1)
            with m.If(cond) if i == 0 else m.Elif(cond):
                m.d.comb += [found.eq(1), index.eq(j)]
        return found, index, start

    def elaborate(self, platform):
        m = Module()
        P, U = self._ports, self._users
        control_ready = Signal(P)
        user_ready = Signal(U)
        m.d.comb += [
            control_ready.eq(self.control_valid & ~self.control_waits),
            user_ready.eq(self.user_valid & ~self.user_waits),
        ]
        c_found, c_index, c_start = self._in_turn(m, "control", control_ready, P)
        u_found, u_index, u_start = self._in_turn(m, "user", user_ready, U)
        out = self.choice
        with m.If(~self.enable):
            pass
        with m.Elif(self.draining):
            m.d.comb += out.source.eq(Mux(self.drain_waits, Source.NONE, Source.DRAIN))
        with m.Elif(c_found):
            m.d.comb += [out.source.eq(Source.CONTROL), out.index.eq(c_index)]
            m.d.sync += c_start.eq(Mux(c_index == P - 1, 0, c_index + 1))
        with m.Elif(self.offer_valid.any()):
            m.d.comb += out.source.eq(Source.OFFER)
            for p in reversed(range(P)):  # the first port in link order wins
                with m.If(self.offer_valid[p]):
                    m.d.comb += out.index.eq(p)
        with m.Elif(u_found):
            m.d.comb += [out.source.eq(Source.USER), out.index.eq(u_index)]
            m.d.sync += u_start.eq(Mux(u_index == U - 1, 0, u_index + 1))
        return m
