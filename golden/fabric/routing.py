"""Routing: the port a node sends a frame by (PROTOCOL.md 10.7).

A frame for node *d* goes over the shortest path of usable links, ties broken by the lowest
node ids along the path (the breadth-first search below visits neighbours in id order, which
gives exactly that path). Which links are usable depends on the frame: a user frame takes links
the node's table holds UP; a control frame leaves by a port that is UP here, whatever the table
says, and then follows the table (10.7, 10.10).
"""

from collections import deque

from golden.topology import Topology


def next_hop(topology: Topology, src: int, dest: int, first_hop, onward) -> int | None:
    """The link by which node ``src`` sends towards ``dest``, or None if no path is usable.
    ``first_hop(link)``: whether a link of ``src`` itself may be taken; ``onward(link)``:
    whether a link between two other nodes may be. A link of ``src`` is only ever a first hop
    (coming back to ``src`` is never shorter)."""
    frontier, first = deque([src]), {src: None}
    while frontier:
        n = frontier.popleft()
        for m in topology.neighbours(n):
            link = topology.link_between(n, m)
            usable = first_hop(link) if n == src else onward(link)
            if m in first or not usable:
                continue
            first[m] = link if n == src else first[n]
            if m == dest:
                return first[m]
            frontier.append(m)
    return None
