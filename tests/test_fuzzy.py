"""The fuzzy and crisp representations, chunked reduction, and the properties of the metrics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import evalkit
from evalkit import table
from evalkit.discovery import default_registry

TNORMS = default_registry().names("tnorm")
AVERAGINGS = ["micro", "macro", "weighted", "samples", "macro_pr", "samples_pr"]
METRICS = ["precision", "recall", "f1", "jaccard"]


def soft_pair(max_rows=15, max_classes=5):
    shape = st.tuples(st.integers(1, max_rows), st.integers(1, max_classes))
    unit = st.floats(0, 1, allow_nan=False, width=64)
    return shape.flatmap(lambda s: st.tuples(arrays(np.float64, s, elements=unit), arrays(np.float64, s, elements=unit)))


def test_paper_equation_3_by_hand():
    """Harju & Mesaros eq. 3 with the minimum, computed by hand on two cells."""
    ref, pred = np.array([[0.8, 0.3]]), np.array([[0.6, 0.5]])
    # Σmin = 0.6 + 0.3 = 0.9; Σŷ = 1.1; Σy = 1.1.
    out = evalkit.evaluate(ref, pred, metrics=METRICS)
    assert out["precision"] == pytest.approx(0.9 / 1.1)
    assert out["recall"] == pytest.approx(0.9 / 1.1)
    assert out["f1"] == pytest.approx(2 * 0.9 / 2.2)
    assert out["jaccard"] == pytest.approx(0.9 / (1.1 + 1.1 - 0.9))
    # Product T-norm: Σ y·ŷ = 0.48 + 0.15 = 0.63.
    assert evalkit.evaluate(ref, pred, tnorm="product")["precision"] == pytest.approx(0.63 / 1.1)


@settings(max_examples=40, deadline=None)
@given(pair=soft_pair(), averaging=st.sampled_from(AVERAGINGS), tnorm=st.sampled_from(TNORMS))
def test_bounds_and_permutation_invariance(pair, averaging, tnorm):
    ref, pred = pair
    out = evalkit.evaluate(ref, pred, tnorm=tnorm, averaging=averaging, metrics=METRICS)
    for key, value in out.items():
        assert 0.0 <= value <= 1.0 + 1e-12, key
    rows = np.random.default_rng(0).permutation(len(ref))
    cols = np.random.default_rng(1).permutation(ref.shape[1])
    shuffled = evalkit.evaluate(ref[rows][:, cols], pred[rows][:, cols], tnorm=tnorm, averaging=averaging, metrics=METRICS)
    for key in out:
        assert shuffled[key] == pytest.approx(out[key], rel=1e-9, abs=1e-12), key


@settings(max_examples=30, deadline=None)
@given(pair=soft_pair(), tnorm=st.sampled_from(TNORMS))
def test_minimum_bounds_every_tnorm(pair, tnorm):
    """T ≤ minimum, so every T-norm's intersection, hence P, R and F, is at most minimum's."""
    ref, pred = pair
    ours = evalkit.evaluate(ref, pred, tnorm=tnorm)
    top = evalkit.evaluate(ref, pred, tnorm="minimum")
    for key in ours:
        assert ours[key] <= top[key] + 1e-12


@settings(max_examples=30, deadline=None)
@given(ref=arrays(np.float64, st.tuples(st.integers(1, 12), st.integers(1, 4)), elements=st.floats(0.01, 1)))
def test_minimum_is_idempotent(ref):
    for averaging in ("micro", "macro", "samples"):
        out = evalkit.evaluate(ref, ref.copy(), averaging=averaging)
        assert out == pytest.approx({"precision": 1.0, "recall": 1.0, "f1": 1.0})


def test_result_does_not_depend_on_chunking(monkeypatch):
    rng = np.random.default_rng(3)
    ref, pred = rng.random((1000, 7)).astype(np.float32), rng.random((1000, 7)).astype(np.float32)
    kwargs = dict(tnorm="product", metrics=METRICS + ["kld"])
    whole = {a: evalkit.evaluate(ref, pred, averaging=a, **kwargs) for a in AVERAGINGS + ["none"]}
    monkeypatch.setattr(table, "CHUNK_BYTES", 37 * 7 * 8)  # chunks of 37 rows of 7 float64 values
    monkeypatch.setattr(table, "MIN_CHUNK_ROWS", 1)
    for averaging, expected in whole.items():
        chunked = evalkit.evaluate(ref, pred, averaging=averaging, **kwargs)
        for key in expected:
            np.testing.assert_allclose(chunked[key], expected[key], rtol=1e-12)


def test_float32_input_is_summed_in_float64():
    rng = np.random.default_rng(5)
    ref, pred = rng.random((200_000, 3), dtype=np.float32), rng.random((200_000, 3), dtype=np.float32)
    out = evalkit.evaluate(ref, pred, averaging="none", metrics=["precision"])
    exact = np.minimum(ref, pred).astype(np.float64).sum(0) / pred.astype(np.float64).sum(0)
    np.testing.assert_allclose(out["precision"], exact, rtol=1e-12)


def test_crisp_thresholds_and_options():
    ref = np.array([[0.5, 0.7, 0.2]])
    pred = np.array([[0.6, 0.5, 0.9]])
    # > 0.5: ref {0.7}, pred {0.6, 0.9}; no overlap.
    assert evalkit.evaluate(ref, pred, representation="crisp")["precision"] == 0.0
    # >= 0.5: ref {0.5, 0.7}, pred {0.6, 0.5, 0.9}; overlap {class 0, class 1}.
    inclusive = evalkit.evaluate(ref, pred, representation={"name": "crisp", "inclusive": True})
    assert inclusive["precision"] == pytest.approx(2 / 3) and inclusive["recall"] == 1.0
    # Per-side thresholds: ref > 0.1 (all three), pred > 0.55 (classes 0 and 2).
    sided = evalkit.evaluate(
        ref, pred, representation={"name": "crisp", "reference_threshold": 0.1, "prediction_threshold": 0.55}
    )
    assert sided["precision"] == 1.0 and sided["recall"] == pytest.approx(2 / 3)


def test_kld_matches_the_definition():
    ref, pred = np.array([[0.0, 0.3]]), np.array([[0.2, 1.0]])
    eps = 1e-7
    y, p = np.clip(ref, eps, 1 - eps), np.clip(pred, eps, 1 - eps)
    expected = np.mean(y * np.log(y / p) + (1 - y) * np.log((1 - y) / (1 - p)))
    assert evalkit.evaluate(ref, pred, metrics=["kld"])["kld"] == pytest.approx(expected, rel=1e-12)
    assert evalkit.evaluate(ref, ref, metrics=["kld"])["kld"] == pytest.approx(0.0, abs=1e-12)


def test_zero_division_values():
    ref = np.array([[0.0, 0.4]])
    pred = np.array([[0.0, 0.0]])
    for zd in (0.0, 1.0):
        out = evalkit.evaluate(ref, pred, averaging="none", zero_division=zd)
        assert out["precision"].tolist() == [zd, zd]  # no predicted mass in either class
        assert out["recall"].tolist() == [zd, 0.0]  # class 1 has reference mass 0.4 and no overlap
    nan = evalkit.evaluate(ref, pred, averaging="macro", metrics=["recall"], zero_division=float("nan"))
    assert nan["recall"] == 0.0  # the undefined class 0 is left out of the mean, as sklearn does
