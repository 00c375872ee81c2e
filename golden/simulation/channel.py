"""The link channel: per direction a delay line of link words plus fault injection.

Twin of rtl/simulation/channel.py (simulation only). One call of :meth:`Direction.step` is one link clock:
the word the transmitter drives this cycle goes in, the word the receiver sees this cycle comes
out (``None`` = no signal). A word sent at cycle t arrives at cycle t + latency.

Faults, all in cycles of this direction's own step count (docs/PROTOCOL.md, section 6):

* ``cuts``: ``[(start, end), ...]``: no signal is delivered at cycles ``start <= t < end``
  (``end=None``: forever). A flap is a cut that ends. Words in flight are lost too.
* ``bit_error_rate``: each delivered bit flips independently with this probability.
* ``bit_flips``: ``{cycle: mask}``: XOR ``mask`` (72 bits) into the word delivered at ``cycle``.
* ``garbage``: ``[(start, end), ...]``: uniformly random 72-bit words are delivered instead.
* ``stuck``: ``[(start, end, word), ...]``: the same word is delivered on every cycle.
* ``freezes``: ``[(start, end), ...]``: the line freezes on the word it carries: the word
  delivered in cycle ``start - 1`` (or no signal) is delivered again on every cycle of the
  interval, and the words that would have arrived are lost.
* ``gray``: ``[(start, end, tag_mask, tag_value, mode), ...]``: a gray failure. Delivered words
  whose tag satisfies ``tag & tag_mask == tag_value`` (the data words of a link, say) are dropped
  (``mode`` "drop": the fill word is delivered instead) or corrupted ("corrupt": slice bit 0
  flipped); every other word passes untouched.
* ``latency_changes``: ``[(cycle, latency), ...]``: drift, one cycle of latency per cycle, as an
  elastic buffer does it: growing delivers the fill word instead of the next word; shrinking
  drops a fill word when one is about to be delivered. Other words are never deleted.

The fill word is a parameter (``fill_word``, default the OAE ``IDLE``), so any link whose
protocol has a word an elastic buffer may insert and delete can run on this channel.
"""

import math
import random
from collections import deque
from dataclasses import dataclass

from golden import encoding as enc
from golden.common.slice import control_tag, make_word

IDLE_WORD = make_word(control_tag(enc.Ctl.IDLE), 0)
_WORD_MASK = (1 << enc.WORD_BITS) - 1


def _check_intervals(name, intervals, width):
    out = []
    for item in intervals:
        if not isinstance(item, tuple) or len(item) != width:
            raise ValueError(f"{name} must hold {width}-tuples, not {item!r}")
        start, end = item[0], item[1]
        if not isinstance(start, int) or start < 0 or (end is not None and (not isinstance(end, int) or end <= start)):
            raise ValueError(f"{name} interval {item!r} must have 0 <= start < end (end may be None)")
        out.append(item)
    return sorted(out, key=lambda i: i[0])


def _active(intervals, t):
    for item in intervals:
        if item[0] <= t and (item[1] is None or t < item[1]):
            return item
    return None


class Direction:
    """One direction of the channel: delay line and faults. See the module docstring."""

    def __init__(
        self,
        latency,
        *,
        cuts=(),
        bit_error_rate=0.0,
        bit_flips=None,
        garbage=(),
        stuck=(),
        freezes=(),
        latency_changes=(),
        gray=(),
        seed=0,
        fill_word=IDLE_WORD,
    ):
        if not isinstance(latency, int) or isinstance(latency, bool) or latency < 1:
            raise ValueError(f"latency must be an integer >= 1, not {latency!r}")
        if not isinstance(fill_word, int) or isinstance(fill_word, bool) or not 0 <= fill_word <= _WORD_MASK:
            raise ValueError(f"fill_word must be a 72-bit integer, not {fill_word!r}")
        self.fill_word = fill_word
        if not isinstance(bit_error_rate, (int, float)) or not 0.0 <= bit_error_rate < 0.5:
            raise ValueError(f"bit_error_rate must be in [0, 0.5), not {bit_error_rate!r}")
        flips = dict(bit_flips or {})
        for cycle, mask in flips.items():
            if not isinstance(cycle, int) or cycle < 0 or not isinstance(mask, int) or not 0 < mask <= _WORD_MASK:
                raise ValueError(f"bit_flips entry {cycle!r}: {mask!r} must map a cycle >= 0 to a nonzero 72-bit mask")
        changes = []
        for item in latency_changes:
            if (
                not isinstance(item, tuple)
                or len(item) != 2
                or not isinstance(item[0], int)
                or item[0] < 0
                or not isinstance(item[1], int)
                or item[1] < 1
            ):
                raise ValueError(f"latency_changes must hold (cycle >= 0, latency >= 1) pairs, not {item!r}")
            changes.append(item)
        self.cuts = _check_intervals("cuts", cuts, 2)
        self.garbage = _check_intervals("garbage", garbage, 2)
        self.stuck = _check_intervals("stuck", stuck, 3)
        self.freezes = _check_intervals("freezes", freezes, 2)
        self.gray = _check_intervals("gray", gray, 5)
        for _, _, mask, value, mode in self.gray:
            if (
                not isinstance(mask, int)
                or not 0 < mask < 1 << enc.TAG_BITS
                or not isinstance(value, int)
                or value & ~mask
                or mode not in ("drop", "corrupt")
            ):
                raise ValueError(
                    f"gray needs an 8-bit tag mask, a value within it and 'drop' or 'corrupt', "
                    f"not {(mask, value, mode)!r}"
                )
        for _, _, word in self.stuck:
            if not isinstance(word, int) or not 0 <= word <= _WORD_MASK:
                raise ValueError(f"stuck word must be a 72-bit integer, not {word!r}")
        self.bit_flips = flips
        self.latency_changes = sorted(changes)
        self.bit_error_rate = float(bit_error_rate)
        self.latency = self.target_latency = latency
        self._rng = random.Random(seed)
        self._line = deque([None] * latency)
        self._change_index = 0
        self._next_error_bit = self._draw_gap()
        self.cycle = 0
        self.bits_flipped = 0
        self.last_original = None  # the word the line held before faults acted, last step
        self.last_delivered = None
        self._delivered = None  # what ``apply`` delivered last (a frozen line repeats it)
        self._quiet = Controls(latency=latency)

    def _draw_gap(self):
        """Bits until the next random error (geometric), or None without random errors."""
        if self.bit_error_rate == 0.0:
            return None
        u = 1.0 - self._rng.random()
        return int(math.log(u) / math.log1p(-self.bit_error_rate))

    def _random_flips(self):
        mask = 0
        if self._next_error_bit is None:
            return 0
        while self._next_error_bit < enc.WORD_BITS:
            mask |= 1 << self._next_error_bit
            self._next_error_bit += 1 + self._draw_gap()
        self._next_error_bit -= enc.WORD_BITS
        return mask

    def upcoming(self, n: int) -> list:
        """The next ``n`` words the line delivers if its latency holds and no fault acts (fewer
        when fewer are in flight); the first is delivered in the next step."""
        return [self._line[k] for k in range(min(n, len(self._line)))]

    def cut_at(self, t) -> bool:
        return _active(self.cuts, t) is not None

    def gray_at(self, t) -> bool:
        return _active(self.gray, t) is not None

    def controls(self, t) -> "Controls":
        """The fault controls of cycle ``t`` (what drives rtl/simulation/channel.py's ports), drawing the
        random bit errors and garbage words of that cycle. Call once per cycle, in order."""
        while self._change_index < len(self.latency_changes) and self.latency_changes[self._change_index][0] <= t:
            self.target_latency = self.latency_changes[self._change_index][1]
            self._change_index += 1
        if (
            not (self.cuts or self.garbage or self.stuck or self.freezes or self.bit_flips or self.gray)
            and self._next_error_bit is None
        ):
            # A quiet line (the common case in long runs): one shared Controls per latency.
            quiet = self._quiet
            if quiet.latency != self.target_latency:
                quiet = self._quiet = Controls(latency=self.target_latency)
            return quiet
        flip = self._random_flips() ^ self.bit_flips.get(t, 0)
        force = None
        stuck = _active(self.stuck, t)
        if stuck:
            force = stuck[2]
        elif _active(self.garbage, t):
            force = self._rng.getrandbits(enc.WORD_BITS)
        gray = _active(self.gray, t)
        gray_fields = {"gray_mask": gray[2], "gray_value": gray[3], "gray_drop": gray[4] == "drop"} if gray else {}
        return Controls(
            cut=_active(self.cuts, t) is not None,
            flip=flip,
            force=force,
            freeze=_active(self.freezes, t) is not None,
            latency=self.target_latency,
            **gray_fields,
        )

    def apply(self, word, c: "Controls"):
        """One cycle of the line under controls ``c``: ``word`` enters; returns what is delivered.

        Latency moves toward ``c.latency`` by one per cycle: growing delivers the fill word
        instead of the next word; shrinking drops the word about to be delivered if it is the
        fill word.
        """
        self._line.append(word)
        if self.latency < c.latency:
            self.latency += 1
            out = self.fill_word
            self.last_original = None
        else:
            if self.latency > c.latency and self._line[0] == self.fill_word:
                self._line.popleft()
                self.latency -= 1
            out = self.last_original = self._line.popleft()
        self.cycle += 1
        if c.cut:
            out = None
        elif c.freeze:
            out = self._delivered
        elif c.force is not None:
            out = c.force
        else:
            if out is not None and c.gray_mask and (out >> enc.SLICE_BITS) & c.gray_mask == c.gray_value:
                out = self.fill_word if c.gray_drop else out ^ 1
            if out is not None and c.flip:
                self.bits_flipped += bin(c.flip).count("1")
                out ^= c.flip
        self._delivered = out
        return out

    def step(self, word):
        """Advance one cycle: ``word`` enters (int or None); returns the word delivered now."""
        return self.step_with(word, self.controls(self.cycle))

    def step_with(self, word, c: "Controls"):
        """:meth:`step` under controls ``c`` that the caller drew with :meth:`controls` (a
        testbench that drives the same controls into the RTL channel)."""
        self.last_delivered = self.apply(word, c)
        return self.last_delivered


@dataclass(frozen=True)
class Controls:
    """Per-cycle fault controls of one direction (the ports of rtl/simulation/channel.py)."""

    cut: bool = False
    flip: int = 0  # 72-bit XOR mask on the delivered word
    force: int | None = None  # deliver this word instead (stuck or garbage)
    freeze: bool = False  # deliver again the word delivered in the previous cycle
    latency: int = 1  # target latency; the line moves toward it one cycle at a time
    gray_mask: int = 0  # gray failure: words whose tag & gray_mask == gray_value are
    gray_value: int = 0  # dropped (the fill word instead) or have slice bit 0 flipped
    gray_drop: bool = False


class Channel:
    """Two directions between ends A and B: ``ab`` carries A's words to B, ``ba`` the reverse.
    ``fill_word``: the word drift inserts and deletes, in both directions."""

    def __init__(self, latency=32, *, latency_ba=None, faults_ab=None, faults_ba=None, seed=0, fill_word=IDLE_WORD):
        for name, faults in (("faults_ab", faults_ab), ("faults_ba", faults_ba)):
            if faults is not None and not isinstance(faults, dict):
                raise TypeError(f"{name} must be a dict of faults or None, not {type(faults).__name__}")
        self.ab = Direction(latency, seed=seed * 2 + 1, fill_word=fill_word, **(faults_ab or {}))
        self.ba = Direction(
            latency if latency_ba is None else latency_ba, seed=seed * 2 + 2, fill_word=fill_word, **(faults_ba or {})
        )

    def step(self, word_a, word_b):
        """Words sent by A and by B this cycle -> (word B receives, word A receives)."""
        return self.ab.step(word_a), self.ba.step(word_b)
