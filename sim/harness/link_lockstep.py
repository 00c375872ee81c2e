"""A whole RTL link (rtl/simulation/link_pair.py) in lockstep with the golden link, cycle by cycle.

The golden harness (sim/harness/link.py) decides each cycle's user inputs and channel faults;
the same inputs drive the RTL pair. Every cycle, before the clock edge, the RTL must show what
the golden ends hold before their ``step``: the word each end transmits, its state, token-plane
phases and balance, leader and RTT, RLFD waiting flag, counters and readiness, and a token it
gives back in that edge. All of it is read in one access per end, the pair's ``observe`` port
(rtl/simulation/link_pair.py ``observation_layout``), and compared as one number; only a difference is
taken apart field by field for the message. Deliveries (frames per class, tokens) are compared as transactions,
because the RTL hands them over a cycle after the golden end delivers them; with golden ends that
model the receive memory (``user_takes``), the frames each ``frames_out`` stream offers are
compared every cycle instead, ``valid`` and payload, and the user's ``ready`` is random.

The simulator is reached through a small adapter (``get``/``set`` on port paths; the cocotb one
is ``cocotb_tests.link_tb.CocotbIO``). The RTL status port uses the golden names, so every
counter is compared by the name it has in ``golden.encoding.STATUS_COUNTERS``.
"""

import collections
import dataclasses

from golden import encoding as enc
from golden.common.slice import DECODE_TABLE
from golden.encoding import Ctl, Kind
from golden.link.control import check_word
from rtl.simulation.link_pair import observation_layout
from sim.harness.link import LinkHarness, Traffic

HISTORY = 6  # cycles of golden traffic shown with a failure
# Fields of the observe port compared with the golden end every cycle (rtt only while valid).
_CHECKED = (
    "tx_word",
    "state",
    "balance",
    "tx_phase",
    "rx_phase",
    "leader",
    "rtt_valid",
    "rtt",
    "waiting",
    "degraded",
    "window",
    "frames_in_ready",
    "ait_in_ready",
    "ait_out_valid",
    "settle_ready",
    "taken_valid",
    *(f"counter_{name}" for name in enc.STATUS_COUNTERS),
)
_COUNTER_MOD = 1 << enc.STATUS_COUNTER_BITS


def drive_controls(io, prefix: str, c) -> None:
    """Drive one RTL channel direction's fault ports (``<prefix>_cut`` ...) with the golden
    :class:`golden.simulation.channel.Controls` ``c``."""
    io.set((f"{prefix}_cut",), int(c.cut))
    io.set((f"{prefix}_flip",), c.flip)
    io.set((f"{prefix}_force",), int(c.force is not None))
    io.set((f"{prefix}_force_word",), c.force or 0)
    io.set((f"{prefix}_freeze",), int(c.freeze))
    io.set((f"{prefix}_gray_mask",), c.gray_mask)
    io.set((f"{prefix}_gray_value",), c.gray_value)
    io.set((f"{prefix}_gray_drop",), int(c.gray_drop))
    io.set((f"{prefix}_latency",), c.latency)


def _show(word):
    if word is None:
        return "no signal"
    checked = check_word(word)
    if checked is None:
        return f"malformed {word:#020x}"
    tag = checked.tag
    if tag.kind == Kind.CONTROL:
        return f"{Ctl(tag.code).name}({checked.body:#x})"
    return f"{tag.kind.name} c{tag.cls} i{tag.index}"


class LockstepError(AssertionError):
    """The RTL differs from the golden model."""


class LinkLockstep:
    """Drives ``io`` (an adapter with ``get(path)`` and ``set(path, value)``; a path is a tuple
    of port names and array indices) from the golden ``harness`` and checks it every cycle."""

    def __init__(self, harness: LinkHarness, io):
        self.h = harness
        self.io = io
        self.C = harness.a.p.num_classes
        self.cycle = 0
        # Deliveries the golden ends made and the RTL has not yet shown, per end.
        self.owed = {e: {"frames": [[] for _ in range(self.C)], "ait": []} for e in "ab"}
        self.rtl_deliveries = {e: {"frames": [0] * self.C, "ait": 0} for e in "ab"}
        self.skipped = 0  # cycles run unobserved (skip_golden)
        self.history = collections.deque(maxlen=HISTORY)
        # Data words that interrupted an unfinished frame of another class (golden tx words).
        self.preemptions = 0
        self._last_data = {"a": None, "b": None}
        # Extra cut intervals per direction (harness cycles), on top of the channel's schedule.
        self.cuts = {"ab": [], "ba": []}
        # The observe port: field -> (offset, mask); the fields compared each cycle, as a mask.
        self._fields = {name: (f.offset, (1 << f.width) - 1) for name, f in observation_layout(harness.a.p)}
        self._checked = self._mask(*_CHECKED)
        self._checked_no_rtt = self._checked & ~self._mask("rtt")
        self._offsets = tuple(self._fields[n][0] for n in _CHECKED)
        self._driven = {}  # what drive() last wrote, per direction and per end
        self._packed_counters = {}  # per end: (its counters, their observe bits)
        self._observe_port = {e: (f"{e}_observe",) for e in "ab"}
        # Settles to ask (PROTOCOL.md 10.6), each once: (cycle, end, when) with ``when`` "down"
        # (the first cycle from ``cycle`` on with the end not UP) or "now" (at ``cycle``, UP or
        # not: a settle the end skips if it is UP when it would apply).
        self.settles = []
        self._asked = {}  # per end: the settle half-state asked in this cycle and whether the frame offered is taken
        self.settle_outcomes = {True: 0, False: 0}  # settles applied, skipped
        self.user_takes = harness.a.framer.user_takes
        self._ready = {e: (True,) * self.C for e in "ab"}  # frames_out.ready driven this cycle
        self._taking = {e: () for e in "ab"}  # classes whose frame the user takes this cycle
        self.frames_taken = 0  # with user_takes: frames the users took, both ends

    def _mask(self, *names):
        return sum(mask << offset for offset, mask in (self._fields[n] for n in names))

    def _field(self, observed, name):
        offset, mask = self._fields[name]
        return observed >> offset & mask

    def _expected(self, e, ep) -> int:
        """The observe value the golden end ``ep`` (end ``e``) implies, in the fields of
        ``_CHECKED`` (the values below are listed in that order). The counters change in few
        cycles: their packed part is kept until they do."""
        tokens = ep.tokens
        values = (
            ep.tx_word,
            ep.state,
            ep.balance & 3,
            tokens.tx_phase,
            tokens.rx_phase,
            ep.leader,
            ep.rtt is not None,
            ep.rtt or 0,
            ep.rlfd.waiting,
            ep.degraded,
            ep.window,
            sum(ep.frame_ready(c) << c for c in range(self.C)),
            ep.ait_ready,
            tokens.ait_out is not None,
            ep.settle_ready,
            0 if ep.taken_offer is None else 1 << ep.taken_offer[0],
        )
        expected = 0
        for value, offset in zip(values, self._offsets):
            expected |= value << offset  # bools and IntEnums shift as ints
        counts = tuple(vars(ep.counters).values())
        cached = self._packed_counters.get(e)
        if cached is None or cached[0] != counts:
            packed = 0
            for count, offset in zip(counts, self._offsets[len(values) :]):
                packed |= count % _COUNTER_MOD << offset
            cached = self._packed_counters[e] = (counts, packed)
        return expected | cached[1]

    def _fail(self, what):
        recent = "\n".join(
            f"  cycle {t}: a got {_show(ra)}, b got {_show(rb)}; a {ea}, b {eb}" for t, ra, rb, ea, eb in self.history
        )
        raise LockstepError(f"cycle {self.cycle}: {what}\nthe golden ends' last cycles:\n{recent}")

    def _ends(self):
        return (("a", self.h.a), ("b", self.h.b))

    # --- one cycle ---------------------------------------------------------------------------

    def _settle_inputs(self, e, ep):
        """This cycle's settle request (the peer's half-state, or None) and whether the user
        takes the frame the take-out offers, for end ``e``."""
        half = None
        for i, (cycle, end, when) in enumerate(self.settles):
            if end == e and self.cycle >= cycle and ep.settle_ready and (when == "now" or not ep.up):
                peer = self.h.b if e == "a" else self.h.a
                half = peer.half_state()
                del self.settles[i]
                break
        take = ep.taken_offer is not None and self.h.rng.random() < self.h.traffic[e].take_rate
        return half, take

    def drive(self):
        """Before the edge: decide and drive this cycle's inputs. Returns what the golden step needs.
        Ports are written only when what they carry changed since the last drive (a quiet
        channel hands out one shared Controls object; an idle user the same four values)."""
        io, h = self.io, self.h
        controls = {}
        for name, direction in (("ab", h.channel.ab), ("ba", h.channel.ba)):
            c = direction.controls(direction.cycle)
            if any(start <= direction.cycle < end for start, end in self.cuts[name]):
                c = dataclasses.replace(c, cut=True)
            controls[name] = c
            if c is not self._driven.get(name):
                self._driven[name] = c
                drive_controls(io, name, c)
        inputs = {}
        for e, ep in self._ends():
            if self.user_takes:
                self._ready[e] = h.frames_wanted(e)
            for c in range(self.C):
                io.set((f"{e}_frames_out", c, "ready"), int(self._ready[e][c]))
            frames, ait, withdraw, take = h.user_inputs(e, ep)
            frames = frames or {}
            # The user can only take a token it sees: one delivered before this edge.
            take = take and ep.tokens.ait_out is not None
            inputs[e] = (frames, ait, withdraw, take)
            half, take_out = self._asked[e] = self._settle_inputs(e, ep)
            if (half, take_out) != self._driven.get((e, "settle")):
                self._driven[e, "settle"] = (half, take_out)
                io.set((f"{e}_settle", "valid"), int(half is not None))
                io.set((f"{e}_settle", "payload"), half or 0)
                for c in range(self.C):
                    io.set((f"{e}_taken", c, "ready"), int(take_out))
            user = (bool(frames), ait, withdraw, take)
            if not frames and user == self._driven.get(e):
                continue
            self._driven[e] = user
            for c in range(self.C):
                io.set((f"{e}_frames_in", c, "valid"), int(c in frames))
                io.set((f"{e}_frames_in", c, "payload"), int.from_bytes(frames[c], "little") if c in frames else 0)
            io.set((f"{e}_ait_in", "valid"), int(ait is not None))
            io.set((f"{e}_ait_in", "payload"), ait or 0)
            io.set((f"{e}_withdraw",), int(withdraw))
            io.set((f"{e}_ait_out", "ready"), int(take))
        return controls, inputs

    def check_and_step(self, controls, inputs):
        """Before the edge, inputs settled: compare the RTL with the golden ends, then step them."""
        io, h = self.io, self.h
        returned, pulses, took = {}, {}, {}
        for e, ep in self._ends():
            observed = io.get(self._observe_port[e])
            compared = self._checked if ep.rtt is not None else self._checked_no_rtt
            expected = self._expected(e, ep)
            if observed & compared != expected & compared:
                self._explain(e, ep, observed, expected, compared)
            returned[e] = self._collect(e, observed, inputs[e][3])
            pulses[e] = (self._field(observed, "settle_applied"), self._field(observed, "settle_skipped"))
            valid = self._field(observed, "taken_valid")
            if self._asked[e][1] and valid:
                cls = valid.bit_length() - 1
                took[e] = (cls, io.get((f"{e}_taken", cls, "payload")).to_bytes(enc.FRAME_BYTES, "little"))
        for e, ep in self._ends():
            self._count_preemption(e, ep.tx_word)
        results, rx_a, rx_b = self._step_golden(controls, inputs)
        for e, ep in self._ends():
            self._settle_step(e, ep, results[e], pulses[e], took.get(e))
        self.history.append((self.cycle, rx_a, rx_b, results["a"].events, results["b"].events))
        h.score("a", "b", results["a"])
        h.score("b", "a", results["b"])
        for e in "ab":
            owed = self.owed[e]
            for c, frame in results[e].frames if not self.user_takes else ():
                owed["frames"][c].append(frame)
            owed["ait"].extend(results[e].ait)
            want = results[e].ait_returned[0] if results[e].ait_returned else None
            if returned[e] != want:
                self._fail(f"{e} returned token {returned[e]}, golden {want}")
        self.cycle += 1

    def _settle_step(self, e, ep, result, pulses, took):
        """After the golden step: the settle asked and the frame taken in this cycle go to the
        golden end (between steps, as the hardware's request and ready act at the edge), and the
        settle it applied or skipped in the step matches the RTL's pulse."""
        half, take_out = self._asked[e]
        settled = [applied for name, applied in result.events if name == "settle"]
        want = (int(settled == [True]), int(settled == [False]))
        if pulses != want:
            self._fail(f"{e} settle applied/skipped {pulses}, golden {want}")
        for applied in settled:
            self.settle_outcomes[applied] += 1
        if settled == [True]:
            self.h.end_settled(e, ep)
        if half is not None:
            ep.settle(half)
        if take_out:
            cls, frame = ep.take_out()
            if took != (cls, frame):
                got = f"class {took[0]} frame {took[1].hex()[:16]}..."
                self._fail(f"{e} took out {got}, golden class {cls} frame {frame.hex()[:16]}...")
            self.h.took_out(e, cls, frame)

    def _explain(self, e, ep, observed, expected, compared):
        """Fail naming every field in which the RTL end differs from the golden one."""
        diffs = []
        for name in _CHECKED:
            offset, mask = self._fields[name]
            if not compared >> offset & mask:
                continue
            got, want = observed >> offset & mask, expected >> offset & mask
            if got != want:
                if name == "tx_word":
                    diffs.append(f"transmits {got:#020x}, golden {want:#020x}")
                else:
                    diffs.append(f"{name} {got}, golden {want}")
        self._fail(f"{e} differs (golden state {ep.state.name}, held token {ep.tokens.ait_out}): " + "; ".join(diffs))

    def _step_golden(self, controls, inputs):
        """One golden cycle: the channel under ``controls``, both ends with ``inputs`` (per end:
        frames, ait, withdraw, take). Returns ({end: StepResult}, word A got, word B got)."""
        h = self.h
        sent = (h.a.tx_word, h.b.tx_word)
        rx_b = h.channel.ab.apply(sent[0], controls["ab"])
        rx_a = h.channel.ba.apply(sent[1], controls["ba"])
        results = {}
        for e, ep, rx in (("a", h.a, rx_a), ("b", h.b, rx_b)):
            frames, ait, withdraw, take = inputs[e]
            taking, self._taking[e] = self._taking[e], ()
            results[e] = ep.step(rx, frames=frames, ait=ait, withdraw=withdraw, ait_taken=take, frames_taken=taking)
        h.cycle += 1
        h.account(sent, (rx_b, rx_a))
        return results, rx_a, rx_b

    def _count_preemption(self, e, word):
        tag = DECODE_TABLE[word >> enc.SLICE_BITS]
        if tag.kind != Kind.DATA:
            return
        last = self._last_data[e]
        if last is not None and last[0] != tag.cls and last[1] != enc.SLICES_PER_FRAME - 1:
            self.preemptions += 1
        self._last_data[e] = (tag.cls, tag.index)

    def _collect(self, e, observed, taken):
        """The RTL's deliveries this cycle (``observed``: its observe value; ``taken``: the
        user's ait_out.ready), matched in order against the golden ones."""
        io, owed, got = self.io, self.owed[e], self.rtl_deliveries[e]
        valid = self._field(observed, "frames_out_valid")
        if self.user_takes:
            self._offered(e, observed, valid)
            valid = 0
        for c in range(self.C):
            if valid >> c & 1:
                frame = io.get((f"{e}_frames_out", c, "payload")).to_bytes(enc.FRAME_BYTES, "little")
                if not owed["frames"][c]:
                    self._fail(f"{e} delivered a class {c} frame the golden end has not delivered")
                if frame != owed["frames"][c].pop(0):
                    self._fail(f"{e} class {c} frame #{got['frames'][c]} differs from the golden delivery")
                got["frames"][c] += 1
        if taken and self._field(observed, "ait_out_valid"):
            value = self._field(observed, "ait_out_payload")
            if not owed["ait"] or owed["ait"].pop(0) != value:
                self._fail(f"{e} delivered token {value:#x}; golden delivered {owed['ait'][:1]}")
            got["ait"] += 1
        # A withdrawn token goes back in the same edge at both: compared per cycle, after the step.
        return self._field(observed, "returned_value") if self._field(observed, "returned") else None

    def _offered(self, e, observed, valid):
        """With ``user_takes``: the frames the RTL's streams offer now are the golden end's, and
        those the user is ready for are taken at both."""
        ep = self.h.a if e == "a" else self.h.b
        offers = [ep.frame_out(c) for c in range(self.C)]
        want = sum((f is not None) << c for c, f in enumerate(offers))
        if valid != want:
            self._fail(f"{e} frames_out valid {valid:#b}, golden {want:#b}")
        taking = []
        for c, frame in enumerate(offers):
            if frame is None or not self._ready[e][c]:
                continue
            payload = self.io.get((f"{e}_frames_out", c, "payload")).to_bytes(enc.FRAME_BYTES, "little")
            if payload != frame:
                self._fail(f"{e} class {c} offers a frame that differs from the golden one")
            taking.append(c)
            # With user_takes a frame is delivered when the user takes it from the stream.
            self.rtl_deliveries[e]["frames"][c] += 1
        self._taking[e] = tuple(taking)
        self.frames_taken += len(taking)

    # --- runs --------------------------------------------------------------------------------

    def caught_up(self) -> bool:
        """The RTL has handed over everything the golden ends delivered."""
        owed = any(f for e in "ab" for f in self.owed[e]["frames"]) or any(self.owed[e]["ait"] for e in "ab")
        return not owed and not any(q for _, ep in self._ends() for q in ep.framer.untaken)

    def idle_users(self):
        """Stop handing in; take every delivered token (as the golden harness's quiesce)."""
        for e in "ab":
            t = self.h.traffic[e]
            self.h.traffic[e] = Traffic(frame_load=(0.0,) * len(t.frame_load), take_rate=1.0)
            self.h._withdrawing[e] = False

    def skip_drive(self):
        """Inputs for a stretch the RTL runs unobserved: no traffic, no faults. Frames are not
        taken, so a delivery the golden ends did not make stays visible afterwards."""
        io = self.io
        self._driven = {}
        for name, direction in (("ab", self.h.channel.ab), ("ba", self.h.channel.ba)):
            for port, value in (
                ("cut", 0),
                ("flip", 0),
                ("force", 0),
                ("force_word", 0),
                ("freeze", 0),
                ("gray_mask", 0),
                ("gray_value", 0),
                ("gray_drop", 0),
                ("latency", direction.target_latency),
            ):
                io.set((f"{name}_{port}",), value)
        for e in "ab":
            for c in range(self.C):
                io.set((f"{e}_frames_in", c, "valid"), 0)
                io.set((f"{e}_frames_out", c, "ready"), 0)
            io.set((f"{e}_ait_in", "valid"), 0)
            io.set((f"{e}_withdraw",), 0)
            io.set((f"{e}_ait_out", "ready"), 0)
            io.set((f"{e}_settle", "valid"), 0)
            for c in range(self.C):
                io.set((f"{e}_taken", c, "ready"), 0)

    def skip_golden(self, cycles):
        """The golden side of :meth:`skip_drive`: step both ends ``cycles`` times, alone."""
        h = self.h
        if not self.caught_up() or not h.settled():
            raise ValueError("skip only a settled link: deliveries in the stretch would go unchecked")
        idle = {e: (None, None, False, False) for e in "ab"}
        for _ in range(cycles):
            controls = {}
            for name, direction in (("ab", h.channel.ab), ("ba", h.channel.ba)):
                c = direction.controls(direction.cycle)
                if c.cut or c.flip or c.force is not None or c.freeze or c.gray_mask or c.latency != direction.latency:
                    raise ValueError(f"cycle {self.cycle}: the channel has a fault scheduled in a skipped stretch")
                controls[name] = c
            results, _, _ = self._step_golden(controls, idle)
            if any(res.frames or res.ait or res.ait_returned for res in results.values()):
                self._fail("a delivery in a skipped stretch")
            self.cycle += 1
            self.skipped += 1

    def overflow_free(self) -> bool:
        """Neither end's framer queue ever overflowed (they are sized so that none can)."""
        return not any(self.io.get((f"{e}_status", "queue_overflow")) for e in "ab")
