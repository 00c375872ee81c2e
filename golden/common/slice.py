"""Python codec for the 72-bit link word and the 64-byte frame (docs/PROTOCOL.md, section 1).

Twin of rtl/common/slice.py. A word is ``tag << 64 | slice``; a frame is eight slices, slice k holding
frame bytes 8k..8k+7 little-endian, so the bits on the wire are the bits in memory.
"""

from dataclasses import dataclass

from golden import encoding as enc
from golden.encoding import Ctl, Kind

_SLICE_MASK = (1 << enc.SLICE_BITS) - 1
_CONTROL_CODES = frozenset(int(c) for c in Ctl)


@dataclass(frozen=True)
class Tag:
    """A decoded tag. Fields that do not apply to the kind are 0."""

    kind: Kind
    cls: int = 0
    index: int = 0
    last: bool = False
    code: int = 0

    @property
    def malformed(self) -> bool:
        return self.kind is Kind.MALFORMED


MALFORMED = Tag(Kind.MALFORMED)


def _with_parity(info7: int) -> int:
    return info7 << 1 | enc.parity_bit(info7)


def _check_range(name: str, value: int, limit: int) -> None:
    if not isinstance(value, int) or not 0 <= value < limit:
        raise ValueError(f"{name} must be an integer in [0, {limit}), not {value!r}")


def data_tag(cls: int, index: int) -> int:
    """Tag of data slice ``index`` of a frame of priority class ``cls``; last is implied by index 7."""
    _check_range("cls", cls, enc.MAX_CLASSES)
    _check_range("index", index, enc.SLICES_PER_FRAME)
    last = int(index == enc.SLICES_PER_FRAME - 1)
    info = (1 << 6) | cls << (enc.DATA_CLASS_LSB - 1) | index << (enc.DATA_INDEX_LSB - 1) | last
    return _with_parity(info)


def echo_tag(cls: int, index: int) -> int:
    """Tag of the full-mode echo of data slice ``index`` of class ``cls``."""
    _check_range("cls", cls, enc.MAX_CLASSES)
    _check_range("index", index, enc.SLICES_PER_FRAME)
    info = enc.ECHO_PREFIX << 5 | cls << (enc.ECHO_CLASS_LSB - 1) | index << (enc.ECHO_INDEX_LSB - 1)
    return _with_parity(info)


def control_tag(code: int) -> int:
    """Tag of a CONTROL word; ``code`` must be an assigned :class:`Ctl` code."""
    if code not in _CONTROL_CODES:
        raise ValueError(f"code must be an assigned Ctl code, not {code!r}")
    return _with_parity(enc.CONTROL_PREFIX << 5 | code)


def decode_tag(tag: int) -> Tag:
    """Decode an 8-bit tag. Bad parity, reserved codes and inconsistent fields give MALFORMED."""
    _check_range("tag", tag, 1 << enc.TAG_BITS)
    return DECODE_TABLE[tag]


def _decode(tag: int) -> Tag:
    if bin(tag).count("1") & 1 == 0:
        return MALFORMED
    if tag >> enc.DATA_FLAG_BIT:
        cls = (tag >> enc.DATA_CLASS_LSB) & (enc.MAX_CLASSES - 1)
        index = (tag >> enc.DATA_INDEX_LSB) & (enc.SLICES_PER_FRAME - 1)
        last = bool((tag >> enc.DATA_LAST_BIT) & 1)
        if last != (index == enc.SLICES_PER_FRAME - 1):
            return MALFORMED
        return Tag(Kind.DATA, cls=cls, index=index, last=last)
    if tag >> 6 == enc.ECHO_PREFIX:
        cls = (tag >> enc.ECHO_CLASS_LSB) & (enc.MAX_CLASSES - 1)
        index = (tag >> enc.ECHO_INDEX_LSB) & (enc.SLICES_PER_FRAME - 1)
        return Tag(Kind.ECHO, cls=cls, index=index)
    code = (tag >> enc.CONTROL_CODE_LSB) & ((1 << enc.CONTROL_CODE_BITS) - 1)
    if code not in _CONTROL_CODES:
        return MALFORMED
    return Tag(Kind.CONTROL, code=code)


DECODE_TABLE = tuple(_decode(t) for t in range(1 << enc.TAG_BITS))

# Data and echo tags by [class][index], shifted into place above the slice: a model sending
# a slice every cycle looks them up instead of re-validating and re-encoding.
DATA_WORD_TAGS = tuple(
    tuple(data_tag(c, i) << enc.SLICE_BITS for i in range(enc.SLICES_PER_FRAME)) for c in range(enc.MAX_CLASSES)
)
ECHO_WORD_TAGS = tuple(
    tuple(echo_tag(c, i) << enc.SLICE_BITS for i in range(enc.SLICES_PER_FRAME)) for c in range(enc.MAX_CLASSES)
)


def make_word(tag: int, slice_: int) -> int:
    """Pack a tag and a 64-bit slice into a 72-bit word."""
    _check_range("tag", tag, 1 << enc.TAG_BITS)
    _check_range("slice_", slice_, 1 << enc.SLICE_BITS)
    return tag << enc.SLICE_BITS | slice_


def split_word(word: int) -> tuple[int, int]:
    """(tag, slice) of a 72-bit word."""
    _check_range("word", word, 1 << enc.WORD_BITS)
    return word >> enc.SLICE_BITS, word & _SLICE_MASK


def frame_to_slices(frame: bytes) -> list[int]:
    """The eight 64-bit slices of a 64-byte frame, slice 0 first."""
    if not isinstance(frame, (bytes, bytearray)) or len(frame) != enc.FRAME_BYTES:
        raise ValueError(f"frame must be {enc.FRAME_BYTES} bytes")
    return [int.from_bytes(frame[8 * k : 8 * k + 8], "little") for k in range(enc.SLICES_PER_FRAME)]


def slices_to_frame(slices) -> bytes:
    """The 64-byte frame made of eight 64-bit slices."""
    slices = list(slices)
    if len(slices) != enc.SLICES_PER_FRAME:
        raise ValueError(f"slices must hold exactly {enc.SLICES_PER_FRAME} slices")
    for s in slices:
        _check_range("slice", s, 1 << enc.SLICE_BITS)
    return b"".join(s.to_bytes(8, "little") for s in slices)
