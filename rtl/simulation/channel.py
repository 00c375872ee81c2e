"""The link channel as hardware, for simulation only: twin of golden/simulation/channel.py.

Not meant for an FPGA: it exists so that two endpoints and their channel run entirely inside
Verilator, and the testbench only drives traffic and fault controls.
"""

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import bits_for

from golden import encoding as enc
from rtl.common.slice import LinkPortSignature, LinkWord, control_tag

IDLE_WORD = control_tag(enc.Ctl.IDLE).value << enc.SLICE_BITS  # the default fill word


class _Stage(data.Struct):
    valid: 1
    word: LinkWord


def _check_fill(fill_word):
    if not isinstance(fill_word, int) or isinstance(fill_word, bool) or not 0 <= fill_word < 1 << enc.WORD_BITS:
        raise ValueError(f"fill_word must be a 72-bit integer, not {fill_word!r}")


def _check(latency, max_latency):
    if not isinstance(max_latency, int) or isinstance(max_latency, bool) or not 2 <= max_latency <= 4096:
        raise ValueError(f"max_latency must be an integer in [2, 4096], not {max_latency!r}")
    if not isinstance(latency, int) or isinstance(latency, bool) or not 1 <= latency <= max_latency:
        raise ValueError(f"latency must be an integer in [1, max_latency={max_latency}], not {latency!r}")


def _direction_members(latency, max_latency):
    width = bits_for(max_latency)
    return {
        "sink": In(LinkPortSignature()),
        "source": Out(LinkPortSignature()),
        "cut": In(1),
        "flip": In(enc.WORD_BITS),
        "force": In(1),
        "force_word": In(enc.WORD_BITS),
        "freeze": In(1),
        "gray_mask": In(enc.TAG_BITS),
        "gray_value": In(enc.TAG_BITS),
        "gray_drop": In(1),
        "latency": In(width, init=latency),
        "current_latency": Out(width, init=latency),
    }


class ChannelDirection(wiring.Component):
    """One direction: a delay line of link words with fault controls (golden ``Direction.apply``).

    Ports (all in the one clock domain, ``sync`` unless renamed):
        sink (in, :class:`LinkPortSignature`): the word the transmitter drives this cycle.
        source (out, :class:`LinkPortSignature`): what the receiver sees.
        cut, flip (72 bits), force + force_word, freeze, gray_mask + gray_value + gray_drop,
            latency (target): this cycle's fault controls, as returned by golden
            ``Direction.controls``; ``freeze`` delivers again what was delivered in the previous
            cycle; a gray failure (``gray_mask`` nonzero) replaces a word whose tag satisfies
            ``tag & gray_mask == gray_value`` by the fill word (``gray_drop``) or flips its slice
            bit 0 (cut first, then freeze, force, gray, flip).
        current_latency (out): the line's latency now.

    Latency: a word entering at cycle t leaves at t + current latency. The latency moves toward
    ``latency`` by one per cycle: growing delivers the fill word instead of the next word;
    shrinking drops a fill word about to be delivered. ``latency`` must stay in [1, max_latency];
    values outside are clamped there (a testbench error, not a channel behaviour).
    ``fill_word`` (generation parameter, default the OAE ``IDLE``): the word drift inserts and
    deletes, so any link type can use the channel.
    """

    def __init__(self, *, latency=16, max_latency=256, fill_word=IDLE_WORD):
        _check(latency, max_latency)
        _check_fill(fill_word)
        self._fill = Const(fill_word, enc.WORD_BITS)
        self._latency = latency
        self._max = max_latency
        super().__init__(_direction_members(latency, max_latency))

    def elaborate(self, platform):
        m = Module()
        # The line is a ring of max_latency entries, written at ``wp`` every cycle: the word that
        # entered j cycles ago (1 <= j <= max_latency) is at wp - j. A ring costs a simulator one
        # write and two reads per cycle where a shift register moved every entry.
        N = self._max
        m.submodules.line = line = Memory(shape=_Stage, depth=N, init=[])
        write = line.write_port()
        head_port, newer_port = line.read_port(domain="comb"), line.read_port(domain="comb")
        wp = Signal(range(N))
        # Entries written before the last reset are not in the line: count the cycles since it.
        filled = Signal(range(N + 1))
        m.d.comb += [
            write.addr.eq(wp),
            write.en.eq(1),
            write.data.eq(Mux(self.sink.valid, self.sink.word.as_value() << 1 | 1, 0)),
        ]
        m.d.sync += wp.eq(Mux(wp == N - 1, 0, wp + 1))
        with m.If(filled != N):
            m.d.sync += filled.eq(filled + 1)

        def entered_ago(j):
            """(address, still in the line) of the word that entered ``j`` cycles ago."""
            return Mux(wp >= j, wp - j, wp + N - j)[: len(wp)], (j >= 1) & (j <= filled)

        lat = self.current_latency
        target = Signal.like(lat)
        m.d.comb += target.eq(Mux(self.latency < 1, 1, Mux(self.latency > self._max, self._max, self.latency)))
        head, newer = Signal(_Stage), Signal(_Stage)
        (head_addr, head_in), (newer_addr, newer_in) = entered_ago(lat), entered_ago(lat - 1)
        m.d.comb += [
            head_port.addr.eq(head_addr),
            newer_port.addr.eq(newer_addr),
            head.eq(Mux(head_in, head_port.data, 0)),
            newer.eq(Mux(newer_in, newer_port.data, 0)),
        ]
        out = Signal(_Stage)
        with m.If(lat < target):
            m.d.sync += lat.eq(lat + 1)
            m.d.comb += [out.valid.eq(1), out.word.eq(self._fill)]
        with m.Elif((lat > target) & head.valid & (head.word.as_value() == self._fill)):
            m.d.sync += lat.eq(lat - 1)
            m.d.comb += out.eq(newer)
        with m.Else():
            m.d.comb += out.eq(head)

        delivered = Signal(_Stage, name="delivered")
        m.d.sync += [delivered.valid.eq(self.source.valid), delivered.word.eq(self.source.word)]
        with m.If(self.cut):
            m.d.comb += self.source.valid.eq(0)
        with m.Elif(self.freeze):
            m.d.comb += [self.source.valid.eq(delivered.valid), self.source.word.eq(delivered.word)]
        with m.Elif(self.force):
            m.d.comb += [self.source.valid.eq(1), self.source.word.eq(self.force_word)]
        with m.Else():
            word = out.word.as_value()
            gray = Signal(name="gray")
            m.d.comb += gray.eq(
                out.valid & (self.gray_mask != 0) & ((out.word.tag & self.gray_mask) == self.gray_value)
            )
            grayed = Mux(gray, Mux(self.gray_drop, self._fill, word ^ 1), word)
            m.d.comb += [self.source.valid.eq(out.valid), self.source.word.eq(grayed ^ Mux(out.valid, self.flip, 0))]
        return m


class Channel(wiring.Component):
    """Both directions between ends A and B (``ab`` carries A's words to B), for simulation.

    Ports are those of two :class:`ChannelDirection`, prefixed ``ab_`` and ``ba_``;
    ``fill_word`` is shared by both directions.
    """

    def __init__(self, *, latency=16, latency_ba=None, max_latency=256, fill_word=IDLE_WORD):
        latency_ba = latency if latency_ba is None else latency_ba
        _check(latency, max_latency)
        _check(latency_ba, max_latency)
        _check_fill(fill_word)
        self._fill_word = fill_word
        self._latencies = {"ab": latency, "ba": latency_ba}
        self._max = max_latency
        members = {}
        for prefix, lat in self._latencies.items():
            for name, member in _direction_members(lat, max_latency).items():
                members[f"{prefix}_{name}"] = member
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        for prefix, lat in self._latencies.items():
            d = ChannelDirection(latency=lat, max_latency=self._max, fill_word=self._fill_word)
            m.submodules[prefix] = d
            for name, member in d.signature.members.items():
                outer, inner = getattr(self, f"{prefix}_{name}"), getattr(d, name)
                if member.flow == In:
                    m.d.comb += _connect(inner, outer)
                else:
                    m.d.comb += _connect(outer, inner)
        return m


def _connect(dst, src):
    """``dst.eq(src)`` for a plain signal or both members of a link port."""
    if hasattr(dst, "eq"):
        return [dst.eq(src)]
    return [dst.valid.eq(src.valid), dst.word.eq(src.word)]
