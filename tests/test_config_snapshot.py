"""Every bundled config gives the results of the snapshot in tests/snapshots: a restructuring of
the code may not change a name, a note, a count or a number beyond rounding (``take.py`` says
how floats are compared, and why not bit for bit)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "snapshots"))
from take import CONFIGS, differences, results_of, taken

EXPECTED = taken()


def test_every_bundled_config_is_in_the_snapshot():
    assert sorted(EXPECTED) == sorted(p.name for p in CONFIGS.glob("*.yaml"))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_results_equal_the_snapshot(name):
    expected = EXPECTED[name]
    found = list(differences(results_of(CONFIGS / name), expected, name))
    assert not found, f"{len(found)} differences from the snapshot:\n" + "\n".join(found[:20])


def test_the_comparison_allows_rounding_and_nothing_more():
    """The tolerance admits the AVX-512 difference the snapshot once failed on
    (comparisons[88].difference of tnorms.yaml), and nothing a change of method would give."""
    avx512, avx2 = -0.05398869329891165, -0.05398869329891154
    assert not list(differences({"d": avx512}, {"d": avx2}, "x"))
    assert list(differences({"d": avx2 * (1 + 1e-10)}, {"d": avx2}, "x"))
    assert list(differences({"p": 1}, {"p": 1.0}, "x")), "an int where a float was is a change of kind"
    assert list(differences({"n": "a"}, {"n": "b"}, "x"))
    assert list(differences([1.0], [1.0, 2.0], "x"))
    assert list(differences({"a": 1.0, "b": 2.0}, {"a": 1.0}, "x"))
    assert not list(differences({"v": float("nan")}, {"v": float("nan")}, "x"))
