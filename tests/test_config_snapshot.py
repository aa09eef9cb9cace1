"""Every bundled config gives exactly the results of the snapshot in tests/snapshots: a
restructuring of the code may not change a single number, name or note."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "snapshots"))
from take import CONFIGS, SNAPSHOT, results_of

with gzip.open(SNAPSHOT, "rt", encoding="utf-8") as _handle:
    EXPECTED = json.load(_handle)


def test_every_bundled_config_is_in_the_snapshot():
    assert sorted(EXPECTED) == sorted(p.name for p in CONFIGS.glob("*.yaml"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_results_equal_the_snapshot(name):
    got, expected = results_of(CONFIGS / name), EXPECTED[name]
    for key in expected:
        assert len(got[key]) == len(expected[key]), f"{name}: {key} has {len(got[key])} entries, snapshot {len(expected[key])}"
        for index, (a, b) in enumerate(zip(got[key], expected[key])):
            assert a == b, f"{name}: {key}[{index}] differs from the snapshot:\n got {a}\nwant {b}"
