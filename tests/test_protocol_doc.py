"""docs/PROTOCOL.md and the golden model say the same thing (sections 2 to 8)."""

from pathlib import Path

from golden import encoding as enc
from golden.params import LinkParams
from sim import timeline

DOC = (Path(__file__).resolve().parent.parent / "docs" / "PROTOCOL.md").read_text()


def _table_after(heading):
    section = DOC[DOC.index(heading) :]
    start = section.index("| cycle |")
    lines = []
    for line in section[start:].splitlines():
        if not line.startswith("|"):
            break
        lines.append(line)
    return "\n".join(lines)


def test_ait_timeline_is_what_the_model_does():
    assert _table_after("### 3.7 Worked timeline") == timeline.ait_timeline()


def test_cut_timeline_is_what_the_model_does():
    assert _table_after("### 5.4 Worked timeline") == timeline.cut_timeline()


def test_resume_timeline_is_what_the_model_does():
    assert _table_after("### 5.5 Worked timeline") == timeline.resume_timeline()


def test_default_margin_and_loss_of_signal_match_the_text():
    p = LinkParams()
    assert f"**margin = 2 × (1 + 3) = {p.margin}** cycles" in DOC
    assert f"`los_cycles` consecutive words ({p.los_cycles} by default)" in DOC


def test_phase_codes_match_the_text():
    for phase in enc.TxPhase:
        assert f"`{phase.name}`={phase.value}" in DOC
    for phase in enc.RxPhase:
        assert f"`{phase.name}`={phase.value}" in DOC


def test_word_balances_match_the_text():
    text = DOC[DOC.index("### 3.3 Balances") : DOC.index("### 3.4")]
    for code, balance in enc.WORD_BALANCE.items():
        name = enc.Ctl(code).name
        if balance:
            sign = "+" if balance > 0 else "−"
            assert f"`{name}` {sign}1" in text, name


def test_every_state_has_a_column_and_every_word_a_row_in_the_state_table():
    table = DOC[DOC.index("## 8. State × input") :]
    header = next(line for line in table.splitlines() if line.startswith("| input |"))
    assert [c.strip() for c in header.strip("|").split("|")][1:] == [s.name for s in enc.LinkState]
    for code in enc.Ctl:
        assert f"`{code.name}`" in table or code.name in ("TICK", "TOCK"), code.name
    assert "`TICK`/`TOCK`" in table and "`DATA`" in table and "`ECHO`" in table


def test_parameter_table_matches_golden_params():
    from golden.params import LIMITS, READ_SLICES

    table = DOC[DOC.index("## 9. Endpoint parameters") :]
    rows = {}
    for line in table.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0].strip("`")] = cells[1:3]
    defaults = LinkParams()
    assert set(rows) == set(LIMITS) | {"echo_mode", "recovery", "token_copies", "read_slices"}
    for name, (default, span) in rows.items():
        assert default == str(getattr(defaults, name)), name
        if name == "read_slices":
            assert span == ", ".join(map(str, READ_SLICES))
        if name not in LIMITS:
            continue
        low, high = LIMITS[name]
        got_low, got_high = (part.strip() for part in span.split("..", 1))
        assert int(got_low) == low, name
        if name == "los_cycles":  # its upper bound also depends on the margin
            assert got_high == f"min({high}, margin)"
        else:
            powers = {"2^20": 1 << 20, "2^32 − 1": (1 << 32) - 1}
            assert (powers[got_high] if got_high in powers else int(got_high)) == high, name
