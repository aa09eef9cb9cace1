"""A system's event times in milliseconds beside a reference in seconds (or the other way round)
get a note in the results and on stderr, not just a silent near-zero score."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml
from click.testing import CliRunner

import evalkit
from evalkit.cli import main

EVENTS = Path(__file__).resolve().parent.parent / "configs" / "data" / "events"
NAMES = ["filename", "onset", "offset", "event_label"]


def scaled(tmp_path: Path, name: str, factor: float) -> str:
    """The bundled good system's events with every time multiplied by ``factor``."""
    frame = pd.read_csv(EVENTS / "good.tsv", sep="\t", header=None, names=NAMES)
    frame[["onset", "offset"]] *= factor
    path = tmp_path / name
    frame.to_csv(path, sep="\t", header=False, index=False)
    return str(path)


def config(reference: str, system: str, out: Path) -> dict:
    return {
        "name": "units", "data": {"reference": reference, "systems": {"ms": system}},
        "representation": "segments", "similarity": "segment_overlap", "metrics": ["f1"],
        "report": {"formats": ["json"], "out": str(out)},
    }


def test_milliseconds_beside_seconds_get_a_note(tmp_path):
    results = evalkit.run(config(str(EVENTS / "reference.tsv"), scaled(tmp_path, "ms.tsv", 1000), tmp_path))
    (note,) = [n for n in results.notes if "another unit" in n]
    assert note.startswith("ms: event times reach 29") and "more than 100× the reference's latest event end" in note


def test_a_reference_in_milliseconds_beside_a_system_in_seconds_gets_a_note(tmp_path):
    reference = pd.read_csv(EVENTS / "reference.tsv", sep="\t")
    reference[["onset", "offset"]] *= 1000
    reference.to_csv(tmp_path / "reference.tsv", sep="\t", index=False)
    results = evalkit.run(config(str(tmp_path / "reference.tsv"), str(EVENTS / "good.tsv"), tmp_path))
    assert any("less than 1/100 of the reference's latest event end" in n for n in results.notes)


def test_times_in_one_unit_get_no_note(tmp_path):
    for factor in (1, 3):  # a system that runs on past the reference is still in seconds
        results = evalkit.run(config(str(EVENTS / "reference.tsv"), scaled(tmp_path, "s.tsv", factor), tmp_path))
        assert not [n for n in results.notes if "another unit" in n]


def test_the_note_is_on_stderr_whatever_the_format(tmp_path):
    path = tmp_path / "units.yaml"
    path.write_text(yaml.safe_dump(config(str(EVENTS / "reference.tsv"), scaled(tmp_path, "ms.tsv", 1000), tmp_path)))
    for fmt in ("table", "json"):
        result = CliRunner().invoke(main, ["run", str(path), "-q", "--format", fmt, "--no-report"])
        assert result.exit_code == 0, result.output
        assert "another unit" in result.stderr and "another unit" not in result.stdout.split('"notes"')[0]
