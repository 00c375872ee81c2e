"""Bad input: malformed words are counted and dropped, never delivered; bad parameters raise
ValueError naming the parameter (PROTOCOL.md 1.4 and 4.6)."""

import pytest

from golden import encoding as enc
from golden.common.crc import control_crc
from golden.common.slice import control_tag, data_tag, echo_tag, make_word
from golden.encoding import Ctl
from golden.link.control import control_word
from golden.link.core import LinkCore
from golden.params import LinkParams
from golden.simulation.channel import Channel
from sim.harness.link import LinkHarness, Traffic, make_link

LAT = 8
INJECT_AT = 2000  # the link is UP and idle by then


def inject(word, traffic=None):
    """Replace the word B receives at INJECT_AT with ``word``; run, return the harness."""
    h = make_link(LAT, faults_ab={"stuck": [(INJECT_AT, INJECT_AT + 1, word)]}, traffic_a=traffic, traffic_b=traffic)
    h.run_until(LinkHarness.both_up, INJECT_AT)
    assert h.cycle < INJECT_AT
    h.run(INJECT_AT + 400 - h.cycle)
    return h


def idle_word_hit_only(h):
    """Nothing but the malformed count moved: the replaced word was an IDLE or a token-free slot."""
    return h.b.counters.suspicions == 0 and h.a.counters.suspicions == 0


@pytest.mark.parametrize(
    "word, why",
    [
        (0x00 << 64, "stuck-at-0 tag"),
        ((1 << 72) - 1, "stuck-at-1 word"),
        (0x0F << 64 | 5, "reserved control code"),
        (make_word(data_tag(0, 7) ^ 0b11, 1), "DATA tag whose last bit disagrees with its index"),
        (control_word(Ctl.TICK) ^ (1 << 3), "control word whose CRC fails"),
        (make_word(0x02, 1), "IDLE with a nonzero slice"),
        (
            make_word(
                control_tag(Ctl.DIGEST),
                control_crc(control_tag(Ctl.DIGEST), 1 << enc.DIGEST_BODY.reserved_lsb) << 48
                | 1 << enc.DIGEST_BODY.reserved_lsb,
            ),
            "digest with reserved bits set (CRC correct)",
        ),
    ],
)
def test_malformed_word_is_counted_and_dropped(word, why):
    h = inject(word)
    assert h.b.counters.malformed == 1, why
    assert h.both_up() and idle_word_hit_only(h), why
    assert h.b.counters.anomalies == 0, why


@pytest.mark.parametrize(
    "word, reason",
    [
        (make_word(data_tag(0, 3), 0xDEAD), "slice index out of sequence"),
        (make_word(echo_tag(0, 0), 0xBEEF), "echo of nothing sent"),
        (control_word(Ctl.DIGEST, 0x12345678), "digest of nothing sent"),
    ],
)
def test_protocol_malformed_word_is_counted_dropped_and_recovered_without_retraining(word, reason):
    h = inject(word)
    assert h.b.counters.malformed == 1
    assert ("recovery", reason) in [(e[1], e[2]) for e in h.stats["b"].events]
    assert h.stats["b"].frames_out == [0, 0]  # never delivered
    h.quiesce()
    assert h.both_up()
    # Frame-level recovery (PROTOCOL.md 4.6): a RESYNC went round, nobody retrained.
    assert h.a.counters.recoveries + h.b.counters.recoveries >= 1
    assert h.a.counters.trainings == h.b.counters.trainings == 0


@pytest.mark.parametrize(
    "word, why",
    [
        (control_word(Ctl.RESYNC_ACK, 7), "an acknowledgement nobody awaits"),
        (control_word(Ctl.NAK), "a NAK with nothing sent"),
    ],
)
def test_stray_recovery_words_do_not_retrain(word, why):
    h = inject(word)
    assert h.b.counters.malformed == 0, why
    h.quiesce()
    assert h.both_up() and h.a.counters.trainings == h.b.counters.trainings == 0, why


@pytest.mark.parametrize(
    "code, body",
    [
        (Ctl.RESYNC, 1 << enc.RESYNC_BODY.reserved_lsb),
        (Ctl.RESYNC_ACK, 1 << enc.RESYNC_ACK_BODY.reserved_lsb),
        (Ctl.NAK, 1),
    ],
)
def test_recovery_words_with_reserved_bits_are_malformed(code, body):
    tag = control_tag(code)
    h = inject(make_word(tag, control_crc(tag, body) << 48 | body))
    assert h.b.counters.malformed == 1 and h.b.counters.anomalies == 0


def test_a_forged_data_slice_is_never_delivered():
    # Under traffic, replace one data slice with garbage of the same class/index: the digest
    # mismatch (not a timeout) catches it and the frame is resent; the scoreboard sees no error.
    traffic = Traffic(frame_load=(0.05,))
    h = make_link(LAT, traffic_a=traffic, traffic_b=traffic, num_classes=1)
    h.run(3000)
    while True:
        word = h.a.tx_word
        if word >> 64 == data_tag(0, 4):
            break
        h.step()
    forged = word ^ 0xFFFF
    h.channel.ab.stuck = [(h.cycle + LAT, h.cycle + LAT + 1, forged)]
    h.run(2000)
    assert ("recovery", "digest mismatch") in [(e[1], e[2]) for e in h.stats["a"].events]
    h.quiesce()
    assert h.a.counters.trainings == h.b.counters.trainings == 0


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"num_classes": 0}, "num_classes"),
        ({"num_classes": 5}, "num_classes"),
        ({"echo_mode": "half"}, "echo_mode"),
        ({"window": 0}, "window"),
        ({"window": 2048}, "window"),
        ({"window": 32, "num_classes": 4}, "window"),
        ({"window": 128, "num_classes": 3}, "window"),
        ({"margin": 0}, "margin"),
        ({"los_cycles": 1}, "los_cycles"),
        ({"margin": 4, "los_cycles": 7}, "los_cycles"),
        ({"probes": 0}, "probes"),
        ({"max_rtt": 2}, "max_rtt"),
        ({"port_id": 256}, "port_id"),
        ({"port_id": -1}, "port_id"),
        ({"nonce_seed": 0}, "nonce_seed"),
        ({"nonce_seed": 1 << 32}, "nonce_seed"),
        ({"window": True}, "window"),
        ({"recovery": "selective_repeat"}, "recovery"),
        ({"token_copies": 1}, "token_copies"),
    ],
)
def test_bad_parameters_raise_value_error_naming_them(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        LinkParams(**kwargs)


def test_the_window_limit_follows_the_count_width_of_the_class_count():
    # 12-bit counts with one or two classes, 8 with three, 6 with four (PROTOCOL.md 2.1).
    for classes, largest in ((1, 2047), (2, 2047), (3, 127), (4, 31)):
        assert LinkParams(num_classes=classes, window=largest).count_bits == (largest + 1).bit_length()
        with pytest.raises(ValueError, match=rf"^window must be an integer in \[1, {largest}\]"):
            LinkParams(num_classes=classes, window=largest + 1)


def test_step_misuse_raises_and_changes_nothing():
    ep = LinkCore(window=1)
    ep.step(None, frames={0: bytes(64)})
    before = (ep.cycle, len(ep.framer.replay[0]), ep.rlfd.los_run, ep.tx_word)
    with pytest.raises(ValueError, match=r"^frames\[0\] offered while frame_ready"):
        ep.step(None, frames={0: bytes(64)})
    with pytest.raises(ValueError, match="^cls must be"):
        ep.frame_ready(2)
    with pytest.raises(ValueError, match=r"^frames\[0\] must be 64 bytes"):
        LinkCore().step(None, frames={0: bytes(63)})
    with pytest.raises(ValueError, match="^ait must be a 16-bit"):
        LinkCore().step(None, ait=1 << 16)
    with pytest.raises(ValueError, match="^params and keyword"):
        LinkCore(LinkParams(), window=3)
    assert (ep.cycle, len(ep.framer.replay[0]), ep.rlfd.los_run, ep.tx_word) == before


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda ep: ep.step(-1), ValueError, r"^rx must be a 72-bit word"),
        (lambda ep: ep.step(1 << 72), ValueError, r"^rx must be a 72-bit word"),
        (lambda ep: ep.step(True), TypeError, r"^rx must be None or an int word, not bool"),
        (lambda ep: ep.step(2.0), TypeError, r"^rx must be None or an int word, not float"),
        (lambda ep: ep.step("IDLE"), TypeError, r"^rx must be None or an int word, not str"),
        (lambda ep: ep.step(None, frames={True: bytes(64)}), TypeError, r"^frames key must be an int class"),
        (lambda ep: ep.step(None, frames={2: bytes(64)}), ValueError, r"^frames key must be in \[0, 2\)"),
        (lambda ep: ep.step(None, frames={-1: bytes(64)}), ValueError, r"^frames key must be in \[0, 2\)"),
        (lambda ep: ep.step(None, frames=[bytes(64)]), TypeError, r"^frames must be a dict"),
        (lambda ep: ep.step(None, frames={0: "x" * 64}), TypeError, r"^frames\[0\] must be bytes"),
        (lambda ep: ep.step(None, ait=True), TypeError, r"^ait must be None or an int token value, not bool"),
        (lambda ep: ep.step(None, ait=-1), ValueError, r"^ait must be a 16-bit"),
        (lambda ep: ep.step(None, withdraw=1), TypeError, r"^withdraw must be a bool, not int"),
        (lambda ep: ep.step(None, ait_taken=None), TypeError, r"^ait_taken must be a bool, not NoneType"),
        (lambda ep: ep.frame_ready(True), TypeError, r"^cls must be an int class"),
        (lambda ep: ep.frame_ready(1.0), TypeError, r"^cls must be an int class"),
    ],
)
def test_bad_input_at_the_golden_api_names_the_argument_and_changes_nothing(call, error, message):
    """A received word outside 0 .. 2**72 - 1, a bool where an int is meant, a wrong type: a
    clear error naming the argument, raised before the end changes (PROTOCOL.md 7.4)."""
    ep = LinkCore()
    for _ in range(3):
        ep.step(None)
    before = (ep.cycle, ep.tx_word, ep.rlfd.los_run, ep.counters.malformed, ep.state)
    with pytest.raises(error, match=message):
        call(ep)
    assert (ep.cycle, ep.tx_word, ep.rlfd.los_run, ep.counters.malformed, ep.state) == before


@pytest.mark.parametrize(
    "user_takes, taken, error, message",
    [
        (False, (0,), ValueError, r"^frames_taken needs an end built with user_takes=True"),
        (True, (0,), ValueError, r"^frames_taken names class 0, which offers no frame now"),
        (True, (1, 1), ValueError, r"^frames_taken names a class twice"),
        (True, (2,), ValueError, r"^frames_taken must be in \[0, 2\)"),
        (True, (True,), TypeError, r"^frames_taken must be an int class"),
        (True, 1, TypeError, r"^frames_taken must be an iterable of classes, not int"),
        (False, None, TypeError, r"^frames_taken must be an iterable of classes, not NoneType"),
        (False, 0, TypeError, r"^frames_taken must be an iterable of classes, not int"),
    ],
)
def test_taking_a_frame_not_offered_names_the_argument_and_changes_nothing(user_takes, taken, error, message):
    ep = LinkCore(user_takes=user_takes)
    for _ in range(3):
        ep.step(None)
    before = (ep.cycle, ep.tx_word, ep.state)
    with pytest.raises(error, match=message):
        ep.step(None, frames_taken=taken)
    assert (ep.cycle, ep.tx_word, ep.state) == before
    with pytest.raises(TypeError, match="^user_takes must be a bool, not int"):
        LinkCore(user_takes=1)


def test_params_must_be_link_params_and_unknown_keywords_are_named():
    with pytest.raises(TypeError, match="^params must be a LinkParams"):
        LinkCore({"window": 3})
    with pytest.raises(ValueError, match="^unknown endpoint parameter 'windw'"):
        LinkCore(windw=3)


def test_channel_rejects_bad_fill_words_and_fault_tables():
    with pytest.raises(ValueError, match="^fill_word must be a 72-bit integer"):
        Channel(4, fill_word=1 << 72)
    with pytest.raises(ValueError, match="^fill_word must be a 72-bit integer"):
        Channel(4, fill_word=True)
    with pytest.raises(TypeError, match="^faults_ab must be a dict"):
        Channel(4, faults_ab=[("cuts", [(1, 2)])])


def test_harness_rejects_mismatched_ends_and_bad_traffic():
    with pytest.raises(ValueError, match="^params_a and params_b must agree"):
        LinkHarness(LinkParams(window=4), LinkParams(window=5), Channel(2))
    with pytest.raises(ValueError, match="^ait_rate must be"):
        Traffic(ait_rate=1.5)
    with pytest.raises(ValueError, match="^cycles must be"):
        make_link(2).run(-1)


def test_a_degraded_recovery_and_an_overdue_return_in_one_cycle_are_one_anomaly():
    """The word's anomaly and the echo deadline in the same A cycle are one recovery event, also
    when the link is already degraded (RTL: one ``recovery_anomalies`` count, PROTOCOL.md 4.6)."""
    from golden.link.core import Counters
    from golden.link.framer import Framer, _Expected
    from golden.params import RECOVERY_LIMIT

    f = Framer(LinkParams(num_classes=1), Counters())
    f.failed_recoveries = RECOVERY_LIMIT
    f.expect.append(_Expected(True, 0, 0, 0, 0, 0x1234, sent=0))  # long overdue
    assert f.rx_nak() == "peer lost a slice" and f.degraded and not f.resync_due
    assert f.watchdog(arrived=10_000, echo_bound=10, quiet_bound=10) is None
    f.end_cycle(True, None, 10_001)
    assert f.watchdog(arrived=10_001, echo_bound=10, quiet_bound=10) == "echo overdue"
