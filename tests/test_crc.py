"""golden/common/crc.py: the CRC-16 table implementation against the bit-serial definition and the
catalogue check value; the frame digest against a bit-serial CRC-32 built from the constants of
PROTOCOL.md (golden/encoding.py) and the catalogue check value of CRC-32/ISO-HDLC."""

import random

from golden import encoding as enc
from golden.common.crc import _crc16_bitwise, crc16, frame_crc


def crc32_bitwise(data: bytes) -> int:
    """CRC-32 by its definition: reflected, one bit at a time, from the protocol's constants."""
    crc = enc.CRC32_INIT
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (enc.CRC32_POLY_REFLECTED if crc & 1 else 0)
    return crc ^ enc.CRC32_XOROUT


def test_crc16_check_value_of_the_ccitt_false_catalogue_entry():
    assert crc16(b"123456789") == 0x29B1


def test_crc16_table_equals_bit_serial_definition():
    rng = random.Random(1)
    for n in range(64):
        data = rng.randbytes(n)
        assert crc16(data) == _crc16_bitwise(data)


def test_frame_crc_is_ieee_crc32_by_its_definition_and_check_value():
    assert crc32_bitwise(b"123456789") == 0xCBF43926  # the catalogue's check value: the oracle is right
    rng = random.Random(2)
    for frame in [bytes(64), bytes(range(64)), *(rng.randbytes(64) for _ in range(32))]:
        assert frame_crc(frame) == crc32_bitwise(frame)
