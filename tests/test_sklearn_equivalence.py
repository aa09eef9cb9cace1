"""On binary data every T-norm under the fuzzy representation, and the crisp representation,
give exactly scikit-learn's precision, recall, F-beta and Jaccard for every averaging."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from run_depth import examples
from sklearn.metrics import fbeta_score, jaccard_score, precision_recall_fscore_support

import evalkit
from evalkit.discovery import default_registry

TNORMS = default_registry().names("tnorm")
AVERAGINGS = ["micro", "macro", "weighted", "samples", "none"]
ZERO_DIVISION = [0.0, 1.0, math.nan]


def binary_pair():
    """Two 0/1 matrices of one shape: 1 to 12 samples, 2 to 5 classes."""
    shapes = st.tuples(st.integers(1, 12), st.integers(2, 5))
    return shapes.flatmap(
        lambda shape: st.tuples(
            arrays(np.float64, shape, elements=st.sampled_from([0.0, 1.0])),
            arrays(np.float64, shape, elements=st.sampled_from([0.0, 1.0])),
        )
    )


def sklearn_values(ref, pred, averaging, zero_division):
    average = None if averaging == "none" else averaging
    y_true, y_pred = ref.astype(int), pred.astype(int)
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average=average, zero_division=zero_division)
    f2 = fbeta_score(y_true, y_pred, beta=2.0, average=average, zero_division=zero_division)
    values = {"precision": p, "recall": r, "f1": f, "fbeta(beta=2.0)": f2}
    if not math.isnan(zero_division):  # jaccard_score accepts only 0 and 1
        values["jaccard"] = jaccard_score(y_true, y_pred, average=average, zero_division=zero_division)
    return values


METRICS = ["precision", "recall", "f1", {"name": "fbeta", "beta": 2.0}, "jaccard"]


def assert_same(ours, theirs, context):
    for key, expected in theirs.items():
        np.testing.assert_allclose(ours[key], expected, rtol=1e-12, atol=1e-12, err_msg=f"{key} {context}")


@settings(max_examples=examples(60), deadline=None)
@given(pair=binary_pair(), averaging=st.sampled_from(AVERAGINGS), zero_division=st.sampled_from(ZERO_DIVISION))
def test_every_tnorm_and_crisp_equal_sklearn_on_binary_data(pair, averaging, zero_division):
    ref, pred = pair
    expected = sklearn_values(ref, pred, averaging, zero_division)
    for tnorm in TNORMS:
        ours = evalkit.evaluate(
            ref, pred, tnorm=tnorm, averaging=averaging, metrics=METRICS, zero_division=zero_division
        )
        assert_same(ours, expected, f"fuzzy/{tnorm}/{averaging}/zd={zero_division}")
    ours = evalkit.evaluate(
        ref, pred, representation="crisp", averaging=averaging, metrics=METRICS, zero_division=zero_division
    )
    assert_same(ours, expected, f"crisp/{averaging}/zd={zero_division}")


@settings(max_examples=examples(30), deadline=None)
@given(
    pair=binary_pair().map(lambda p: (p[0] * 0.9 + 0.05, p[1])),
    averaging=st.sampled_from(AVERAGINGS),
)
def test_crisp_thresholds_soft_data_like_sklearn_on_binarized_data(pair, averaging):
    """0.95/0.05 references thresholded at 0.5 give sklearn's numbers on the binarized data."""
    ref, pred = pair
    ours = evalkit.evaluate(ref, pred, representation="crisp", averaging=averaging, metrics=METRICS)
    assert_same(ours, sklearn_values(ref > 0.5, pred, averaging, 0.0), averaging)


def test_registered_tnorms_are_all_covered():
    """The properties above run over every registered T-norm, which must include the issue's list."""
    assert {"minimum", "product", "lukasiewicz", "drastic", "nilpotent_minimum", "hamacher", "einstein",
            "yager", "frank", "schweizer_sklar", "dombi", "aczel_alsina"} <= set(TNORMS)


@pytest.mark.parametrize("averaging,base", [("macro_pr", "macro"), ("samples_pr", "samples")])
def test_f_of_averaged_p_and_r_is_their_harmonic_mean(averaging, base):
    rng = np.random.default_rng(7)
    ref, pred = rng.random((40, 5)), rng.random((40, 5))
    averaged = evalkit.evaluate(ref, pred, averaging=base, metrics=["precision", "recall", "f1"])
    p, r = averaged["precision"], averaged["recall"]
    ours = evalkit.evaluate(ref, pred, averaging=averaging, metrics=["precision", "recall", "f1", "jaccard"])
    assert ours["precision"] == pytest.approx(p, rel=1e-12)
    assert ours["recall"] == pytest.approx(r, rel=1e-12)
    assert ours["f1"] == pytest.approx(2 * p * r / (p + r), rel=1e-12)
    # Jaccard from P and R: |G∩P| / (|G| + |P| − |G∩P|) = PR / (P + R − PR).
    assert ours["jaccard"] == pytest.approx(p * r / (p + r - p * r), rel=1e-12)
    # The F of averages is not the average of F (that is `base`'s f1), except by coincidence.
    assert ours["f1"] != pytest.approx(averaged["f1"], rel=1e-6)


def test_f_of_averaged_zero_precision_and_recall_is_zero():
    ref = np.array([[1.0, 0.0], [0.0, 1.0]])
    pred = np.array([[0.0, 1.0], [1.0, 0.0]])
    for averaging in ("macro_pr", "samples_pr"):
        assert evalkit.evaluate(ref, pred, averaging=averaging, metrics=["f1"])["f1"] == 0.0
