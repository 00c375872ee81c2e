"""Wire encodings of the OAE link, defined once (normative text: docs/PROTOCOL.md, section 1).

This module is the single source of every tag code, state code and field width. It imports
nothing but the standard library so that both the golden models and the Amaranth RTL can use
it; it holds numbers and pure functions on numbers, never behaviour.
"""

from enum import IntEnum

SLICE_BITS = 64
TAG_BITS = 8
WORD_BITS = SLICE_BITS + TAG_BITS
SLICES_PER_FRAME = 8
FRAME_BYTES = SLICES_PER_FRAME * SLICE_BITS // 8

CLASS_BITS = 2
MAX_CLASSES = 1 << CLASS_BITS
INDEX_BITS = 3
CONTROL_CODE_BITS = 5

# Tag bit positions (bit 0 is the parity bit of every tag).
PARITY_BIT = 0
DATA_FLAG_BIT = 7
DATA_CLASS_LSB = 5
DATA_INDEX_LSB = 2
DATA_LAST_BIT = 1
ECHO_PREFIX = 0b01          # tag[7:6] of an ECHO word
ECHO_CLASS_LSB = 4
ECHO_INDEX_LSB = 1
CONTROL_PREFIX = 0b00       # tag[7:6] of a CONTROL word
CONTROL_CODE_LSB = 1


class Kind(IntEnum):
    """What a decoded word is. MALFORMED words are counted and dropped, never acted on."""
    MALFORMED = 0
    DATA = 1
    ECHO = 2
    CONTROL = 3


class Ctl(IntEnum):
    """CONTROL word codes (tag[5:1]). Codes not listed here are reserved: malformed."""
    IDLE = 0x01
    # Training (replaces the LTSSM): detect, nonce exchange, RTT probes, entangle.
    TRAIN_HELLO = 0x02
    TRAIN_NONCE = 0x03
    TRAIN_PROBE = 0x04
    TRAIN_PROBE_ECHO = 0x05
    TRAIN_READY = 0x06
    # Token plane: the circulating token and the atomic token transfer with its reverse moves.
    TICK = 0x08
    TOCK = 0x09
    AIT_OFFER = 0x0A
    AIT_ACCEPT = 0x0B
    AIT_COMMIT = 0x0C
    AIT_REJECT = 0x0D
    AIT_RETRACT = 0x0E
    # Data plane, digest echo mode: one word returns the digest of one received frame.
    DIGEST = 0x10


TRAINING_CODES = frozenset(c for c in Ctl if 0x02 <= c <= 0x07)
TOKEN_CODES = frozenset(c for c in Ctl if 0x08 <= c <= 0x0F)


def parity_bit(info7: int) -> int:
    """The bit 0 value that gives the whole tag odd parity, for tag bits [7:1] = info7."""
    if not 0 <= info7 < 1 << (TAG_BITS - 1):
        raise ValueError(f"info7 must be a 7-bit value, not {info7!r}")
    return 1 ^ (bin(info7).count("1") & 1)
