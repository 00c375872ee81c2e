"""A node's control engine in hardware: one action every other clock, taken in one and acted on
in the next (PROTOCOL.md 10.3-10.6, 10.10, 10.11); twin of golden/fabric/control_engine.py."""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.encoding import MsgType, Verdict
from golden.params import EVENT_MESSAGES, EVENTS_PER_PORT
from golden.topology import Topology, check_topology
from rtl.common import fields
from rtl.fabric.arbiter import Arbiter
from rtl.fabric.control_choice import Action, ControlEngineChoice
from rtl.fabric.control_origin import ControlOrigin
from rtl.fabric.events import EventQueue
from rtl.fabric.message import PAYLOAD, MessageBuilder
from rtl.fabric.port_records import PortRecords
from rtl.fabric.reports import ENTRY as REPORT_ENTRY
from rtl.fabric.reports import Reports
from rtl.fabric.routing import Router
from rtl.fabric.table import TopologyTable
from rtl.link.framer import FRAME_BITS

SEQ = enc.E2E_SEQ_BITS
S = enc.SLICE_BITS
MESSAGE_SLICES = 4  # slices 1-4 of a payload: a REPORT, or a VERDICT with two REPORTs (10.3)

# What the engine reads of a port at the start of the clock (golden ``PortState``; ``session``:
# its entries into UP queued as events, as a REPORT carries them).
PORT_STATE = data.StructLayout(
    {"up": 1, "hears": 1, "half": enc.HALF_STATE_BITS, "settle_ready": 1, "session": enc.SESSION_BITS}
)


class EventKind(enum.Enum, shape=2):
    PORT = 0
    NEVER_UP = 1
    MESSAGE = 2


def event_layout(ports: int, others: int) -> data.StructLayout:
    """An event in the queue: a port's change (``port``, ``up``), a port never UP, or a control
    message (``origin`` as a peer number, ``last`` of a drain; its slices wait in the message
    queue, :data:`MESSAGE`)."""
    return data.StructLayout({"kind": EventKind, "port": range(ports), "up": 1, "origin": range(others), "last": 1})


# A control message's slices 1-5, queued beside its event. Only the frame engine writes
# messages, at most one a clock, so their slices need no place in the event queue, whose every
# slot any of 2P + 1 writers may fill: there they were 320 of the 328 bits of each slot of
# node3's queue and its widest logic. At most EVENT_MESSAGES are queued: a message waits in its
# inbox while that many events are (10.11), so one enters only behind fewer than that.
MESSAGE = data.ArrayLayout(S, MESSAGE_SLICES + 1)


class ControlEngine(wiring.Component):
    """The control engine of node ``node_id`` of ``topology``. Peers are numbered as the node's
    streams are: node ``n`` is peer ``n`` below ``node_id`` and ``n - 1`` above it. Ports are
    numbered in link order.

    Ports (in), at the start of the clock: ``ports`` (a ``PORT_STATE`` per port); ``store_full``
    and ``next_seq`` (per peer, its control stream's store). Written in the clock, seen from the
    next (golden: what the node appends and flags after the engine's step): ``port_event`` and
    ``port_event_up`` (a bit per port: its state changed), ``never_up`` (a bit per port: found
    never to have come UP, and marked absent), ``message_event`` with ``message`` (slices 1-7),
    ``message_origin`` and ``message_last`` (the frame engine's control message), ``flag_flush``
    and ``flag_ack`` (a bit per peer: a slot freed while messages wait; a control stream due
    an ACK).

    Out: ``take`` (combinational, golden ``Done.taken``), the action taken in the clock, whose
    flag the clock clears or whose event (with its message) it takes off the queues; ``choice``
    (a register, golden ``Done.action``), the action taken in the last clock, which this clock
    acts on; combinational, what the action does (golden ``Done``): ``payload``, the message
    written, and per peer ``store_write`` with ``store_frame`` (into the store), ``waits``
    (parked for a slot) and ``superseded``; ``ack`` with ``ack_peer``; ``settle`` with
    ``settle_port`` and ``settle_half``; ``announced`` with ``announced_port`` and
    ``announced_up``; ``verdict`` with ``verdict_link``, ``verdict_code`` and
    ``verdict_subject`` (a node id; NONE for a healed suspicion); ``stale``; ``settle_skipped``;
    ``absent`` (a bit per port, as the clock's action leaves it, which the node's never-UP check
    reads). Out, registers: ``table_up`` (a bit per link), ``recorded_up`` and ``ever_up`` (a
    bit per port), ``events_count``, ``waiting`` (a bit per peer: messages wait for its window).

    Latency: an action is taken in one clock and acted on in the next, combinationally on the
    registered state of that clock; its records, the table and the flags move at the edge of the
    second. Nothing is taken in a clock that acts: the next action is chosen from the flags the
    last one set. The clock that takes reads only the flags and the queue's head, so the
    action's logic starts from registers. Failure behaviour: an overflow of the event queue or
    the message queue is ``overflow`` (the node sizes them so that it cannot happen); ValueError
    at construction for bad parameters.
    """

    def __init__(self, *, node_id: int, topology: Topology):
        self._topology = check_topology(topology)
        self._node = topology.check_node("node_id", node_id)
        self._links = topology.links_of(node_id)
        if not self._links:
            raise ValueError(f"node_id {node_id} has no link in the fabric")
        self._others = [n for n in range(topology.num_nodes) if n != node_id]
        P, L, O = len(self._links), len(topology.links), len(self._others)
        self._event = event_layout(P, O)
        self._depth = EVENTS_PER_PORT * P + EVENT_MESSAGES
        peer = range(O)
        choice_layout = data.StructLayout({"action": Action, "index": bits_for(max(P, L, O) - 1)})
        super().__init__(
            {
                "ports": In(data.ArrayLayout(PORT_STATE, P)),
                "store_full": In(O),
                "next_seq": In(data.ArrayLayout(SEQ, O)),
                "port_event": In(P),
                "port_event_up": In(P),
                "never_up": In(P),
                "message_event": In(1),
                "message": In(PAYLOAD),
                "message_origin": In(peer),
                "message_last": In(1),
                "flag_flush": In(O),
                "flag_ack": In(O),
                "take": Out(choice_layout),
                "choice": Out(choice_layout),
                "payload": Out(PAYLOAD),
                "store_write": Out(O),
                "store_frame": Out(data.ArrayLayout(FRAME_BITS, O)),
                "waits": Out(O),
                "superseded": Out(O),
                "ack": Out(1),
                "ack_peer": Out(peer),
                "settle": Out(1),
                "settle_port": Out(range(P)),
                "settle_half": Out(enc.HALF_STATE_BITS),
                "announced": Out(1),
                "announced_port": Out(range(P)),
                "announced_up": Out(1),
                "verdict": Out(1),
                "verdict_link": Out(range(L)),
                "verdict_code": Out(Verdict),
                "verdict_subject": Out(enc.NODE_ID_BITS),
                "stale": Out(1),
                "settle_skipped": Out(1),
                "absent": Out(P),
                "table_up": Out(L),
                "recorded_up": Out(P),
                "ever_up": Out(P),
                "events_count": Out(range(self._depth + 1)),
                "waiting": Out(O),
                "overflow": Out(1),
            }
        )

    def _peer(self, n: int) -> int:
        return self._others.index(n)

    def _mask(self, nodes) -> int:
        return sum(1 << self._peer(n) for n in nodes)

    def elaborate(self, platform):
        m = Module()
        t, me = self._topology, self._node
        P, L, O = len(self._links), len(t.links), len(self._others)
        port_of = {link: p for p, link in enumerate(self._links)}
        arbitrated = sum(1 << link for link in range(L) if me in t.arbiters(link))

        m.submodules.choice = choice = ControlEngineChoice(P, L, O + 1)
        m.submodules.events = events = EventQueue(width=self._event.size, depth=self._depth, writers=2 * P + 1)
        m.submodules.messages = messages = EventQueue(width=MESSAGE.size, depth=EVENT_MESSAGES, writers=1)
        m.submodules.records = records = PortRecords(ports=P)
        m.submodules.reports = reports = Reports(t)
        m.submodules.table = table = TopologyTable(L)
        m.submodules.arbiter = arbiter = Arbiter()
        m.submodules.builder = builder = MessageBuilder(node_id=me)
        origins = []
        for n in self._others:
            origin = ControlOrigin(node_id=me, dest=n, topology=t)
            m.submodules[f"origin{n}"] = origin
            origins.append(origin)

        # The flags, registers; what the clock's action clears and sets, and what the node sets.
        flags = {
            name: Signal(n, name=f"to_{name}")
            for name, n in (("announce", P), ("stand_in", P), ("arbitrate", L), ("flush", O), ("ack", O))
        }
        clear = {name: Signal(len(f), name=f"clear_{name}") for name, f in flags.items()}
        set_ = {name: Signal(len(f), name=f"set_{name}") for name, f in flags.items()}
        for name, f in flags.items():
            m.d.sync += f.eq((f & ~clear[name]) | set_[name])
        # The action taken in the last clock, with its event and message, which this clock acts on.
        taken = Signal.like(self.choice, name="taken")
        head = Signal(self._event, name="taken_event")
        message = Signal(MESSAGE, name="taken_message")
        m.d.comb += [
            choice.announce.eq(flags["announce"]),
            choice.stand_in.eq(flags["stand_in"]),
            choice.arbitrate.eq(flags["arbitrate"]),
            choice.flush.eq(flags["flush"]),
            choice.events.eq(events.head_valid),
            choice.ack_due.eq(flags["ack"]),
            self.choice.eq(taken),
        ]
        with m.If(taken.action == Action.NONE):
            m.d.comb += self.take.eq(choice.choice)
        take = self.take.action
        m.d.sync += taken.eq(self.take)
        with m.If(take == Action.EVENT):
            m.d.sync += [head.eq(events.head), message.eq(messages.head)]
        act, idx = taken.action, taken.index
        for name, action in (
            ("announce", Action.ANNOUNCE),
            ("stand_in", Action.STAND_IN),
            ("arbitrate", Action.ARBITRATE),
            ("flush", Action.FLUSH),
            ("ack", Action.ACK),
        ):
            m.d.comb += clear[name].eq(Mux(take == action, 1 << self.take.index, 0))

        # The events the node writes in the clock: port changes, ports never UP, the message.
        for p in range(P):
            port_ev, never_ev = Signal(self._event, name=f"port_ev{p}"), Signal(self._event, name=f"never_ev{p}")
            m.d.comb += [
                port_ev.kind.eq(EventKind.PORT),
                port_ev.port.eq(p),
                port_ev.up.eq(self.port_event_up[p]),
                never_ev.kind.eq(EventKind.NEVER_UP),
                never_ev.port.eq(p),
                events.write[p].eq(self.port_event[p]),
                events.write[P + p].eq(self.never_up[p]),
                events.data[p].eq(port_ev),
                events.data[P + p].eq(never_ev),
            ]
        msg_ev = Signal(self._event)
        m.d.comb += [
            msg_ev.kind.eq(EventKind.MESSAGE),
            msg_ev.origin.eq(self.message_origin),
            msg_ev.last.eq(self.message_last),
            events.write[2 * P].eq(self.message_event),
            events.data[2 * P].eq(msg_ev),
            events.pop.eq(take == Action.EVENT),
            messages.write[0].eq(self.message_event),
            messages.data[0].eq(self.message.as_value()[: MESSAGE.size]),
            self.events_count.eq(events.count),
            self.overflow.eq(events.overflow | messages.overflow),
        ]
        event = act == Action.EVENT
        report_head = fields.view(enc.REPORT_HEAD, message[0])  # a VERDICT's type and link sit alike
        is_message = event & (head.kind == EventKind.MESSAGE)
        m.d.comb += messages.pop.eq(
            (take == Action.EVENT) & (data.View(self._event, events.head).kind == EventKind.MESSAGE)
        )
        is_report = is_message & (report_head.type == MsgType.REPORT)
        is_verdict = is_message & (report_head.type == MsgType.VERDICT)

        # The ports' records: a port's change, a port never UP, a REPORT told the peer.
        hears = Signal(P)
        m.d.comb += [hears[p].eq(self.ports[p].hears) for p in range(P)]
        m.d.comb += [
            records.change.eq(event & (head.kind == EventKind.PORT)),
            records.change_port.eq(head.port),
            records.change_up.eq(head.up),
            records.hears.eq(hears),
            records.never_up.eq(event & (head.kind == EventKind.NEVER_UP)),
            records.never_up_port.eq(head.port),
            records.mark_absent.eq(self.never_up),
            self.absent.eq(records.now_absent),
            self.recorded_up.eq(records.up),
            self.ever_up.eq(records.ever_up),
            self.table_up.eq(table.up),
        ]
        link_of_port = Signal(range(L))
        for p, link in enumerate(self._links):
            with m.If(head.port == p):
                m.d.comb += [link_of_port.eq(link), records.table_up.eq(table.up[link])]

        m.d.comb += [
            reports.record.eq(is_report),
            reports.record_head.eq(message[0]),
            reports.record_half.eq(message[1][: enc.HALF_STATE_BITS]),
        ]

        # Which port (and link) the action is about: announced, standing in, or the REPORT of
        # my peer that my own REPORT answers.
        port = Signal(range(P))
        port_link = Signal(range(L))
        port_valid = Signal()  # a REPORT's link is one of mine
        with m.If(event):
            with m.If(head.kind == EventKind.MESSAGE):
                for p, link in enumerate(self._links):
                    with m.If(report_head.link == link):
                        m.d.comb += [port.eq(p), port_valid.eq(1)]
            with m.Else():
                m.d.comb += [port.eq(head.port), port_valid.eq(1)]
        with m.Elif((act == Action.ANNOUNCE) | (act == Action.STAND_IN)):
            m.d.comb += [port.eq(idx), port_valid.eq(1)]
        for p, link in enumerate(self._links):
            with m.If(port == p):
                m.d.comb += port_link.eq(link)

        # The routers of the nodes that arbitrate my links: my table leaves a path to them or not.
        arbiters_of = {link: t.arbiters(link) for link in self._links}
        reachable = {}
        for n in sorted({a for arbs in arbiters_of.values() for a in arbs}):
            router = Router(t, me)
            m.submodules[f"router{n}"] = router
            m.d.comb += [router.dest.eq(n), router.first_hop_up.eq(table.up), router.table_up.eq(table.up)]
            reachable[n] = router.found
        no_arbiter = Signal(P)
        for p, link in enumerate(self._links):
            m.d.comb += no_arbiter[p].eq(~Cat(reachable[a] for a in arbiters_of[link]).any())
        # The port's end stands in (10.5): its link held DOWN and no arbiter reachable.
        standing_in = Signal()
        m.d.comb += standing_in.eq(port_valid & ~table.up.bit_select(port_link, 1) & no_arbiter.bit_select(port, 1))

        # The action's payload and the peers it goes to.
        dests = Signal(O)
        write = Signal()
        peer_mask = _const_at(m, [self._mask([t.peer(link, me)]) for link in self._links], port, O, "peer_of_port")
        arbiter_mask = _const_at(
            m, [self._mask(arbiters_of[link]) for link in self._links], port, O, "arbiters_of_port"
        )
        tell = Signal()
        announce = Signal()  # the port's REPORT goes to its arbiters
        m.d.comb += [
            records.tell.eq(tell),
            records.tell_port.eq(port),
        ]
        half = Signal(enc.HALF_STATE_BITS)
        for p in range(P):
            with m.If(port == p):
                m.d.comb += half.eq(self.ports[p].half)
        # The REPORT of the port, as the clock's action leaves its records.
        report_payload = Signal(PAYLOAD)
        m.submodules.report_builder = rb = MessageBuilder(node_id=me)
        m.d.comb += [
            rb.verdict.eq(0),
            rb.link.eq(port_link),
            rb.up.eq(records.now_up.bit_select(port, 1)),
            rb.hears.eq(hears.bit_select(port, 1)),
            rb.incident.eq(records.now_incident[port]),
            rb.session.eq(records.now_session[port]),
            rb.half.eq(half),
            report_payload.eq(rb.payload),
        ]

        # Arbitrate: the link's entry, its ends' REPORTs, my ports to its ends.
        a_link = Signal(range(L))
        m.d.comb += [a_link.eq(idx), reports.link.eq(a_link)]
        arbitrate = act == Action.ARBITRATE
        entry = table.read
        ends = reports.ends
        for side, e in ((0, arbiter.x), (1, arbiter.y)):
            r = ends[side]
            m.d.comb += [
                e.reported.eq(r.valid),
                e.up.eq(r.valid & r.head.up),
                e.hears.eq(r.valid & r.head.hears),
                e.entangled.eq(r.valid & (r.head.session != 0)),
            ]
            for link in range(L):
                if me not in t.arbiters(link):
                    continue
                p = port_of[t.link_between(me, t.links[link][side])]
                with m.If(a_link == link):
                    m.d.comb += [e.port_up.eq(records.up[p]), e.heard.eq(hears[p])]
        m.d.comb += [
            arbiter.committed_up.eq(entry.up),
            arbiter.committed.eq(entry.verdict),
            arbiter.open_incident.eq(reports.open),
        ]
        i_arbitrate = Signal()  # this node arbitrates the link
        m.d.comb += i_arbitrate.eq((Const(arbitrated, L) >> a_link)[0])
        # An end standing in admits its link on the peer's REPORT of UP (golden ``_arbitrate``).
        stand_in_up = Signal()
        theirs = Signal(REPORT_ENTRY)
        for link in self._links:
            if me in t.arbiters(link):
                continue
            p = port_of[link]
            with m.If(a_link == link):
                m.d.comb += [
                    theirs.eq(ends[0 if t.peer(link, me) < me else 1]),
                    stand_in_up.eq(records.up[p] & no_arbiter[p]),
                ]
        own_link_up = arbitrate & ~i_arbitrate & ~entry.up & stand_in_up & theirs.valid & theirs.head.up
        decided = arbitrate & i_arbitrate & arbiter.write
        healed = arbitrate & i_arbitrate & arbiter.healed
        m.d.comb += [reports.close.eq(decided | healed), reports.close_link.eq(a_link)]
        subject = Signal(enc.NODE_ID_BITS)
        for link in range(L):
            with m.If(a_link == link):
                lo, hi = t.links[link]
                m.d.comb += subject.eq(Mux(arbiter.subject, hi, lo))
        verdict_count = Signal(enc.EPOCH_BITS)
        m.d.comb += verdict_count.eq(entry.count + 1)
        m.d.comb += [
            builder.verdict.eq(1),
            builder.link.eq(a_link),
            builder.code.eq(Mux(decided, arbiter.verdict, Verdict.LINK_UP)),
            builder.subject.eq(
                Mux(
                    decided & ((arbiter.verdict == Verdict.NODE_DOWN) | (arbiter.verdict == Verdict.UNREACHABLE)),
                    subject,
                    0,
                )
            ),
            builder.epoch.eq(verdict_count),
            builder.ends.eq(ends),
            builder.carry.eq(Mux(decided & (arbiter.verdict == Verdict.LINK_DOWN), arbiter.carry, 0)),
        ]

        # A verdict offered to the table: one this node decides, or a message's.
        own = decided | own_link_up
        offered = own | is_verdict
        verdict_payload = Signal(PAYLOAD)
        m.d.comb += verdict_payload.eq(Mux(own, builder.payload, Cat(message.as_value(), Const(0, 2 * S))))
        v = fields.view(enc.VERDICT_HEAD, verdict_payload[0])
        m.d.comb += [
            table.write_en.eq(offered),
            table.write.link.eq(v.link),
            table.write.verdict.eq(v.verdict),
            table.write.subject.eq(v.subject),
            table.write.count.eq(v.epoch),
            table.write.arbiter.eq(v.writer),
            # The entry read: the link arbitrated (a message's verdict needs none read; its link,
            # not the verdict's, keeps the read off the payload the read feeds).
            table.read_link.eq(Mux(arbitrate, a_link, report_head.link)),
        ]
        adopted = table.adopt
        m.d.comb += self.stale.eq(offered & ~adopted)
        v_down = (
            (v.verdict == Verdict.LINK_DOWN) | (v.verdict == Verdict.NODE_DOWN) | (v.verdict == Verdict.UNREACHABLE)
        )

        # A LINK_DOWN on my link: settle with the peer's half-state, if both are current (10.6).
        carried = [
            (fields.view(enc.REPORT_HEAD, verdict_payload[1 + 2 * i]), verdict_payload[2 + 2 * i]) for i in range(2)
        ]
        two = (verdict_payload[3] != 0) | (verdict_payload[4] != 0)
        v_port = Signal(range(P))
        v_mine = Signal()  # the verdict's link is one of my ports'
        mine_session, peer_session = Signal(enc.SESSION_BITS), Signal(enc.SESSION_BITS)
        peer_half = Signal(enc.HALF_STATE_BITS)
        for p, link in enumerate(self._links):
            with m.If(v.link == link):
                lower = me < t.peer(link, me)
                mine, theirs_r = carried[0 if lower else 1], carried[1 if lower else 0]
                m.d.comb += [
                    v_port.eq(p),
                    v_mine.eq(1),
                    mine_session.eq(mine[0].session),
                    peer_session.eq(theirs_r[0].session),
                    peer_half.eq(theirs_r[1]),
                ]
        state = self.ports[v_port]
        settling = adopted & (v.verdict == Verdict.LINK_DOWN) & v_mine & two
        current = ~state.up & (state.session == mine_session) & (mine_session == peer_session)
        m.d.comb += [
            self.settle.eq(settling & current & state.settle_ready),
            self.settle_port.eq(v_port),
            self.settle_half.eq(peer_half),
            self.settle_skipped.eq(settling & ~(current & state.settle_ready)),
        ]

        # What the action writes, and to whom.
        came_from = Signal(O)  # the peer a message's verdict came from, and its writer
        m.d.comb += came_from.eq(Mux(own, 0, (1 << head.origin) | self._peers_of(m, v.writer)))
        neighbours = self._mask(t.neighbours(me))
        with m.If(offered):
            m.d.comb += [write.eq(adopted), dests.eq(neighbours & ~came_from)]
        with m.Elif(is_report):
            # My peer's REPORT is answered with mine, once per change, if its end stands in.
            peer_report = Signal()
            for link in self._links:
                with m.If(report_head.link == link):
                    m.d.comb += peer_report.eq(report_head.writer == t.peer(link, me))
            m.d.comb += [tell.eq(peer_report), write.eq(records.told), dests.eq(peer_mask)]
        with m.Elif((act == Action.STAND_IN) & standing_in):
            m.d.comb += [tell.eq(1), write.eq(records.told), dests.eq(peer_mask)]
        with m.Elif(records.announce | (act == Action.ANNOUNCE) | (event & (head.kind == EventKind.NEVER_UP))):
            m.d.comb += [
                announce.eq(1),
                tell.eq(standing_in),
                write.eq(1),
                dests.eq(arbiter_mask | Mux(records.told, peer_mask, 0)),
            ]
        payload = Mux(offered, verdict_payload, report_payload)
        m.d.comb += self.payload.eq(payload)
        flushing = act == Action.FLUSH
        for i, origin in enumerate(origins):
            m.d.comb += [
                origin.write.eq(write & dests[i]),
                origin.payload.eq(payload),
                origin.flush.eq(flushing & (idx == i)),
                origin.store_full.eq(self.store_full[i]),
                origin.next_seq.eq(self.next_seq[i]),
                self.store_write[i].eq(origin.store_write),
                self.store_frame[i].eq(origin.store_frame),
                self.waits[i].eq(origin.write & ~origin.store_write),
                self.superseded[i].eq(origin.superseded),
                self.waiting[i].eq(origin.waiting != 0),
            ]
        with m.If(flushing):
            for i, origin in enumerate(origins):
                with m.If(idx == i):
                    m.d.comb += self.payload.eq(origin.store_frame[S:])

        # The events the node reports.
        m.d.comb += [
            self.announced.eq(announce),
            self.announced_port.eq(port),
            self.announced_up.eq(records.now_up.bit_select(port, 1)),
            self.verdict.eq(healed | adopted),
            self.verdict_link.eq(Mux(healed, a_link, v.link)),
            self.verdict_code.eq(Mux(healed, Verdict.NONE, v.verdict)),
            self.verdict_subject.eq(Mux(healed, 0, v.subject)),
            self.ack.eq(act == Action.ACK),
            self.ack_peer.eq(idx),
        ]

        # The flags the action sets, and those the node sets.
        msg_origin_bit = Signal(O)
        m.d.comb += msg_origin_bit.eq(1 << head.origin)
        flag_link = Signal(L)  # the link of the port standing in or the REPORT's link
        m.d.comb += flag_link.eq(1 << Mux(is_report, report_head.link, port_link))
        m.d.comb += [
            set_["announce"].eq(
                records.absent_new | Mux(adopted & v_mine & v_down & records.up.bit_select(v_port, 1), 1 << v_port, 0)
            ),
            set_["stand_in"].eq(Mux(adopted, (1 << P) - 1, 0)),
            set_["arbitrate"].eq(
                Mux(announce | records.arbitrate_all, arbitrated, 0)
                | Mux(is_report | (standing_in & ((act == Action.STAND_IN) | announce)), flag_link, 0)
            ),
            set_["flush"].eq(Cat(o.flag for o in origins) | self.flag_flush),
            set_["ack"].eq(Mux(is_message & head.last, msg_origin_bit, 0) | self.flag_ack),
        ]
        return m

    def _peers_of(self, m, node) -> Signal:
        """A one-hot peer mask of node id ``node`` (0 for this node or an id outside the fabric)."""
        mask = Signal(len(self._others), name="writer_mask")
        for i, n in enumerate(self._others):
            m.d.comb += mask[i].eq(node == n)
        return mask


def _const_at(m, values, index, width, name) -> Signal:
    """A signal of ``width`` bits that is ``values[index]``, for constants ``values``."""
    out = Signal(width, name=name)
    for i, value in enumerate(values):
        with m.If(index == i):
            m.d.comb += out.eq(value)
    return out
