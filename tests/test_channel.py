"""golden/simulation/channel.py: the delay line and every fault control."""

import pytest

from golden.simulation.channel import IDLE_WORD, Channel, Direction


def run(direction, words):
    return [direction.step(w) for w in words]


def test_delay_line_delivers_after_latency_in_order():
    d = Direction(3)
    assert run(d, [10, 11, 12, 13, 14]) == [None, None, None, 10, 11]


def test_cut_delivers_no_signal_including_words_in_flight():
    d = Direction(2, cuts=[(3, 5)])
    out = run(d, list(range(100, 108)))
    assert out == [None, None, 100, None, None, 103, 104, 105]
    assert d.cut_at(3) and d.cut_at(4) and not d.cut_at(5)


def test_permanent_cut():
    d = Direction(1, cuts=[(2, None)])
    assert run(d, [1, 2, 3, 4, 5]) == [None, 1, None, None, None]


def test_exact_bit_flips():
    d = Direction(1, bit_flips={2: 0b101, 3: 1 << 71})
    assert run(d, [0, 0, 0, 0]) == [None, 0, 0b101, 1 << 71]
    assert d.bits_flipped == 3


def test_bit_error_rate_is_statistically_right():
    rate = 1e-3
    d = Direction(1, bit_error_rate=rate, seed=7)
    words = 200_000
    run(d, [0] * words)
    expected = rate * 72 * (words - 1)
    # 5 sigma of a binomial with ~14,400 successes.
    assert abs(d.bits_flipped - expected) < 5 * expected**0.5


def test_garbage_and_stuck():
    d = Direction(1, garbage=[(1, 3)], stuck=[(4, 6, 0x42)], seed=3)
    out = run(d, [5] * 7)
    assert out[0] is None and out[3] == 5 and out[6] == 5
    assert out[1] != 5 or out[2] != 5
    assert out[4] == out[5] == 0x42


def test_drift_up_inserts_idles_and_drift_down_deletes_only_idles():
    # Payload word k is sent at cycle 2k, an IDLE between payload words.
    d = Direction(2, latency_changes=[(20, 5), (60, 2)])
    sent = {}
    delays = {}
    for t in range(120):
        word = 1000 + t // 2 if t % 2 == 0 else IDLE_WORD
        if word != IDLE_WORD:
            sent[word] = t
        got = d.step(word)
        if got not in (None, IDLE_WORD):
            delays[got] = t - sent[got]
    assert list(delays) == sorted(delays), "drift must never reorder"
    assert len(delays) == len([w for w, t in sent.items() if t < 118]), "drift lost a payload word"
    assert delays[1000] == 2 and delays[1000 + 20] == 5 and delays[1000 + 58] == 2
    assert set(delays.values()) <= {2, 3, 4, 5}


def test_drift_inserts_and_deletes_the_configured_fill_word_only():
    """Another link type on the same channel: its fill word is what drift moves; an OAE IDLE is
    then ordinary payload and is never deleted."""
    fill = 0x1FF << 63 | 7
    d = Direction(2, latency_changes=[(10, 6), (40, 2)], fill_word=fill)
    out = [d.step(fill if t % 3 == 0 else (IDLE_WORD if t % 3 == 1 else t)) for t in range(90)]
    assert out.count(IDLE_WORD) == len([t for t in range(88) if t % 3 == 1])
    assert [w for w in out if w not in (None, fill, IDLE_WORD)] == [t for t in range(88) if t % 3 == 2]
    assert d.latency == 2 and out[10:14] == [fill] * 4  # growing: four fill words inserted
    ch = Channel(3, fill_word=fill)
    assert ch.ab.fill_word == ch.ba.fill_word == fill


def test_channel_has_two_independent_directions():
    ch = Channel(2, latency_ba=3, faults_ab={"cuts": [(0, None)]})
    got = [ch.step(i, 100 + i) for i in range(5)]
    assert [g[0] for g in got] == [None] * 5
    assert [g[1] for g in got] == [None, None, None, 100, 101]


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"latency": 0}, "latency"),
        ({"latency": 1.5}, "latency"),
        ({"latency": 1, "bit_error_rate": 0.7}, "bit_error_rate"),
        ({"latency": 1, "cuts": [(5, 3)]}, "cuts"),
        ({"latency": 1, "cuts": [5]}, "cuts"),
        ({"latency": 1, "garbage": [(-1, 3)]}, "garbage"),
        ({"latency": 1, "stuck": [(1, 2)]}, "stuck"),
        ({"latency": 1, "stuck": [(1, 2, 1 << 72)]}, "stuck"),
        ({"latency": 1, "bit_flips": {3: 0}}, "bit_flips"),
        ({"latency": 1, "latency_changes": [(3, 0)]}, "latency_changes"),
    ],
)
def test_bad_parameters_raise_value_error_naming_them(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}"):
        Direction(**kwargs)


def test_a_gray_failure_drops_or_corrupts_only_the_words_whose_tag_matches():
    data = [(0x80 | k) << 64 | k for k in range(4)]  # tag bit 7 set: OAE data words
    other = [(0x02 | k << 2) << 64 | 0x1000 + k for k in range(4)]
    words = [w for pair in zip(data, other) for w in pair]
    for mode, expect in (("drop", lambda w: IDLE_WORD), ("corrupt", lambda w: w ^ 1)):
        d = Direction(1, gray=[(0, None, 0x80, 0x80, mode)])
        out = [d.step(w) for w in words + [IDLE_WORD]][1:]
        assert out == [expect(w) if w in data else w for w in words]


@pytest.mark.parametrize(
    "gray", [[(0, 10, 0x80, 0x40, "drop")], [(0, 10, 0x100, 0, "drop")], [(0, 10, 0x80, 0x80, "lose")], [(0, 10, 0x80)]]
)
def test_a_bad_gray_fault_is_refused(gray):
    with pytest.raises(ValueError, match="gray"):
        Direction(1, gray=gray)
