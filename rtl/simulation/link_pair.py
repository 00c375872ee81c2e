"""Two endpoints and their channel as one design, for simulation only.

Not for an FPGA: it lets Verilator (or amaranth.sim) run a whole link, while the testbench only
drives user traffic and the channel's fault controls and watches what each end sends.
"""

from amaranth.hdl import Cat, DomainRenamer, Module
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out, connect, flipped
from amaranth.utils import bits_for

from golden import encoding as enc
from golden.params import LinkParams, require_shared
from rtl.common.slice import LinkPortSignature
from rtl.link.core import LinkCore
from rtl.link.endpoint import DEFAULT_FIFO_DEPTH, AxisLinkEndpoint, LinkEndpoint
from rtl.simulation.channel import Channel

FAULT_PORTS = ("cut", "flip", "force", "force_word", "freeze", "gray_mask", "gray_value", "gray_drop", "latency")


def observation_layout(params: LinkParams) -> data.StructLayout:
    """What a lockstep checker reads of one end every cycle, packed in one port so that a
    simulator is asked once per end and not once per signal: the transmitted word, the status
    fields and counters, the user ports' handshake flags, the token offered to the user and a
    token given back, and the settle's handshakes (PROTOCOL.md 10.6). Every field is unsigned
    (``balance`` is its two's-complement bits)."""
    C = params.num_classes
    return data.StructLayout(
        {
            "tx_word": enc.WORD_BITS,
            "state": 2,
            "balance": 2,
            "tx_phase": 2,
            "rx_phase": 2,
            "leader": 1,
            "rtt_valid": 1,
            "rtt": params.rtt_bits,
            "waiting": 1,
            "degraded": 1,
            "window": bits_for(params.window),
            "queue_overflow": 1,
            "frames_in_ready": C,
            "frames_out_valid": C,
            "ait_in_ready": 1,
            "ait_out_valid": 1,
            "ait_out_payload": enc.AIT_VALUE_BITS,
            "returned": 1,
            "returned_value": enc.AIT_VALUE_BITS,
            "settle_ready": 1,
            "settle_applied": 1,
            "settle_skipped": 1,
            "taken_valid": C,
            **{f"counter_{name}": enc.STATUS_COUNTER_BITS for name in enc.STATUS_COUNTERS},
        }
    )


class LinkPair(wiring.Component):
    """End A and end B, joined by :class:`Channel` (``ab``: A to B).

    Ports: the user ports of each end prefixed ``a_`` / ``b_``, each end's transmitted word
    ``a_tx`` / ``b_tx`` (observation), and the fault controls of each direction prefixed
    ``ab_`` / ``ba_`` (see :class:`ChannelDirection`). ``params_a`` and ``params_b`` are
    :class:`golden.params.LinkParams` or dicts of their fields; ``latency``/``latency_ba`` and ``max_latency``
    configure the channel.

    Clocks: without ``cdc`` the ends are :class:`LinkCore` and everything runs in ``sync``.
    With ``cdc`` they are :class:`LinkEndpoint` (user side behind bisynchronous FIFOs of
    ``fifo_depth``): the link and the channel run in ``sync``, end A's user side in ``core_a``
    and end B's in ``core_b``. With ``axis`` (which implies ``cdc``) each end is an
    :class:`AxisLinkEndpoint`: its frames are AXI4-Stream packets (``s_axis``/``m_axis``).
    Without ``cdc`` each end also has ``a_observe``/``b_observe`` (:func:`observation_layout`),
    a copy of what the lockstep checker compares, read in one access.
    """

    def __init__(
        self,
        params_a: dict,
        params_b: dict,
        *,
        latency=16,
        latency_ba=None,
        max_latency=256,
        cdc=False,
        fifo_depth=DEFAULT_FIFO_DEPTH,
        axis=False,
    ):
        params_a, params_b = (
            p if isinstance(p, LinkParams) else LinkParams.from_kwargs(**p) for p in (params_a, params_b)
        )
        require_shared(params_a, params_b)
        self._cdc = cdc or axis
        if axis:
            self.ends = {
                "a": AxisLinkEndpoint(params_a, fifo_depth=fifo_depth),
                "b": AxisLinkEndpoint(params_b, fifo_depth=fifo_depth),
            }
        elif cdc:
            self.ends = {
                "a": LinkEndpoint(params_a, fifo_depth=fifo_depth),
                "b": LinkEndpoint(params_b, fifo_depth=fifo_depth),
            }
        else:
            self.ends = {"a": LinkCore(params_a), "b": LinkCore(params_b)}
        self._user_ports = [k for k in self.ends["a"].signature.members if k not in ("rx", "tx")]
        self.channel = Channel(latency=latency, latency_ba=latency_ba, max_latency=max_latency)
        members = {}
        for name, end in self.ends.items():
            for port in self._user_ports:
                members[f"{name}_{port}"] = end.signature.members[port]
            members[f"{name}_tx"] = Out(LinkPortSignature())
            if not self._cdc:
                members[f"{name}_observe"] = Out(observation_layout(end.params))
        for direction in ("ab", "ba"):
            for port in FAULT_PORTS:
                members[f"{direction}_{port}"] = self.channel.signature.members[f"{direction}_{port}"]
            members[f"{direction}_current_latency"] = self.channel.signature.members[f"{direction}_current_latency"]
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.channel = ch = self.channel
        for name, end in self.ends.items():
            if self._cdc:
                end = DomainRenamer({"link": "sync", "core": f"core_{name}"})(end)
            m.submodules[name] = end
            for port in self._user_ports:
                join_port(
                    m, self.ends[name].signature.members[port], getattr(end, port), getattr(self, f"{name}_{port}")
                )
            connect(m, end.tx, flipped(getattr(self, f"{name}_tx")))
            if not self._cdc:
                observe = getattr(self, f"{name}_observe")
                m.d.comb += [observe[field].eq(value) for field, value in self._observation(end).items()]
        # An observation copy of each tx word; the channel takes the same word.
        a, b = self.ends["a"], self.ends["b"]
        m.d.comb += [
            ch.ab_sink.valid.eq(a.tx.valid),
            ch.ab_sink.word.eq(a.tx.word),
            ch.ba_sink.valid.eq(b.tx.valid),
            ch.ba_sink.word.eq(b.tx.word),
        ]
        connect(m, ch.ab_source, b.rx)
        connect(m, ch.ba_source, a.rx)
        for direction in ("ab", "ba"):
            for port in FAULT_PORTS:
                m.d.comb += getattr(ch, f"{direction}_{port}").eq(getattr(self, f"{direction}_{port}"))
            m.d.comb += getattr(self, f"{direction}_current_latency").eq(getattr(ch, f"{direction}_current_latency"))
        return m

    @staticmethod
    def _observation(end) -> dict:
        st = end.status
        return {
            "tx_word": end.tx.word,
            "state": st.state,
            "balance": st.balance,
            "tx_phase": st.tx_phase,
            "rx_phase": st.rx_phase,
            "leader": st.leader,
            "rtt_valid": st.rtt_valid,
            "rtt": st.rtt,
            "waiting": st.waiting,
            "degraded": st.degraded,
            "window": st.window,
            "queue_overflow": st.queue_overflow,
            "frames_in_ready": Cat(f.ready for f in end.frames_in),
            "frames_out_valid": Cat(f.valid for f in end.frames_out),
            "ait_in_ready": end.ait_in.ready,
            "ait_out_valid": end.ait_out.valid,
            "ait_out_payload": end.ait_out.payload,
            "returned": end.returned,
            "returned_value": end.returned_value,
            "settle_ready": end.settle.ready,
            "settle_applied": end.settle_applied,
            "settle_skipped": end.settle_skipped,
            "taken_valid": Cat(t.valid for t in end.taken),
            **{f"counter_{name}": getattr(st.counters, name) for name in enc.STATUS_COUNTERS},
        }


def join_port(m, member, inner, outer):
    """Drive the design's port ``outer`` from its part's ``inner`` (or the reverse, by the
    signature ``member``'s flow), as a pass-through; an array of ports element by element."""
    if isinstance(inner, list):
        for i, o in zip(inner, outer, strict=True):
            join_port(m, member, i, o)
        return
    if member.is_port:
        if member.flow == In:
            m.d.comb += inner.eq(outer)
        else:
            m.d.comb += outer.eq(inner)
    elif member.flow == In:
        connect(m, flipped(outer), inner)
    else:
        connect(m, inner, flipped(outer))
