"""Two endpoints and their channel as one design, for simulation only.

Not for an FPGA: it lets Verilator (or amaranth.sim) run a whole link, while the testbench only
drives user traffic and the channel's fault controls and watches what each end sends.
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from .channel import Channel
from .link import LinkCore
from .slice import LinkPortSignature

END_PORTS = ("frames_in", "frames_out", "ait_in", "withdraw", "ait_out", "returned", "returned_value", "status")
FAULT_PORTS = ("cut", "flip", "force", "force_word", "latency")


class LinkPair(wiring.Component):
    """End A and end B (:class:`LinkCore`), joined by :class:`Channel` (``ab``: A to B).

    Ports: the user ports of each end prefixed ``a_`` / ``b_`` (see :class:`LinkCore`), each end's
    transmitted word ``a_tx`` / ``b_tx`` (observation), and the fault controls of each
    direction prefixed ``ab_`` / ``ba_`` (see :class:`ChannelDirection`). ``params_a`` and
    ``params_b`` are :class:`LinkCore` keyword arguments; ``latency``/``latency_ba`` and
    ``max_latency`` configure the channel. One clock domain (``sync``).
    """

    def __init__(self, params_a: dict, params_b: dict, *, latency=16, latency_ba=None, max_latency=256):
        self.ends = {"a": LinkCore(**params_a), "b": LinkCore(**params_b)}
        shared = ("num_classes", "echo_mode", "window")
        if any(self.ends["a"].params[k] != self.ends["b"].params[k] for k in shared):
            raise ValueError(f"params_a and params_b must agree on {', '.join(shared)}")
        self.channel = Channel(latency=latency, latency_ba=latency_ba, max_latency=max_latency)
        members = {}
        for name, end in self.ends.items():
            for port in END_PORTS:
                members[f"{name}_{port}"] = end.signature.members[port]
            members[f"{name}_tx"] = Out(LinkPortSignature())
        for direction in ("ab", "ba"):
            for port in FAULT_PORTS:
                members[f"{direction}_{port}"] = self.channel.signature.members[f"{direction}_{port}"]
            members[f"{direction}_current_latency"] = self.channel.signature.members[f"{direction}_current_latency"]
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.channel = ch = self.channel
        for name, end in self.ends.items():
            m.submodules[name] = end
            for port in END_PORTS:
                inner, outer = getattr(end, port), getattr(self, f"{name}_{port}")
                if isinstance(inner, list):
                    for i, o in zip(inner, outer):
                        _join(m, end.signature.members[port], i, o)
                else:
                    _join(m, end.signature.members[port], inner, outer)
            connect(m, end.tx, flipped(getattr(self, f"{name}_tx")))
        # An observation copy of each tx word; the channel takes the same word.
        m.d.comb += [ch.ab_sink.valid.eq(self.ends["a"].tx.valid), ch.ab_sink.word.eq(self.ends["a"].tx.word),
                     ch.ba_sink.valid.eq(self.ends["b"].tx.valid), ch.ba_sink.word.eq(self.ends["b"].tx.word)]
        connect(m, ch.ab_source, self.ends["b"].rx)
        connect(m, ch.ba_source, self.ends["a"].rx)
        for direction in ("ab", "ba"):
            for port in FAULT_PORTS:
                m.d.comb += getattr(ch, f"{direction}_{port}").eq(getattr(self, f"{direction}_{port}"))
            m.d.comb += getattr(self, f"{direction}_current_latency").eq(getattr(ch, f"{direction}_current_latency"))
        return m


def _join(m, member, inner, outer):
    if member.is_port:
        if member.flow == In:
            m.d.comb += inner.eq(outer)
        else:
            m.d.comb += outer.eq(inner)
    elif member.flow == In:
        connect(m, flipped(outer), inner)
    else:
        connect(m, inner, flipped(outer))
