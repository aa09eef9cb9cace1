"""Every engine gives the in-memory numbers (issue 24). Each kind of run the bundled configs hold
(plain matrices, item lists, event lists, a sweep, sample weights, several runs of a system,
rank agreement, paired tests) is run three ways: in memory on the files as they are,
streamed from files sorted by sample id, and on a real LocalCluster from files whose rows are
shuffled, read in several blocks. The three give the same result rows (value and interval), ceilings,
paired comparisons and rank agreement. Statistics draw by sample id in all three (the Poisson
bootstrap, keyed paired tests), so they do not depend on how the data is split or ordered.

What an engine refuses today is marked xfail (strict, with today's message), to be unmarked as
the engines take it; the plan test says which bundled configs an engine still refuses at all."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from distributed import LocalCluster
from engine_cases import CASES, CONFIGS, Case, by_id, on_dask, reordered, shuffled, streamed

import evalkit
from evalkit.api import plan
from evalkit.errors import ConfigError
from evalkit.results import Results

#: The floats of a result row, a paired comparison and a rank agreement; every other field
#: (names, counts, the sweep value) says what the number is, and is compared exactly.
FLOATS = ("value", "ci_low", "ci_high", "difference", "p_value", "tau")
PARTS = ("rows", "comparisons", "agreement", "ceilings")  # ceilings: each T-norm's, the reference against itself


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0") as local:
        yield local.scheduler_address


#: Every case, by name.
CASE_PARAMS = [pytest.param(case, id=name) for name, case in CASES.items()]


def numbers(results: Results) -> dict[tuple, tuple]:
    """Every number of a run, by what it is: its part (rows, comparisons, agreement) and every
    field but the floats -> the floats (None where undefined: JSON's NaN)."""
    out: dict[tuple, tuple] = {}
    document = results.as_dict()
    for part in PARTS:
        for entry in document[part]:
            key = (part, *sorted((k, v) for k, v in entry.items() if k not in FLOATS))
            assert key not in out, f"two entries are {key}"
            out[key] = tuple(entry[k] for k in FLOATS if k in entry)
    return out


def in_memory(case: Case, folder: Path) -> tuple[dict, Results]:
    """The case's in-memory config and results, checked to hold what the case is about."""
    config = case.build(folder)
    results = evalkit.run(config)
    for part in case.parts:
        assert getattr(results, part), f"the in-memory run has no {part}"
    if "statistics" in config:
        assert any(row.ci_low is not None for row in results.rows), "the in-memory run has no interval"
    return config, results


def assert_same(got: Results, want: Results) -> None:
    found, expected = numbers(got), numbers(want)
    assert found.keys() == expected.keys()
    for key, floats in expected.items():
        for a, b in zip(found[key], floats):
            assert (a is None) == (b is None), key
            # Chunks, blocks and groups add up in another order than one whole file, so sums
            # differ in their last bits (rel); abs for values that cancel to about 0.
            assert b is None or a == pytest.approx(b, rel=1e-12, abs=1e-15), key
    assert not [note for note in got.notes if "does not take" in note]


@pytest.mark.parametrize("case", CASE_PARAMS)
@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_the_reordered_files_hold_the_same_data(case, order, tmp_path, monkeypatch):
    """The data as the other engines read it, sorted by id or shuffled, gives the in-memory
    numbers in memory (which aligns by id): what the engines are compared on is the same data,
    whether or not an engine takes it yet."""
    monkeypatch.chdir(CONFIGS)
    config, results = in_memory(case, tmp_path)
    assert_same(evalkit.run(reordered(config, tmp_path / order, by_id if order == "sorted" else shuffled(24))), results)


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_a_streamed_run_from_files_sorted_by_id_gives_the_in_memory_numbers(case, tmp_path, monkeypatch):
    monkeypatch.chdir(CONFIGS)
    config, results = in_memory(case, tmp_path)
    assert_same(evalkit.run(streamed(config, tmp_path / "sorted")), results)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASE_PARAMS)
def test_a_dask_run_from_shuffled_files_gives_the_in_memory_numbers(case, cluster, tmp_path, monkeypatch):
    monkeypatch.chdir(CONFIGS)
    config, results = in_memory(case, tmp_path)
    assert_same(evalkit.run(on_dask(config, tmp_path / "shuffled", cluster)), results)


def bundled_plans() -> list:
    return [pytest.param(path.stem, engine, id=f"{path.stem}-{engine}")
            for path in sorted(CONFIGS.glob("*.yaml")) for engine in ("stream", "dask")]


@pytest.mark.parametrize(("name", "engine"), bundled_plans())
def test_no_does_not_take_refusal_is_left_but_the_bounded_state_one(name, engine, monkeypatch):
    """Every bundled config plans streamed and on Dask (the plan only: no data is read, no
    cluster started). The one refusal left is a metric that needs all of its data (an exact
    ranking), made at the metric, which names its bounded variant (map_binned for map); any
    other, at the engine's key or elsewhere, is one the engines were to lose, whether or not it
    says "does not take"."""
    monkeypatch.chdir(CONFIGS)
    config = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text(encoding="utf-8"))
    if engine == "stream":
        config["data"]["stream"] = True
    else:
        config["engine"] = {"name": "dask"}
    try:
        plan(config, writes=False)
    except ConfigError as exc:
        assert str(exc).startswith("metrics"), f"{engine} refuses {name}: {exc}"
