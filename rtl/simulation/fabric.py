"""A fabric of RTL nodes joined by RTL channels, as one design, for simulation only.

Not for an FPGA: it lets Verilator (or amaranth.sim) run a whole fabric of PROTOCOL.md 10 (three
nodes and three channels for a triangle), while the testbench only drives the users and the
channels' faults and watches what each node does.
"""

from amaranth.hdl import Cat, Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out, connect

from golden import encoding as enc
from golden.encoding import Verdict
from golden.topology import Topology, check_topology
from rtl.fabric.node import Node
from rtl.fabric.outbound import PAYLOAD_BITS
from rtl.simulation.channel import Channel
from rtl.simulation.link_pair import FAULT_PORTS, join_port

# The node's user ports the fabric passes through, prefixed ``n<node>_``.
USER_PORTS = ("user_in", "user_out", "ait_in", "withdraw", "ait_out", "returned", "returned_value")


def observation_layout(ports: int, links: int, streams: int) -> data.StructLayout:
    """What a lockstep checker reads of one node every cycle, in one port, for a node of
    ``ports`` ports in a fabric of ``links`` links with ``streams`` user streams: the word each
    port transmits, which ports are UP, the table, the user streams' readiness, a delivery
    (origin, class, payload), a verdict adopted, the tokens, and the fault flag."""
    P = ports
    return data.StructLayout(
        {
            "tx": data.ArrayLayout(enc.WORD_BITS, P),
            "port_up": P,
            "table_up": links,
            "user_ready": streams,
            "deliver": 1,
            "origin": enc.NODE_ID_BITS,
            "cls": enc.CLASS_BITS,
            "payload": PAYLOAD_BITS,
            "verdict": 1,
            "verdict_link": enc.LINK_ID_BITS,
            "verdict_code": Verdict,
            "verdict_subject": enc.NODE_ID_BITS,
            "ait_in_ready": P,
            "ait_out_valid": P,
            "ait_out_payload": data.ArrayLayout(enc.AIT_VALUE_BITS, P),
            "returned": P,
            "returned_value": data.ArrayLayout(enc.AIT_VALUE_BITS, P),
            "fault": 1,
        }
    )


class Fabric(wiring.Component):
    """A :class:`rtl.fabric.node.Node` per node of ``topology`` (``node_params`` to each:
    ``user_classes``, ``seed``, ``ack_every``, ``e2e_window``, ``forward_depth`` and link
    parameters) and a :class:`rtl.simulation.channel.Channel` per link, of ``latency`` cycles
    (one for every link, or a list per link) up to ``max_latency``; direction ``ab`` runs from
    the link's lower node id to the higher, as golden/simulation/channel.py's.

    Ports: per node ``n``, its user ports prefixed ``n<n>_`` (``user_in``, ``user_out``,
    ``ait_in``, ``withdraw``, ``ait_out``, ``returned``, ``returned_value``) and ``n<n>_observe``
    (:func:`observation_layout`); per link ``l`` and direction ``d``, the channel's fault
    controls prefixed ``l<l>_<d>_`` (:data:`rtl.simulation.link_pair.FAULT_PORTS`) and its
    ``current_latency``; ``dead`` (a bit per node: from the cycle it rises the node's ports send
    no signal, as a dead node's in the golden harness).
    """

    def __init__(self, topology: Topology, *, latency=8, max_latency=64, **node_params):
        self.topology = check_topology(topology)
        links = len(topology.links)
        lat = list(latency) if isinstance(latency, (list, tuple)) else [latency] * links
        if len(lat) != links:
            raise ValueError(f"latency must give one latency per link ({links}), not {len(lat)}")
        self.nodes = [Node(node_id=n, topology=topology, **node_params) for n in range(topology.num_nodes)]
        self.channels = [Channel(latency=lat[i], max_latency=max_latency) for i in range(links)]
        members = {}
        for n, node in enumerate(self.nodes):
            for port in USER_PORTS:
                members[f"n{n}_{port}"] = node.signature.members[port]
            layout = observation_layout(len(node.port_params), len(topology.links), len(node.user_in))
            members[f"n{n}_observe"] = Out(layout)
        for i, ch in enumerate(self.channels):
            for d in ("ab", "ba"):
                for port in (*FAULT_PORTS, "current_latency"):
                    members[f"l{i}_{d}_{port}"] = ch.signature.members[f"{d}_{port}"]
        members["dead"] = In(topology.num_nodes)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        t = self.topology
        for n, node in enumerate(self.nodes):
            m.submodules[f"node{n}"] = node
            for port in USER_PORTS:
                join_port(m, node.signature.members[port], getattr(node, port), getattr(self, f"n{n}_{port}"))
            obs = getattr(self, f"n{n}_observe")
            m.d.comb += [
                obs.tx.eq(Cat(tx.word for tx in node.tx)),
                obs.port_up.eq(node.port_up),
                obs.table_up.eq(node.table_up),
                obs.user_ready.eq(Cat(s.ready for s in node.user_in)),
                obs.deliver.eq(node.user_out.valid),
                obs.origin.eq(node.user_out.payload.origin),
                obs.cls.eq(node.user_out.payload.cls),
                obs.payload.eq(node.user_out.payload.payload),
                obs.verdict.eq(node.verdict),
                obs.verdict_link.eq(node.verdict_link),
                obs.verdict_code.eq(node.verdict_code),
                obs.verdict_subject.eq(node.verdict_subject),
                obs.ait_in_ready.eq(Cat(s.ready for s in node.ait_in)),
                obs.ait_out_valid.eq(Cat(s.valid for s in node.ait_out)),
                obs.ait_out_payload.eq(Cat(s.payload for s in node.ait_out)),
                obs.returned.eq(node.returned),
                obs.returned_value.eq(node.returned_value),
                obs.fault.eq(node.fault),
            ]
        for i, (ch, (a, b)) in enumerate(zip(self.channels, t.links)):
            m.submodules[f"channel{i}"] = ch
            for d, (src, dst) in (("ab", (a, b)), ("ba", (b, a))):
                tx = self.nodes[src].tx[t.links_of(src).index(i)]
                m.d.comb += [
                    getattr(ch, f"{d}_sink").valid.eq(tx.valid & ~self.dead[src]),
                    getattr(ch, f"{d}_sink").word.eq(tx.word),
                ]
                connect(m, getattr(ch, f"{d}_source"), self.nodes[dst].rx[t.links_of(dst).index(i)])
                for port in FAULT_PORTS:
                    m.d.comb += getattr(ch, f"{d}_{port}").eq(getattr(self, f"l{i}_{d}_{port}"))
                m.d.comb += getattr(self, f"l{i}_{d}_current_latency").eq(getattr(ch, f"{d}_current_latency"))
        return m
