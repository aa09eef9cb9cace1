"""The binned mAP: a fixed-size state that merges by ``+``, the exact mAP of scores rounded to
their bins, and a bound that always holds the exact mAP (scikit-learn's), weights included."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from run_depth import examples
from sklearn.metrics import average_precision_score

import evalkit
from evalkit.errors import DataError


def sklearn_map(y, s, weights=None):
    """The macro mean over classes of scikit-learn's AP, a class without positive weight at 0."""
    values = []
    for c in range(y.shape[1]):
        has = y[:, c] > 0 if weights is None else (y[:, c] > 0) & (weights > 0)
        values.append(average_precision_score(y[:, c], s[:, c], sample_weight=weights) if has.any() else 0.0)
    return float(np.mean(values))


def binned(y, s, bins, weights=None, **params):
    return evalkit.evaluate(y, s, metrics=[{"name": "map_binned", "bins": bins, **params}], sample_weight=weights)


@settings(max_examples=examples(80), deadline=None)
@given(data=st.data(), n=st.integers(1, 40), classes=st.integers(1, 4), bins=st.sampled_from([2, 3, 10, 64]),
       weighted=st.booleans())
def test_the_bound_holds_the_exact_map(data, n, classes, bins, weighted):
    y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n * classes, max_size=n * classes)), float)
    s = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.01, 0.3, 0.31, 0.5, 0.74, 0.99, 1.0]) | st.floats(0, 1),
                                    min_size=n * classes, max_size=n * classes)))
    y, s = y.reshape(n, classes), s.reshape(n, classes)
    weights = None
    if weighted:
        weights = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n, max_size=n)))
        weights[0] = 1.0
    got = binned(y, s, bins, weights)
    exact = sklearn_map(y, s, weights)
    assert got["map_binned_lower"] - 1e-12 <= exact <= got["map_binned_upper"] + 1e-12, (got, exact)
    assert got["map_binned_lower"] <= got["map_binned"] <= got["map_binned_upper"]


@settings(max_examples=examples(40), deadline=None)
@given(data=st.data(), n=st.integers(1, 40), bins=st.sampled_from([4, 10, 100]), weighted=st.booleans())
def test_scores_on_the_bin_grid_give_the_exact_map(data, n, bins, weighted):
    """One distinct score per bin: nothing is lost, binned = exact and the bound is that value."""
    y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n * 3, max_size=n * 3)), float).reshape(n, 3)
    s = (np.array(data.draw(st.lists(st.integers(0, bins - 1), min_size=n * 3, max_size=n * 3))).reshape(n, 3) + 0.5) / bins
    weights = np.array(data.draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=n, max_size=n))) if weighted else None
    got = binned(y, s, bins, weights)
    assert got["map_binned"] == pytest.approx(sklearn_map(y, s, weights), rel=1e-12, abs=1e-15)


def test_the_state_does_not_grow_and_batches_merge():
    rng = np.random.default_rng(0)
    y, s = (rng.random((3000, 6)) < 0.2).astype(float), rng.random((3000, 6))
    spec = [{"name": "map_binned", "bins": 50, "per_class": True}]
    whole = evalkit.Evaluator(metrics=spec).update(y, s)
    parts = [evalkit.Evaluator(metrics=spec).update(y[i : i + 700], s[i : i + 700]).state() for i in range(0, 3000, 700)]
    merged = evalkit.Evaluator(metrics=spec).merge(sum(parts[1:], parts[0]))
    values = merged.values()
    for measure, value in whole.values().items():
        assert values[measure] == pytest.approx(value, rel=1e-12), measure
    small = evalkit.Evaluator(metrics=spec).update(y[:10], s[:10]).state()
    (kept,) = small.data.values()
    assert kept.shape == whole.state().data["map_binned(bins=50, per_class=True)"].shape == (6, 50, 2)
    assert abs(len(pickle.dumps(small)) - len(pickle.dumps(whole.state()))) < 8  # but the sample count


def test_more_bins_narrow_the_bound():
    rng = np.random.default_rng(1)
    y = (rng.random((5000, 8)) < 0.1).astype(float)
    s = np.clip(0.3 * y + 0.7 * rng.random((5000, 8)), 0, 1)
    widths = [binned(y, s, bins)["map_binned_upper"] - binned(y, s, bins)["map_binned_lower"] for bins in (10, 100, 1000)]
    assert widths[0] > widths[1] > widths[2] > 0


def test_targets_must_be_binary_and_scores_memberships():
    y, s = np.array([[1.0, 0.5], [0.0, 1.0]]), np.array([[0.2, 0.4], [0.9, 0.1]])
    with pytest.raises(DataError, match="metric 'map_binned': targets must be binary"):
        binned(y, s, 10)
    with pytest.raises(DataError, match="outside \\[0, 1\\]|between 0 and 1"):
        binned(np.array([[1.0, 0.0]]), np.array([[2.0, 0.1]]), 10)
