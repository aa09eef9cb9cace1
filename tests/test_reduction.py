"""The one reduction at its edges: partitions of one row, samples only a system lists, weights,
notes that must not depend on how the data is split, and batches that are not whole samples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from run_depth import examples

import evalkit
import evalkit.api
import evalkit.errors
from evalkit.errors import DataError
from evalkit.table import chunk_rows


def frame(values: np.ndarray, ids: list[str], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(values, columns=columns, index=pd.Index(ids, name="id"))


def numbers(results) -> dict:
    return {(r.system, r.averaging, r.metric): (r.value, r.ci_low, r.ci_high) for r in results.rows}


def assert_same(got, want) -> None:
    assert got.keys() == want.keys()
    for key, value in want.items():
        # Chunk sums added in another order differ in the last bits.
        assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-15, nan_ok=True), key


@pytest.fixture
def files(tmp_path):
    """A reference and a system of one chunk and one row, with ids, as CSV."""
    rng = np.random.default_rng(5)
    n = chunk_rows(3) + 1
    ids = [f"s{i:06d}" for i in range(n)]
    frame((rng.random((n, 3)) > 0.6).astype(float), ids, list("abc")).to_csv(tmp_path / "ref.csv")
    frame(rng.random((n, 3)).round(3), ids, list("abc")).to_csv(tmp_path / "sys.csv")
    return tmp_path, ids


def test_bca_intervals_of_a_data_metric_with_a_chunk_of_one_row(files):
    """A replicate that draws none of a partition's rows gives that partition no data-metric
    state; it adds up as nothing (it was a TypeError)."""
    folder, _ = files
    config = {"name": "r", "data": {"reference": str(folder / "ref.csv"), "systems": {"s": str(folder / "sys.csv")}},
              "metrics": ["f1", "kld"], "statistics": {"bootstrap": {"resamples": 50}}}
    streamed = evalkit.run({**config, "data": {**config["data"], "stream": True}})
    assert_same(numbers(streamed), numbers(evalkit.run(config)))


def test_samples_only_a_system_lists_count_once_and_weights_once(files):
    """missing: empty with ids only the system lists: the same numbers and the same weight total
    in memory and streamed (the total was counted twice)."""
    folder, ids = files
    rng = np.random.default_rng(6)
    extra = [f"t{i:03d}" for i in range(100)]  # after every reference id in text order
    system = pd.read_csv(folder / "sys.csv", index_col="id")
    pd.concat([system, frame(rng.random((100, 3)), extra, list("abc"))]).to_csv(folder / "more.csv")
    frame(np.ones((len(ids) + 100, 1)), ids + extra, ["weight"]).to_csv(folder / "w.csv")
    config = {"name": "r", "data": {"reference": str(folder / "ref.csv"), "systems": {"s": str(folder / "more.csv")},
                                    "missing": "empty", "weights": str(folder / "w.csv")}}
    memory = evalkit.run(config)
    streamed = evalkit.run({**config, "data": {**config["data"], "stream": True}})
    assert_same(numbers(streamed), numbers(memory))
    total = f"{len(ids) + 100:g} in all for {len(ids) + 100} samples"
    assert [n for n in memory.notes if "weighted" in n] == [n for n in streamed.notes if "weighted" in n]
    assert any(total in n for n in memory.notes), memory.notes


def test_the_time_unit_note_is_decided_on_all_the_data(tmp_path):
    """Whether a system's times look like another unit is decided from the latest event end of
    all the data, not chunk by chunk: a late event in a chunk whose reference events end early
    is no note when the reference has late events elsewhere."""
    n = chunk_rows(1) + 10
    names = [f"f{i:06d}.wav" for i in range(n)]
    ref_end = ["1.0"] * n
    ref_end[-1] = "400.0"  # the reference's latest event is in the last chunk
    (tmp_path / "ref.tsv").write_text("".join(f"{f}\t0.0\t{e}\tdog\n" for f, e in zip(names, ref_end)))
    sys_end = ["1.0"] * n
    sys_end[7] = "250.0"  # in the first chunk, whose reference events all end at 1
    (tmp_path / "sys.tsv").write_text("".join(f"{f}\t0.0\t{e}\tdog\n" for f, e in zip(names, sys_end)))
    config = {"name": "t", "data": {"reference": str(tmp_path / "ref.tsv"), "systems": {"s": str(tmp_path / "sys.tsv")}},
              "representation": {"name": "segments", "resolution": 1.0}}
    memory = evalkit.run(config)
    streamed = evalkit.run({**config, "data": {**config["data"], "stream": True}})
    assert not [n for n in memory.notes if "another unit" in n]
    assert not [n for n in streamed.notes if "another unit" in n]


def test_an_empty_system_file_is_all_empty_predictions_streamed_as_in_memory(files):
    folder, _ = files
    (folder / "none.csv").write_text("id,a,b,c\n")
    config = {"name": "r", "data": {"reference": str(folder / "ref.csv"), "systems": {"s": str(folder / "none.csv")},
                                    "missing": "empty"}}
    assert_same(numbers(evalkit.run({**config, "data": {**config["data"], "stream": True}})), numbers(evalkit.run(config)))


def test_weights_are_not_a_selection_of_classes(files):
    """`data.classes` selects the classes of the reference and systems, not of the weights file
    (its one column was looked up as a class)."""
    folder, ids = files
    frame(np.full((len(ids), 1), 2.0), ids, ["weight"]).to_csv(folder / "w.csv")
    config = {"name": "r", "data": {"reference": str(folder / "ref.csv"), "systems": {"s": str(folder / "sys.csv")},
                                    "classes": ["a", "b"], "weights": str(folder / "w.csv")}}
    memory = evalkit.run(config)
    assert_same(numbers(evalkit.run({**config, "data": {**config["data"], "stream": True}})), numbers(memory))
    unweighted = evalkit.run({**config, "data": {k: v for k, v in config["data"].items() if k != "weights"}})
    assert_same(numbers(memory), numbers(unweighted))  # every weight 2: the same ratios


def test_an_evaluator_batch_refuses_ids_only_its_prediction_has():
    """A user's batch holds no promise that a sample's rows are all in it, so an id only the
    prediction lists is an error, as it was, under missing="empty" too (it was counted as an
    empty reference sample, and again when its reference row came in a later batch)."""
    evaluator = evalkit.Evaluator(missing="empty")
    reference = pd.DataFrame({"a": [1.0, 0.0]}, index=["x", "y"])
    prediction = pd.DataFrame({"a": [1.0, 0.0, 1.0]}, index=["x", "y", "z"])
    with pytest.raises(DataError, match="prediction: 1 id\\(s\\) not in the reference: 'z'"):
        evaluator.update(reference, prediction)


def test_unkeyed_paired_tests_are_refused_by_a_streamed_run_at_their_key(files):
    """A streamed run can only draw by sample id: `keyed: false` there is one error at that key,
    from `validate` (the plan) as from `run`."""
    folder, _ = files
    config = {"name": "r", "data": {"reference": str(folder / "ref.csv"),
                                    "systems": {"a": str(folder / "sys.csv"), "b": str(folder / "ref.csv")}, "stream": True},
              "statistics": {"test": {"method": "permutation", "resamples": 20, "keyed": False}}}
    with pytest.raises(evalkit.errors.ConfigError, match=r"^statistics\.test\.keyed: a streamed run reduces its data in "
                                                        r"parts, so its draws are keyed by sample id; leave out "
                                                        r"`keyed: false`$"):
        evalkit.api.plan(config, writes=False)


def test_weights_adding_up_past_what_sums_hold_are_refused_on_all_the_data(files):
    """Each chunk's weights fit, their total does not: the total is checked once every chunk is
    read, naming the weights and the fix (it was checked per chunk, so a streamed run took
    weights an in-memory run refused)."""
    folder, ids = files
    weights = np.ones(len(ids))
    weights[0] = weights[-1] = 6e288  # one in the first chunk, one in the last
    frame(weights[:, None], ids, ["weight"]).to_csv(folder / "w.csv")
    config = {"name": "r", "data": {"reference": str(folder / "ref.csv"), "systems": {"s": str(folder / "sys.csv")},
                                    "weights": str(folder / "w.csv"), "stream": True}}
    with pytest.raises(DataError, match=r"w\.csv: the weights add up to 1\.2e\+289, more than evalkit's sums can hold "
                                        r"\(9\.75e\+288\); scale them down \(only their ratios matter\)"):
        evalkit.run(config)


class _Swaps:
    """A permutation's swaps as the engine reads them: one block (replicates, samples) of bools."""

    def __init__(self, mask):
        self.mask, self.n_replicates = mask, len(mask)

    def block(self, part):
        return self.mask[:, part]


def _permuted(mask, tables):
    """Both sides of a paired permutation of two tables (the first kept where the mask is False,
    then the first swapped in), by :func:`evalkit.engine._replicate_batches`."""
    from types import SimpleNamespace

    from evalkit.engine import Complement, Draw, _replicate_batches

    swaps = _Swaps(mask)
    kept = Complement(swaps)
    axes = SimpleNamespace(sample_metrics=[], zero_division=0.0)
    return _replicate_batches([Draw(((0, kept), (1, swaps))), Draw(((0, swaps), (1, kept)))], {id(swaps): mask},
                              tables, axes, None, "t")


def test_a_permutation_side_that_swaps_away_all_mass_sums_to_exactly_zero():
    """With every sample swapped, a side that holds no mass sums to exactly 0 (so a precision
    there is zero_division), whatever fractional masses the other system had: the totals less
    the swaps' product alone left rounding there (1e-15, and a precision of 0.5)."""
    from evalkit.table import CardinalityTable

    rng = np.random.default_rng(0)
    for n in range(3, 60):
        mass = rng.random((n, 1))
        with_mass = CardinalityTable(np.ones((n, 1)), mass, mass * 0.5)
        without = CardinalityTable(np.ones((n, 1)), np.zeros((n, 1)), np.zeros((n, 1)))
        batch, _ = _permuted(np.ones((1, n), bool), [with_mass, without])
        assert batch.pred[0, 0] == 0.0 and batch.inter[0, 0] == 0.0, n


@settings(max_examples=examples(200), deadline=None)
@given(data=st.data())
def test_a_permutation_side_equals_its_own_counts_product_and_is_zero_exactly_where_it_is(data):
    """Each side of a permutation (totals less the swaps' product, summed again directly where
    little is left) equals its own 0/1 counts times the terms, to 1e-12 relative (what is not
    summed again is within 16 x a sum's rounding, about 1e-15 at these sizes), and is exactly 0
    exactly where that product is: where the side keeps no mass. Masses span 18 orders of
    magnitude, so a side can keep a tiny part of a large total."""
    from evalkit.table import CardinalityTable

    n, replicates = data.draw(st.integers(1, 60)), data.draw(st.integers(1, 30))
    mass = st.one_of(st.just(0.0), st.floats(1e-12, 1.0), st.floats(1.0, 1e6))
    tables = [CardinalityTable(*(data.draw(arrays(np.float64, (n, 2), elements=mass)) for _ in range(3)))
              for _ in range(2)]
    mask = data.draw(arrays(np.bool_, (replicates, n)))
    for batch, (first, second) in zip(_permuted(mask, tables), [(~mask, mask), (mask, ~mask)]):
        assert np.array_equal(batch.n_samples, np.full(replicates, float(n)))  # whole numbers: exact
        for column in ("ref", "pred", "inter"):
            direct = first @ getattr(tables[0], column) + second @ getattr(tables[1], column)
            got = getattr(batch, column)
            assert np.array_equal(got == 0, direct == 0), column
            np.testing.assert_allclose(got, direct, rtol=1e-12, atol=0, err_msg=column)


@pytest.mark.parametrize("threads", [2, 3])
def test_replicates_reduced_on_threads_equal_those_on_one_bit_for_bit(monkeypatch, threads):
    """Chunks' replicates reduced on several threads are added in the chunks' order, so every
    interval, p-value and null of a run over several chunks equals that of one thread bit for
    bit (the same sums in the same order)."""
    import json

    import evalkit.engine

    rng = np.random.default_rng(3)
    n = 3 * chunk_rows(4) + 17
    reference = (rng.random((n, 4)) < 0.3).astype(float)
    systems = {name: np.clip(reference + rng.normal(0, noise, reference.shape), 0, 1)
               for name, noise in (("a", 0.2), ("b", 0.4))}
    config = {"name": "t", "data": {"reference": reference, "systems": systems},
              "averaging": ["micro", "macro", "samples"], "metrics": ["precision", "f1"],
              "statistics": {"bootstrap": {"resamples": 60}, "test": {"method": "permutation", "resamples": 60}}}

    def reported():
        document = evalkit.run(config, write_reports=False).as_dict()
        return json.dumps([document["rows"], document["comparisons"]])

    monkeypatch.setattr(evalkit.engine, "REPLICATE_THREADS", 1)
    one = reported()
    monkeypatch.setattr(evalkit.engine, "REPLICATE_THREADS", threads)
    assert reported() == one


def test_tallies_added_in_place_hold_the_sum_and_leave_the_added_one_as_it_was():
    """A run folds its chunks' tallies with ``+=``: each replicate's data-metric states are
    replaced by their sums one replicate at a time (so the old and the new states of every
    replicate are never held at once), giving what ``+`` gives, in the same order of additions;
    the tally added is left as it was, also after more is added into the total."""
    from evalkit.engine import Replicates
    from evalkit.reduction import Tally

    def tally(states: dict) -> Tally:
        return Tally(intervals={key: Replicates({}, [list(s) for s in data]) for key, data in states.items()}, samples=1)

    # states as arrays (a data metric's states add by +); None: a replicate that drew none of a chunk's samples
    first = tally({"a": [[np.array([1.0, 2.0]), None], [np.array([3.0]), np.array([4.0])]]})
    second = tally({"a": [[np.array([0.5, 0.25]), np.array([8.0])], [None, np.array([16.0])]],
                    "b": [[np.array([32.0])]]})
    third = tally({"b": [[np.array([64.0])]]})
    want = first + second + third
    second_before = {key: [[None if s is None else s.copy() for s in states] for states in r.data]
                     for key, r in second.intervals.items()}

    total = Tally()
    total += first
    total += second
    held = total.intervals["a"].data
    total += third
    assert total.intervals["a"].data is held  # replaced replicate by replicate, not rebuilt beside the old

    assert total.samples == want.samples == 3
    assert total.intervals.keys() == want.intervals.keys()
    for key, expected in want.intervals.items():
        got = total.intervals[key].data
        assert len(got) == len(expected.data)
        for states, wanted in zip(got, expected.data):
            assert len(states) == len(wanted)
            for s, w in zip(states, wanted):
                assert (s is None and w is None) or np.array_equal(s, w)  # the same additions: bit for bit
    for key, states in second_before.items():  # "b" was taken from `second`, then `third` was added to the total's
        for now, before in zip(second.intervals[key].data, states):
            assert all((n is None and b is None) or np.array_equal(n, b) for n, b in zip(now, before))
