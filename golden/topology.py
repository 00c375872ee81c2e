"""The fabric's graph, a build parameter of every node (PROTOCOL.md 10.1).

Nodes ``0 .. num_nodes - 1`` and links between them, a link's id its index in the list; every
node knows the graph. This is a spec module: it holds the graph and the facts read off it (the
ports of a node, the peer across a link, a link's arbiters), never what a node does with them,
so the RTL node may build its tables from it as the golden node does.
"""

from golden import encoding as enc
from golden.params import check_int


class Topology:
    """Nodes ``0 .. num_nodes - 1`` and ``links`` [(a, b)], a link's id its index. Raises
    ValueError for a node id out of range, a self-loop or a repeated link."""

    def __init__(self, num_nodes: int, links):
        if not isinstance(num_nodes, int) or isinstance(num_nodes, bool) or not 2 <= num_nodes <= enc.MAX_NODES:
            raise ValueError(f"num_nodes must be an integer in [2, {enc.MAX_NODES}], not {num_nodes!r}")
        self.num_nodes = num_nodes
        self.links = []
        for link in links:
            if (
                not isinstance(link, tuple)
                or len(link) != 2
                or not all(isinstance(n, int) and 0 <= n < num_nodes for n in link)
                or link[0] == link[1]
            ):
                raise ValueError(f"links must be pairs of distinct node ids in [0, {num_nodes}), not {link!r}")
            pair = tuple(sorted(link))
            if pair in self.links:
                raise ValueError(f"link {link!r} given twice")
            self.links.append(pair)
        if not self.links or len(self.links) > 1 << enc.LINK_ID_BITS:
            raise ValueError(f"a fabric has 1 to {1 << enc.LINK_ID_BITS} links, not {len(self.links)}")

    def __repr__(self):
        return f"Topology({self.num_nodes}, {self.links!r})"

    @classmethod
    def triangle(cls) -> "Topology":
        return cls(3, [(0, 1), (1, 2), (0, 2)])

    @classmethod
    def full_mesh(cls, n: int) -> "Topology":
        return cls(n, [(a, b) for a in range(n) for b in range(a + 1, n)])

    @classmethod
    def torus(cls, rows: int, cols: int) -> "Topology":
        """A ``rows`` x ``cols`` torus with one diagonal in every square: node ``r * cols + c``
        links to its right, lower and lower-right neighbours (wrapping round), so every link lies
        in two triangles or more and has arbiters (10.1). Both sides at least 3."""
        for name, value in (("rows", rows), ("cols", cols)):
            check_int(name, value, 3, enc.MAX_NODES)
        node = lambda r, c: (r % rows) * cols + c % cols  # noqa: E731
        return cls(
            rows * cols,
            [
                (node(r, c), node(r + dr, c + dc))
                for r in range(rows)
                for c in range(cols)
                for dr, dc in ((0, 1), (1, 0), (1, 1))
            ],
        )

    def link_between(self, a: int, b: int) -> int | None:
        pair = (min(a, b), max(a, b))
        return self.links.index(pair) if pair in self.links else None

    def neighbours(self, n: int) -> list:
        return sorted(b if a == n else a for a, b in self.links if n in (a, b))

    def links_of(self, n: int) -> list:
        return [i for i, pair in enumerate(self.links) if n in pair]

    def arbiters(self, link: int) -> list:
        """The nodes adjacent to both ends of ``link``: its arbiters (10.1)."""
        a, b = self.links[link]
        return sorted(set(self.neighbours(a)) & set(self.neighbours(b)))

    def peer(self, link: int, n: int) -> int:
        a, b = self.links[link]
        return b if n == a else a

    def check_node(self, name: str, value) -> int:
        """``value`` if it is a node id of this fabric; otherwise ValueError naming ``name``."""
        return check_int(name, value, 0, self.num_nodes - 1)


def check_topology(value) -> Topology:
    """``value`` if it is a :class:`Topology`; otherwise ValueError."""
    if not isinstance(value, Topology):
        raise ValueError(f"topology must be a Topology, not {value!r}")
    return value
