"""The committed Fmax record (docs/FMAX.json): `make synth` writes each component's measured Fmax
there, and no component may fall more than the tolerance below the reference accepted in review
(`python -m sim.tools.synth --accept`). CI does not synthesize; it reads the committed figures, so
a change that costs timing fails here until its new figures are accepted."""

from sim.tools import synth


def test_every_component_has_a_reference_and_a_measurement():
    record = synth.read_record()
    assert (record["device"], record["target_mhz"]) == (synth.DEVICE, synth.TARGET_MHZ)
    placed = set(synth.COMPONENTS) - set(synth.PLACED_ONLY)
    assert set(record["reference"]) == set(record["measured"]) == placed


def test_no_component_lost_more_than_the_tolerance():
    lost = synth.losses(synth.read_record())
    assert not lost, "Fmax (measured, reference) MHz below the tolerance: " + ", ".join(
        f"{n} {m} < {r}" for n, (m, r) in lost.items()
    )


def test_a_loss_beyond_the_tolerance_is_caught_until_it_is_accepted(tmp_path, monkeypatch):
    monkeypatch.setattr(synth, "FMAX_RECORD", tmp_path / "FMAX.json")
    synth.record_measured({"rlfd": 240.0, "framer": 175.0})
    assert synth.accept() == 0 and not synth.losses(synth.read_record())
    synth.record_measured({"rlfd": 240.0 * (1 - synth.TOLERANCE) + 0.1, "framer": 175.0 * (1 - synth.TOLERANCE) - 0.1})
    assert list(synth.losses(synth.read_record())) == ["framer"]
    assert synth.accept() == 0 and not synth.losses(synth.read_record())


def test_accepting_named_components_leaves_the_others(tmp_path, monkeypatch):
    monkeypatch.setattr(synth, "FMAX_RECORD", tmp_path / "FMAX.json")
    synth.record_measured({"rlfd": 240.0, "framer": 175.0})
    assert synth.accept() == 0
    synth.record_measured({"rlfd": 200.0, "framer": 150.0})
    assert synth.accept(["rlfd"]) == 0
    assert synth.read_record()["reference"] == {"rlfd": 200.0, "framer": 175.0}
    assert list(synth.losses(synth.read_record())) == ["framer"]
    assert synth.accept(["bisync_fifo"]) == 1, "nothing measured for it: refused"
