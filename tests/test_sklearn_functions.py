"""evalkit.metrics against sklearn.metrics: on crisp labels (binary, multiclass, multi-label) the
same numbers, shapes, errors and warnings, for every average, every zero_division and random
sample weights (zeros included); on soft labels evalkit's fuzzy values."""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest
import sklearn.metrics as skm
from hypothesis import given, settings
from hypothesis import strategies as st
from run_depth import examples

import evalkit
import evalkit.metrics as ekm

AVERAGES = [None, "binary", "micro", "macro", "weighted", "samples"]
ZERO_DIVISION = ["warn", 0.0, 1.0, math.nan, 0, 1]
SET_FUNCTIONS = ["precision_recall_fscore_support", "precision_score", "recall_score", "f1_score", "fbeta_score",
                 "jaccard_score"]
ALL_FUNCTIONS = [*SET_FUNCTIONS, "hamming_loss", "accuracy_score", "average_precision_score"]
WEIGHT = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25])
#: label sets of 1-D targets: binary in four spellings, multiclass of numbers and of strings, and
#: what scikit-learn refuses: NaN and ±inf among floats, complex numbers, objects other than strings
LABELS_1D = {"binary": [0, 1], "signs": [-1, 1], "strings": ["no", "yes"], "booleans": [False, True],
             "multiclass": [0, 1, 2, 3], "words": ["ant", "bee", "cat"],
             "floats": [0.0, 1.0, math.inf, 2.0, math.nan, -math.inf], "complex": [0j, 1 + 0j, 1j],
             "objects": ["ant", 0, "bee", 1]}
KINDS = [*LABELS_1D, "multilabel"]


@st.composite
def targets(draw, kind, min_labels=0):
    """(y_true, y_pred, the labels they may hold): 1-D labels or 0/1 indicator matrices (with
    no column when ``min_labels`` is 0)."""
    n = draw(st.integers(1, 10))
    if kind == "multilabel":
        k = draw(st.integers(min_labels, 4))
        density = draw(st.sampled_from([0.15, 0.5]))
        cells = st.lists(st.floats(0, 1).map(lambda u: int(u < density)), min_size=n * k, max_size=n * k)
        columns = [*range(k + 1), 1.0, True]  # whole numbers, as scikit-learn reads them
        dtype = draw(st.sampled_from([int, bool, float]))
        return (np.array(draw(cells), dtype=dtype).reshape(n, k), np.array(draw(cells), dtype=dtype).reshape(n, k),
                columns)
    values = LABELS_1D[kind]
    pool = values[: draw(st.integers(1, len(values)))]  # sometimes fewer labels than the kind has
    dtype = object if kind == "objects" else None
    side = st.lists(st.sampled_from(pool), min_size=n, max_size=n).map(lambda v: np.array(v, dtype=dtype))
    # Numbers in labels= among string labels are a documented difference (docs/sklearn.md).
    return draw(side), draw(side), [v for v in values if isinstance(v, str)] if kind == "objects" else values


def sample_weight(draw, n):
    """None, weights with zeros among them, all zeros (which scikit-learn refuses), or weights
    in a 2-D array of n cells ((n, 1), (1, n), ...: refused, but for average_precision_score's
    column)."""
    choice = draw(st.sampled_from(["none", "random", "random", "zeros", "2-D"]))
    if choice == "none":
        return None
    if choice == "zeros":
        return np.zeros(n)
    weights = np.array(draw(st.lists(WEIGHT, min_size=n, max_size=n)))
    if choice == "2-D":
        rows = draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))
        return weights.reshape(rows, n // rows)
    return weights


def call(module, name, *args, **kwargs):
    """(result, the warnings as (category name, message)) or (the error, [])."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = getattr(module, name)(*args, **kwargs)
        except (ValueError, TypeError, ZeroDivisionError) as exc:  # scikit-learn divides by a zero weight sum once
            return exc, []
    shown = {(w.category.__name__, str(w.message)) for w in caught if issubclass(w.category, UserWarning)}
    return result, sorted(shown)


def assert_same(ours, theirs, context):
    if isinstance(theirs, Exception):  # evalkit's error is of each kind of scikit-learn's (ValueError for 1/0)
        kinds = [kind for kind in (ValueError, TypeError) if isinstance(theirs, kind)] or [ValueError]
        assert all(isinstance(ours, kind) for kind in kinds), f"{context}: scikit-learn raises {theirs!r}, evalkit gives {ours!r}"
        return
    assert not isinstance(ours, Exception), f"{context}: evalkit raises {ours!r}, scikit-learn gives {theirs!r}"
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), context
        for a, b in zip(ours, theirs):
            assert_same(a, b, context)
        return
    if theirs is None:
        assert ours is None, context
        return
    assert isinstance(ours, np.ndarray) == isinstance(theirs, np.ndarray), f"{context}: {ours!r} vs {theirs!r}"
    assert np.shape(ours) == np.shape(theirs), f"{context}: shape {np.shape(ours)} != {np.shape(theirs)}"
    if isinstance(theirs, np.ndarray):
        assert ours.dtype.kind == theirs.dtype.kind, f"{context}: dtype {ours.dtype} != {theirs.dtype}"
    np.testing.assert_allclose(np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float),
                               rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=context)


def compare(name, *args, **kwargs):
    theirs, their_warnings = call(skm, name, *args, **kwargs)
    ours, our_warnings = call(ekm, name, *args, **kwargs)
    context = f"{name}({args}, {kwargs})"
    assert_same(ours, theirs, context)
    assert our_warnings == their_warnings, context


# ------------------------------------------------------------------------- against scikit-learn


@settings(max_examples=examples(400), deadline=None)
@given(kind=st.sampled_from(KINDS), name=st.sampled_from(SET_FUNCTIONS), average=st.sampled_from(AVERAGES),
       zero_division=st.sampled_from(ZERO_DIVISION), data=st.data())
def test_set_metrics_equal_sklearn(kind, name, average, zero_division, data):
    """Values, shapes, dtypes, ValueErrors and warnings (UndefinedMetricWarning, pos_label's)."""
    y_true, y_pred, values = data.draw(targets(kind))
    if name == "jaccard_score" and isinstance(zero_division, float) and math.isnan(zero_division):
        zero_division = "warn"  # scikit-learn's jaccard_score takes 0, 1 or "warn" only
    kwargs = {"average": average, "zero_division": zero_division,
              "sample_weight": sample_weight(data.draw, len(y_true))}
    if data.draw(st.booleans()):  # labels absent from the data, repeated, or none at all
        kwargs["labels"] = data.draw(st.lists(st.sampled_from(values), max_size=len(values) + 2))
    if data.draw(st.booleans()):
        kwargs["pos_label"] = data.draw(st.sampled_from(values))
    if name in ("fbeta_score", "precision_recall_fscore_support"):
        kwargs["beta"] = data.draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, math.inf]))
    if name == "precision_recall_fscore_support" and data.draw(st.booleans()):
        kwargs["warn_for"] = data.draw(st.sampled_from([("precision",), ("recall",), ("f-score",), ()]))
    compare(name, y_true, y_pred, **kwargs)


@settings(max_examples=examples(150), deadline=None)
@given(kind=st.sampled_from(KINDS), normalize=st.booleans(), data=st.data())
def test_hamming_loss_and_accuracy_equal_sklearn(kind, normalize, data):
    y_true, y_pred, _ = data.draw(targets(kind))
    weights = sample_weight(data.draw, len(y_true))
    compare("hamming_loss", y_true, y_pred, sample_weight=weights)
    compare("accuracy_score", y_true, y_pred, normalize=normalize, sample_weight=weights)


@settings(max_examples=examples(250), deadline=None)
@given(kind=st.sampled_from(["binary", "signs", "strings", "multiclass", "multiclass", "multilabel", "multilabel",
                             "booleans", "floats", "complex", "objects"]),
       average=st.sampled_from([None, "micro", "macro", "weighted", "samples"]), ties=st.booleans(),
       data=st.data())
def test_average_precision_equals_sklearn(kind, average, ties, data):
    """Every average, weights, ties among the scores, labels without a positive (and the
    warning scikit-learn gives for them), pos_label; NaN, ±inf or a complex number among the
    scores or the labels, which scikit-learn refuses."""
    y_true, _, values = data.draw(targets(kind, min_labels=2))
    n = len(y_true)
    columns = y_true.shape[1] if kind == "multilabel" else len(np.unique(y_true)) if kind == "multiclass" else 1
    score = st.sampled_from([0.0, 0.1, 0.5, 0.7, 1.0]) if ties else st.floats(-5, 5)
    scores = np.array(data.draw(st.lists(score, min_size=n * columns, max_size=n * columns))).reshape(n, columns)
    if kind != "multilabel" and kind != "multiclass":
        scores = scores[:, 0]
    odd = data.draw(st.sampled_from([None, None, None, math.nan, math.inf, -math.inf, 1j]))
    if odd is not None:
        scores = scores.astype(type(odd))
        scores.flat[data.draw(st.integers(0, scores.size - 1))] = odd
    kwargs = {"average": average, "sample_weight": sample_weight(data.draw, n)}
    if data.draw(st.booleans()):
        kwargs["pos_label"] = data.draw(st.sampled_from(values))
    compare("average_precision_score", y_true, scores, **kwargs)


@pytest.mark.parametrize("seed", range(6))
def test_larger_random_data_equal_sklearn(seed):
    """50 to 200 samples, weighted or not, every function, average and zero_division."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(50, 200)), int(rng.integers(2, 7))
    weights = [None, rng.choice([0.0, 0.3, 1.0, 2.5], n)]
    multiclass = rng.integers(0, k, n), np.where(rng.random(n) < 0.6, 0, rng.integers(0, k, n))
    multilabel = (rng.random((n, k)) < 0.3).astype(int), (rng.random((n, k)) < 0.2).astype(int)
    binary = multiclass[0] % 2, multiclass[1] % 2
    for (y_true, y_pred), w in ((pair, w) for pair in (binary, multiclass, multilabel) for w in weights):
        for average in AVERAGES:
            compare("precision_recall_fscore_support", y_true, y_pred, average=average, sample_weight=w,
                    beta=float(rng.choice([0.5, 2.0])), zero_division=ZERO_DIVISION[seed % 4])
            compare("jaccard_score", y_true, y_pred, average=average, sample_weight=w)
        compare("hamming_loss", y_true, y_pred, sample_weight=w)
        compare("accuracy_score", y_true, y_pred, sample_weight=w)
        scores = rng.normal(size=y_pred.shape if y_pred.ndim == 2 else (n, k) if y_true is multiclass[0] else n)
        scores = np.round(scores, 1)  # ties
        for average in (None, "micro", "macro", "weighted", "samples"):
            compare("average_precision_score", y_true, scores, average=average, sample_weight=w)


def test_multiclass_micro_is_accuracy_and_labels_select():
    """scikit-learn's quirks, on a fixed case: multiclass micro P = R = F = accuracy, unless
    labels= leaves some out; weighted averages by support."""
    y_true, y_pred = np.array([0, 1, 2, 2, 1, 0, 2]), np.array([0, 2, 2, 2, 1, 1, 0])
    accuracy = ekm.accuracy_score(y_true, y_pred)
    assert ekm.precision_recall_fscore_support(y_true, y_pred, average="micro")[:3] == pytest.approx((accuracy,) * 3)
    for kwargs in ({"labels": [2, 0]}, {"labels": [1, 5]}, {"average": "weighted"}, {"average": None}):
        compare("precision_recall_fscore_support", y_true, y_pred, **{"average": "micro", **kwargs})


def test_a_repeated_label_counts_once_per_mention():
    """scikit-learn gives a label named twice in labels= its column twice: micro sums its counts
    twice, macro and weighted average its value twice (1 and 1.0 are one label)."""
    y_true, y_pred = np.array([0, 1, 2, 2, 1, 0]), np.array([0, 2, 2, 1, 1, 1])
    once = ekm.precision_recall_fscore_support(y_true, y_pred, labels=[0, 1], average=None)
    twice = ekm.precision_recall_fscore_support(y_true, y_pred, labels=[0, 1.0, 0], average=None)
    for repeated, single in zip(twice, once):  # the same counts, so the same floats
        np.testing.assert_array_equal(repeated, single[[0, 1, 0]])
    mentioned = np.array([0, 1, 0])
    true, pred = y_true[:, None] == mentioned, y_pred[:, None] == mentioned
    micro = 2 * (true & pred).sum() / (true.sum() + pred.sum())
    assert ekm.f1_score(y_true, y_pred, labels=[0, 1, 0], average="micro") == pytest.approx(micro, rel=1e-12)
    assert ekm.f1_score(y_true, y_pred, labels=[0, 1, 0], average="macro") == pytest.approx(
        once[2][[0, 1, 0]].mean(), rel=1e-12)  # rel: a mean of three floats
    multilabel = (np.eye(3, dtype=int)[y_true], np.eye(3, dtype=int)[y_pred])
    for pair in ((y_true, y_pred), multilabel):
        for average in (None, "micro", "macro", "weighted"):
            for labels in ([0, 0, 1], [2, 0, 2, 1], [1, 1]):
                compare("precision_recall_fscore_support", *pair, labels=labels, average=average)
                compare("jaccard_score", *pair, labels=labels, average=average)


@pytest.mark.parametrize("zero_division", ZERO_DIVISION)
def test_no_labels_are_sklearns_empty_means(zero_division):
    """labels=[]: no value per label; micro (and samples) is 0/0, the zero_division value;
    macro and weighted are the mean of no values, NaN, with a RuntimeWarning."""
    multiclass = np.array([0, 1, 2, 2]), np.array([0, 2, 2, 1])
    multilabel = np.array([[1, 0, 1], [0, 1, 1]]), np.array([[1, 0, 0], [0, 1, 1]])
    for pair, averages in ((multiclass, AVERAGES[:5]), (multilabel, AVERAGES)):
        for average in averages:
            compare("precision_recall_fscore_support", *pair, labels=[], average=average, zero_division=zero_division)
            if not (isinstance(zero_division, float) and math.isnan(zero_division)):
                compare("jaccard_score", *pair, labels=[], average=average, zero_division=zero_division)
    with pytest.warns(RuntimeWarning, match=r"labels=\[\] leaves no label to average: the macro mean is NaN"):
        assert math.isnan(ekm.f1_score(*multiclass, labels=[], average="macro"))
    assert ekm.f1_score(*multilabel, labels=[], average="samples", zero_division=1) == 1.0


OBJECTS = {"mixed": np.array([0, "a", 1], dtype=object), "numbers": np.array([0, 1, 1], dtype=object),
           "nan": np.array(["a", math.nan, "b"], dtype=object)}
TWO = np.array([0, 1, 1, 0])


@pytest.mark.parametrize("name,args,kwargs,message", [
    ("f1_score", ([0, math.inf, 1], [0, 1, 1]), {}, r"Input y_true contains infinity \(first at 1\)"),
    ("f1_score", ([0, 1, 1], [0, 1, -math.inf]), {}, r"Input y_pred contains infinity \(first at 2\)"),
    ("hamming_loss", ([0, math.nan, 1], [0, 1, 1]), {}, r"Input y_true contains NaN \(first at 1\)"),
    ("accuracy_score", (np.array([[0, 1], [1, math.nan]]), np.eye(2)), {}, r"contains NaN \(first at \(1, 1\)\)"),
    ("average_precision_score", ([0, 1, 1], [0.2, math.inf, 0.1]), {}, r"Input y_score contains infinity"),
    ("f1_score", (np.array([0, 1j, 1]), [0, 1, 1]), {"average": "macro"}, "y_true: complex data not supported"),
    ("average_precision_score", ([0, 1, 1], np.array([0.2, 1j, 0.1])), {}, "y_score: complex data not supported"),
    ("f1_score", (np.zeros((3, 0)), np.zeros((3, 0))), {"average": "micro"},
     r"y_true: a matrix without columns \(shape \(3, 0\)\); give one column per label"),
    ("hamming_loss", (np.zeros((3, 2)), np.zeros((3, 0))), {}, r"y_pred: a matrix without columns"),
    ("f1_score", (TWO, TWO), {"sample_weight": np.ones((2, 2))}, r"got an array of shape \(2, 2\)"),
    ("accuracy_score", (TWO, TWO), {"sample_weight": np.ones((4, 1))}, r"got an array of shape \(4, 1\)"),
    ("average_precision_score", (TWO, TWO), {"sample_weight": np.ones((1, 4))}, r"got an array of shape \(1, 4\)"),
    ("f1_score", (TWO, TWO), {"sample_weight": 2.0}, "sample_weight: expected an array of one weight per sample"),
    ("f1_score", (TWO, TWO), {"sample_weight": list("abcd")}, "sample_weight: expected one number per sample"),
    ("f1_score", (OBJECTS["mixed"], OBJECTS["mixed"]), {"average": "macro"},
     r"y_true: an object array of labels holds 0 \(int\) at 0; .* dtype=str"),
    ("f1_score", (OBJECTS["numbers"], [0, 1, 1]), {}, r"y_true: an object array of labels holds 0 \(int\)"),
    ("f1_score", (OBJECTS["nan"], OBJECTS["nan"]), {"average": "macro"}, r"holds nan \(float\) at 1"),
    ("f1_score", ([0, 1, 1], [0, 1, 1]), {"labels": 0, "average": "macro"}, "labels: expected a list of labels"),
    ("f1_score", ([0, 1, 1], [0, 1, 1]), {"labels": [[0, 1]], "average": "macro"}, "labels: expected a list"),
    ("f1_score", ([0, 1, 1], [0, 1, 1]), {"pos_label": 1j}, "pos_label: expected a label"),
])
def test_what_sklearn_refuses_evalkit_refuses_saying_where(name, args, kwargs, message):
    """Infinite, NaN and complex labels or scores, indicator matrices without columns, 2-D or
    scalar weights, objects other than strings, labels= and pos_label of the wrong shape: an
    error of each of the kinds scikit-learn raises (ValueError, TypeError or both), naming the
    input and the first bad place."""
    compare(name, *args, **kwargs)
    with pytest.raises(ValueError, match=message):
        getattr(ekm, name)(*args, **kwargs)


def test_weights_in_a_column_are_read_where_sklearn_reads_them():
    """scikit-learn's average_precision_score takes an (n, 1) column of weights, its other
    functions refuse it."""
    y_true, scores, weights = np.array([0, 1, 1, 0]), np.array([0.3, 0.2, 0.9, 0.1]), np.array([1.0, 2.0, 0.5, 1.0])
    assert ekm.average_precision_score(y_true, scores, sample_weight=weights[:, None]) == \
        ekm.average_precision_score(y_true, scores, sample_weight=weights)  # the same weights, the same floats
    compare("average_precision_score", y_true, scores, sample_weight=weights[:, None])
    compare("f1_score", y_true, y_true, sample_weight=weights[:, None])


def test_multilabel_labels_are_whole_column_numbers():
    """A documented difference: scikit-learn cuts labels=[1.5] of a multi-label matrix down to
    column 1 (and labels=[nan] crashes the interpreter); evalkit takes whole numbers only (2.0
    and True as scikit-learn does) and says which columns there are."""
    y_true, y_pred = np.array([[1, 0, 1], [0, 1, 1]]), np.array([[1, 1, 0], [0, 1, 1]])
    assert skm.f1_score(y_true, y_pred, labels=[1.5], average="macro") == skm.f1_score(
        y_true, y_pred, labels=[1], average="macro")
    for labels in ([1.5], [math.nan], [math.inf], [3]):
        with pytest.raises(ValueError, match=r"whole column numbers, 0 to 2\. Got \["):
            ekm.f1_score(y_true, y_pred, labels=labels, average="macro")
    with pytest.raises(ekm.InputTypeError, match="whole column numbers"):
        ekm.f1_score(y_true, y_pred, labels=["1"], average="macro")
    for labels in ([2.0, True], [np.True_, 0]):
        assert ekm.f1_score(y_true, y_pred, labels=labels, average="macro") == ekm.f1_score(
            y_true, y_pred, labels=[int(c) for c in labels], average="macro")  # the same columns, the same floats


def test_labels_of_the_other_kind_are_refused():
    """A documented difference: scikit-learn compares labels= of numbers with string labels,
    and of strings with number labels, as text (labels=[5] counts the label '5', labels=['0']
    the label 0 but not 0.0, which is an error there); evalkit refuses the mix."""
    text, numbers = np.array(["5", "a", "a"]), np.array([0, 1, 1])
    assert skm.f1_score(text, text, labels=[5], average="macro") == 1.0  # '5' was predicted right
    assert skm.f1_score(numbers, numbers, labels=["0"], average="macro") == 1.0  # 0 was predicted right
    with pytest.raises(ValueError, match="previously unseen labels"):
        skm.f1_score(numbers, numbers.astype(float), labels=["0"], average="macro")
    with pytest.raises(ekm.InputTypeError, match="labels= holds 5 where y_true and y_pred hold strings"):
        ekm.f1_score(text, text, labels=[5], average="macro")
    with pytest.raises(ekm.InputTypeError, match="labels= holds '0' where y_true and y_pred hold numbers"):
        ekm.f1_score(numbers, numbers, labels=["0"], average="macro")


# ------------------------------------------------------------------------------- soft labels


@pytest.mark.parametrize("tnorm", ["minimum", "product"])
@pytest.mark.parametrize("average", ["micro", "macro", "weighted", "samples", None])
def test_soft_labels_give_the_evaluators_fuzzy_values(tnorm, average):
    rng = np.random.default_rng(3)
    ref, pred, weights = rng.random((40, 4)), rng.random((40, 4)), rng.random(40)
    metrics = ["precision", "recall", "f1", {"name": "fbeta", "beta": 2.0}, "jaccard"]
    evaluator = evalkit.Evaluator(tnorm=tnorm, averaging=average or "none", metrics=metrics, zero_division=0.0)
    expected: dict[str, list[float]] = {}
    for measure, value in evaluator.update(ref, pred, sample_weight=weights).values().items():
        expected.setdefault(measure.metric, []).append(value)
    kwargs = {"average": average, "sample_weight": weights, "tnorm": tnorm, "zero_division": 0}
    p, r, f, support = ekm.precision_recall_fscore_support(ref, pred, **kwargs)
    ours = {"precision": p, "recall": r, "f1": f, "fbeta(beta=2.0)": ekm.fbeta_score(ref, pred, beta=2.0, **kwargs),
            "jaccard": ekm.jaccard_score(ref, pred, **kwargs)}
    for metric, values in ours.items():
        np.testing.assert_allclose(np.atleast_1d(values), expected[metric], rtol=1e-12, err_msg=metric)
        assert isinstance(values, np.ndarray) if average is None else isinstance(values, float)
    if average is None:  # the reference's membership mass per label
        np.testing.assert_allclose(support, weights @ ref, rtol=1e-12)
    else:
        assert support is None


def test_soft_hamming_and_accuracy_are_evalkits_metrics():
    rng = np.random.default_rng(4)
    ref, pred, weights = rng.random((30, 3)), rng.random((30, 3)), rng.random(30)
    for tnorm in ("minimum", "product"):
        expected = evalkit.evaluate(ref, pred, tnorm=tnorm, metrics=["hamming_loss"], sample_weight=weights)
        assert ekm.hamming_loss(ref, pred, sample_weight=weights, tnorm=tnorm) == pytest.approx(
            expected["hamming_loss"], rel=1e-12)
    assert ekm.hamming_loss(ref, pred) == pytest.approx(np.abs(ref - pred).mean(), rel=1e-12)
    exact = 1 - np.abs(ref - pred).max(axis=1)
    assert ekm.accuracy_score(ref, pred, sample_weight=weights) == pytest.approx(np.average(exact, weights=weights))
    assert ekm.accuracy_score(ref, pred, normalize=False) == pytest.approx(exact.sum())


def test_soft_1d_labels_are_the_binary_problem():
    """1-D memberships are labels 0 and 1 as crisp 1-D labels are: μ of label 1, 1 − μ of 0."""
    ref, pred = np.array([0.9, 0.2, 0.6, 0.0]), np.array([0.7, 0.4, 0.6, 1.0])
    as_columns = (np.stack([1 - ref, ref], axis=1), np.stack([1 - pred, pred], axis=1))
    assert ekm.f1_score(ref, pred) == pytest.approx(evalkit.evaluate(ref, pred)["f1"], rel=1e-12)
    assert ekm.recall_score(ref, pred, pos_label=0) == pytest.approx(
        evalkit.evaluate(1 - ref, 1 - pred)["recall"], rel=1e-12)
    for average in ("micro", "macro", "weighted", None):
        np.testing.assert_allclose(ekm.f1_score(ref, pred, average=average),
                                   ekm.f1_score(*as_columns, average=average), rtol=1e-12)
    assert ekm.hamming_loss(ref, pred) == pytest.approx(np.abs(ref - pred).mean(), rel=1e-12)
    assert ekm.accuracy_score(ref, pred) == pytest.approx(1 - np.abs(ref - pred).mean(), rel=1e-12)
    with pytest.raises(ValueError, match="pos_label=2 is not a valid label"):
        ekm.f1_score(ref, pred, pos_label=2)
    with pytest.raises(ValueError, match="not meaningful outside multilabel"):
        ekm.f1_score(ref, pred, average="samples")
    with pytest.raises(ValueError, match=r"lie in \[0, 1\]"):
        ekm.f1_score(ref, pred + 0.5)


def test_soft_input_crisp_in_floats_equals_sklearn():
    """0.0/1.0 floats are labels: the same numbers as integers (and scikit-learn's)."""
    y_true, y_pred = np.array([0.0, 1, 1, 0, 1]), np.array([1.0, 1, 0, 0, 1])
    for average in ("binary", "micro", "macro", None):
        compare("f1_score", y_true, y_pred, average=average)


# ------------------------------------------------------------------------------- the interface


@pytest.mark.parametrize("name", ALL_FUNCTIONS)
def test_signatures_match_sklearn(name):
    """scikit-learn's parameters, in its order, of its kinds, with its defaults; then evalkit's
    keyword-only tnorm and representation."""
    theirs = inspect.signature(getattr(skm, name)).parameters
    ours = inspect.signature(getattr(ekm, name)).parameters
    assert list(ours)[: len(theirs)] == list(theirs), name
    for p in theirs:
        assert ours[p].kind == theirs[p].kind and ours[p].default == theirs[p].default, f"{name}: {p}"
    extra = list(ours)[len(theirs):]
    assert set(extra) <= {"tnorm", "representation"}, extra
    assert all(ours[p].kind is inspect.Parameter.KEYWORD_ONLY for p in extra)


def test_warnings_point_at_the_call():
    with pytest.warns(ekm.UndefinedMetricWarning, match="F-score is ill-defined") as caught:
        ekm.f1_score([0, 0], [0, 0])
    assert caught[0].filename == __file__
    assert issubclass(ekm.UndefinedMetricWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ekm.f1_score([0, 0], [0, 0], zero_division=1) == 1.0


def test_keywords_and_errors():
    y_true, y_pred = np.array([[1, 0], [0.6, 0.4]]), np.array([[0.8, 0.2], [0.5, 0.5]])
    assert ekm.f1_score(y_true, y_pred, average="micro", tnorm="product") == pytest.approx(
        evalkit.evaluate(y_true, y_pred, tnorm="product")["f1"], rel=1e-12)
    with pytest.raises(TypeError, match="did you mean 'average'"):
        ekm.f1_score(y_true, y_pred, averge="micro")
    with pytest.raises(ValueError, match="zero_division must be"):
        ekm.f1_score(y_true, y_pred, average="micro", zero_division="sometimes")
    with pytest.raises(ValueError, match="average has to be one of"):
        ekm.f1_score(y_true, y_pred, average="mikro")
    with pytest.raises(ValueError, match="weights must be finite numbers >= 0"):
        ekm.f1_score([0, 1], [0, 1], sample_weight=[-1, 1])
    with pytest.raises(ValueError, match="beta up to"):
        ekm.fbeta_score([0, 1], [0, 1], beta=1e7)
    with pytest.raises(ValueError, match="binary"):  # AP ranks 0/1 relevance, not memberships
        ekm.average_precision_score(y_true, y_pred)
    with pytest.raises(ValueError, match="Mix of label input types"):
        ekm.f1_score([0, 1], ["a", "b"], average="macro")
    assert ekm.jaccard_score([0, 0], [0, 0], zero_division=math.nan) != ekm.jaccard_score([0, 0], [0, 0], zero_division=1)
