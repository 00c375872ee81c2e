"""A host of the PCIe-style contrast fabric: contrast links to its neighbours, and the failover a
PCIe system does in software (docs/CONTRAST.md 9).

:class:`Host` owns one :class:`golden.contrast.link.PcieLink` per link of a full mesh (its
**ports**). It believes a port **usable** while the port's DL_Up holds and its requester's
"completer alive" does; each is the belief docs/CONTRAST.md 7 meters on a single link, and
nothing else tells a PCIe host that a link is gone. To give the completion timeout something to
time, the host reads from every port every ``probe_interval`` cycles (a driver's health poll).

A frame for node *d* leaves by the port to *d* while that port is usable; otherwise by the port
to the lowest-numbered other node whose port is usable, which relays it to *d* by its own port;
with none usable, it waits in the direct port's queue for the link to return. A relay sends a
frame on by its own port to *d*, usable or not: a frame is relayed once at most, so no frame goes
round. When a port stops being usable, the host's own frames queued for it and not yet handed to
its data link layer go again by the new route (a driver requeues its submission queue); relayed
frames stay queued. The frames in the port's replay buffer stay there, delivered if the link
recovers and discarded at DL_Down (PCIe).

User side: :meth:`send` hands in a frame of :data:`BODY_BYTES` for a destination; :meth:`step`
returns the frames delivered to this host, as (origin, body). Failure behaviour: frames are
lost as PCIe loses them (``lost`` of each port) and counted, never raised;
bad arguments raise ValueError naming them.
"""

from golden import encoding as enc
from golden.contrast.link import PcieLink
from golden.pcie_params import PcieParams
from golden.topology import Topology, check_topology

# The frame a host sends is a TLP payload: origin, destination and hops so far (0, or 1 relayed),
# then the body.
HEADER_BYTES = 3
BODY_BYTES = enc.FRAME_BYTES - HEADER_BYTES


def host_frame(origin: int, dest: int, hops: int, body: bytes) -> bytes:
    return bytes([origin, dest, hops]) + body


def frame_fields(frame: bytes) -> tuple:
    """(origin, dest, hops, body) of a host frame."""
    return frame[0], frame[1], frame[2], frame[HEADER_BYTES:]


def default_probe_interval(params: PcieParams) -> int:
    """A tenth of the completion timeout: a read is on the wire for a round trip and the
    completer's delay after each probe, so a fault finds one in flight only by chance, and a
    cut is then found at DL_Down (docs/CONTRAST.md 8, 9)."""
    return max(1, params.cycles("completion_timeout") // 10)


class Host:
    """Node ``node_id`` of ``topology`` (a full mesh: every pair of nodes has a link, as in the
    triangle), each port built with ``params``. ``probe_interval``: cycles between the health
    reads the host issues on every port (default :func:`default_probe_interval`)."""

    def __init__(self, node_id: int, topology: Topology, params: PcieParams, probe_interval: int | None = None):
        check_topology(topology).check_node("node_id", node_id)
        n = topology.num_nodes
        if len(topology.links) != n * (n - 1) // 2:
            raise ValueError(f"the contrast fabric's hosts need a full mesh, not {topology!r}")
        if not isinstance(params, PcieParams):
            raise ValueError(f"params must be a PcieParams, not {type(params).__name__}")
        if probe_interval is None:
            probe_interval = default_probe_interval(params)
        if not isinstance(probe_interval, int) or isinstance(probe_interval, bool) or probe_interval < 1:
            raise ValueError(f"probe_interval must be a positive number of cycles, not {probe_interval!r}")
        self.id, self.topology, self.probe_interval = node_id, topology, probe_interval
        self.ports = {link: PcieLink(params) for link in topology.links_of(node_id)}
        self.usable = {link: False for link in self.ports}
        self.cycle = 0
        self.counters = {"failovers": 0, "requeued": 0, "relayed": 0, "probes": 0}

    # --- beliefs and routes ------------------------------------------------------------------

    def believes_up(self, link: int) -> bool:
        """The host's belief of one of its links (the ghost meter's), or ValueError."""
        if link not in self.ports:
            raise ValueError(f"link {link!r} is not a port of host {self.id}")
        return self.usable[link]

    def _port_usable(self, link) -> bool:
        port = self.ports[link]
        return port.dl_up and port.requester.completer_alive

    def route(self, dest: int) -> int:
        """The port a frame for ``dest`` leaves by now."""
        direct = self.topology.link_between(self.id, dest)
        if self.usable[direct]:
            return direct
        for relay in self.topology.neighbours(self.id):
            link = self.topology.link_between(self.id, relay)
            if relay != dest and self.usable[link]:
                return link
        return direct

    # --- user side ---------------------------------------------------------------------------

    def send(self, dest: int, body: bytes) -> None:
        """Hand in a frame for node ``dest``; it is queued on the port :meth:`route` names."""
        if not isinstance(dest, int) or not 0 <= dest < self.topology.num_nodes or dest == self.id:
            raise ValueError(f"dest must be another node id in [0, {self.topology.num_nodes}), not {dest!r}")
        if not isinstance(body, (bytes, bytearray)) or len(body) != BODY_BYTES:
            raise ValueError(f"body must be {BODY_BYTES} bytes")
        self.ports[self.route(dest)].offer_frame(host_frame(self.id, dest, 0, bytes(body)))

    def _relay(self, frame: bytes) -> None:
        origin, dest, hops, body = frame_fields(frame)
        self.counters["relayed"] += 1
        self.ports[self.topology.link_between(self.id, dest)].offer_frame(host_frame(origin, dest, hops + 1, body))

    # --- one cycle ---------------------------------------------------------------------------

    def step(self, rx: dict, far: dict) -> tuple:
        """One link clock of every port. ``rx``: {link: word or None}; ``far``: {link: whether
        receiver detection finds the peer}. Returns (words sent {link: word or None}, frames
        delivered to this host [(origin, body)])."""
        if set(rx) != set(self.ports) or set(far) != set(self.ports):
            raise ValueError(f"rx and far must name every port {sorted(self.ports)}")
        tx = {link: port.step(rx[link], far[link]) for link, port in self.ports.items()}
        mine = []
        for port in self.ports.values():
            while port.delivered:
                frame = port.delivered.pop(0)
                origin, dest, _, body = frame_fields(frame)
                if dest == self.id:
                    mine.append((origin, body))
                else:
                    self._relay(frame)
        self._believe()
        if self.cycle % self.probe_interval == 0:
            for port in self.ports.values():
                self.counters["probes"] += port.request() is not None
        self.cycle += 1
        return tx, mine

    def _believe(self) -> None:
        """Every port's belief from its link, then the failover of those that stopped being
        usable: their own frames take the routes of the new beliefs."""
        now = {link: self._port_usable(link) for link in self.ports}
        failed = [link for link in self.ports if self.usable[link] and not now[link]]
        self.usable = now
        for link in failed:
            # My frames that wait for the port and have not entered its data link layer go by
            # the new route.
            self.counters["failovers"] += 1
            queue = self.ports[link].frames_in
            waiting = list(queue)
            queue.clear()
            for frame in waiting:
                origin, dest, _, _ = frame_fields(frame)
                target = self.route(dest) if origin == self.id else link
                self.counters["requeued"] += target != link
                self.ports[target].offer_frame(frame)
