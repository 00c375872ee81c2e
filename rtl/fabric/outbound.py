"""What a node holds to send, and what each port takes of it, in hardware (PROTOCOL.md 10.7, 10.10,
10.11); twin of golden/fabric/outbound.py."""

from functools import partial

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden import encoding as enc
from golden.encoding import NodeKind
from golden.params import E2E_CONTROL_WINDOW, check_int, check_window
from golden.topology import Topology, check_topology
from rtl.fabric.choice import PortChoice
from rtl.fabric.forward import Forwards
from rtl.fabric.message import node_header
from rtl.fabric.routing import Router, simple_paths
from rtl.fabric.store import Store
from rtl.link.framer import FRAME_BITS

SEQ = enc.E2E_SEQ_BITS
LINK = enc.LINK_ID_BITS
PAYLOAD_BITS = FRAME_BITS - enc.SLICE_BITS


class Outbound(wiring.Component):
    """What node ``node_id`` of ``topology`` holds to send, with ``user_classes`` user classes:
    a :class:`rtl.fabric.store.Store` per own stream (user streams of ``e2e_window`` slots, with
    the same-clock bypass of the user's frame; control streams of ``E2E_CONTROL_WINDOW``), a
    :class:`rtl.fabric.forward.Forwards` per (destination, port class) with ``forward_depth``
    and ``takeout_room``, a :class:`rtl.fabric.routing.Router` per destination and kind, and a
    :class:`rtl.fabric.choice.PortChoice` per port. Peers are numbered as the node's streams
    are (node ``n`` is peer ``n`` below ``node_id``, ``n - 1`` above it); ports in link order;
    a user stream (peer ``d``, class ``c``) is ``d * user_classes + c``; a forward queue (peer
    ``d``, port class ``c``) is ``d * (user_classes + 1) + c``, class ``user_classes`` the
    control class.

    Ports (in): ``table_up`` (a bit per link) and ``port_up`` (a bit per port): the table and
    the records of the ports as the clock leaves them (golden :meth:`rewind`'s arguments; the
    settle's hops read them too); per port ``control_open``, ``link_up`` and ``ready`` (golden
    ``PortState``); ``user_write`` with ``user_payload`` (per user stream, the user's frame
    this clock; only while ``user_ready``); ``control_write`` with ``control_frame`` (per peer,
    the control engine's); ``forward`` with ``forward_queue``, ``forward_front`` and
    ``forward_frame``; ``taken`` with ``taken_peer``, ``taken_cls``, ``taken_kind``,
    ``taken_seq``; ``release`` with ``release_peer``, ``release_cls``, ``release_kind``,
    ``release_seq``; ``ack`` with ``ack_queue`` and ``ack_expected`` (a user stream's ACK, the
    frame engine's) and ``control_ack`` with ``control_ack_peer`` and ``control_ack_expected``
    (the control engine's); ``settle`` with ``settle_port``; ``resend`` (a bit per port: its
    settle found the port reconciled); ``settle_done`` (a bit per port: its settle and take-out
    were done at the start of the clock).

    Out: per port and class ``take_valid`` and ``take_frame`` (the frame it takes this clock,
    combinational); ``user_ready`` (per user stream); ``store_full`` and ``next_seq`` (per
    peer, its control store's); ``full`` (per forward queue, at the start of the clock);
    ``pathless`` (per peer and kind, bit ``2 d + control``: no next hop, by the state the last
    clock left); ``dropped`` (frames a forward queue with no path dropped this clock),
    ``replaced`` (ACKs that replaced one in its slot), ``again`` (frames sent again), ``held``
    (frames the stores hold) and ``overflow`` (a forward queue's: a fault).

    Latency: a port's take is combinational on registered state, the user's frame of the clock
    included; the writes land at the edge; the hops are registered from the routers on the
    state the clock leaves. Failure behaviour: ``overflow`` above; ValueError at construction for
    bad parameters.
    """

    def __init__(
        self,
        *,
        node_id: int,
        topology: Topology,
        user_classes: int,
        e2e_window: int,
        forward_depth: int,
        takeout_room: int,
    ):
        self._topology = check_topology(topology)
        self._node = topology.check_node("node_id", node_id)
        self._links = topology.links_of(node_id)
        if not self._links:
            raise ValueError(f"node_id {node_id} has no link in the fabric")
        self._classes = check_int("user_classes", user_classes, 1, enc.MAX_CLASSES - 1)
        self._window = check_window("e2e_window", e2e_window)
        self._depth = check_int("forward_depth", forward_depth, 1)
        self._room = check_int("takeout_room", takeout_room, 0)
        self._others = [n for n in range(topology.num_nodes) if n != node_id]
        P, O, C = len(self._links), len(self._others), user_classes
        L = len(topology.links)
        Q = O * (C + 1)
        self._queues = Q
        stores = O * C + O
        super().__init__(
            {
                "table_up": In(L),
                "port_up": In(P),
                "control_open": In(P),
                "link_up": In(P),
                "ready": In(data.ArrayLayout(C, P)),
                "user_write": In(O * C),
                "user_payload": In(data.ArrayLayout(PAYLOAD_BITS, O * C)),
                "control_write": In(O),
                "control_frame": In(data.ArrayLayout(FRAME_BITS, O)),
                "forward": In(1),
                "forward_queue": In(range(Q)),
                "forward_front": In(1),
                "forward_frame": In(FRAME_BITS),
                "taken": In(1),
                "taken_peer": In(range(O)),
                "taken_cls": In(range(C + 1)),
                "taken_kind": In(2),
                "taken_seq": In(SEQ),
                "release": In(1),
                "release_peer": In(range(O)),
                "release_cls": In(range(C + 1)),
                "release_kind": In(2),
                "release_seq": In(SEQ),
                "ack": In(1),
                "ack_queue": In(range(Q)),
                "ack_expected": In(SEQ),
                "control_ack": In(1),
                "control_ack_peer": In(range(O)),
                "control_ack_expected": In(SEQ),
                "settle": In(1),
                "settle_port": In(range(P)),
                "resend": In(P),
                "settle_done": In(P),
                "take_valid": Out(data.ArrayLayout(C + 1, P)),
                "take_frame": Out(data.ArrayLayout(data.ArrayLayout(FRAME_BITS, C + 1), P)),
                "user_ready": Out(O * C),
                "store_full": Out(O),
                "next_seq": Out(data.ArrayLayout(SEQ, O)),
                "full": Out(Q),
                "pathless": Out(2 * O),
                "dropped": Out(range(Q + 1)),
                "replaced": Out(range(3)),
                "again": Out(range(stores * (max(self._window, E2E_CONTROL_WINDOW) + 1))),
                "held": Out(range(stores * max(self._window, E2E_CONTROL_WINDOW) + 1)),
                "overflow": Out(1),
            }
        )

    def _first_hop(self, dest: int) -> int:
        """The next hop of a user frame for ``dest`` while every link is UP (after reset)."""
        path = simple_paths(self._topology, self._node, dest)[0]
        return self._topology.link_between(path[0], path[1])

    def elaborate(self, platform):
        m = Module()
        t, me = self._topology, self._node
        P, O, C = len(self._links), len(self._others), self._classes
        cc = C

        # The routes: the routers on the state the clock leaves, registered for the next clock.
        # After reset every link is UP in the table and no port is: user frames go by the first
        # link of the shortest path, control frames have no hop.
        port_bits = Signal(len(t.links))
        for p, link in enumerate(self._links):
            m.d.comb += port_bits[link].eq(self.port_up[p])
        hop_next = {}  # (peer, control) -> (valid, link) as the clock leaves
        hop = {}  # the registered hops, as the clock starts
        for i, n in enumerate(self._others):
            for control in (False, True):
                router = Router(t, me)
                m.submodules[f"router{n}_{'c' if control else 'u'}"] = router
                m.d.comb += [
                    router.dest.eq(n),
                    router.first_hop_up.eq(port_bits if control else self.table_up),
                    router.table_up.eq(self.table_up),
                ]
                valid = Signal(name=f"hop{n}_{'c' if control else 'u'}_valid", init=0 if control else 1)
                link = Signal(LINK, name=f"hop{n}_{'c' if control else 'u'}", init=0 if control else self._first_hop(n))
                m.d.sync += [valid.eq(router.found), link.eq(router.link)]
                hop_next[i, control] = (router.found, router.link)
                hop[i, control] = (valid, link)
                m.d.comb += self.pathless[2 * i + control].eq(~valid)

        # The stores: user streams (peer, class), then control streams (peer).
        stores = {}
        for i, n in enumerate(self._others):
            for c in range(C):
                header = partial(node_header, kind=NodeKind.USER, origin=me, dest=n, cls=c)
                s = Store(self._window, header=header, bypass=True)
                m.submodules[f"store{n}_{c}"] = stores[i, c, NodeKind.USER] = s
                k = i * C + c
                m.d.comb += [
                    s.write.eq(self.user_write[k]),
                    s.write_payload.eq(self.user_payload[k]),
                    self.user_ready[k].eq(~s.full),
                ]
            # The control engine's messages fill slices 1-5 and write 6 and 7 as zeros.
            M = enc.CONTROL_MESSAGE_SLICES
            header = partial(node_header, kind=NodeKind.CONTROL, origin=me, dest=n, cls=0)
            s = Store(E2E_CONTROL_WINDOW, header=header, payload_slices=M)
            m.submodules[f"store{n}_control"] = stores[i, 0, NodeKind.CONTROL] = s
            m.d.comb += [
                s.write.eq(self.control_write[i]),
                s.write_payload.eq(self.control_frame[i][enc.SLICE_BITS : (1 + M) * enc.SLICE_BITS]),
                self.store_full[i].eq(s.full),
                self.next_seq[i].eq(s.next_seq),
            ]

        # The forward queues with their ACK slots, per (peer, port class).
        fwd = {}
        for i, n in enumerate(self._others):
            for c in range(C + 1):
                f = Forwards(
                    node_id=me,
                    dest=n,
                    stream_cls=0 if c == cc else c,
                    kind=NodeKind.CONTROL if c == cc else NodeKind.USER,
                    depth=self._depth,
                    room=self._room,
                )
                m.submodules[f"fwd{n}_{c}"] = fwd[i, c] = f
                q = i * (C + 1) + c
                here = self.forward & (self.forward_queue == q)
                m.d.comb += [
                    f.push.eq(here),
                    f.front.eq(self.forward_front),
                    f.data.eq(self.forward_frame),
                    f.no_path.eq(~hop[i, c == cc][0]),
                    self.full[q].eq(f.full),
                ]
                if c == cc:
                    m.d.comb += [
                        f.ack.eq(self.control_ack & (self.control_ack_peer == i)),
                        f.ack_expected.eq(self.control_ack_expected),
                    ]
                else:
                    m.d.comb += [f.ack.eq(self.ack & (self.ack_queue == q)), f.ack_expected.eq(self.ack_expected)]

        # The streams paused for a settle: the port they wait for.
        paused = {key: Signal(name=f"paused{key[0]}_{key[1]}_{int(key[2])}") for key in stores}
        paused_port = {key: Signal(range(P), name=f"paused_port{key[0]}_{key[1]}_{int(key[2])}") for key in stores}

        # Each port's take.
        takes = {key: [] for key in stores}  # store -> [(port, take signal)]
        fwd_takes = {key: [] for key in fwd}
        for p, link in enumerate(self._links):
            choice = PortChoice(O, C)
            m.submodules[f"choice{link}"] = choice
            m.d.comb += [
                choice.control_open.eq(self.control_open[p]),
                choice.link_up.eq(self.link_up[p]),
                choice.ready.eq(self.ready[p]),
            ]
            for i in range(O):
                for control, bits in ((True, choice.hop_control), (False, choice.hop_user)):
                    valid, at = hop[i, control]
                    m.d.comb += bits[i].eq(valid & (at == link))
                ctl = (i, 0, NodeKind.CONTROL)
                m.d.comb += [
                    choice.own_control[i].eq(stores[ctl].unsent & ~paused[ctl]),
                    choice.fwd_control[i].eq(fwd[i, cc].waiting),
                ]
                for c in range(C):
                    usr = (i, c, NodeKind.USER)
                    m.d.comb += [
                        choice.own_user[c][i].eq(stores[usr].unsent & ~paused[usr]),
                        choice.fwd_user[c][i].eq(fwd[i, c].waiting),
                    ]
            for cls in range(C + 1):
                pick = choice.control if cls == cc else choice.user[cls]
                m.d.comb += self.take_valid[p][cls].eq(pick.valid)
                for i in range(O):
                    key = (i, 0, NodeKind.CONTROL) if cls == cc else (i, cls, NodeKind.USER)
                    own = Signal(name=f"take_own{link}_{cls}_{i}")
                    queued = Signal(name=f"take_fwd{link}_{cls}_{i}")
                    at = pick.valid & (pick.dest == i)
                    m.d.comb += [own.eq(at & pick.own), queued.eq(at & ~pick.own)]
                    takes[key].append((link, own))
                    fwd_takes[i, cls].append(queued)
                    with m.If(own):
                        m.d.comb += self.take_frame[p][cls].eq(stores[key].frame)
                    with m.If(queued):
                        m.d.comb += self.take_frame[p][cls].eq(fwd[i, cls].frame)
        for key, f in fwd.items():
            m.d.comb += f.take.eq(Cat(fwd_takes[key]).any())

        # The stores' other operations, and the pauses.
        settle_link = Signal(LINK)
        for p, link in enumerate(self._links):
            with m.If(self.settle_port == p):
                m.d.comb += settle_link.eq(link)
        again = []
        held = []
        for key, s in stores.items():
            i, c, kind = key
            control = kind == NodeKind.CONTROL
            for link, own in takes[key]:
                with m.If(own):
                    m.d.comb += [s.take.eq(1), s.take_link.eq(link)]
            valid, at = hop_next[i, control]
            kind_bits = int(kind)
            resend = paused[key] & self.resend.bit_select(paused_port[key], 1)
            m.d.comb += [
                s.settle.eq(self.settle),
                s.settle_link.eq(settle_link),
                s.settle_hop.eq(at),
                s.settle_hop_valid.eq(valid),
                s.taken.eq(
                    self.taken & (self.taken_peer == i) & (self.taken_cls == c) & (self.taken_kind == kind_bits)
                ),
                s.taken_seq.eq(self.taken_seq),
                s.ack_valid.eq(
                    self.release & (self.release_peer == i) & (self.release_cls == c) & (self.release_kind == kind_bits)
                ),
                s.ack.eq(self.release_seq),
                s.resend.eq(resend),
                s.hop.eq(at),
                s.hop_valid.eq(valid),
            ]
            again.append(s.again)
            held.append(s.held)
            # Paused by this clock's settle; free once its port's settle was done at the start of
            # a later clock, or by a resend.
            with m.If(self.settle & s.settled):
                m.d.sync += [paused[key].eq(1), paused_port[key].eq(self.settle_port)]
            with m.Elif(paused[key] & (self.settle_done.bit_select(paused_port[key], 1) | resend)):
                m.d.sync += paused[key].eq(0)

        m.d.comb += [
            self.dropped.eq(sum(f.dropped for f in fwd.values())),
            self.replaced.eq(sum(f.replaced for f in fwd.values())),
            self.again.eq(sum(again)),
            self.held.eq(sum(held)),
            self.overflow.eq(Cat(f.overflow for f in fwd.values()).any()),
        ]
        return m
