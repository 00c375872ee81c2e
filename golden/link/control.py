"""Control words: building them and checking every received word (docs/PROTOCOL.md 1.4, 2.1).

Twin of rtl/link/control.py. A received word is **well-formed** when its tag decodes, and, for a
CONTROL word, its CRC-16 matches, its reserved body bits are zero, and an IDLE's slice is zero.
Anything else is malformed: counted and dropped by the endpoint, whatever its state.
"""

from dataclasses import dataclass

from golden import encoding as enc
from golden.common.crc import control_crc
from golden.common.slice import DECODE_TABLE, Tag, control_tag, make_word
from golden.encoding import Ctl, Kind

BODY_MASK = (1 << enc.CTL_BODY_BITS) - 1
SLICE_MASK = (1 << enc.SLICE_BITS) - 1


def control_word(code: int, body: int = 0) -> int:
    """A CONTROL word with its CRC-16 (IDLE carries no body and no CRC)."""
    tag = control_tag(code)
    if code == Ctl.IDLE:
        return make_word(tag, 0)
    if not isinstance(body, int) or not 0 <= body <= BODY_MASK:
        raise ValueError(f"body must fit in {enc.CTL_BODY_BITS} bits, not {body!r}")
    if body & enc.reserved_mask(code):
        raise ValueError(f"body sets reserved bits of {Ctl(code).name}: {body & enc.reserved_mask(code):#x}")
    return make_word(tag, control_crc(tag, body) << enc.CTL_CRC_LSB | body)


# What turns a token word into its copy (PROTOCOL.md 3.1): the copy flag and, the CRC-16 being
# linear, the same change of the CRC whatever the code and the rest of the body.
TOKEN_COPY_DELTA = control_word(Ctl.TICK, enc.TOKEN_BODY.pack(copy=1)) ^ control_word(Ctl.TICK, 0)
# What turns a token word into the request to send the peer's last token word again (3.1): a
# copy with the again flag.
TOKEN_AGAIN_DELTA = control_word(Ctl.TICK, enc.TOKEN_BODY.pack(copy=1, again=1)) ^ control_word(Ctl.TICK, 0)


@dataclass(frozen=True)
class Checked:
    """A well-formed received word: its decoded tag, its slice and (CONTROL) its body."""

    tag: Tag
    slice: int
    body: int


def check_word(word: int) -> Checked | None:
    """The well-formed view of a received 72-bit word, or None when it is malformed."""
    if word == _IDLE_WORD:
        return _IDLE_CHECKED  # the most common word, checked once
    tag_bits, slice_ = word >> enc.SLICE_BITS, word & SLICE_MASK
    tag = DECODE_TABLE[tag_bits]
    if tag.kind == Kind.MALFORMED:
        return None
    body = slice_ & BODY_MASK
    if tag.kind == Kind.CONTROL:
        if tag.code == Ctl.IDLE:
            if slice_:
                return None
        elif (slice_ >> enc.CTL_CRC_LSB != control_crc(tag_bits, body)) or body & enc.reserved_mask(tag.code):
            return None
    return Checked(tag, slice_, body)


_IDLE_WORD = control_word(Ctl.IDLE)
_IDLE_CHECKED = Checked(DECODE_TABLE[_IDLE_WORD >> enc.SLICE_BITS], 0, 0)
