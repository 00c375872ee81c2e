"""What a node's control engine keeps about each of its ports, in hardware (PROTOCOL.md 10.3,
10.5); twin of golden/fabric/port_records.py."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.params import check_int

SESSION_MAX = (1 << enc.SESSION_BITS) - 1


class PortRecords(wiring.Component):
    """Per port of ``ports``: the state the control engine last handled, ever UP, reported
    absent, and the incident and session counts as a REPORT carries them (wrapped to their
    fields; the session 0 only before the first entry, golden ``wire_session``); and the REPORT
    last told the peer.

    Ports (in), one control action a clock: ``change``, ``change_port``, ``change_up``,
    ``table_up`` (golden :meth:`changed`; the table holds that port's link UP), with ``hears``
    (a bit per port: it hears its peer); ``never_up``, ``never_up_port`` (golden
    :meth:`never_up`); ``tell``, ``tell_port`` (golden :meth:`tell`, on the port's REPORT as
    this clock leaves it); and, from the port events, ``mark_absent`` (a bit per port reported
    absent as it trained too long).

    Out, registers: ``up``, ``ever_up``, ``absent`` (a bit per port), ``incident``,
    ``session`` (per port). Out, combinational: what this clock's action leaves, ``now_up``,
    ``now_incident``, ``now_session`` (what a REPORT built in the clock carries) and
    ``now_absent`` (what the port events read); ``announce``, ``absent_new`` (a bit per port)
    and ``arbitrate_all`` (golden ``Change``); ``told`` (the tell is news: its REPORT goes).

    Latency: the action's results are combinational, its records land at the edge. Failure
    behaviour: none; ValueError at construction for a bad ``ports``.
    """

    def __init__(self, *, ports: int):
        self._ports = check_int("ports", ports, 1, 1 << enc.LINK_ID_BITS)
        port = range(ports)
        incident = data.ArrayLayout(enc.INCIDENT_BITS, ports)
        session = data.ArrayLayout(enc.SESSION_BITS, ports)
        super().__init__(
            {
                "change": In(1),
                "change_port": In(port),
                "change_up": In(1),
                "table_up": In(1),
                "hears": In(ports),
                "never_up": In(1),
                "never_up_port": In(port),
                "tell": In(1),
                "tell_port": In(port),
                "mark_absent": In(ports),
                "up": Out(ports),
                "ever_up": Out(ports),
                "absent": Out(ports),
                "incident": Out(incident),
                "session": Out(session),
                "now_up": Out(ports),
                "now_absent": Out(ports),
                "now_incident": Out(incident),
                "now_session": Out(session),
                "announce": Out(1),
                "absent_new": Out(ports),
                "arbitrate_all": Out(1),
                "told": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        P = self._ports
        entering = self.change & self.change_up
        first = Signal()  # the port's first entry into UP
        m.d.comb += first.eq(entering & ~self.ever_up.bit_select(self.change_port, 1))
        # At a first entry: every other port that never came UP, was not reported absent and
        # hears nothing is reported absent now.
        now_ever = Signal(P)
        m.d.comb += self.absent_new.eq(Mux(first, ~now_ever & ~self.absent & ~self.hears, 0))
        quiet = first & ~self.absent.bit_select(self.change_port, 1) & self.table_up
        m.d.comb += [
            self.announce.eq(self.change & ~quiet),
            self.arbitrate_all.eq(quiet),
        ]
        for p in range(P):
            this = self.change_port == p
            leaving = self.change & ~self.change_up & this
            hit = self.absent_new[p] | (self.never_up & (self.never_up_port == p)) | leaving
            m.d.comb += [
                self.now_up[p].eq(Mux(self.change & this, self.change_up, self.up[p])),
                now_ever[p].eq(self.ever_up[p] | (entering & this)),
                self.now_incident[p].eq(self.incident[p] + hit),
                self.now_session[p].eq(
                    Mux(
                        entering & this,
                        Mux(self.session[p] == SESSION_MAX, 1, self.session[p] + 1),
                        self.session[p],
                    )
                ),
            ]
        m.d.comb += self.now_absent.eq(self.absent | self.absent_new)
        m.d.sync += [
            self.up.eq(self.now_up),
            self.ever_up.eq(now_ever),
            self.absent.eq(self.now_absent | self.mark_absent),
            self.incident.eq(self.now_incident),
            self.session.eq(self.now_session),
        ]

        # The REPORT last told each port's peer: its up, incident and session, and whether any.
        key_layout = data.StructLayout(
            {"valid": 1, "up": 1, "incident": enc.INCIDENT_BITS, "session": enc.SESSION_BITS}
        )
        told = [Signal(key_layout, name=f"told{p}") for p in range(P)]
        for p in range(P):
            with m.If(self.tell_port == p):
                key = told[p]
                news = (
                    ~key.valid
                    | (key.up != self.now_up[p])
                    | (key.incident != self.now_incident[p])
                    | (key.session != self.now_session[p])
                )
                m.d.comb += self.told.eq(self.tell & news)
                with m.If(self.tell & news):
                    m.d.sync += [
                        key.valid.eq(1),
                        key.up.eq(self.now_up[p]),
                        key.incident.eq(self.now_incident[p]),
                        key.session.eq(self.now_session[p]),
                    ]
        return m
