"""A whole RTL link (rtl/link_pair.py) in lockstep with the golden link, cycle by cycle.

The golden harness (sim/link_harness.py) decides each cycle's user inputs and channel faults;
the same inputs drive the RTL pair. Every cycle, before the clock edge, the RTL must show what
the golden ends hold before their ``step``: the word each end transmits, its state, token-plane
phases and balance, leader and RTT, RLFD waiting flag, counters and readiness, and a token it
gives back in that edge. Deliveries (frames per class, tokens) are compared as transactions,
because the RTL hands them over a cycle after the golden end delivers them.

The simulator is reached through a small adapter (``get``/``set`` on port paths; the cocotb one
is ``cocotb_tests.link_tb.CocotbIO``). The RTL status port uses the golden names, so every
counter is compared by the name it has in ``golden.encoding.STATUS_COUNTERS``.
"""

import collections
import dataclasses

from golden import encoding as enc
from golden.control import check_word
from golden.encoding import Ctl, Kind
from golden.slice import DECODE_TABLE
from sim.link_harness import LinkHarness, Traffic

HISTORY = 6          # cycles of golden traffic shown with a failure
_COUNTER_MOD = 1 << enc.STATUS_COUNTER_BITS


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
        self.skipped = 0            # cycles run unobserved (skip_golden)
        self.history = collections.deque(maxlen=HISTORY)
        # Data words that interrupted an unfinished frame of another class (golden tx words).
        self.preemptions = 0
        self._last_data = {"a": None, "b": None}
        # Extra cut intervals per direction (harness cycles), on top of the channel's schedule.
        self.cuts = {"ab": [], "ba": []}

    def _fail(self, what):
        recent = "\n".join(f"  cycle {t}: a got {_show(ra)}, b got {_show(rb)}; a {ea}, b {eb}"
                            for t, ra, rb, ea, eb in self.history)
        raise LockstepError(f"cycle {self.cycle}: {what}\nthe golden ends' last cycles:\n{recent}")

    def _ends(self):
        return (("a", self.h.a), ("b", self.h.b))

    # --- one cycle ---------------------------------------------------------------------------

    def drive(self):
        """Before the edge: decide and drive this cycle's inputs. Returns what the golden step needs."""
        io, h = self.io, self.h
        controls = {}
        for name, direction in (("ab", h.channel.ab), ("ba", h.channel.ba)):
            c = direction.controls(direction.cycle)
            if any(start <= direction.cycle < end for start, end in self.cuts[name]):
                c = dataclasses.replace(c, cut=True)
            controls[name] = c
            io.set((f"{name}_cut",), int(c.cut))
            io.set((f"{name}_flip",), c.flip)
            io.set((f"{name}_force",), int(c.force is not None))
            io.set((f"{name}_force_word",), c.force or 0)
            io.set((f"{name}_latency",), c.latency)
        inputs = {}
        for e, ep in self._ends():
            frames, ait, withdraw, take = h._user(e, ep)
            frames = frames or {}
            # The user can only take a token it sees: one delivered before this edge.
            take = take and ep.tokens.ait_out is not None
            for c in range(self.C):
                io.set((f"{e}_frames_in", c, "valid"), int(c in frames))
                io.set((f"{e}_frames_in", c, "payload"), int.from_bytes(frames[c], "little") if c in frames else 0)
                io.set((f"{e}_frames_out", c, "ready"), 1)
            io.set((f"{e}_ait_in", "valid"), int(ait is not None))
            io.set((f"{e}_ait_in", "payload"), ait or 0)
            io.set((f"{e}_withdraw",), int(withdraw))
            io.set((f"{e}_ait_out", "ready"), int(take))
            inputs[e] = (frames, ait, withdraw, take)
        return controls, inputs

    def check_and_step(self, controls, inputs):
        """Before the edge, inputs settled: compare the RTL with the golden ends, then step them."""
        io, h = self.io, self.h
        returned = {}
        for e, ep in self._ends():
            word = io.get((f"{e}_tx", "word"))
            if word != ep.tx_word:
                self._fail(f"{e} transmits {word:#020x}, golden {ep.tx_word:#020x} "
                           f"(golden state {ep.state.name})")
            state = io.get((f"{e}_status", "state"))
            if state != ep.state:
                self._fail(f"{e} state {state}, golden {ep.state.name}")
            balance = io.get((f"{e}_status", "balance"))
            balance = balance - 4 if balance > 1 else balance
            if balance != ep.balance:
                self._fail(f"{e} balance {balance}, golden {ep.balance}")
            observed = {name: io.get((f"{e}_status", name)) for name in ("tx_phase", "rx_phase", "leader", "rtt_valid")}
            expected = {"tx_phase": ep.tokens.tx_phase, "rx_phase": ep.tokens.rx_phase, "leader": ep.leader,
                        "rtt_valid": ep.rtt is not None}
            if observed != expected:
                self._fail(f"{e} token plane / training {observed}, golden {expected}")
            if ep.rtt is not None and io.get((f"{e}_status", "rtt")) != ep.rtt:
                self._fail(f"{e} RTT {io.get((f'{e}_status', 'rtt'))}, golden {ep.rtt}")
            if io.get((f"{e}_status", "waiting")) != ep.rlfd.waiting:
                self._fail(f"{e} RLFD waiting {io.get((f'{e}_status', 'waiting'))}, golden {ep.rlfd.waiting}")
            for name in enc.STATUS_COUNTERS:
                got = io.get((f"{e}_status", "counters", name))
                want = getattr(ep.counters, name) % _COUNTER_MOD
                if got != want:
                    self._fail(f"{e} counter {name} {got}, golden {want}")
            for c in range(self.C):
                if io.get((f"{e}_frames_in", c, "ready")) != ep.frame_ready(c):
                    self._fail(f"{e} frames_in[{c}].ready differs from golden frame_ready")
            if io.get((f"{e}_ait_in", "ready")) != ep.ait_ready:
                self._fail(f"{e} ait_in.ready differs from golden ait_ready")
            if io.get((f"{e}_ait_out", "valid")) != (ep.tokens.ait_out is not None):
                self._fail(f"{e} ait_out.valid differs from golden (held token {ep.tokens.ait_out})")
            returned[e] = self._collect(e)
        for e, ep in self._ends():
            self._count_preemption(e, ep.tx_word)
        results, rx_a, rx_b = self._step_golden(controls, inputs)
        self.history.append((self.cycle, rx_a, rx_b, results["a"].events, results["b"].events))
        h._score("a", "b", results["a"])
        h._score("b", "a", results["b"])
        for e in "ab":
            owed = self.owed[e]
            for c, frame in results[e].frames:
                owed["frames"][c].append(frame)
            owed["ait"].extend(results[e].ait)
            want = results[e].ait_returned[0] if results[e].ait_returned else None
            if returned[e] != want:
                self._fail(f"{e} returned token {returned[e]}, golden {want}")
        self.cycle += 1

    def _step_golden(self, controls, inputs):
        """One golden cycle: the channel under ``controls``, both ends with ``inputs`` (per end:
        frames, ait, withdraw, take). Returns ({end: StepResult}, word A got, word B got)."""
        h = self.h
        rx_b = h.channel.ab.apply(h.a.tx_word, controls["ab"])
        rx_a = h.channel.ba.apply(h.b.tx_word, controls["ba"])
        results = {}
        for e, ep, rx in (("a", h.a, rx_a), ("b", h.b, rx_b)):
            frames, ait, withdraw, take = inputs[e]
            results[e] = ep.step(rx, frames=frames, ait=ait, withdraw=withdraw, ait_taken=take)
        h.cycle += 1
        return results, rx_a, rx_b

    def _count_preemption(self, e, word):
        tag = DECODE_TABLE[word >> enc.SLICE_BITS]
        if tag.kind != Kind.DATA:
            return
        last = self._last_data[e]
        if last is not None and last[0] != tag.cls and last[1] != enc.SLICES_PER_FRAME - 1:
            self.preemptions += 1
        self._last_data[e] = (tag.cls, tag.index)

    def _collect(self, e):
        """The RTL's deliveries this cycle, matched in order against the golden ones."""
        io, owed, got = self.io, self.owed[e], self.rtl_deliveries[e]
        for c in range(self.C):
            if io.get((f"{e}_frames_out", c, "valid")):
                frame = io.get((f"{e}_frames_out", c, "payload")).to_bytes(enc.FRAME_BYTES, "little")
                if not owed["frames"][c]:
                    self._fail(f"{e} delivered a class {c} frame the golden end has not delivered")
                if frame != owed["frames"][c].pop(0):
                    self._fail(f"{e} class {c} frame #{got['frames'][c]} differs from the golden delivery")
                got["frames"][c] += 1
        if io.get((f"{e}_ait_out", "valid")) and io.get((f"{e}_ait_out", "ready")):
            value = io.get((f"{e}_ait_out", "payload"))
            if not owed["ait"] or owed["ait"].pop(0) != value:
                self._fail(f"{e} delivered token {value:#x}; golden delivered {owed['ait'][:1]}")
            got["ait"] += 1
        # A withdrawn token goes back in the same edge at both: compared per cycle, after the step.
        return io.get((f"{e}_returned_value",)) if io.get((f"{e}_returned",)) else None

    # --- runs --------------------------------------------------------------------------------

    def caught_up(self) -> bool:
        """The RTL has handed over everything the golden ends delivered."""
        return not any(f for e in "ab" for f in self.owed[e]["frames"]) and not any(self.owed[e]["ait"] for e in "ab")

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
        for name, direction in (("ab", self.h.channel.ab), ("ba", self.h.channel.ba)):
            for port, value in (("cut", 0), ("flip", 0), ("force", 0), ("force_word", 0),
                                ("latency", direction.target_latency)):
                io.set((f"{name}_{port}",), value)
        for e in "ab":
            for c in range(self.C):
                io.set((f"{e}_frames_in", c, "valid"), 0)
                io.set((f"{e}_frames_out", c, "ready"), 0)
            io.set((f"{e}_ait_in", "valid"), 0)
            io.set((f"{e}_withdraw",), 0)
            io.set((f"{e}_ait_out", "ready"), 0)

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
                if c.cut or c.flip or c.force is not None or c.latency != direction.latency:
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
