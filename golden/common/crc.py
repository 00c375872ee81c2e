"""The two checks of the protocol: CRC-16 of control words and CRC-32 of frames (docs/PROTOCOL.md 2.1).

Pure Python; parameters from golden/encoding.py. The RTL computes the same with amaranth.lib.crc.
"""

import zlib

from golden import encoding as enc

_MASK = (1 << enc.CTL_CRC_BITS) - 1
_TOP = 1 << (enc.CTL_CRC_BITS - 1)
_SHIFT = enc.CTL_CRC_BITS - 8


def _crc16_bitwise(data: bytes) -> int:
    crc = enc.CRC16_INIT
    for byte in data:
        crc ^= byte << _SHIFT
        for _ in range(8):
            crc = ((crc << 1) ^ enc.CRC16_POLY) if crc & _TOP else crc << 1
            crc &= _MASK
    return crc


def _table_entry(byte: int) -> int:
    crc = byte << _SHIFT
    for _ in range(8):
        crc = ((crc << 1) ^ enc.CRC16_POLY) if crc & _TOP else crc << 1
    return crc & _MASK


_TABLE = tuple(_table_entry(b) for b in range(256))


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, unreflected, no final xor)."""
    crc = enc.CRC16_INIT
    for byte in data:
        crc = ((crc << 8) & _MASK) ^ _TABLE[(crc >> _SHIFT) ^ byte]
    return crc


def control_crc(tag: int, body: int) -> int:
    """CRC-16 of a control word: over the 7 bytes tag, body[47:40], ..., body[7:0]."""
    return crc16(bytes([tag]) + body.to_bytes(enc.CTL_BODY_BITS // 8, "big"))


def frame_crc(frame: bytes) -> int:
    """CRC-32 (IEEE 802.3, as zlib) of a 64-byte frame: the digest."""
    return zlib.crc32(frame)
