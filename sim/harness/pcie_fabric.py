"""Golden hosts of the PCIe-style contrast fabric (golden/contrast/host.py) joined by golden
channels, with traffic, an end-to-end scoreboard that counts what PCIe loses, and the ghost meter.

:class:`PcieFabricHarness` has the fault interface of :class:`sim.harness.fabric.FabricHarness`
(``channels[link].ab.cuts`` and the other channel faults, ``kill(node, cycle)``; both from
:class:`sim.harness.fabric_faults.FabricFaults`), so one fault schedule runs on both fabrics.
A dead host sends nothing and is not stepped; receiver detection finds a peer while the peer
lives and the detecting end's transmit direction is not cut. As in sim/harness/pcie.py, a host's
step sends its word and takes the word the channel delivered in the cycle before.

The scoreboard numbers each stream's frames (origin, destination). A frame delivered corrupted,
to the wrong host or never sent raises :class:`sim.harness.base.ScoreboardError`: the CRCs make
that a broken model, not PCIe. What PCIe does lose or misorder is counted, not raised:
``duplicates`` (a frame delivered again), ``reordered`` (delivered after a later frame of its
stream) and, once the traffic has drained, :meth:`lost` (frames between live hosts never
delivered: discarded from a replay buffer at DL_Down, queued on a link that never returned, or
held by a relay that died).
"""

import random

from golden.contrast.host import BODY_BYTES, Host
from golden.encoding import SKP_WORD
from golden.pcie_params import PcieParams
from golden.topology import Topology
from sim.harness.base import Harness, ScoreboardError
from sim.harness.fabric_faults import FabricFaults
from sim.harness.ghost import GhostMeter
from sim.harness.pcie import TEST_SCALE, check_replay_timer


def body(origin: int, dest: int, k: int) -> bytes:
    """Frame ``k`` of stream (``origin``, ``dest``): its number, then a pattern of all three."""
    head = k.to_bytes(4, "little")
    rng = random.Random((origin * 256 + dest) * 1_000_003 + k)
    return head + rng.randbytes(BODY_BYTES - len(head))


class PcieFabricHarness(FabricFaults, Harness):
    """``topology`` (a full mesh); ``latency``: one latency for every link or {link: latency};
    ``faults``: channel faults per link and direction (as FabricHarness); ``load``: the
    probability per cycle that each live host's user makes a frame for each other host;
    ``params``: every port's PcieParams (default: the test scale, every timer at 1/64);
    ``probe_interval``: the hosts' health reads (default: a tenth of the completion timeout)."""

    def __init__(
        self,
        topology: Topology,
        latency=8,
        *,
        faults=None,
        load=0.05,
        seed=0,
        params: PcieParams | None = None,
        probe_interval: int | None = None,
    ):
        if not isinstance(topology, Topology):
            raise ValueError(f"topology must be a Topology, not {topology!r}")
        if not isinstance(load, (int, float)) or isinstance(load, bool) or not 0.0 <= load <= 1.0:
            raise ValueError(f"load must be a probability in [0, 1], not {load!r}")
        self.params = params if params is not None else PcieParams(**TEST_SCALE)
        self.topology, self.load = topology, load
        self.rng = random.Random(seed)
        self.hosts = [Host(n, topology, self.params, probe_interval) for n in range(topology.num_nodes)]
        for cycles in self._make_channels(latency, faults, seed, fill_word=SKP_WORD).values():
            check_replay_timer(self.params, cycles, cycles)
        self.cycle = 0
        self.made = {}  # (origin, dest) -> frames handed in
        self.got = {}  # (origin, dest) -> distinct frames delivered
        self.highest = {}  # (origin, dest) -> the highest frame number delivered
        self.delivered_at = {}  # (origin, dest) -> [(cycle, k)] every delivery, in order
        self._seen = {}  # (origin, dest) -> set of frame numbers delivered
        self.duplicates = self.reordered = 0
        self.meter = None
        self._rx = {(i, n): None for i, ends in enumerate(topology.links) for n in ends}

    # --- the ghost meter ---------------------------------------------------------------------

    def start_meter(self):
        """Start the ghost meter now: each live host holds a belief of its own links only."""
        links = [str(i) for i in range(len(self.topology.links))]
        observers = {str(h.id): [str(link) for link in h.ports] for h in self.hosts if self.alive(h.id)}
        self.meter = GhostMeter(links, observers, start=self.cycle)
        self._sample()

    def _sample(self):
        for n, died in self.dead.items():
            if died == self.cycle and self.meter.start < died:
                self.meter.retire(self.cycle, str(n))
        actual = {str(i): self.actually_up(i) for i in range(len(self.topology.links))}
        believed = {
            (str(h.id), str(link)): h.believes_up(link) for h in self.hosts if self.alive(h.id) for link in h.ports
        }
        self.meter.sample(self.cycle, actual, believed)

    # --- one cycle ---------------------------------------------------------------------------

    def _far(self, host, link) -> bool:
        """Receiver detection at ``host``'s end of ``link``: the peer lives and terminates the
        line ``host`` transmits on."""
        a, b = self.topology.links[link]
        peer = b if host == a else a
        direction = self.channels[link].ab if host == a else self.channels[link].ba
        return self.alive(peer) and not direction.cut_at(direction.cycle)

    def step(self):
        words = {}
        for h in self.hosts:
            if not self.alive(h.id):
                for link in h.ports:
                    words[link, h.id] = None
                continue
            self._traffic(h)
            rx = {link: self._rx[link, h.id] for link in h.ports}
            far = {link: self._far(h.id, link) for link in h.ports}
            tx, mine = h.step(rx, far)
            for link, word in tx.items():
                words[link, h.id] = word
            self._score(h.id, mine)
        for i, ch in enumerate(self.channels):
            a, b = self.topology.links[i]
            self._rx[i, b], self._rx[i, a] = ch.step(words[i, a], words[i, b])
        self.cycle += 1
        if self.meter is not None:
            self._sample()

    def _traffic(self, h):
        if not self.load:
            return
        for dest in range(self.topology.num_nodes):
            if dest != h.id and self.rng.random() < self.load:
                k = self.made.get((h.id, dest), 0)
                h.send(dest, body(h.id, dest, k))
                self.made[h.id, dest] = k + 1

    def _score(self, dest, frames):
        for origin, payload in frames:
            key = (origin, dest)
            k = int.from_bytes(payload[:4], "little")
            if origin not in range(self.topology.num_nodes) or k >= self.made.get(key, 0) or payload != body(*key, k):
                raise ScoreboardError(f"cycle {self.cycle}: host {dest} got a frame from {origin} never sent (#{k})")
            seen = self._seen.setdefault(key, set())
            if k in seen:
                self.duplicates += 1
                continue
            if k < self.highest.get(key, -1):
                self.reordered += 1
            seen.add(k)
            self.highest[key] = max(k, self.highest.get(key, -1))
            self.got[key] = self.got.get(key, 0) + 1
            self.delivered_at.setdefault(key, []).append((self.cycle, k))

    # --- runs --------------------------------------------------------------------------------

    def all_ports_up(self) -> bool:
        """Every live host believes every port usable (the first training is done)."""
        return all(all(h.usable.values()) for h in self.hosts if self.alive(h.id))

    def lost(self) -> int:
        """Frames between live hosts never delivered (so far)."""
        return sum(
            k - self.got.get(key, 0) for key, k in self.made.items() if self.alive(key[0]) and self.alive(key[1])
        )

    def delivered_all(self) -> bool:
        return self.lost() == 0

    def moving(self) -> bool:
        """Some live host has frames queued or unacknowledged on a port whose link is up (DL_Up),
        or actually up and training again: they may still arrive."""
        return any(
            (port.dl_up or self.actually_up(link)) and (port.frames_in or port.dll.replay)
            for h in self.hosts
            if self.alive(h.id)
            for link, port in h.ports.items()
        )

    def drain(self, limit: int, still: int = 100) -> int:
        """Stop the traffic and step until every frame between live hosts has arrived, or nothing
        has moved for ``still`` cycles in a row, or ``limit`` cycles have passed; returns
        :meth:`lost`."""
        self.load = 0.0
        quiet = 0
        for _ in range(limit):
            if not self.lost() or quiet >= still:
                break
            self.step()
            quiet = 0 if self.moving() else quiet + 1
        return self.lost()

    def first_delivery_after(self, origin: int, dest: int, made_from: int, cycle: int) -> int | None:
        """The first cycle from ``cycle`` on at which ``dest`` got a frame of ``origin`` numbered
        ``made_from`` or above (a frame made after some event), or None."""
        for at, k in self.delivered_at.get((origin, dest), []):
            if at >= cycle and k >= made_from:
                return at
        return None

    def describe(self) -> str:
        return ", ".join(f"host {h.id}: " + " ".join(f"{p.state.name}" for p in h.ports.values()) for h in self.hosts)
