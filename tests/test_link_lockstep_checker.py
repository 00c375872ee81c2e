"""The lockstep checker itself (sim/harness/link_lockstep.py): it reads each end's packed ``observe``
port and compares it with the golden end as one number. These tests stand a golden harness in
for the RTL, packing its ports with the Amaranth layout (``observation_layout(...).const``, a
packing independent of the checker's own), and show that the checker is quiet while the two
agree and names the field when any one of them differs by a bit."""

import copy

import pytest

from golden import encoding as enc
from rtl.simulation.link_pair import observation_layout
from sim.harness.link import Traffic
from sim.harness.link_lockstep import _CHECKED, LinkLockstep, LockstepError
from sim.harness.link_scenarios import DIGEST

TRAFFIC = Traffic(frame_load=(0.04, 0.04), ait_rate=0.05, take_rate=0.7)  # no withdrawals


class GoldenAsRTL:
    """The checker's io adapter, answering from the golden ends the checker itself steps: an
    RTL that agrees every cycle, until ``corrupt`` flips one bit of one field of one end. It
    shows a held token as the RTL does (ait_out valid and payload) and never shows a frame
    delivery (frames owed are checked at the end of a run, not per cycle)."""

    def __init__(self):
        self.lock = None
        self.corrupt = None  # (end, field name, bit)

    def set(self, path, value):
        pass

    def get(self, path):
        end, port = path[0][0], path[0][2:]
        if port != "observe":
            raise AssertionError(f"the checker read {path}: everything it compares must come from observe")
        ep = getattr(self.lock.h, end)
        C = ep.p.num_classes
        layout = observation_layout(ep.p)
        fields = {
            "tx_word": ep.tx_word,
            "state": int(ep.state),
            "balance": ep.balance & 3,
            "tx_phase": int(ep.tokens.tx_phase),
            "rx_phase": int(ep.tokens.rx_phase),
            "leader": int(ep.leader),
            "rtt_valid": int(ep.rtt is not None),
            "rtt": ep.rtt or 0,
            "waiting": int(ep.rlfd.waiting),
            "degraded": int(ep.degraded),
            "window": ep.window,
            "frames_in_ready": sum(int(ep.frame_ready(c)) << c for c in range(C)),
            "ait_in_ready": int(ep.ait_ready),
            "ait_out_valid": int(ep.tokens.ait_out is not None),
            "ait_out_payload": ep.tokens.ait_out or 0,
            "settle_ready": int(ep.settle_ready),
            "taken_valid": 0 if ep.taken_offer is None else 1 << ep.taken_offer[0],
            **{f"counter_{n}": getattr(ep.counters, n) % (1 << enc.STATUS_COUNTER_BITS) for n in enc.STATUS_COUNTERS},
        }
        if self.corrupt and self.corrupt[0] == end:
            _, name, bit = self.corrupt
            fields[name] ^= 1 << bit
        return layout.const(fields).as_value().value


def _lockstep(seed=3):
    io = GoldenAsRTL()
    lock = LinkLockstep(DIGEST.harness(seed, TRAFFIC), io)
    io.lock = lock
    return lock, io


def _run(lock, cycles):
    for _ in range(cycles):
        lock.check_and_step(*lock.drive())


@pytest.fixture(scope="module")
def running():
    """A checker that has agreed with its RTL for 1500 cycles: up, frames and tokens moving."""
    lock, io = _lockstep()
    _run(lock, 1500)
    return lock, io


def test_an_agreeing_rtl_passes_every_cycle(running):
    lock, _ = copy.deepcopy(running)
    _run(lock, 1500)
    h = lock.h
    assert h.both_up() and min(sum(h.stats[e].frames_out) for e in "ab") > 0
    assert min(len(h.stats[e].ait_out) for e in "ab") > 0


@pytest.mark.parametrize("end", "ab")
@pytest.mark.parametrize("name", _CHECKED)
def test_a_one_bit_difference_in_any_field_is_named(running, name, end):
    lock, io = copy.deepcopy(running)
    assert lock.h.both_up()
    io.corrupt = (end, name, 0)
    with pytest.raises(LockstepError) as failure:
        _run(lock, 1)
    message = str(failure.value)
    assert f"cycle {lock.cycle}: {end} differs" in message
    assert ("transmits" if name == "tx_word" else f"{name} ") in message


def test_rtt_is_ignored_while_the_golden_end_has_none():
    lock, io = _lockstep()
    assert lock.h.a.rtt is None  # training has only begun
    io.corrupt = ("a", "rtt", 3)
    _run(lock, 20)


class StreamsAsRTL(GoldenAsRTL):
    """With golden ends that model the receive memory (``user_takes``): the RTL also shows the
    frame each ``frames_out`` stream offers, ``valid`` in observe and the payload on its port,
    until ``corrupt_stream`` = (end, class, "valid" or "payload") spoils one."""

    corrupt_stream = None

    def get(self, path):
        end, port = path[0][0], path[0][2:]
        ep = getattr(self.lock.h, end)
        spoilt = self.corrupt_stream and self.corrupt_stream[0] == end
        if port == "frames_out":
            c = path[1]
            payload = int.from_bytes(ep.frame_out(c) or bytes(enc.FRAME_BYTES), "little")
            return payload ^ bool(spoilt and self.corrupt_stream[1:] == (c, "payload"))
        value = super().get(path)
        offset, _ = self.lock._fields["frames_out_valid"]
        valid = sum((ep.frame_out(c) is not None) << c for c in range(ep.p.num_classes))
        if spoilt and self.corrupt_stream[2] == "valid" and ep.frame_out(self.corrupt_stream[1]) is not None:
            valid ^= 1 << self.corrupt_stream[1]
        return value | valid << offset


def _streams(seed=3):
    io = StreamsAsRTL()
    slow = Traffic(frame_load=(1.0, 1.0), ait_rate=0.05, take_rate=0.7, frame_take_rate=0.03)
    lock = LinkLockstep(DIGEST.harness(seed, slow, user_takes=True), io)
    io.lock = lock
    _run(lock, 3000)
    return lock, io


@pytest.fixture(scope="module")
def streaming():
    """A checker of user streams that has agreed with its RTL for 3000 cycles: the users take
    a frame when offered in 3% of the cycles, the memories fill and refuse slices."""
    return _streams()


def test_agreeing_streams_pass_and_the_memories_refuse_slices(streaming):
    lock, _ = copy.deepcopy(streaming)
    _run(lock, 1000)
    assert lock.frames_taken > 50
    assert min(lock.h.a.counters.recoveries, lock.h.b.counters.recoveries) > 0


@pytest.mark.parametrize("what", ["valid", "payload"])
@pytest.mark.parametrize("end", "ab")
def test_a_stream_that_differs_is_named(streaming, end, what):
    lock, io = copy.deepcopy(streaming)
    io.corrupt_stream = (end, 1, what)
    with pytest.raises(LockstepError) as failure:
        # A payload is compared when the user takes it: within a few cycles of an offer.
        _run(lock, 200)
    message = str(failure.value)
    assert (f"{end} frames_out valid" if what == "valid" else f"{end} class 1 offers a frame that differs") in message
