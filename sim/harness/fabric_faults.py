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
        # A gray line (data words dropped) carries no user frame: down, though both ends hear each other.
        lines = (ch.ab, ch.ba)
        return self.alive(a) and self.alive(b) and not any(d.cut_at(self.cycle) or d.gray_at(self.cycle) for d in lines)

    def random_faults(self, rng, start: int, spare: int | None = None) -> list:
        """One to three faults drawn from ``rng`` within 600 cycles of ``start``: a cut of both
        directions or of one (5 to 1500 cycles: shorter than a round trip up to past every
        bound), a partition (a node's links cut towards it), a burst of two to four flaps on a
        link, and at most one node death (never node ``spare``). Cuts of one direction are
        merged in time order. Returns what it scheduled, for the log."""
        cuts, done, killed = {}, [], False
        nodes = range(self.topology.num_nodes)
        for _ in range(rng.randrange(1, 4)):
            t = start + rng.randrange(600)
            kind = rng.choice(["cut", "cut", "one_way", "partition", "flaps", "death"])
            if kind == "death" and not killed:
                node = rng.choice([n for n in nodes if n != spare])
                self.kill(node, t)
                killed = True
                done.append(("death", node, t))
                continue
            length = rng.choice([5, 40, 300, 1500])
            link = rng.randrange(len(self.topology.links))
            if kind in ("cut", "one_way", "death"):
                dirs = ("ab", "ba") if kind != "one_way" else (rng.choice(["ab", "ba"]),)
                for d in dirs:
                    cuts.setdefault((link, d), []).append((t, t + length))
                done.append(("cut", link, dirs, t, length))
            elif kind == "partition":
                node = rng.choice(list(nodes))
                for i, (a, b) in enumerate(self.topology.links):
                    if node in (a, b):
                        cuts.setdefault((i, "ab" if node == b else "ba"), []).append((t, t + length))
                done.append(("partition", node, t, length))
            else:
                for k in range(rng.randrange(2, 5)):
                    at = t + k * rng.randrange(30, 400)
                    cuts.setdefault((link, rng.choice(["ab", "ba"])), []).append((at, at + rng.choice([2, 12, 40])))
                done.append(("flaps", link, t))
        for (link, d), spans in cuts.items():
            getattr(self.channels[link], d).cuts = sorted(spans)
        return done
