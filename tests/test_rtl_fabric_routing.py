# amaranth: UnusedElaboratable=no
"""rtl/fabric/routing.py against golden/fabric/routing.py: every destination under every
combination of usable links, on a triangle, a full mesh of four and a ring of five with chords."""

import itertools

import pytest

from golden.fabric.routing import next_hop
from golden.topology import Topology
from rtl.fabric.routing import Router, simple_paths
from sim.harness.amaranth_sim import simulate

TOPOLOGIES = {
    "triangle": Topology.triangle(),
    "mesh4": Topology.full_mesh(4),
    "ring5_chords": Topology(5, [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4), (0, 2), (1, 3)]),
    "line3": Topology(3, [(0, 1), (1, 2)]),
}


@pytest.mark.parametrize("name", list(TOPOLOGIES))
def test_router_matches_golden_for_every_usable_set(name):
    topology = TOPOLOGIES[name]
    links = len(topology.links)
    for node in range(topology.num_nodes):
        dut = Router(topology, node)
        own = topology.links_of(node)
        others = [i for i in range(links) if i not in own]
        seen = set()

        async def bench(ctx, dut=dut, node=node, own=own, others=others, seen=seen):
            # Destinations outside the fabric too: no path.
            for dest in [*range(topology.num_nodes), topology.num_nodes, 255]:
                ctx.set(dut.dest, dest)
                for first_bits in itertools.product((0, 1), repeat=len(own)):
                    for table_bits in itertools.product((0, 1), repeat=len(others)):
                        first = dict(zip(own, first_bits))
                        table = dict(zip(others, table_bits))
                        # Unread bits are set opposite to what is read, so reading one shows.
                        ctx.set(
                            dut.first_hop_up,
                            sum((1 - table.get(i, 0)) << i for i in others) | sum(b << i for i, b in first.items()),
                        )
                        ctx.set(
                            dut.table_up,
                            sum(b << i for i, b in table.items()) | sum((1 - b) << i for i, b in first.items()),
                        )
                        want = None
                        if dest != node and dest < topology.num_nodes:
                            want = next_hop(topology, node, dest, first_hop=first.get, onward=table.get)
                        got = ctx.get(dut.link) if ctx.get(dut.found) else None
                        assert got == want, (node, dest, first, table)
                        seen.add(want is None)

        simulate(dut, bench, clock=None)
        assert seen == {True, False}


def test_paths_are_shortest_first_then_by_node_ids():
    paths = simple_paths(Topology.full_mesh(4), 0, 3)
    assert paths[0] == (0, 3)
    assert paths[1:3] == [(0, 1, 3), (0, 2, 3)]
    assert len(paths) == 5 and all(len(p) == 4 for p in paths[3:])


@pytest.mark.parametrize("node_id", [-1, 3, "0", None])
def test_a_bad_node_id_is_refused(node_id):
    with pytest.raises(ValueError, match="node_id"):
        Router(Topology.triangle(), node_id)


def test_a_fabric_with_too_many_paths_is_refused():
    with pytest.raises(ValueError, match="paths"):
        Router(Topology.full_mesh(9), 0)
