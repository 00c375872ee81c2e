"""The links of the PCIe-style contrast fabric as one design, for simulation only.

A contrast link (two rtl/contrast/link.py ends and an RTL channel with SKP as its fill word, as
rtl/simulation/pcie_pair.py joins them) per link of a full mesh; the hosts that route, relay and
fail traffic over are software in a PCIe system, and are software here too: the testbench
(sim/harness/cpp/pcie_fabric_experiment.cpp) plays them as golden/contrast/host.py does.
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.encoding import SKP_WORD
from golden.topology import Topology, check_topology
from rtl.contrast.link import PcieLink
from rtl.simulation.channel import Channel
from rtl.simulation.link_pair import FAULT_PORTS, join_port
from rtl.simulation.pcie_pair import observe_end, pcie_observation_layout, resolve_params

# The user ports of each end the fabric passes through (completer_delay keeps its parameter).
USER_PORTS = ("frames_in", "request", "far_receiver")


class PcieFabric(wiring.Component):
    """A contrast link per link of ``topology`` (a full mesh), both ends built with ``params``
    (:class:`golden.pcie_params.PcieParams` or a dict of its fields), on a channel of
    ``latency`` cycles up to ``max_latency``; end ``a`` of link ``l`` is its lower node id and
    direction ``ab`` runs from it, as golden/simulation/channel.py's.

    Ports: per link ``l`` and end ``e`` (``a``, ``b``), prefixed ``l<l>_<e>_``: ``frames_in``
    (a stream of 512-bit frames), ``request``, ``far_receiver`` (receiver detection finds the
    peer), ``frames_out_payload`` (its valid in the observation: the end is always ready) and
    ``observe`` (:func:`rtl.simulation.pcie_pair.pcie_observation_layout`); per link and
    direction, the channel's fault controls prefixed ``l<l>_<d>_``
    (:data:`rtl.simulation.link_pair.FAULT_PORTS`); ``dead`` (a bit per node: from the cycle it
    rises the node's ends send no signal, as a dead host's in sim/harness/pcie_fabric.py).
    Each end takes the word its channel delivered in the previous cycle, as the golden
    fabric's. ValueError for a topology that is not a full mesh or bad parameters.
    """

    def __init__(self, topology: Topology, *, params, latency=8, max_latency=64):
        self.topology = check_topology(topology)
        n = topology.num_nodes
        if len(topology.links) != n * (n - 1) // 2:
            raise ValueError(f"the contrast fabric needs a full mesh, not {topology!r}")
        self.params = params = resolve_params(params)
        self.ends = [{"a": PcieLink(params), "b": PcieLink(params)} for _ in topology.links]
        self.channels = [Channel(latency=latency, max_latency=max_latency, fill_word=SKP_WORD) for _ in topology.links]
        members = {}
        for i, ends in enumerate(self.ends):
            for name, end in ends.items():
                for port in USER_PORTS:
                    members[f"l{i}_{name}_{port}"] = end.signature.members[port]
                members[f"l{i}_{name}_frames_out_payload"] = Out(
                    end.signature.members["frames_out"].signature.members["payload"].shape
                )
                members[f"l{i}_{name}_observe"] = Out(pcie_observation_layout())
            for d in ("ab", "ba"):
                for port in FAULT_PORTS:
                    members[f"l{i}_{d}_{port}"] = self.channels[i].signature.members[f"{d}_{port}"]
        members["dead"] = In(n)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        for i, (ends, ch, (a, b)) in enumerate(zip(self.ends, self.channels, self.topology.links)):
            m.submodules[f"channel{i}"] = ch
            for name, end in ends.items():
                m.submodules[f"l{i}_{name}"] = end
                for port in USER_PORTS:
                    join_port(m, end.signature.members[port], getattr(end, port), getattr(self, f"l{i}_{name}_{port}"))
                m.d.comb += getattr(self, f"l{i}_{name}_frames_out_payload").eq(end.frames_out.payload)
                observe_end(m, getattr(self, f"l{i}_{name}_observe"), end)
            for d, (src, dst) in (("ab", ("a", "b")), ("ba", ("b", "a"))):
                sink, source = getattr(ch, f"{d}_sink"), getattr(ch, f"{d}_source")
                node = a if src == "a" else b
                m.d.comb += [
                    sink.valid.eq(ends[src].tx.valid & ~self.dead[node]),
                    sink.word.eq(ends[src].tx.word),
                ]
                # The receive side registers the line, as rtl/simulation/pcie_pair.py does.
                m.d.sync += [ends[dst].rx.valid.eq(source.valid), ends[dst].rx.word.eq(source.word)]
                for port in FAULT_PORTS:
                    m.d.comb += getattr(ch, f"{d}_{port}").eq(getattr(self, f"l{i}_{d}_{port}"))
        return m
