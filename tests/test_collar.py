"""The collar similarity: with ramp 0 it is sed_eval's hard collar, so Crisp* (threshold_match)
over events kept as listed (``merge: false``) counts exactly the events ``event_based`` (and so
sed_eval) matches; graded, it is symmetric, in [0, 1], 1 within the collar and falling with the
distance."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sed_eval_parity import event_lists, write

import evalkit
from evalkit.discovery import default_registry

METRICS = ["precision", "recall", "f1"]


def collar(**params):
    return default_registry().create("similarity", {"name": "collar", **params}, "test")


@pytest.mark.parametrize("t_collar", [0.2, 0.5, 1.0])
@pytest.mark.parametrize("evaluate_offset", [True, False])
@pytest.mark.parametrize("seed", [0, 5])
def test_crisp_star_with_the_hard_collar_counts_what_event_based_counts(tmp_path, seed, t_collar, evaluate_offset):
    reference, system = event_lists(seed)
    events = {"name": "events", "merge": False}
    data = {"reference": {"path": write(tmp_path / "ref.tsv", reference), "loader": events},
            "systems": {"s": {"path": write(tmp_path / "sys.tsv", system), "loader": events}}}
    options = {"t_collar": t_collar, "percentage_of_length": 0.0, "evaluate_offset": evaluate_offset}
    crisp_star = evalkit.run({
        "name": "c", "data": data, "representation": {"name": "threshold_match", "threshold": 1.0},
        "similarity": {"name": "collar", **options}, "averaging": ["micro", "none"], "metrics": METRICS,
    })
    event_based = evalkit.run({
        "name": "e", "data": data, "representation": {"name": "event_based", **options},
        "averaging": ["micro", "none"], "metrics": METRICS,
    })
    got = {(r.averaging, r.metric, r.class_): r.value for r in crisp_star.rows}
    expected = {(r.averaging, r.metric, r.class_): r.value for r in event_based.rows}
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12, nan_ok=True), key
    assert 0 < expected[("micro", "f1", None)] < 1


events = st.tuples(st.integers(0, 400), st.integers(0, 300)).map(lambda t: (t[0] / 40, (t[0] + t[1]) / 40))


@settings(max_examples=200, deadline=None)
@given(st.lists(events, min_size=1, max_size=6), st.lists(events, min_size=1, max_size=6),
       st.floats(0, 1), st.floats(0, 1), st.floats(0, 2), st.booleans())
def test_the_graded_collar_is_a_similarity_that_falls_with_the_distance(xs, ys, t_collar, share, ramp, offsets):
    sim = collar(t_collar=t_collar, percentage_of_length=share, ramp=ramp, evaluate_offset=offsets)
    m = sim.matrix(xs, ys)
    assert ((m >= 0) & (m <= 1)).all()
    # element-wise: the same correctly rounded operations on each pair, in any layout
    np.testing.assert_array_equal(m, sim.matrix(ys, xs).T)
    np.testing.assert_array_equal(np.diag(sim.matrix(xs, xs)), 1.0)
    np.testing.assert_array_equal(sim.pairs(xs, xs[::-1]), np.diag(sim.matrix(xs, xs[::-1])))
    hard = collar(t_collar=t_collar, percentage_of_length=share, ramp=0.0, evaluate_offset=offsets).matrix(xs, ys)
    assert set(np.unique(hard)) <= {0.0, 1.0}
    assert (m >= hard).all()  # within the collar both give 1; beyond it the graded one gives some credit
    for i, (on_a, off_a) in enumerate(xs):
        for j, (on_b, off_b) in enumerate(ys):
            within = abs(on_a - on_b) <= t_collar and (
                not offsets or abs(off_a - off_b) <= max(t_collar, share * max(off_a - on_a, off_b - on_b)))
            assert hard[i, j] == within


def test_graded_credit_is_linear_past_the_collar():
    sim = collar(t_collar=0.2, ramp=0.4, evaluate_offset=False)
    onsets = [0.0, 0.1, 0.2, 0.4, 0.6, 0.7]
    got = sim.matrix([(0.0, 1.0)], [(on, on + 1.0) for on in onsets])[0]
    np.testing.assert_allclose(got, [1.0, 1.0, 1.0, 0.5, 0.0, 0.0], atol=1e-12)


def test_soft_cardinality_takes_the_graded_collar(tmp_path):
    reference, system = event_lists(0)
    events = {"name": "events", "merge": False}
    data = {"reference": {"path": write(tmp_path / "ref.tsv", reference), "loader": events},
            "systems": {"s": {"path": write(tmp_path / "sys.tsv", system), "loader": events}}}
    results = evalkit.run({
        "name": "s", "data": data, "representation": "soft_cardinality",
        "similarity": [{"name": "collar", "t_collar": 1.0, "ramp": 0.0}, {"name": "collar", "t_collar": 1.0, "ramp": 1.0}],
        "averaging": "micro", "metrics": ["f1"],
    })
    hard, graded = (r.value for r in results.rows)
    assert 0 < hard < graded < 1  # partial credit for near misses
