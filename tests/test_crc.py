"""golden/common/crc.py: the CRC-16 table implementation against the bit-serial definition and the
catalogue check value; the frame digest is zlib's CRC-32."""

import random
import zlib

from golden.common.crc import _crc16_bitwise, crc16, frame_crc


def test_crc16_check_value_of_the_ccitt_false_catalogue_entry():
    assert crc16(b"123456789") == 0x29B1


def test_crc16_table_equals_bit_serial_definition():
    rng = random.Random(1)
    for n in range(64):
        data = rng.randbytes(n)
        assert crc16(data) == _crc16_bitwise(data)


def test_frame_crc_is_ieee_crc32():
    frame = bytes(range(64))
    assert frame_crc(frame) == zlib.crc32(frame) == 0x100ECE8C
