"""What a node's control engine does in a cycle (PROTOCOL.md 10.11, step 2); twin of
golden/fabric/control_choice.py."""

from amaranth.hdl import Module
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.params import check_int


class Action(enum.Enum, shape=3):
    NONE = 0
    ANNOUNCE = 1
    STAND_IN = 2
    ARBITRATE = 3
    FLUSH = 4
    EVENT = 5
    ACK = 6


class ControlEngineChoice(wiring.Component):
    """The choice of golden :func:`pick_action` for a node of ``ports`` ports in a fabric of
    ``links`` links and ``nodes`` nodes.

    Ports (in): ``announce``, ``stand_in`` (a bit per port, in link order); ``arbitrate`` (a bit
    per link); ``flush``, ``ack_due`` (a bit per other node, in id order: its waiting control
    messages may take a freed slot; its control stream is due an ACK); ``events`` (an event is
    queued). Out: ``choice``, the action (``Action``) and its ``index`` (the port, link or other
    node; 0 for an event or none).

    ``ports``: 1..255; ``links``: ``ports``..256; ``nodes``: 2..256. Latency: combinational (the
    flags and the event queue it reads are registers of the node). Failure behaviour: none;
    ValueError at construction for bad parameters.
    """

    def __init__(self, ports: int, links: int, nodes: int):
        self._ports = check_int("ports", ports, 1, (1 << enc.NODE_ID_BITS) - 1)
        self._links = check_int("links", links, ports, 1 << enc.LINK_ID_BITS)
        self._nodes = check_int("nodes", nodes, 2, enc.MAX_NODES)
        others = nodes - 1
        super().__init__(
            {
                "announce": In(ports),
                "stand_in": In(ports),
                "arbitrate": In(links),
                "flush": In(others),
                "events": In(1),
                "ack_due": In(others),
                "choice": Out(data.StructLayout({"action": Action, "index": bits_for(max(ports, links, others) - 1)})),
            }
        )

    @staticmethod
    def _lowest(m, out, bits, n):
        """Drive ``out.index`` with the lowest set bit of ``bits`` (``n`` wide)."""
        for i in reversed(range(n)):  # the lowest index is the last assignment, and wins
            with m.If(bits[i]):
                m.d.comb += out.index.eq(i)

    def elaborate(self, platform):
        m = Module()
        out = self.choice
        groups = [
            (Action.ANNOUNCE, self.announce, self._ports),
            (Action.STAND_IN, self.stand_in, self._ports),
            (Action.ARBITRATE, self.arbitrate, self._links),
            (Action.FLUSH, self.flush, self._nodes - 1),
        ]
        for i, (action, bits, n) in enumerate(groups):
            with m.If(bits.any()) if i == 0 else m.Elif(bits.any()):
                m.d.comb += out.action.eq(action)
                self._lowest(m, out, bits, n)
        with m.Elif(self.events):
            m.d.comb += out.action.eq(Action.EVENT)
        with m.Elif(self.ack_due.any()):
            m.d.comb += out.action.eq(Action.ACK)
            self._lowest(m, out, self.ack_due, self._nodes - 1)
        return m
