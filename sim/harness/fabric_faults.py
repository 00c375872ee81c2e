"""The fault interface the fabric harnesses share (sim/harness/fabric.py, the OAE fabric, and
sim/harness/pcie_fabric.py, the PCIe-style one), so that one fault schedule runs on both: a golden
channel per link of the topology (direction "ab" from the lower node id to the higher) with its
own faults, and node deaths (``kill(node, cycle)``: from that cycle the node sends nothing and is
not stepped, and its links are actually down)."""

from golden.simulation.channel import IDLE_WORD, Channel


class FabricFaults:
    """Mixed into a harness that has ``topology``, ``cycle`` and, after :meth:`_make_channels`,
    ``channels`` and ``dead``."""

    def _make_channels(self, latency, faults, seed: int, fill_word=IDLE_WORD) -> dict:
        """Build ``channels`` and an empty ``dead``. ``latency``: one for every link or {link:
        latency}; ``faults``: {link: {"ab": {...}, "ba": {...}}}. Returns {link: latency};
        ValueError for a link missing or unknown, or a latency that is not a positive integer."""
        links = range(len(self.topology.links))
        lat = latency if isinstance(latency, dict) else {i: latency for i in links}
        if set(lat) != set(links):
            raise ValueError(f"latency must give every link {list(links)}, not {sorted(lat)}")
        for i, cycles in lat.items():
            if not isinstance(cycles, int) or isinstance(cycles, bool) or cycles < 1:
                raise ValueError(f"latency of link {i} must be a positive number of cycles, not {cycles!r}")
        faults = faults or {}
        for link in faults:
            if link not in links:
                raise ValueError(f"faults name link {link!r}, not a link of the topology")
        self.channels = [
            Channel(
                lat[i],
                faults_ab=faults.get(i, {}).get("ab"),
                faults_ba=faults.get(i, {}).get("ba"),
                seed=seed * 1000 + i,
                fill_word=fill_word,
            )
            for i in links
        ]
        self.dead = {}  # node -> cycle of death
        return lat

    def kill(self, node: int, cycle: int) -> None:
        if not isinstance(node, int) or node not in range(self.topology.num_nodes):
            raise ValueError(f"node must be in [0, {self.topology.num_nodes}), not {node!r}")
        if node in self.dead:
            raise ValueError(f"node {node} is already dead (from cycle {self.dead[node]})")
        if not isinstance(cycle, int) or cycle <= self.cycle:
            raise ValueError(f"cycle must be later than the current cycle {self.cycle}, not {cycle!r}")
        self.dead[node] = cycle

    def cut(self, link: int, begin: int, end: int) -> None:
        """Both directions of ``link`` carry nothing from cycle ``begin`` until ``end``."""
        if not isinstance(link, int) or link not in range(len(self.channels)):
            raise ValueError(f"link must be in [0, {len(self.channels)}), not {link!r}")
        if not isinstance(begin, int) or not isinstance(end, int) or not self.cycle <= begin < end:
            raise ValueError(f"a cut must run from a cycle >= {self.cycle} to a later one, not {begin!r}..{end!r}")
        for direction in (self.channels[link].ab, self.channels[link].ba):
            direction.cuts = [*direction.cuts, (begin, end)]

    def alive(self, node) -> bool:
        return node not in self.dead or self.cycle < self.dead[node]

    def actually_up(self, link) -> bool:
        a, b = self.topology.links[link]
        ch = self.channels[link]
        return self.alive(a) and self.alive(b) and not ch.ab.cut_at(self.cycle) and not ch.ba.cut_at(self.cycle)
