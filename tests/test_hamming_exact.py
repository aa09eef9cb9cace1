"""The Hamming loss and the exact match ratio: scikit-learn's ``hamming_loss`` and
``accuracy_score`` on binary multi-label data (sample weights included) for every T-norm and
averaging over samples or classes, and their fuzzy definitions (docs/metrics.md) on soft data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from run_depth import examples
from sklearn.metrics import accuracy_score, hamming_loss
from test_sklearn_equivalence import TNORMS, binary_pair

import evalkit
from evalkit.discovery import default_registry

#: averagings under which every cell weighs the same: each equals the mean over all cells
CELL_AVERAGINGS = ["micro", "macro", "samples"]
METRICS = ["hamming_loss", "exact_match_ratio"]


def weights_for(draw, n):
    return np.array(draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25]), min_size=n, max_size=n)))


@settings(max_examples=examples(60), deadline=None)
@given(pair=binary_pair(), data=st.data())
def test_binary_data_give_sklearns_hamming_loss_and_exact_match_ratio(pair, data):
    ref, pred = pair
    weights = weights_for(data.draw, len(ref)) if data.draw(st.booleans()) else None
    if weights is not None and weights.sum() == 0:
        weights[0] = 1.0  # scikit-learn divides by the total weight
    hamming = hamming_loss(ref.astype(int), pred.astype(int), sample_weight=weights)
    exact = accuracy_score(ref.astype(int), pred.astype(int), sample_weight=weights)
    for tnorm in TNORMS:
        for averaging in CELL_AVERAGINGS:
            got = evalkit.evaluate(ref, pred, tnorm=tnorm, averaging=averaging, metrics=METRICS, sample_weight=weights)
            assert got["hamming_loss"] == pytest.approx(hamming, rel=1e-12, abs=1e-15), (tnorm, averaging)
            assert got["exact_match_ratio"] == pytest.approx(exact, rel=1e-12, abs=1e-15), (tnorm, averaging)
    crisp = evalkit.evaluate(ref, pred, representation="crisp", metrics=METRICS, sample_weight=weights)
    assert crisp == pytest.approx({"hamming_loss": hamming, "exact_match_ratio": exact}, rel=1e-12, abs=1e-15)


@settings(max_examples=examples(40), deadline=None)
@given(pair=binary_pair())
def test_per_class_hamming_is_sklearns_on_each_column(pair):
    ref, pred = pair
    got = evalkit.evaluate(ref, pred, averaging="none", metrics=["hamming_loss"])["hamming_loss"]
    expected = [hamming_loss(ref[:, c].astype(int), pred[:, c].astype(int)) for c in range(ref.shape[1])]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_soft_memberships_follow_the_fuzzy_definitions():
    """With the minimum T-norm, |G| + |P| − 2|G ∩ P| = Σ |μG − μP|; the exact match of a sample is
    its worst class's 1 − |μG − μP| (docs/metrics.md)."""
    rng = np.random.default_rng(11)
    ref, pred = rng.random((40, 6)), rng.random((40, 6))
    weights = rng.random(40)
    gap = np.abs(ref - pred)
    got = evalkit.evaluate(ref, pred, tnorm="minimum", metrics=METRICS, sample_weight=weights)
    assert got["hamming_loss"] == pytest.approx(weights @ gap.sum(axis=1) / (weights.sum() * 6), rel=1e-12)
    assert got["exact_match_ratio"] == pytest.approx(weights @ (1 - gap.max(axis=1)) / weights.sum(), rel=1e-12)
    # another T-norm gives another intersection, so another symmetric difference: the product's
    # μG μP is at most min(μG, μP), so its loss is at least the minimum's
    product = evalkit.evaluate(ref, pred, tnorm="product", metrics=METRICS)
    assert product["hamming_loss"] > evalkit.evaluate(ref, pred, tnorm="minimum", metrics=METRICS)["hamming_loss"]
    # the exact match ignores the T-norm: the same computation
    assert product["exact_match_ratio"] == evalkit.evaluate(ref, pred, metrics=METRICS)["exact_match_ratio"]


def test_a_worked_example():
    """Two samples, two classes: |μG − μP| = (0.2, 0.5) and (0, 0); by hand, Hamming
    (0.2 + 0.5 + 0 + 0) / 4 = 0.175 and exact match (min(0.8, 0.5) + min(1, 1)) / 2 = 0.75."""
    ref = np.array([[0.9, 0.5], [1.0, 0.0]])
    pred = np.array([[0.7, 1.0], [1.0, 0.0]])
    got = evalkit.evaluate(ref, pred, metrics=METRICS)
    assert got == pytest.approx({"hamming_loss": 0.175, "exact_match_ratio": 0.75}, rel=1e-12)


def test_hamming_is_a_loss():
    ref = np.array([[1.0, 0.0], [0.3, 0.6]])
    # min(x, x) = x: |G ∩ P| is the very sum |G|, so 2S / (S + S) = 1 and S + S − 2S = 0 exactly
    assert evalkit.evaluate(ref, ref, metrics=["f1", "hamming_loss"]) == {"f1": 1.0, "hamming_loss": 0.0}
    assert default_registry().entry("metric", "hamming_loss").cls.lower_is_better


@pytest.mark.parametrize("metric", ["hamming_loss", "card_ref", "card_inter"])
def test_the_pr_averagings_average_a_metric_that_is_no_function_of_p_and_r_itself(metric):
    """macro_pr and samples_pr take a metric of the averaged P and R; a rate per cell or a
    cardinality has none, so it is averaged itself, as under macro and samples."""
    rng = np.random.default_rng(12)
    ref, pred = rng.random((30, 4)), rng.random((30, 4))
    for pr, plain in (("macro_pr", "macro"), ("samples_pr", "samples")):
        got = evalkit.evaluate(ref, pred, averaging=pr, metrics=[metric, "f1"])
        expected = evalkit.evaluate(ref, pred, averaging=plain, metrics=[metric])
        assert got[metric] == expected[metric], pr  # the same reduction of the same sums
