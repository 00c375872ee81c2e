"""What a node holds to send, and what each port takes of it (PROTOCOL.md 10.7, 10.10, 10.11).

:class:`Outbound` keeps:

* the **store** of each own stream (``store.py``): user streams per (destination, class) with
  the end-to-end window, control streams per destination with ``E2E_CONTROL_WINDOW``; the user
  writes the first, the control engine's origins the second;
* the **forward queues** per (destination, port class) with the ACK slot of my stream from that
  destination beside each (``forward.py``), which the frame engine writes;
* the **routes**: the next hop of every destination for user frames (the table's UP links) and
  for control frames (a port that is UP, then the table's UP links), from the state the last
  clock left (``routing.py``);
* per port, the round robin's starts of its user classes, and the streams paused for a settle.

In a clock, each port takes the frames :func:`golden.fabric.choice.choose` picks for it from the
sources whose next hop it is (:meth:`select`, on the state at the start of the clock); the
engines' writes land (:meth:`forward`, :meth:`ack`, :meth:`taken`, :meth:`release`,
:meth:`settle`); and at the edge every own stream whose next hop changed since its frames left
sends them again (:meth:`rewind`).

Failure behaviour: a relayed frame for a full forward queue that has a path raises RuntimeError
(the frame engine holds such a frame in its inbox, so it never happens); bad arguments raise
ValueError.
"""

from dataclasses import dataclass

from golden.encoding import NodeKind
from golden.fabric.choice import PortView, choose
from golden.fabric.forward import Forwards
from golden.fabric.message import node_frame
from golden.fabric.routing import next_hop
from golden.fabric.store import Store
from golden.params import E2E_CONTROL_WINDOW
from golden.topology import Topology


@dataclass(frozen=True)
class PortState:
    """What :meth:`Outbound.select` reads of a port besides the outbound state: ``control_open``
    (its control class may take a frame: the table holds the link UP or the port is UP, the
    last control frame is sent, the class is ready), ``link_up`` (the table holds the link UP)
    and ``ready`` (per user class, the class takes a frame)."""

    control_open: bool
    link_up: bool
    ready: tuple


class Outbound:
    """What node ``node_id`` of ``topology`` holds to send, on ports ``links``, with
    ``user_classes`` user classes; ``e2e_window``: a user stream's window; ``forward_depth``:
    each forward queue's depth, and ``takeout_room`` beyond it for the frames settles take out."""

    def __init__(
        self,
        node_id: int,
        topology: Topology,
        links,
        user_classes: int,
        e2e_window: int,
        forward_depth: int,
        takeout_room: int,
    ):
        self.id, self.topology, self.links = node_id, topology, list(links)
        self.user_classes = user_classes
        self.control_class = cc = user_classes
        self.dests = [n for n in range(topology.num_nodes) if n != node_id]
        # A forward queue per (destination, port class), and beside it the ACK slot of my stream
        # from that destination whose ACKs take that way (a user stream's in its class, a control
        # stream's in the control class): an ACK never waits for room (10.11).
        self.fwd = {
            (d, c): Forwards(
                node_id,
                d,
                0 if c == cc else c,
                NodeKind.CONTROL if c == cc else NodeKind.USER,
                forward_depth,
                takeout_room,
            )
            for d in self.dests
            for c in range(cc + 1)
        }
        self.forward_depth = forward_depth
        self.turn = {link: (0,) * user_classes for link in self.links}  # per port, per user class
        self.stores = {(d, c, NodeKind.USER): Store(e2e_window) for d in self.dests for c in range(user_classes)}
        self.stores.update({(d, 0, NodeKind.CONTROL): Store(E2E_CONTROL_WINDOW) for d in self.dests})
        # Own streams that send nothing until the port they sent by has finished its settle and
        # handed the frames it took out to the frame engine: stream -> that port's link.
        self.settling = {}
        self.hops, self._routed = {}, None
        # After reset the table holds every link UP and no port is UP.
        self.route((True,) * len(topology.links), dict.fromkeys(self.links, False))
        self.start()

    # --- routes ------------------------------------------------------------------------------

    def next_hop(self, dest: int, control: bool, table_up, port_up) -> int | None:
        """The port (link id) towards ``dest`` over links ``table_up`` (per link) holds UP, or
        None. A control frame leaves by a port that is UP (``port_up``: link -> bool), whatever
        the table says: that is how the REPORTs that admit a link again get out of a node whose
        table holds all its links DOWN, and how a REPORT avoids the failed port it is about."""
        return next_hop(
            self.topology,
            self.id,
            dest,
            first_hop=lambda link: port_up[link] if control else table_up[link],
            onward=lambda link: table_up[link],
        )

    def route(self, table_up: tuple, port_up: dict):
        """The next hop of every destination, for user and for control frames: {(dest, control):
        link or None}. In hardware, one router per destination and kind."""
        state = (tuple(table_up), tuple(port_up.values()))
        if state != self._routed:
            self._routed = state
            self.hops = {(d, c): self.next_hop(d, c, table_up, port_up) for d in self.dests for c in (False, True)}

    def no_path(self, dest: int, cls: int) -> bool:
        """Frames of port class ``cls`` have no path to ``dest`` (the hops of the last clock)."""
        return self.hops[dest, cls == self.control_class] is None

    # --- a clock -----------------------------------------------------------------------------

    def start(self):
        """The state at the start of the clock that later writes of the clock must not show: the
        forward queues' occupancy, and whether anything waits in each (destination, class)."""
        self.occupancy = {key: len(f.queue.frames) for key, f in self.fwd.items()}
        self.forwards_start = {key: f.waiting for key, f in self.fwd.items()}
        self._paused_now = set()

    def full(self, dest: int, cls: int) -> bool:
        """The forward queue (``dest``, ``cls``) was full at the start of the clock (10.11)."""
        return self.occupancy[dest, cls] >= self.forward_depth

    def ready(self, dest: int, cls: int) -> bool:
        """User stream (``dest``, ``cls``) takes a frame: its window is not full (10.10)."""
        return not self.stores[dest, cls, NodeKind.USER].full

    def write(self, dest: int, cls: int, payload: bytes) -> Store:
        """A user frame for (``dest``, ``cls``), numbered into its store (the caller checked
        :meth:`ready`); returns the store."""
        store = self.stores[dest, cls, NodeKind.USER]
        # Held until the destination acknowledges it (10.7): a relay may die with it.
        store.write(node_frame(NodeKind.USER, self.id, dest, cls, store.next_seq, payload))
        return store

    def select(self, link: int, port: PortState) -> dict:
        """The frame each class of port ``link`` takes this clock: {class: frame}, as
        :func:`golden.fabric.choice.choose` picks it (10.11)."""
        cc, ctl, usr = self.control_class, NodeKind.CONTROL, NodeKind.USER

        def own(key):
            return self.stores[key].unsent and key not in self.settling

        classes = range(self.user_classes)
        view = PortView(
            control_open=port.control_open,
            link_up=port.link_up,
            ready=port.ready,
            hop_control=tuple(self.hops[d, True] == link for d in self.dests),
            hop_user=tuple(self.hops[d, False] == link for d in self.dests),
            own_control=tuple(own((d, 0, ctl)) for d in self.dests),
            fwd_control=tuple(self.forwards_start[d, cc] for d in self.dests),
            own_user=tuple(tuple(own((d, c, usr)) for d in self.dests) for c in classes),
            fwd_user=tuple(tuple(self.forwards_start[d, c] for d in self.dests) for c in classes),
        )
        choice = choose(view, self.turn[link])
        self.turn[link] = choice.turn
        frames = {}
        for cls, chosen in [(cc, choice.control), *enumerate(choice.user)]:
            if chosen is None:
                continue
            what, d = chosen
            dest, kind = self.dests[d], ctl if cls == cc else usr
            if what == "own":
                frames[cls] = self.stores[dest, 0 if cls == cc else cls, kind].take(link)
            else:
                frames[cls] = self.fwd[dest, cls].take()
        return frames

    def forward(self, frame: bytes, dest: int, cls: int, front: bool) -> bool:
        """Into the forward queue (``dest``, port class ``cls``): a frame to relay, or at the head
        one a settled port took out (10.11). True: a frame was dropped (no path, queue full)."""
        q = self.fwd[dest, cls].queue
        try:
            return q.push(frame, front, self.no_path(dest, cls))
        except OverflowError as e:
            raise RuntimeError(f"node {self.id}, queue of node {dest} class {cls}: {e}") from None

    def ack(self, key, expected: int) -> bool:
        """Stream ``key``'s ACK up to ``expected`` into its slot (a user stream's in its class, a
        control stream's in the control class), replacing one not yet gone: True if it did."""
        cls = self.control_class if key[2] == NodeKind.CONTROL else key[1]
        return self.fwd[key[0], cls].ack(expected)

    def taken(self, dest: int, cls: int, kind, seq: int):
        """A settled port took out my frame ``seq`` of stream (``dest``, ``cls``, ``kind``)."""
        self.stores[dest, cls, kind].taken(seq)

    def release(self, origin: int, cls: int, kind, seq: int):
        """An ACK of my stream to ``origin`` up to ``seq``."""
        self.stores[origin, cls, kind].release(seq)

    def settle(self, link: int, hop):
        """Port ``link`` is asked to settle (10.6); ``hop(dest, control)``: each stream's next hop
        after the clock. A stream of mine that sent by the port goes on by its new hop from its
        oldest frame the port takes out, not from its oldest unacknowledged frame (10.7), so the
        frames the peer has are not sent twice. It sends nothing until the settle is done and the
        frame engine has pointed it at each of its frames the port took out."""
        for key, store in self.stores.items():
            if store.settled(link, hop(key[0], key[2] == NodeKind.CONTROL)):
                self.settling[key] = link
                self._paused_now.add(key)

    def resend(self, link: int) -> int:
        """The settle of port ``link`` found the port entangled again and reconciled by itself: its
        unconfirmed frames stay with the link, which may fail again before it delivers them, so
        the streams that sent by it send again end to end, as on any route change (10.7).
        Returns how many frames go again."""
        again = 0
        for key in [k for k, via in self.settling.items() if via == link]:
            again += self.stores[key].resend()
            del self.settling[key]
        return again

    def settled(self, done):
        """The ports ``done`` have finished their settle and take-out: the streams they paused
        (before this clock) send again."""
        for key, link in list(self.settling.items()):
            if link in done and key not in self._paused_now:
                del self.settling[key]

    def rewind(self, table_up: tuple, port_up: dict) -> int:
        """Sending again (10.7), on the routes as the clock leaves them: a stream of mine whose
        frames left by a port that is no longer its next hop (or that had no path and has one
        now) sends every frame not yet acknowledged again, from the oldest. The old path may have
        lost them (a relay that died, a port a verdict left holding them); the destination drops
        the copies that arrive twice. A frame already in a port still leaves by it, and may die
        with the node beyond it. Returns how many frames go again."""
        self.route(table_up, port_up)
        return sum(
            store.rewind(self.hops[dest, kind == NodeKind.CONTROL]) for (dest, _, kind), store in self.stores.items()
        )
