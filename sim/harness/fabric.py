"""Golden nodes joined by golden channels, with traffic, an end-to-end scoreboard, the fabric
invariants of PROTOCOL.md 10.4 and the ghost meter.

:class:`FabricHarness` builds a :class:`golden.fabric.node.Node` per node of a
:class:`golden.topology.Topology` and a :class:`golden.simulation.channel.Channel` per link (direction "ab"
from the lower node id to the higher). Faults: the channels' own (per link and direction,
``faults={link: {"ab": {...}, "ba": {...}}}``) and node deaths (``kill(node, cycle)``: from
that cycle the node sends nothing and is not stepped; its links are actually down), both from
:class:`sim.harness.fabric_faults.FabricFaults`.

The scoreboard raises :class:`ScoreboardError` at the first cycle where the fabric breaks a
guarantee: a user frame delivered twice, out of order, corrupted, to the wrong node, or never
sent; a token delivered twice, or delivered and returned; two nodes holding the same epoch of
a link with different states; a user-class frame handed to a port whose link the node's
table holds DOWN; a link whose token-plane balance does not sum to zero while both its ends
are UP in one session (the link harness's check, PROTOCOL.md 3.3, on every link whose ends
live). The ghost meter (sim/harness/ghost.py) reads every live node's belief of every link and the
links' actual state.
"""

import random
from dataclasses import dataclass, field

from golden.encoding import NODE_PAYLOAD_BYTES, Verdict
from golden.fabric.node import Node, failover_bound, verdict_bound
from golden.topology import Topology
from sim.harness.base import Harness, ScoreboardError
from sim.harness.fabric_faults import FabricFaults
from sim.harness.ghost import GhostMeter
from sim.harness.link import LinkHarness


def _payload(origin, dest, cls, k) -> bytes:
    head = bytes([origin, dest, cls]) + k.to_bytes(4, "little")
    body = random.Random(hash((origin, dest, cls, k)) & 0xFFFFFFFF).randbytes(NODE_PAYLOAD_BYTES - len(head))
    return head + body


@dataclass
class Clock:
    """One cycle's first half (:meth:`FabricHarness.begin`): the word each port drives
    {(link, node): word or None}, each channel direction's controls {(link, "ab"/"ba"):
    Controls}, what each node receives {node: {link: word or None}}, and per live node the
    user's offers [(dest, cls, payload, taken)] and tokens handed in {link: value}."""

    words: dict = field(default_factory=dict)
    controls: dict = field(default_factory=dict)
    rx: dict = field(default_factory=dict)
    offers: dict = field(default_factory=dict)
    ait: dict = field(default_factory=dict)


@dataclass
class VerdictLog:
    """When each node adopted each verdict: {(link, verdict, subject): {node: cycle}}."""

    adopted: dict = field(default_factory=dict)

    def record(self, cycle, node, detail):
        self.adopted.setdefault(detail, {}).setdefault(node, cycle)


class FabricHarness(FabricFaults, Harness):
    """``topology``; ``latency``: one latency for every link or {link: latency}; ``load``: the
    probability per cycle that each live node's user makes a frame for each other node (in a
    user class drawn at random when there are several); each stream's user offers its oldest
    frame not yet taken once per cycle, and keeps it while the node refuses it (the stream's
    end-to-end window is full, PROTOCOL.md 10.10);
    ``ait_rate``: per port and cycle, the probability its user hands a token in when it may.
    ``node_seed``: the nodes' seed (their ports' nonces), when it is not ``seed``: an RTL fabric
    built once for a seed runs with the traffic and faults of any other.
    ``link_params`` go to every node (``ack_every``, ``e2e_window``) and through it to every port."""

    def __init__(
        self,
        topology: Topology,
        latency=8,
        *,
        faults=None,
        load=0.05,
        ait_rate=0.0,
        user_classes=1,
        seed=0,
        node_seed=None,
        **link_params,
    ):
        if not isinstance(topology, Topology):
            raise ValueError(f"topology must be a Topology, not {topology!r}")
        for name, p in (("load", load), ("ait_rate", ait_rate)):
            if not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1], not {p!r}")
        self.topology, self.load, self.ait_rate = topology, load, ait_rate
        self.rng = random.Random(seed)
        self.nodes = [
            Node(n, topology, user_classes=user_classes, seed=seed if node_seed is None else node_seed, **link_params)
            for n in range(topology.num_nodes)
        ]
        self._make_channels(latency, faults, seed)
        self.cycle = 0
        self.made = {}  # (origin, dest, cls) -> frames its user made
        self.sent = {}  # (origin, dest, cls) -> frames handed in (the node took them)
        self.got = {}  # (origin, dest, cls) -> frames delivered
        self.tokens_in, self.tokens_out, self.tokens_back = set(), set(), set()
        self._next_token = 1
        self.token_orders = {}  # (node, link) -> tokens to hand in there as soon as it may
        self.handed_at = {}  # token -> (node, link, cycle)
        self.verdicts = VerdictLog()
        self.meter = None
        # Per link, the link harness's token-plane balance check (PROTOCOL.md 3.3) on its two
        # ports, while both ends live (a dead end's port is no longer stepped).
        self.monitors = {
            i: LinkHarness.watching(self.nodes[a].ports[i], self.nodes[b].ports[i], self.channels[i])
            for i, (a, b) in enumerate(topology.links)
        }
        for n in self.nodes:
            for link, port in n.ports.items():
                port.step = self._watch_port(n, link, port.step)

    def _watch_port(self, node, link, step):
        """PROTOCOL.md 10.4 invariant 1, at the port's boundary: no user-class frame (user or a
        user stream's end-to-end ACK) goes into a port whose link the node's table holds DOWN. The
        port's choice is the clock's (10.11): it reads the table at the start of the clock, before
        the control engine adopts this clock's verdict."""

        def watched(word, frames=None, **kw):
            if frames and not node.table_up_at_start[link] and any(cls != node.control_class for cls in frames):
                raise ScoreboardError(
                    f"cycle {self.cycle}: node {node.id} handed a user frame to its port on link "
                    f"{link}, which its table holds DOWN"
                )
            return step(word, frames=frames, **kw)

        return watched

    # --- faults ------------------------------------------------------------------------------

    def flap_storm(self, rng, start: int) -> None:
        """Random flaps on every link and direction from about ``start``: one to three cuts of
        2 to 300 cycles each (some shorter than a round trip), 50 to 800 cycles apart, drawn
        from ``rng`` (tests/test_fabric.py, tests/test_fabric_events.py)."""
        for link in range(len(self.topology.links)):
            for d in ("ab", "ba"):
                flaps, t = [], start + rng.randrange(200)
                for _ in range(rng.randrange(1, 4)):
                    length = rng.choice([2, 5, 12, 40, 300])
                    flaps.append((t, t + length))
                    t += length + rng.randrange(50, 800)
                getattr(self.channels[link], d).cuts = flaps

    def order_token(self, node: int, link: int) -> None:
        """Hand one token to ``node``'s port on ``link`` the first cycle it may take one."""
        if node not in range(self.topology.num_nodes) or link not in self.nodes[node].ports:
            raise ValueError(f"node {node!r} has no port on link {link!r}")
        self.token_orders[node, link] = self.token_orders.get((node, link), 0) + 1

    def order_tokens(self) -> None:
        """Hand one token to every live port the first cycle it may take one."""
        for n in self.nodes:
            if self.alive(n.id):
                for link in n.ports:
                    self.order_token(n.id, link)

    # --- the ghost meter ---------------------------------------------------------------------

    def start_meter(self):
        """Start the ghost meter now (normally once every link is UP after the first training)."""
        links = [str(i) for i in range(len(self.topology.links))]
        live = [n for n in range(self.topology.num_nodes) if self.alive(n)]
        self.meter = GhostMeter(links, {str(n): links for n in live}, start=self.cycle)
        self._sample()

    def _sample(self):
        for n, died in self.dead.items():
            if died == self.cycle and self.meter.start < died:
                self.meter.retire(self.cycle, str(n))
        actual = {str(i): self.actually_up(i) for i in range(len(self.topology.links))}
        believed = {
            (str(n.id), str(i)): n.believes_up(i)
            for n in self.nodes
            if self.alive(n.id)
            for i in range(len(self.topology.links))
        }
        self.meter.sample(self.cycle, actual, believed)

    # --- one cycle ---------------------------------------------------------------------------

    def step(self):
        self.finish(self.begin())

    def begin(self) -> "Clock":
        """The first half of a cycle: the word every port drives, each channel direction's
        controls and what it delivers, and every live node's user: the frames it offers (each
        stream's next) and the tokens it hands in. A lockstep drives the RTL fabric from it
        before :meth:`finish` steps the golden nodes."""
        clock = Clock()
        for n in self.nodes:
            for link, port in n.ports.items():
                clock.words[link, n.id] = port.tx_word if self.alive(n.id) else None
        clock.rx = {n.id: {} for n in self.nodes}
        for i, ch in enumerate(self.channels):
            a, b = self.topology.links[i]
            for d, direction, src, dst in (("ab", ch.ab, a, b), ("ba", ch.ba, b, a)):
                c = clock.controls[i, d] = direction.controls(direction.cycle)
                clock.rx[dst][i] = direction.step_with(clock.words[i, src], c)
        for n in self.nodes:
            if not self.alive(n.id):
                continue
            clock.offers[n.id] = self._traffic(n)
            ait = clock.ait[n.id] = {}
            for link, port in n.ports.items():
                ordered = self.token_orders.get((n.id, link), 0)
                if port.ait_ready and (ordered or (self.ait_rate and self.rng.random() < self.ait_rate)):
                    if ordered:
                        self.token_orders[n.id, link] = ordered - 1
                    ait[link] = self._next_token
                    self.tokens_in.add(self._next_token)
                    self.handed_at[self._next_token] = (n.id, link, self.cycle)
                    self._next_token += 1
        return clock

    def finish(self, clock: "Clock") -> dict:
        """The second half: every live node steps on what :meth:`begin` decided, and the
        scoreboard, the invariants and the ghost meter see the cycle. Returns {node: NodeResult}."""
        results = {}
        for n in self.nodes:
            if not self.alive(n.id):
                continue
            res = results[n.id] = n.step(clock.rx[n.id], ait=clock.ait[n.id])
            self.score(n, res)
        self.cycle += 1
        words, rx = clock.words, clock.rx
        for i, (a, b) in enumerate(self.topology.links):
            if i in self.monitors:
                if not (self.alive(a) and self.alive(b)):
                    del self.monitors[i]
                    continue
                self.monitors[i].cycle = self.cycle
                self.monitors[i].account((words[i, a], words[i, b]), (rx[b][i], rx[a][i]))
        self._check_epochs()
        if self.meter is not None:
            self._sample()
        return results

    def _traffic(self, n) -> list:
        """The user of node ``n`` this cycle: new frames made, and each stream's oldest frame not
        yet taken offered. Returns the offers, [(dest, cls, payload, taken)]."""
        offers = []
        if self.load:
            for dest in range(self.topology.num_nodes):
                if dest != n.id and self.rng.random() < self.load:
                    cls = self.rng.randrange(n.user_classes) if n.user_classes > 1 else 0
                    key = (n.id, dest, cls)
                    self.made[key] = self.made.get(key, 0) + 1
        # In (destination, class) order, the order in which the loop above makes them.
        for key in sorted(k for k in self.made if k[0] == n.id):
            _, dest, cls = key
            k = self.sent.get(key, 0)
            if k < self.made[key]:
                payload = _payload(n.id, dest, cls, k)
                took = n.send(dest, cls, payload)
                offers.append((dest, cls, payload, took))
                if took:
                    self.sent[key] = k + 1
        return offers

    def score(self, n, res):
        for origin, cls, payload in res.frames:
            key = (origin, n.id, cls)
            k = self.got.get(key, 0)
            if k >= self.sent.get(key, 0):
                raise ScoreboardError(f"cycle {self.cycle}: node {n.id} got frame #{k} from {origin} never sent")
            if payload != _payload(origin, n.id, cls, k):
                raise ScoreboardError(
                    f"cycle {self.cycle}: node {n.id} frame #{k} from {origin} class {cls} "
                    f"is not the one sent (corrupted, reordered or duplicated)"
                )
            self.got[key] = k + 1
        for _, value in res.ait:
            if value not in self.tokens_in or value in self.tokens_out or value in self.tokens_back:
                raise ScoreboardError(
                    f"cycle {self.cycle}: token {value} delivered twice, after its return, or never sent"
                )
            self.tokens_out.add(value)
        for _, value in res.ait_returned:
            if value in self.tokens_out or value in self.tokens_back:
                raise ScoreboardError(f"cycle {self.cycle}: token {value} returned after delivery or twice")
            self.tokens_back.add(value)
        for name, detail in res.events:
            if name == "verdict":
                self.verdicts.record(self.cycle, n.id, detail)

    def _check_epochs(self):
        for link in range(len(self.topology.links)):
            seen = {}
            for n in self.nodes:
                if not self.alive(n.id):
                    continue
                e = n.table[link]
                if seen.setdefault(e.epoch, e.up) != e.up:
                    raise ScoreboardError(f"cycle {self.cycle}: link {link} epoch {e.epoch} held both UP and DOWN")

    # --- runs --------------------------------------------------------------------------------

    def all_ports_up(self) -> bool:
        return all(p.up for n in self.nodes if self.alive(n.id) for p in n.ports.values())

    def tables_agree(self) -> bool:
        live = [n for n in self.nodes if self.alive(n.id)]
        return all([(e.up, e.epoch) for e in n.table] == [(e.up, e.epoch) for e in live[0].table] for n in live)

    def delivered_all(self, to_live_only=True) -> bool:
        """Every frame made between live nodes has been handed in and delivered."""
        for (o, d, c), k in self.made.items():
            if to_live_only and not (self.alive(o) and self.alive(d)):
                continue
            if self.got.get((o, d, c), 0) != k:
                return False
        return True

    def rtt(self, link) -> int:
        """The round trip the ends of ``link`` measured (the larger of the two)."""
        a, b = self.topology.links[link]
        rtts = [self.nodes[n].ports[link].rtt for n in (a, b)]
        if None in rtts:
            raise ValueError(f"link {link} has not been trained: no round trip measured")
        return max(rtts)

    def bounds(self, failed) -> dict:
        """PROTOCOL.md 10.8 for a single fault of the links ``failed`` of a triangle (one link:
        LINK_DOWN; a node's two links: NODE_DOWN or UNREACHABLE), from the round trips measured
        before it: {"verdict": cycles, "failover": cycles}."""
        if self.topology.num_nodes != 3 or len(self.topology.links) != 3:
            raise ValueError("the bounds of PROTOCOL.md 10.8 are for a triangle")
        failed = set(failed)
        if not failed or not failed <= {0, 1, 2} or len(failed) > 2:
            raise ValueError(f"failed must name one or two links of the triangle, not {sorted(failed)!r}")
        rf = max(self.rtt(i) for i in failed)
        ra = max(self.rtt(i) for i in range(3) if i not in failed)
        p = self.nodes[0].ports[0].p
        return {
            "verdict": verdict_bound(rf, ra, p.margin, p.read_parts),
            "failover": failover_bound(rf, ra, p.margin, p.read_parts),
        }

    def verdict_cycles(self, link, verdict):
        """{node: cycle} at which each node adopted ``verdict`` on ``link`` (any subject)."""
        out = {}
        for (l, v, _), when in self.verdicts.adopted.items():
            if l == link and v == verdict:
                for node, cycle in when.items():
                    out.setdefault(node, cycle)
        return out


def make_triangle(latency=8, **kw) -> FabricHarness:
    return FabricHarness(Topology.triangle(), latency, **kw)


__all__ = ["FabricHarness", "Verdict", "make_triangle"]
