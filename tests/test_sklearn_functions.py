"""evalkit.metrics against sklearn.metrics: on crisp labels (binary, multiclass, multi-label) the
same numbers, shapes, errors and UndefinedMetricWarnings, for every average, every
zero_division and random sample weights; on soft labels evalkit's fuzzy values."""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest
import sklearn.metrics as skm
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sklearn_equivalence import binary_pair

import evalkit
import evalkit.metrics as ekm

ZERO_DIVISION = ["warn", 0.0, 1.0, math.nan]
SET_FUNCTIONS = ["precision_score", "recall_score", "f1_score", "fbeta_score", "jaccard_score",
                 "precision_recall_fscore_support"]
WEIGHTS = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25])


def labels(kind: str):
    """Pairs of 1-D label arrays (binary or multiclass) or multi-label indicator matrices."""
    if kind == "multilabel":
        return binary_pair().map(lambda pair: (pair[0].astype(int), pair[1].astype(int)))
    top = 1 if kind == "binary" else 3
    return st.integers(1, 15).flatmap(lambda n: st.tuples(
        st.lists(st.integers(0, top), min_size=n, max_size=n).map(np.array),
        st.lists(st.integers(0, top), min_size=n, max_size=n).map(np.array),
    ))


def call(module, name, *args, **kwargs):
    """(result, UndefinedMetricWarning messages) or (the ValueError, [])."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = getattr(module, name)(*args, **kwargs)
        except ValueError as exc:
            return exc, []
    return result, sorted({str(w.message) for w in caught if w.category.__name__ == "UndefinedMetricWarning"})


def assert_same(ours, theirs, context):
    if isinstance(theirs, ValueError):
        assert isinstance(ours, ValueError), f"{context}: scikit-learn raises {theirs!r}, evalkit gives {ours!r}"
        return
    assert not isinstance(ours, ValueError), f"{context}: evalkit raises {ours!r}, scikit-learn gives {theirs!r}"
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), context
        for a, b in zip(ours, theirs):
            assert_same(a, b, context)
        return
    if theirs is None:
        assert ours is None, context
        return
    assert np.shape(ours) == np.shape(theirs), f"{context}: shape {np.shape(ours)} != {np.shape(theirs)}"
    np.testing.assert_allclose(np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float),
                               rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=context)


@settings(max_examples=150, deadline=None)
@given(
    kind=st.sampled_from(["binary", "multiclass", "multilabel"]), data=st.data(),
    name=st.sampled_from(SET_FUNCTIONS), average=st.sampled_from([None, "binary", "micro", "macro", "weighted", "samples"]),
    zero_division=st.sampled_from(ZERO_DIVISION), weighted=st.booleans(),
)
def test_set_metrics_equal_sklearn(kind, data, name, average, zero_division, weighted):
    y_true, y_pred = data.draw(labels(kind))
    kwargs = {"average": average, "zero_division": zero_division}
    if weighted:
        kwargs["sample_weight"] = np.array(data.draw(st.lists(WEIGHTS, min_size=len(y_true), max_size=len(y_true))))
        kwargs["sample_weight"][0] = max(kwargs["sample_weight"][0], 1.0)
    if name in ("fbeta_score", "precision_recall_fscore_support"):
        kwargs["beta"] = data.draw(st.sampled_from([0.5, 1.0, 2.0]))
    if name == "jaccard_score" and isinstance(zero_division, float) and math.isnan(zero_division):
        return  # scikit-learn's jaccard_score takes 0, 1 or "warn" only
    theirs, their_warnings = call(skm, name, y_true, y_pred, **kwargs)
    ours, our_warnings = call(ekm, name, y_true, y_pred, **kwargs)
    context = f"{name}({kind}, {kwargs})"
    assert_same(ours, theirs, context)
    assert our_warnings == their_warnings, context


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(["binary", "multiclass", "multilabel"]), data=st.data(), weighted=st.booleans(),
       normalize=st.booleans())
def test_hamming_loss_and_accuracy_equal_sklearn(kind, data, weighted, normalize):
    y_true, y_pred = data.draw(labels(kind))
    weights = None
    if weighted:
        weights = np.array(data.draw(st.lists(WEIGHTS, min_size=len(y_true), max_size=len(y_true))))
        weights[0] = max(weights[0], 1.0)
    for name, kwargs in (("hamming_loss", {}), ("accuracy_score", {"normalize": normalize})):
        theirs, _ = call(skm, name, y_true, y_pred, sample_weight=weights, **kwargs)
        ours, _ = call(ekm, name, y_true, y_pred, sample_weight=weights, **kwargs)
        assert_same(ours, theirs, f"{name}({kind}, {weights}, {kwargs})")


@settings(max_examples=60, deadline=None)
@given(data=st.data(), kind=st.sampled_from(["binary", "multilabel", "multiclass"]),
       average=st.sampled_from([None, "micro", "macro", "weighted", "samples"]), weighted=st.booleans())
def test_average_precision_equals_sklearn(data, kind, average, weighted):
    n = data.draw(st.integers(2, 15))
    classes = 1 if kind == "binary" else data.draw(st.integers(2, 4))
    scores = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.7, 1.0]), min_size=n * classes,
                                         max_size=n * classes))).reshape(n, classes)
    if kind == "multiclass":
        y_true = np.array(data.draw(st.lists(st.integers(0, classes - 1), min_size=n, max_size=n)))
        if average not in ("macro", None) or weighted:
            return  # scikit-learn supports multiclass AP for macro and None, unweighted
    else:
        y_true = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n * classes, max_size=n * classes))).reshape(n, classes)
    if kind == "binary":
        y_true, scores = y_true[:, 0], scores[:, 0]
    weights = None
    if weighted:
        weights = np.array(data.draw(st.lists(WEIGHTS, min_size=n, max_size=n)))
        weights[0] = max(weights[0], 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns of labels without a positive
        theirs, _ = call(skm, "average_precision_score", y_true, scores, average=average, sample_weight=weights)
    ours, _ = call(ekm, "average_precision_score", y_true, scores, average=average, sample_weight=weights)
    assert_same(ours, theirs, f"average_precision_score({kind}, {average}, {weights})")


def test_soft_labels_give_the_fuzzy_values():
    rng = np.random.default_rng(3)
    ref, pred = rng.random((50, 4)), rng.random((50, 4))
    weights = rng.random(50)
    for average in ("micro", "macro", "weighted", "samples"):
        for tnorm in ("minimum", "product"):
            p, r, f, support = ekm.precision_recall_fscore_support(
                ref, pred, average=average, sample_weight=weights, tnorm=tnorm, zero_division=0,
            )
            expected = evalkit.evaluate(ref, pred, tnorm=tnorm, averaging=average, sample_weight=weights)
            assert (p, r, f) == pytest.approx((expected["precision"], expected["recall"], expected["f1"]), rel=1e-12)
            assert support is None
    expected = evalkit.evaluate(ref, pred, metrics=["hamming_loss", "exact_match_ratio"])
    assert ekm.hamming_loss(ref, pred) == pytest.approx(expected["hamming_loss"], rel=1e-12)
    assert ekm.accuracy_score(ref, pred) == pytest.approx(expected["exact_match_ratio"], rel=1e-12)
    per_label = ekm.f1_score(ref, pred, average=None)
    assert isinstance(per_label, np.ndarray) and per_label.shape == (4,)
    support = ekm.precision_recall_fscore_support(ref, pred)[3]
    np.testing.assert_allclose(support, ref.sum(axis=0), rtol=1e-12)


def test_soft_1d_labels_are_one_class():
    ref, pred = np.array([0.9, 0.2, 0.6]), np.array([0.7, 0.4, 0.6])
    expected = evalkit.evaluate(ref, pred, metrics=["f1", "hamming_loss"])
    assert ekm.f1_score(ref, pred) == pytest.approx(expected["f1"], rel=1e-12)
    assert ekm.hamming_loss(ref, pred) == pytest.approx(expected["hamming_loss"], rel=1e-12)


@pytest.mark.parametrize("name", [*SET_FUNCTIONS, "hamming_loss", "accuracy_score", "average_precision_score"])
def test_signatures_match_sklearn(name):
    theirs = inspect.signature(getattr(skm, name)).parameters
    ours = inspect.signature(getattr(ekm, name)).parameters
    shared = [p for p in ours if p in theirs]
    assert shared == list(theirs), f"{name}: arguments {shared} != scikit-learn's {list(theirs)}"
    for p in theirs:
        assert ours[p].kind == theirs[p].kind and ours[p].default == theirs[p].default, f"{name}: {p}"
    assert set(ours) - set(theirs) <= {"tnorm", "representation"}


def test_evalkit_keywords_and_misspellings():
    y_true, y_pred = np.array([[1, 0], [0.6, 0.4]]), np.array([[0.8, 0.2], [0.5, 0.5]])
    assert ekm.f1_score(y_true, y_pred, average="micro", tnorm="product") == pytest.approx(
        evalkit.evaluate(y_true, y_pred, tnorm="product")["f1"], rel=1e-12)
    with pytest.raises(TypeError, match="did you mean 'average'"):
        ekm.f1_score(y_true, y_pred, averge="micro")
    with pytest.raises(ValueError, match="zero_division must be"):
        ekm.f1_score(y_true, y_pred, average="micro", zero_division="sometimes")
