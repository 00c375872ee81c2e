"""Cycle-by-cycle timelines of the golden link, as Markdown tables for docs/PROTOCOL.md.

``python -m sim.timeline ait`` prints one atomic token transfer, ``python -m sim.timeline cut`` one
cut and its detection, ``python -m sim.timeline resume`` a flap and the session resumed.
tests/test_protocol_doc.py checks that the tables in PROTOCOL.md are exactly what this prints, so
the worked examples cannot drift from the model.
"""

import sys

from golden import encoding as enc
from golden.common.slice import DECODE_TABLE
from golden.encoding import Ctl, Kind
from golden.params import TURNAROUND, LinkParams
from sim.harness.link import LinkHarness, Traffic, make_link

LATENCY = 3


def describe(word) -> str:
    if word is None:
        return "(no signal)"
    tag = DECODE_TABLE[word >> enc.SLICE_BITS]
    if tag.kind == Kind.MALFORMED:
        return "(malformed)"
    if tag.kind == Kind.DATA:
        return f"DATA c{tag.cls} s{tag.index}"
    if tag.kind == Kind.ECHO:
        return f"ECHO c{tag.cls} s{tag.index}"
    name = Ctl(tag.code).name
    if tag.code in (Ctl.AIT_OFFER, Ctl.AIT_ACCEPT, Ctl.AIT_COMMIT, Ctl.AIT_REJECT, Ctl.AIT_RETRACT):
        seq = enc.TOKEN_BODY.get(word, "ait_seq")
        name += f"({seq})"
    if tag.code == Ctl.TRAIN_HELLO and enc.HELLO_BODY.get(word, "resume"):
        name += " resume"
    if tag.code in enc.TOKEN_CODES and enc.TOKEN_BODY.get(word, "copy"):
        name += " ask" if enc.TOKEN_BODY.get(word, "again") else " copy"
    return name


def _rows(h, cycles, note):
    rows = [
        "| cycle | A sends | B receives | B sends | A receives | bal A | bal B | note |",
        "|------:|---------|------------|---------|------------|------:|------:|------|",
    ]
    for _ in range(cycles):
        sent_a, sent_b = h.a.tx_word, h.b.tx_word
        t = h.cycle
        h.step()
        got_b, got_a = h.channel.ab.last_delivered, h.channel.ba.last_delivered
        rows.append(
            f"| {t} | {describe(sent_a)} | {describe(got_b)} | {describe(sent_b)} | "
            f"{describe(got_a)} | {h.a.balance:+d} | {h.b.balance:+d} | {note(h, t)} |"
        )
    return "\n".join(rows)


def ait_timeline() -> str:
    """A hands token 0x0001 to its link; it travels to B's user, and B's next token back to A.
    Starts in the cycle A's offer is on the wire."""
    h = make_link(LATENCY, seed=3)
    h.run_until(LinkHarness.both_up, 5000)
    h.run(40)
    h.traffic["a"] = Traffic(ait_rate=1.0)
    h.step()
    h.traffic["a"] = Traffic()
    while describe(h.a.tx_word) != "AIT_OFFER(0)":
        h.step()
    events = {}

    def note(h, t):
        out = []
        if h.stats["b"].ait_out and "delivered" not in events:
            events["delivered"] = t
            out.append(f"B delivers {h.stats['b'].ait_out[0]:#06x} to its user")
        return "; ".join(out)

    return _rows(h, 4 * LATENCY + 3 * TURNAROUND + 1, note)


def cut_timeline() -> str:
    """The A-to-B direction is cut while a token circulates; B loses the signal, A learns it from
    B's remote-fault HELLO. Both suspect."""
    probe = make_link(LATENCY, seed=3)
    probe.run_until(LinkHarness.both_up, 5000)
    cut = probe.cycle + 40
    f = {"cuts": [(cut, None)]}
    h = make_link(LATENCY, seed=3, faults_ab=f)
    h.run(cut - 2)

    def note(h, t):
        out = [
            f"{n.upper()} suspects: {e[2]}" for n in "ab" for e in h.stats[n].events if e[0] == t and e[1] == "suspect"
        ]
        if t == cut:
            out.insert(0, "A-to-B cut starts")
        return "; ".join(out)

    return _rows(h, LinkParams().los_cycles + LATENCY + TURNAROUND + 5, note)


FLAP = 12  # cycles, both directions: longer than the loss-of-signal window


def resume_timeline() -> str:
    """Both directions flap for FLAP cycles while a token circulates; both ends suspect (loss of
    signal), and once the line is back they resume the session: a HELLO each way, one probe, the
    READY exchange. Ends in the cycle after both are UP again."""
    probe = make_link(LATENCY, seed=3)
    probe.run_until(LinkHarness.both_up, 5000)
    cut = probe.cycle + 40
    f = {"cuts": [(cut, cut + FLAP)]}
    h = make_link(LATENCY, seed=3, faults_ab=f, faults_ba=f)
    h.run(cut - 1)
    state = {"a": "UP", "b": "UP"}

    def note(h, t):
        out = [
            f"{n.upper()} suspects: {e[2]}" for n in "ab" for e in h.stats[n].events if e[0] == t and e[1] == "suspect"
        ]
        if t == cut:
            out.insert(0, "both directions cut")
        if t == cut + FLAP:
            out.insert(0, "the line is back")
        for n, ep in (("a", h.a), ("b", h.b)):
            now = ep.state.name
            if now != state[n]:
                out.append(f"{n.upper()} {now}" + (f" (RTT {ep.rtt})" if now == "UP" else ""))
                state[n] = now
        return "; ".join(out)

    table = []
    for line in _rows(h, FLAP + 8 * (2 * LATENCY + TURNAROUND), note).split("\n"):
        table.append(line)
        if len(table) > 2 and state == {"a": "UP", "b": "UP"} and "UP (RTT" in line:
            break
    return "\n".join(table)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["ait"]:
        print(ait_timeline())
    elif argv == ["cut"]:
        print(cut_timeline())
    elif argv == ["resume"]:
        print(resume_timeline())
    else:
        print("usage: python -m sim.timeline {ait|cut|resume}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
