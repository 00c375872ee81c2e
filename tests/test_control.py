"""golden/link/control.py: building control words and telling well-formed words from malformed ones."""

import pytest

from golden import encoding as enc
from golden.common.crc import control_crc
from golden.common.slice import control_tag, data_tag, make_word
from golden.encoding import Ctl, Kind
from golden.link.control import BODY_MASK, check_word, control_word


@pytest.mark.parametrize("code", [c for c in Ctl if c != Ctl.IDLE])
def test_every_control_word_round_trips(code):
    lsb = enc.RESERVED_LSB[code]
    body = 0xA5A5_A5A5_A5A5 & ((1 << lsb) - 1)
    checked = check_word(control_word(code, body))
    assert checked is not None and checked.tag.code == code and checked.body == body


@pytest.mark.parametrize("code", [c for c in Ctl if c != Ctl.IDLE])
def test_any_single_bit_error_in_a_control_word_makes_it_malformed(code):
    word = control_word(code, 0x1234 & ((1 << enc.RESERVED_LSB[code]) - 1))
    for bit in range(enc.WORD_BITS):
        assert check_word(word ^ (1 << bit)) is None, (code.name, bit)


def test_reserved_bits_are_malformed_even_with_a_correct_crc():
    for code, lsb in enc.RESERVED_LSB.items():
        if lsb == enc.CTL_BODY_BITS:
            continue
        tag = control_tag(code)
        body = 1 << lsb
        assert check_word(make_word(tag, control_crc(tag, body) << 48 | body)) is None, Ctl(code).name
        with pytest.raises(ValueError, match="^body sets reserved bits"):
            control_word(code, body)


def test_idle_must_have_a_zero_slice_and_data_is_never_crc_checked():
    assert check_word(control_word(Ctl.IDLE)).tag.code == Ctl.IDLE
    assert check_word(control_word(Ctl.IDLE) | 1) is None
    data = check_word(make_word(data_tag(1, 3), (1 << 64) - 1))
    assert data.tag.kind == Kind.DATA and data.slice == (1 << 64) - 1


def test_every_assigned_code_has_a_reserved_entry():
    assert set(enc.RESERVED_LSB) == {int(c) for c in Ctl if c != Ctl.IDLE}


def test_body_must_fit():
    with pytest.raises(ValueError, match="^body must fit"):
        control_word(Ctl.TICK, BODY_MASK + 1)


def test_the_idle_shortcut_gives_what_the_full_check_gives(monkeypatch):
    from golden.link import control

    idle = control_word(Ctl.IDLE)
    shortcut = check_word(idle)
    monkeypatch.setattr(control, "_IDLE_WORD", None)  # no word matches: the full check runs
    assert check_word(idle) == shortcut
    assert check_word(idle | 1) is None  # IDLE with a nonzero slice is malformed
