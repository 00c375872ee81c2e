"""A node's control engine: one action every other clock (PROTOCOL.md 10.3-10.6, 10.10, 10.11).

The engine keeps the node's topology table, its ports' records (``port_records.py``), the
REPORTs it holds as an arbiter (``reports.py``), the events queued for it (``events.py``), the
flags of the work an event set in motion, and its control streams' origins (``control_origin.py``,
each numbering the frames its stream's store takes, which the node sends from). From what the
node shows it at the start of the clock (:class:`Sources`), it takes the action
:func:`golden.fabric.control_choice.pick_action` chooses (clearing its flag, or taking its event
off the queue), and in the next clock acts on it, from the state at the start of that clock, and
says what the node does about it (:class:`Done`): the node writes the frames into the stores and
asks the settle in the clock after that, from registers. It takes nothing in the clock it acts, so
every action is chosen after everything the one before set in motion:

* **announce** a port: its REPORT to the link's arbiters (10.3), the stand-in check below, and
  the arbiter rules of every link this node arbitrates flagged (its own port changed);
* **stand in** for a port whose link the table holds DOWN and whose arbiters the table leaves no
  path to (10.5): its REPORT to the peer, once per change, and the link flagged, so that the
  ends admit it again on each other's REPORT;
* **arbitrate** a link: the rules of 10.5 on the latest REPORT of each end and this node's own
  ports; a verdict is adopted, and a healed suspicion closes the incident;
* **flush** a control stream: its oldest waiting message takes a slot an ACK freed (10.10);
* the oldest **event**: a port's change (``PortRecords.changed``), a port found never to have come
  UP, or a control message: a REPORT is recorded (and an end standing in answers its peer's
  with its own), a VERDICT adopted;
* else a control stream's **ACK**, as far as its destination has delivered.

A verdict adopted (10.4, 10.6) commits the table, is passed on to the neighbours but its writer
and the one it came from, flags every port for the stand-in check, flags a port that is UP on a
link now DOWN to be announced, and, a LINK_DOWN on a link of mine, asks the port to settle
with the peer's half-state the verdict carries, when both half-states are current.

Every message an action writes is one payload, to one or more destinations (the arbiters and
the peer get the same REPORT; the neighbours the same VERDICT): one write per store a clock.
Failure behaviour: an event beyond the queue's depth raises RuntimeError (the node sizes the
queue so that it cannot happen); a malformed message never reaches the engine (the frame engine
drops it).
"""

from dataclasses import dataclass, field

from golden.encoding import NodeKind, Verdict
from golden.fabric.arbiter import EndView, decide
from golden.fabric.control_choice import ControlView, pick_action
from golden.fabric.control_origin import ControlOrigin
from golden.fabric.destination import Destination
from golden.fabric.events import EventQueue
from golden.fabric.message import Report, VerdictMsg, message_payload, wire_session
from golden.fabric.port_records import PortRecords
from golden.fabric.reports import Reports
from golden.fabric.routing import next_hop
from golden.fabric.table import Table
from golden.fabric.waiting import WaitingMessages
from golden.params import EVENT_MESSAGES, EVENTS_PER_PORT
from golden.topology import Topology


@dataclass(frozen=True)
class PortState:
    """A port as the control engine reads it at the start of the clock: ``up`` (the port
    itself, not the record of it), ``hears`` its peer, its ``half``-state, ``settle_ready`` (no
    settle under way), and ``entangled``, its entries into UP queued as events so far."""

    up: bool
    hears: bool
    half: int
    settle_ready: bool
    entangled: int


@dataclass(frozen=True)
class Sources:
    """What the control engine reads of the node at the start of a clock: ``ports``, a
    :class:`PortState` per port, in link order."""

    ports: tuple


@dataclass
class Done:
    """What the node does about the clock's action. ``action``: the action acted on, as
    ``pick_action`` chose it a clock before (None: nothing); ``taken``: the action chosen in
    this clock, acted on in the next (None: nothing, or a clock that acts). ``payload`` (slices
    1-7) with ``written`` and ``waits``: the frames for the control stores ({destination:
    frame}, numbered; the node writes them in the next clock) and the destinations where it
    waits for a slot (10.10); ``superseded``: waiting messages it replaced. ``ack``: (control
    stream, expected), an ACK for the stream's slot. ``settle``: (link, the peer's half-state),
    which the node asks of the port in the next clock. ``events``: what the node
    reports ("port_up" or "suspect", link) and ("verdict", (link, verdict, subject)).
    ``adopted``: the verdict the table took; ``stale``: one it did not; ``settle_skipped``: a
    LINK_DOWN on my link whose half-states are not current."""

    action: object = None
    taken: object = None
    payload: bytes | None = None
    written: dict = field(default_factory=dict)
    waits: list = field(default_factory=list)
    superseded: int = 0
    ack: tuple | None = None
    settle: tuple | None = None
    events: list = field(default_factory=list)
    adopted: VerdictMsg | None = None
    stale: bool = False
    settle_skipped: bool = False


class ControlEngine:
    """The control engine of node ``node_id`` of ``topology``: ``stores``, its control stream's
    store per other node (dest -> :class:`golden.fabric.store.Store`); ``destination``, the
    streams it receives (it acknowledges the control streams as far as they have arrived)."""

    def __init__(self, node_id: int, topology: Topology, stores: dict, destination: Destination):
        self.id, self.topology, self.destination = node_id, topology, destination
        self.links = topology.links_of(node_id)
        self.dests = [n for n in range(topology.num_nodes) if n != node_id]
        self.table = Table(len(topology.links))
        self.records = PortRecords(self.links)
        self.reports = Reports(topology)  # per (link, end) the latest, and the open incidents
        # ("port", link, up) | ("never_up", link) | ("msg", message, origin, last of a drain)
        self.events = EventQueue(EVENTS_PER_PORT * len(self.links) + EVENT_MESSAGES)
        # Per destination, the control messages waiting for a slot of its stream's window: at
        # most a REPORT per port and a VERDICT per link of the fabric (10.10).
        waiting = len(self.links) + len(topology.links)
        self.origins = {d: ControlOrigin(node_id, d, stores[d], WaitingMessages(waiting)) for d in self.dests}
        self.to_announce = set()  # ports whose state to report
        self.to_stand_in = set()  # ports to check for standing in (10.5)
        self.to_arbitrate = set()  # links to apply the arbiter's rules to
        self.to_flush = set()  # destinations whose waiting control messages may have a slot
        self.to_ack = set()  # control streams whose ACK is due (10.11)
        # The action taken in the last clock, to act on in this one: (action, event or None).
        self.taken = None
        self._ack_keys = [(d, 0, NodeKind.CONTROL) for d in self.dests]
        self._arbitrated = [link for link in range(len(topology.links)) if node_id in topology.arbiters(link)]
        # The flag groups, in golden.fabric.control_choice.FLAGS order: the flags, what each bit
        # stands for, and the action.
        self._groups = {
            "announce": (self.to_announce, self.links, self._announce),
            "stand_in": (self.to_stand_in, self.links, self._stand_in),
            "arbitrate": (self.to_arbitrate, range(len(topology.links)), self._arbitrate),
            "flush": (self.to_flush, self.dests, self._flush),
        }

    @property
    def idle(self) -> bool:
        """Nothing to do: no action taken, no flag, no event, no ACK due."""
        return self.taken is None and not (
            self.to_announce or self.to_stand_in or self.to_arbitrate or self.to_flush or self.events or self.to_ack
        )

    def view(self) -> ControlView:
        """The choice's inputs, from the state at the start of the clock."""
        return ControlView(
            **{name: tuple(item in flags for item in items) for name, (flags, items, _) in self._groups.items()},
            events=bool(self.events),
            ack_due=tuple(key in self.to_ack for key in self._ack_keys),
        )

    def step(self, s: Sources) -> Done:
        """One clock: act on the action taken in the last, or take one."""
        out = Done()
        if self.taken is not None:
            (out.action, event), self.taken = self.taken, None
            self._s = dict(zip(self.links, s.ports))
            self._act(out.action, event, out)
        elif not self.idle:
            out.taken = action = pick_action(self.view())
            event = None
            if action == "event":
                event = self.events.popleft()
            elif action[0] == "ack":
                self.to_ack.discard(self._ack_keys[action[1]])
            else:
                flags, items, _ = self._groups[action[0]]
                flags.discard(items[action[1]])
            self.taken = (action, event)
        return out

    def _act(self, action, event, out):
        if action == "event":
            self._event(event, out)
        elif action[0] == "ack":
            key = self._ack_keys[action[1]]
            out.ack = (key, self.destination.expected[key])
        else:
            _, items, act = self._groups[action[0]]
            act(items[action[1]], out)

    def accept(self, msg, origin: int, s: Sources) -> Done:
        """What the engine does with control message ``msg`` from node ``origin``, outside its
        choice, on the ports ``s`` shows."""
        out = Done()
        self._s = dict(zip(self.links, s.ports))
        self._accept_message(msg, origin, out)
        return out

    def _event(self, event, out):
        if event[0] == "port":
            self._port_changed(event[1], event[2], out)
        elif event[0] == "never_up":
            self.records.never_up(event[1])
            self._announce(event[1], out)
        else:
            _, msg, origin, last = event
            self._accept_message(msg, origin, out)
            if last:
                self.to_ack.add((origin, 0, NodeKind.CONTROL))

    # --- what the actions write --------------------------------------------------------------

    def _write(self, dests, payload: bytes, out):
        """``payload`` for each of ``dests``, by its stream's origin (10.10)."""
        out.payload = payload
        for d in dests:
            written = self.origins[d].write(payload)
            self._written(d, written, out)

    def _written(self, dest, written, out):
        if written.flag:
            self.to_flush.add(dest)
        if written.frame is None:
            out.waits.append(dest)
            out.superseded += written.superseded
        else:
            if dest in out.written:
                raise RuntimeError(f"node {self.id}: two control messages for node {dest} in one clock")
            out.written[dest] = written.frame

    def _flush(self, dest, out):
        """Control messages that waited for the window take the slots an ACK freed, oldest first,
        one a clock (10.10)."""
        written = self.origins[dest].flush()
        if written is not None:
            out.payload = written.frame[8:]
            self._written(dest, written, out)

    # --- ports (10.3, 10.5) ------------------------------------------------------------------

    def _hears(self, link) -> bool:
        return self._s[link].hears

    def _report(self, link) -> Report:
        return self.records.report(self.id, link, self._hears(link), self._s[link].half)

    def _port_changed(self, link, up, out):
        """Port ``link``'s change, as :meth:`PortRecords.changed` has it handled (10.3)."""
        change = self.records.changed(link, up, self._hears, self.table[link].up)
        self.to_announce.update(change.absent)
        if change.arbitrate_all:
            self.to_arbitrate.update(self._arbitrated)
        if change.announce:
            self._announce(link, out)

    def _announce(self, link, out):
        """Port ``link`` left UP or entered it: the arbiters hear of it, and as an arbiter of
        other links, my own port changing may decide a verdict."""
        out.events.append(("port_up" if self.records.up[link] else "suspect", link))
        self._write(self.topology.arbiters(link), message_payload(self._report(link).slices()), out)
        self._stand_in(link, out)
        self.to_arbitrate.update(self._arbitrated)

    def _no_arbiter(self, link) -> bool:
        """My table gives me no path to any arbiter of ``link`` (10.5: its ends stand in)."""

        def up(link):
            return self.table[link].up

        return all(next_hop(self.topology, self.id, a, up, up) is None for a in self.topology.arbiters(link))

    def _tell_peer(self, link, out):
        """My port's REPORT on ``link`` to its peer, once per change of the port."""
        report = self._report(link)
        if self.records.tell(report):
            self._write([self.topology.peer(link, self.id)], message_payload(report.slices()), out)

    def _stand_in(self, link, out):
        """An end of a link held DOWN with no arbiter to hear it (10.5) tells its peer what it
        tells the arbiters, once per change, and admits the link itself when both ports are UP."""
        if link not in self._s or self.table[link].up or not self._no_arbiter(link):
            return
        self._tell_peer(link, out)
        self.to_arbitrate.add(link)

    def _accept_message(self, msg, origin, out):
        if isinstance(msg, VerdictMsg):
            self._adopt(msg, out, came_from=origin)
            return
        self.reports.record(msg)
        if msg.link in self._s and msg.writer == self.topology.peer(msg.link, self.id):
            # My peer stands in for arbiters it cannot reach (10.5): it admits the link only
            # on my report, which my table, holding the link UP, would never make me send
            # (the arbiter died with its LINK_DOWN delivered to my peer only).
            self._tell_peer(msg.link, out)
        self.to_arbitrate.add(msg.link)

    # --- the arbiter (10.5) ------------------------------------------------------------------

    def _arbitrate(self, link, out):
        entry = self.table[link]
        if self.id not in self.topology.arbiters(link):
            # An end standing in for arbiters it cannot reach admits the link again, and only that:
            # a LINK_UP needs no half-state, and it says what both ends' ports already show.
            peer = self.topology.peer(link, self.id) if link in self._s else None
            theirs = None if peer is None else self.reports.latest(link, peer)
            if (
                peer is not None
                and not entry.up
                and self.records.up[link]
                and theirs is not None
                and theirs.up
                and self._no_arbiter(link)
            ):
                self._adopt(VerdictMsg(link, self.id, Verdict.LINK_UP, 0, entry.epoch[0] + 1), out, came_from=self.id)
            return
        ends = self.topology.links[link]
        rep = [self.reports.latest(link, n) for n in ends]
        views = []
        for n, r in zip(ends, rep):
            port = self.topology.link_between(self.id, n)
            views.append(
                EndView(
                    reported=r is not None,
                    up=r is not None and r.up,
                    hears=r is not None and r.hears,
                    entangled=r is not None and r.session != 0,
                    port_up=self.records.up[port],
                    heard=self._hears(port),
                )
            )
        d = decide(entry.up, entry.verdict, views[0], views[1], self.reports.is_open(link))
        if d.healed:
            self.reports.close(link)
            out.events.append(("verdict", (link, Verdict.NONE, 0)))
            return
        if d.verdict is None:
            return
        self.reports.close(link)
        subject = 0 if d.subject is None else ends[d.subject]
        msg = VerdictMsg(link, self.id, d.verdict, subject, entry.epoch[0] + 1, tuple(rep[e] for e in d.reports))
        self._adopt(msg, out, came_from=self.id)

    # --- verdicts (10.4, 10.6) ---------------------------------------------------------------

    def _adopt(self, msg: VerdictMsg, out, came_from):
        if not self.table.adopt(msg.link, msg.verdict, msg.subject, msg.epoch):
            out.stale = True
            return
        out.adopted = msg
        out.events.append(("verdict", (msg.link, msg.verdict, msg.subject)))
        if msg.verdict == Verdict.LINK_DOWN and msg.link in self._s:
            self._settle(msg, out)
        if msg.link in self._s and not self.table[msg.link].up and self.records.up[msg.link]:
            # A DOWN verdict on my link while my port is UP: its arbiters may not know it is (a
            # first entry is not news while the table holds the link UP), and without my report
            # of entering UP no LINK_UP is ever decided.
            self.to_announce.add(msg.link)
        # The writer sends to its neighbours; every node that adopts it passes it on to its
        # neighbours but the writer and the one it came from, so a verdict whose writer died
        # with it half delivered still reaches every node (the copies that arrive twice are
        # stale and dropped).
        neighbours = self.topology.neighbours(self.id)
        if came_from != self.id:
            neighbours = [n for n in neighbours if n not in (msg.arbiter, came_from)]
        self._write(neighbours, message_payload(msg.slices()), out)
        # This verdict may have cut me off from the last arbiter of a link of mine held DOWN.
        self.to_stand_in.update(self.links)

    def _settle(self, msg, out):
        if len(msg.reports) < 2:
            # An end that never entangled has nothing to settle, and the other end's half-state
            # is not in the verdict: its frames go again end to end (10.7), a transfer stays frozen.
            return
        mine = next(r for r in msg.reports if r.writer == self.id)
        peer = next(r for r in msg.reports if r.writer != self.id)
        port = self._s[msg.link]
        # Both half-states must be the ones their ends hold now (10.6). Mine is, if my port has
        # not entangled since my REPORT. The peer's can be stale (a newer REPORT of the peer
        # still on its way to the arbiter) only if the peer entangled since, which shows as two
        # session numbers that differ; so does a session only the leader entered, which would be
        # safe, but the two cannot be told apart here, and not settling is always safe. A settle
        # of an earlier verdict still under way does the same.
        current = not port.up and wire_session(port.entangled) == mine.session == peer.session
        if current and port.settle_ready:
            out.settle = (msg.link, peer.half)
        else:
            out.settle_skipped = True
