"""Two contrast-link ends (rtl/contrast/link.py) and the channel as one design, for simulation only.

The twin of sim/harness/pcie.py's pair: the channel is rtl/simulation/channel.py with SKP as its fill
word, so the contrast link runs on the same line and faults as the OAE link (rtl/simulation/link_pair.py).
Each end takes the word its channel delivered in the previous cycle (a register between line and
receiver), as the golden pair does.
"""

import dataclasses

from amaranth.hdl import Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import Out

from golden import encoding as enc
from golden.encoding import SKP_WORD
from golden.pcie_params import PcieParams
from rtl.contrast.link import COUNTERS, PcieLink
from rtl.simulation.channel import Channel
from rtl.simulation.link_pair import FAULT_PORTS, join_port

# frames_out is always ready (a Const, which cannot be a port): the pair exports its payload as
# ``<end>_frames_out_payload`` and its valid in the observation.
_USER_PORTS = ("frames_in", "request", "request_ok", "request_tag", "far_receiver", "completer_delay")


def pcie_observation_layout() -> data.StructLayout:
    """What a lockstep checker reads of one end every cycle, in one port: the transmitted word
    (``tx_valid`` low: electrical idle), the user ports' flags, the beliefs, state and rate."""
    return data.StructLayout(
        {
            "tx_valid": 1,
            "tx_word": enc.WORD_BITS,
            "frames_in_ready": 1,
            "frames_out_valid": 1,
            "request_ok": 1,
            "request_tag": enc.STP_REQ_TAG_BITS,
            "dl_up": 1,
            "completer_alive": 1,
            "state": enc.LTSSM_STATE_BITS,
            "rate": 1,
        }
    )


def observe_end(m, observe, end) -> None:
    """Drive ``observe`` (:func:`pcie_observation_layout`) from contrast end ``end``."""
    fields = {
        "tx_valid": end.tx.valid,
        "tx_word": end.tx.word,
        "frames_in_ready": end.frames_in.ready,
        "frames_out_valid": end.frames_out.valid,
        "request_ok": end.request_ok,
        "request_tag": end.request_tag,
        "dl_up": end.dl_up,
        "completer_alive": end.completer_alive,
        "state": end.state,
        "rate": end.rate,
    }
    m.d.comb += [observe[field].eq(value) for field, value in fields.items()]


def resolve_params(params) -> PcieParams:
    """``params`` as a :class:`PcieParams`: one already, or a dict of its fields (ValueError for
    anything else or an unknown field)."""
    if isinstance(params, PcieParams):
        return params
    if not isinstance(params, dict):
        raise ValueError(f"params must be a PcieParams or a dict of its fields, not {params!r}")
    unknown = sorted(set(params) - {f.name for f in dataclasses.fields(PcieParams)})
    if unknown:
        raise ValueError(f"params: no PcieParams field {', '.join(unknown)}")
    return PcieParams(**params)


def pcie_counters_layout() -> data.StructLayout:
    """Every counter of one end, in one port (a checker may read it less often: a counter that
    went wrong stays wrong)."""
    return data.StructLayout({name: enc.STATUS_COUNTER_BITS for name in COUNTERS})


class PcieLinkPair(wiring.Component):
    """End A and end B of the contrast link joined by :class:`Channel` (``ab``: A to B).

    Ports: the user ports of each end prefixed ``a_`` / ``b_`` (``far_receiver`` included: the
    testbench says whether receiver detection finds the peer; ``completer_delay`` too: it holds
    its generation value only if driven so; of ``frames_out`` the payload,
    ``a_frames_out_payload``, its valid being observed), ``a_observe`` / ``b_observe``
    (:func:`pcie_observation_layout`), ``a_counters`` / ``b_counters`` (:func:`pcie_counters_layout`),
    and the fault controls of each direction prefixed
    ``ab_`` / ``ba_``. ``params``: :class:`golden.pcie_params.PcieParams` or a dict of its fields,
    both ends alike; ``latency``/``latency_ba``/``max_latency`` configure the channel.
    """

    def __init__(self, params, *, latency=4, latency_ba=None, max_latency=64):
        self.params = params = resolve_params(params)
        self.ends = {"a": PcieLink(params), "b": PcieLink(params)}
        self.channel = Channel(latency=latency, latency_ba=latency_ba, max_latency=max_latency, fill_word=SKP_WORD)
        members = {}
        for name, end in self.ends.items():
            for port in _USER_PORTS:
                members[f"{name}_{port}"] = end.signature.members[port]
            members[f"{name}_frames_out_payload"] = Out(
                end.signature.members["frames_out"].signature.members["payload"].shape
            )
            members[f"{name}_observe"] = Out(pcie_observation_layout())
            members[f"{name}_counters"] = Out(pcie_counters_layout())
        for direction in ("ab", "ba"):
            for port in FAULT_PORTS:
                members[f"{direction}_{port}"] = self.channel.signature.members[f"{direction}_{port}"]
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.channel = ch = self.channel
        for name, end in self.ends.items():
            m.submodules[name] = end
            for port in _USER_PORTS:
                join_port(m, end.signature.members[port], getattr(end, port), getattr(self, f"{name}_{port}"))
            m.d.comb += getattr(self, f"{name}_frames_out_payload").eq(end.frames_out.payload)
            observe_end(m, getattr(self, f"{name}_observe"), end)
            counters = getattr(self, f"{name}_counters")
            m.d.comb += [counters[c].eq(getattr(end, c)) for c in COUNTERS]
        a, b = self.ends["a"], self.ends["b"]
        m.d.comb += [
            ch.ab_sink.valid.eq(a.tx.valid),
            ch.ab_sink.word.eq(a.tx.word),
            ch.ba_sink.valid.eq(b.tx.valid),
            ch.ba_sink.word.eq(b.tx.word),
        ]
        # A word sent in cycle t leaves the line in t + latency and is taken in the next cycle, as in
        # sim/harness/pcie.py (an end's word is combinational, so the receive side registers it).
        for source, end in ((ch.ab_source, b), (ch.ba_source, a)):
            m.d.sync += [end.rx.valid.eq(source.valid), end.rx.word.eq(source.word)]
        for direction in ("ab", "ba"):
            for port in FAULT_PORTS:
                m.d.comb += getattr(ch, f"{direction}_{port}").eq(getattr(self, f"{direction}_{port}"))
        return m
