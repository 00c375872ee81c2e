"""The arbiter's rules in hardware (PROTOCOL.md 10.5); twin of golden/fabric/arbiter.py."""

from amaranth.hdl import Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.encoding import Verdict

# What the arbiter knows of one end of the link (golden ``EndView``): ``reported`` it holds a
# REPORT of the end; ``up``, ``hears``, ``entangled`` (session not 0) that report's fields;
# ``port_up`` its own port to the end is UP; ``heard`` that port heard a well-formed word lately.
END_VIEW = data.StructLayout(
    {"reported": 1, "up": 1, "hears": 1, "entangled": 1, "port_up": 1, "heard": 1},
)


class Arbiter(wiring.Component):
    """The first rule of PROTOCOL.md 10.5 that holds for a link XY.

    Ports (combinational): ``committed_up`` (in: the table holds the link UP), ``committed`` (in:
    the verdict that set the entry), ``x``, ``y`` (in, ``END_VIEW``), ``open_incident`` (in: a
    report of leaving UP is pending); ``write`` (out: a verdict is to be written), ``verdict``,
    ``subject`` (out: 0 for X, 1 for Y, read for NODE_DOWN and UNREACHABLE), ``carry`` (out:
    bit 0 the LINK_DOWN carries X's report, bit 1 Y's), ``healed`` (out: the suspicion healed;
    nothing is written). The node numbers and sends the verdict.

    Latency: none (logic only). Failure behaviour: none; a ``committed`` code that is not a
    verdict reads as a DOWN entry set by neither NODE_DOWN nor UNREACHABLE.
    """

    def __init__(self):
        super().__init__(
            {
                "committed_up": In(1),
                "committed": In(Verdict),
                "x": In(END_VIEW),
                "y": In(END_VIEW),
                "open_incident": In(1),
                "write": Out(1),
                "verdict": Out(Verdict),
                "subject": Out(1),
                "carry": Out(2),
                "healed": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        x, y = self.x, self.y
        left_x, left_y = x.reported & ~x.up, y.reported & ~y.up
        # A port that never entangled reported leaving UP and hearing nothing: its line is dead.
        unheard_x = left_x & ~x.entangled & ~x.hears
        unheard_y = left_y & ~y.entangled & ~y.hears
        # X left, and Y is cut off from me without a report of its own (and the mirror case).
        cut_y = left_x & ~y.port_up & ~left_y
        cut_x = left_y & ~x.port_up & ~left_x

        def write(verdict, subject=0, carry=0):
            m.d.comb += [
                self.write.eq(1),
                self.verdict.eq(verdict),
                self.subject.eq(subject),
                self.carry.eq(carry),
            ]

        with m.If(self.committed_up):
            with m.If(left_x & left_y):
                write(Verdict.LINK_DOWN, carry=0b11)
            with m.Elif(cut_y):
                write(Verdict.UNREACHABLE, subject=1)
                with m.If(~x.hears & ~y.heard):
                    m.d.comb += self.verdict.eq(Verdict.NODE_DOWN)
            with m.Elif(cut_x):
                write(Verdict.UNREACHABLE, subject=0)
                with m.If(~y.hears & ~x.heard):
                    m.d.comb += self.verdict.eq(Verdict.NODE_DOWN)
            with m.Elif(unheard_x & y.port_up & x.port_up):
                write(Verdict.LINK_DOWN, carry=0b01)
            with m.Elif(unheard_y & x.port_up & y.port_up):
                write(Verdict.LINK_DOWN, carry=0b10)
            with m.Elif(self.open_incident & ~left_x & ~left_y):
                m.d.comb += self.healed.eq(1)
        with m.Else():
            by_node = (self.committed == Verdict.NODE_DOWN) | (self.committed == Verdict.UNREACHABLE)
            with m.If(by_node & left_x & left_y):
                write(Verdict.LINK_DOWN, carry=0b11)
            with m.Elif(x.reported & x.up & y.reported & y.up):
                write(Verdict.LINK_UP)
        return m
