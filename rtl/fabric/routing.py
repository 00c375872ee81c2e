"""Routing in hardware: the port a node sends a frame by (PROTOCOL.md 10.7); twin of
golden/fabric/routing.py."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.topology import Topology, check_topology

# The paths a router weighs grow with the fabric; past this many it is not a block to build as
# a priority select, and the node does not target such fabrics.
MAX_PATHS = 4096


def simple_paths(topology: Topology, src: int, dest: int) -> list:
    """Every path from ``src`` to ``dest`` that visits no node twice, as its node sequence,
    shortest first and, among paths of one length, in the order of their node ids."""
    found = []

    def walk(path):
        here = path[-1]
        if here == dest:
            found.append(tuple(path))
            return
        for n in topology.neighbours(here):
            if n not in path:
                walk(path + [n])
                if len(found) > MAX_PATHS:
                    raise ValueError(f"more than {MAX_PATHS} paths from node {src} to {dest}: fabric too large")

    walk([src])
    return sorted(found, key=lambda p: (len(p), p))


class Router(wiring.Component):
    """The link by which node ``node_id`` of ``topology`` sends a frame for ``dest``.

    The shortest path of usable links wins, ties going to the lowest node ids along it; the
    router checks the simple paths to ``dest`` in that order and takes the first whose links are
    all usable, so it needs no search at run time.

    Ports (combinational): ``dest`` (node id, in), ``first_hop_up`` (in, one bit per link of
    the fabric: may this node's own link be taken; a user frame gives the table's UP bits, a
    control frame its ports' UP bits), ``table_up`` (in, one bit per link: the table holds it
    UP; read for links between other nodes), ``found`` (out: some path is usable), ``link``
    (out: the first link of that path). Bits of ``first_hop_up`` for links not of this node and
    of ``table_up`` for this node's links are not read. ``dest`` equal to ``node_id`` or outside
    the fabric gives ``found`` 0.

    Latency: none (logic only). Failure behaviour: none; ValueError at construction for a bad
    ``node_id`` or a fabric with too many paths to weigh.
    """

    def __init__(self, topology: Topology, node_id: int):
        check_topology(topology).check_node("node_id", node_id)
        self._topology, self._node = topology, node_id
        self._paths = {d: simple_paths(topology, node_id, d) for d in range(topology.num_nodes) if d != node_id}
        links = len(topology.links)
        super().__init__(
            {
                "dest": In(enc.NODE_ID_BITS),
                "first_hop_up": In(links),
                "table_up": In(links),
                "found": Out(1),
                "link": Out(bits_for(links - 1)),
            }
        )

    def elaborate(self, platform):
        m = Module()
        t = self._topology
        with m.Switch(self.dest):
            for dest, paths in self._paths.items():
                with m.Case(dest):
                    # Last path first: each later assignment overrides, so the first usable path wins.
                    for path in reversed(paths):
                        hops = [t.link_between(a, b) for a, b in zip(path, path[1:])]
                        usable = self.first_hop_up[hops[0]]
                        for link in hops[1:]:
                            usable = usable & self.table_up[link]
                        with m.If(usable):
                            m.d.comb += [self.found.eq(1), self.link.eq(hops[0])]
        return m
