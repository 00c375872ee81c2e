"""A fabric of RTL nodes (rtl/simulation/fabric.py) in lockstep with the golden fabric, cycle by
cycle.

The golden harness (sim/harness/fabric.py) decides each cycle's users (frames offered, tokens
handed in), node deaths and channel faults (:meth:`FabricHarness.begin`); the same drive the RTL
fabric. Every cycle, before the clock edge, every live RTL node must show what its golden twin
holds before its step: the word each port transmits, which ports are UP, its topology table,
which user streams take a frame and which ports take a token; and what the golden step does in
the edge: the user frame delivered (origin, class, payload), the verdict adopted, the tokens
given back. A token delivered shows on the RTL's ``ait_out`` a cycle after the golden step that
delivered it, and is compared then. All of a node's per-cycle fields are read in one access,
its ``observe`` port. The golden harness's scoreboard, invariants and ghost meter run as they
do alone, so the RTL fabric is held to every end-to-end guarantee too.

The simulator is reached through a small adapter (``get``/``set`` on port paths), as the link
lockstep's (sim/harness/link_lockstep.py).
"""

from golden.encoding import AIT_VALUE_BITS, WORD_BITS
from rtl.simulation.fabric import observation_layout
from sim.harness.fabric import Clock, FabricHarness
from sim.harness.link_lockstep import LockstepError, drive_controls

HISTORY = 8  # cycles of verdicts and deliveries shown with a failure


def _element(value: int, width: int, i: int) -> int:
    """Element ``i`` of an array field of ``width``-bit elements, element 0 in the low bits."""
    return value >> (i * width) & ((1 << width) - 1)


class FabricLockstep:
    """``harness``: the golden fabric; ``io``: the RTL fabric's ports. ``cycle`` counts the
    cycles compared."""

    def __init__(self, harness: FabricHarness, io):
        self.h, self.io = harness, io
        self.cycle = 0
        t = harness.topology
        self._links = {n.id: t.links_of(n.id) for n in harness.nodes}
        self._others = {n.id: [m for m in range(t.num_nodes) if m != n.id] for n in harness.nodes}
        self._owed = {(n.id, link): [] for n in harness.nodes for link in n.ports}  # tokens due on ait_out
        self._driven = {}
        self._layouts = {
            n.id: list(observation_layout(len(n.ports), len(t.links), len(self._others[n.id]) * n.user_classes))
            for n in harness.nodes
        }
        self.history = []
        self.seen = {"frames": 0, "verdicts": 0, "tokens": 0, "returned": 0, "refused": 0}
        for n in harness.nodes:
            io.set((f"n{n.id}_user_out", "ready"), 1)
            for p in range(len(n.ports)):
                io.set((f"n{n.id}_ait_out", p, "ready"), 1)

    def _fail(self, what):
        recent = "\n".join(f"  cycle {c}: {e}" for c, e in self.history[-HISTORY:])
        raise LockstepError(f"cycle {self.cycle}: {what}\nrecent golden events:\n{recent}")

    # --- before the edge ---------------------------------------------------------------------

    def drive(self) -> Clock:
        """Decide this cycle (golden first half) and drive the RTL with it."""
        io, h = self.io, self.h
        clock = h.begin()
        for (link, d), c in clock.controls.items():
            if c is self._driven.get((link, d)):
                continue
            self._driven[link, d] = c
            drive_controls(io, f"l{link}_{d}", c)
        io.set(("dead",), sum(1 << n.id for n in h.nodes if not h.alive(n.id)))
        for n in h.nodes:
            if not h.alive(n.id):
                continue
            C, others = n.user_classes, self._others[n.id]
            offered = {others.index(dest) * C + cls: payload for dest, cls, payload, _ in clock.offers[n.id]}
            for k in range(len(others) * C):
                io.set((f"n{n.id}_user_in", k, "valid"), int(k in offered))
                if k in offered:
                    io.set((f"n{n.id}_user_in", k, "payload"), int.from_bytes(offered[k].ljust(56, b"\0"), "little"))
            for p, link in enumerate(self._links[n.id]):
                value = clock.ait[n.id].get(link)
                io.set((f"n{n.id}_ait_in", p, "valid"), int(value is not None))
                if value is not None:
                    io.set((f"n{n.id}_ait_in", p, "payload"), value)
        return clock

    # --- at the edge -------------------------------------------------------------------------

    def check_and_step(self, clock: Clock):
        """Inputs settled, before the edge: compare every live RTL node with its golden twin,
        then step the golden fabric."""
        h = self.h
        observed = {n.id: self._observe(n.id) for n in h.nodes if h.alive(n.id)}
        for n in h.nodes:
            if n.id in observed:
                self._check_state(n, clock, observed[n.id])
        results = h.finish(clock)
        for node_id, res in results.items():
            self._check_step(h.nodes[node_id], res, observed[node_id])
        self.cycle += 1

    def _observe(self, node_id) -> dict:
        """The node's ``observe`` port (rtl/simulation/fabric.py ``observation_layout``), taken
        apart into integers."""
        value = self.io.get((f"n{node_id}_observe",))
        return {name: value >> f.offset & ((1 << f.width) - 1) for name, f in self._layouts[node_id]}

    def _check_state(self, n, clock, obs):
        """What the golden node holds before its step."""
        links, P = self._links[n.id], len(n.ports)
        for p, link in enumerate(links):
            want = clock.words[link, n.id]
            got = _element(obs["tx"], WORD_BITS, p)
            if got != want:
                self._fail(f"node {n.id} port {link} drives {got:#020x}, golden {want:#020x}")
        ports_up = sum(n.ports[link].up << p for p, link in enumerate(links))
        if obs["port_up"] != ports_up:
            self._fail(f"node {n.id} ports UP {obs['port_up']:0{P}b}, golden {ports_up:0{P}b}")
        table = sum(e.up << i for i, e in enumerate(n.table))
        if obs["table_up"] != table:
            self._fail(f"node {n.id} table UP {obs['table_up']:b}, golden {table:b}")
        C, others = n.user_classes, self._others[n.id]
        for dest, cls, _, took in clock.offers[n.id]:
            k = others.index(dest) * C + cls
            if (obs["user_ready"] >> k & 1) != took:
                self._fail(f"node {n.id} stream to {dest} class {cls}: ready {not took}, golden took {took}")
            self.seen["refused"] += not took
        for p, link in enumerate(links):
            if (obs["ait_in_ready"] >> p & 1) != n.ports[link].ait_ready:
                self._fail(f"node {n.id} port {link} token ready differs from golden")
            if obs["ait_out_valid"] >> p & 1:
                value = _element(obs["ait_out_payload"], AIT_VALUE_BITS, p)
                owed = self._owed[n.id, link]
                if not owed or owed.pop(0) != value:
                    self._fail(f"node {n.id} port {link} delivered token {value}, golden owes {owed[:1]}")
                self.seen["tokens"] += 1
        if obs["fault"]:
            self._fail(f"node {n.id} raised its fault flag")

    def _check_step(self, n, res, obs):
        """What the golden step did in the edge."""
        if bool(obs["deliver"]) != bool(res.frames):
            self._fail(f"node {n.id} delivered {bool(obs['deliver'])}, golden {res.frames[:1]}")
        if res.frames:
            ((origin, cls, payload),) = res.frames
            data = obs["payload"].to_bytes(56, "little")
            if (obs["origin"], obs["cls"], data) != (origin, cls, bytes(payload).ljust(56, b"\0")):
                got = (obs["origin"], obs["cls"])
                self._fail(f"node {n.id} delivered a frame from {got[0]} class {got[1]}, golden {origin} {cls}")
            self.seen["frames"] += 1
        verdicts = [d for name, d in res.events if name == "verdict"]
        if bool(obs["verdict"]) != bool(verdicts):
            self._fail(f"node {n.id} adopted a verdict {bool(obs['verdict'])}, golden {verdicts}")
        if verdicts:
            ((link, code, subject),) = verdicts
            got = (obs["verdict_link"], obs["verdict_code"], obs["verdict_subject"])
            if got != (link, int(code), subject):
                self._fail(f"node {n.id} adopted verdict {got}, golden {(link, int(code), subject)}")
            self.seen["verdicts"] += 1
            self.history.append((self.cycle, f"node {n.id} adopts {verdicts[0]}"))
        for p, link in enumerate(self._links[n.id]):
            back = [v for l, v in res.ait_returned if l == link]
            got = [_element(obs["returned_value"], AIT_VALUE_BITS, p)] if obs["returned"] >> p & 1 else []
            if got != back:
                self._fail(f"node {n.id} port {link} gave back tokens {got}, golden {back}")
            self.seen["returned"] += len(back)
        for link, value in res.ait:
            self._owed[n.id, link].append(value)
