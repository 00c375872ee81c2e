"""What each class of a port takes in a cycle (PROTOCOL.md 10.7, 10.11); twin of
golden/fabric/choice.py."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.params import check_int


class PortChoice(wiring.Component):
    """The choice of golden :func:`choose` for one port, with the round robin's starts per
    user class in registers (reset 0, moved past each source chosen).

    Ports (in): ``control_open``, ``link_up`` (a bit each), ``ready`` (a bit per user class);
    per destination index ``d``, bit ``d``: ``hop_control``, ``hop_user``, ``own_control``,
    ``fwd_control``, and ``own_user[c]``, ``fwd_user[c]`` per user class. Out: ``control`` and ``user[c]``, each
    ``valid``, ``own`` (1: the own stream, 0: the forwarded queue) and ``dest`` (the index).

    ``dests``: the node's other nodes (1..255); ``user_classes``: 1..3. Latency: the choice is
    combinational; the starts are registered. Failure behaviour: none; ValueError at
    construction for bad parameters.
    """

    def __init__(self, dests: int, user_classes: int):
        self._dests = check_int("dests", dests, 1, (1 << enc.NODE_ID_BITS) - 1)
        self._classes = check_int("user_classes", user_classes, 1, enc.MAX_CLASSES - 1)
        pick = data.StructLayout({"valid": 1, "own": 1, "dest": bits_for(dests - 1)})
        super().__init__(
            {
                "control_open": In(1),
                "link_up": In(1),
                "ready": In(user_classes),
                "hop_control": In(dests),
                "hop_user": In(dests),
                "own_control": In(dests),
                "fwd_control": In(dests),
                "own_user": In(data.ArrayLayout(dests, user_classes)),
                "fwd_user": In(data.ArrayLayout(dests, user_classes)),
                "control": Out(pick),
                "user": Out(data.ArrayLayout(pick, user_classes)),
            }
        )

    def elaborate(self, platform):
        m = Module()
        dests, n = self._dests, 2 * self._dests
        # Control: own streams first, then forwarded frames, each in destination order.
        with m.If(self.control_open):
            first = True
            for own, waiting in ((1, self.own_control), (0, self.fwd_control)):
                for d in range(dests):
                    cond = self.hop_control[d] & waiting[d]
                    with m.If(cond) if first else m.Elif(cond):
                        m.d.comb += [self.control.valid.eq(1), self.control.own.eq(own), self.control.dest.eq(d)]
                    first = False
        for c in range(self._classes):
            turn = Signal(range(n), name=f"turn{c}")
            sources = Signal(n, name=f"sources{c}")
            m.d.comb += [
                sources[:dests].eq(self.fwd_user[c] & self.hop_user),
                sources[dests:].eq(self.own_user[c] & self.hop_user),
            ]
            out = self.user[c]
            # The i-th source from the start, for each i.
            order = []
            for i in range(n):
                at = Signal(range(2 * n), name=f"at{c}_{i}")
                j = Signal(range(n), name=f"j{c}_{i}")
                m.d.comb += [at.eq(turn + i), j.eq(Mux(at >= n, at - n, at))]
                order.append(j)
            with m.If(self.link_up & self.ready[c]):
                for i, j in enumerate(order):
                    with m.If(sources.bit_select(j, 1)) if i == 0 else m.Elif(sources.bit_select(j, 1)):
                        m.d.comb += [
                            out.valid.eq(1),
                            out.own.eq(j >= dests),
                            out.dest.eq(Mux(j >= dests, j - dests, j)),
                        ]
                        m.d.sync += turn.eq(Mux(j == n - 1, 0, j + 1))
        return m
