"""The rest of scikit-learn's classification metrics in evalkit.metrics (issue 27, item 2): on
crisp labels scikit-learn's values, shapes, dtypes, errors and warnings, by hypothesis as in
test_sklearn_functions.py; on soft labels the fuzzy-set definitions of docs/sklearn.md."""

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
from test_sklearn_functions import KINDS, ZERO_DIVISION, sample_weight, targets

import evalkit
import evalkit.metrics as ekm

COUNTS = ["confusion_matrix", "multilabel_confusion_matrix", "balanced_accuracy_score", "matthews_corrcoef",
          "zero_one_loss", "classification_report"]
SCORES = ["roc_curve", "precision_recall_curve", "roc_auc_score", "log_loss", "brier_score_loss",
          "top_k_accuracy_score"]
#: scikit-learn's errors include a NotImplementedError (average=None with multi_class="ovo") and, for
#: weights that are all 0, an IndexError in its curves: evalkit raises each kind, or a ValueError.
ERRORS = (ValueError, TypeError, ZeroDivisionError, NotImplementedError, IndexError)


def call(module, name, *args, **kwargs):
    """(result, the warnings as (category name, message)) or (the error, [])."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = getattr(module, name)(*args, **kwargs)
        except ERRORS as exc:
            return exc, []
    shown = {(w.category.__name__, str(w.message)) for w in caught if issubclass(w.category, UserWarning)}
    return result, sorted(shown)


def assert_same(ours, theirs, context):
    if isinstance(theirs, Exception):
        kinds = [k for k in (ValueError, TypeError, NotImplementedError) if isinstance(theirs, k)] or [ValueError]
        assert isinstance(ours, tuple(kinds)), f"{context}: scikit-learn raises {theirs!r}, evalkit gives {ours!r}"
        return
    assert not isinstance(ours, Exception), f"{context}: evalkit raises {ours!r}, scikit-learn gives {theirs!r}"
    if isinstance(theirs, str):  # the text report: the same layout, word for word
        assert len(ours.splitlines()) == len(theirs.splitlines()) and len(ours.split()) == len(theirs.split()), context
        for a, b in zip(ours.split(), theirs.split()):  # a weighted support is shown in full: its last digits vary
            assert a == b or float(a) == pytest.approx(float(b), rel=1e-12), f"{context}:\n{ours}\n!=\n{theirs}"
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs), context
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{context}[{key!r}]")
    elif isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), context
        for a, b in zip(ours, theirs):
            assert_same(a, b, context)
    else:
        assert isinstance(ours, np.ndarray) == isinstance(theirs, np.ndarray), f"{context}: {ours!r} vs {theirs!r}"
        assert np.shape(ours) == np.shape(theirs), f"{context}: shape {np.shape(ours)} != {np.shape(theirs)}"
        if isinstance(theirs, np.ndarray):
            assert ours.dtype.kind == theirs.dtype.kind, f"{context}: dtype {ours.dtype} != {theirs.dtype}"
        # rel 1e-12: sums, products and logarithms in another order than scikit-learn's
        np.testing.assert_allclose(np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float), rtol=1e-12,
                                   atol=1e-12, equal_nan=True, err_msg=context)


def compare(name, *args, **kwargs):
    theirs, their_warnings = call(skm, name, *args, **kwargs)
    ours, our_warnings = call(ekm, name, *args, **kwargs)
    context = f"{name}({args}, {kwargs})"
    assert_same(ours, theirs, context)
    assert our_warnings == their_warnings, context


def weights_without_all_zeros(draw, n):
    """sample_weight() but never all 0 (scikit-learn's curves then fail with an IndexError)."""
    weights = sample_weight(draw, n)
    return None if weights is not None and not np.any(weights) else weights


# ------------------------------------------------------------------------- against scikit-learn


@settings(max_examples=examples(400), deadline=None)
@given(kind=st.sampled_from(KINDS), name=st.sampled_from(COUNTS), data=st.data())
def test_count_metrics_equal_sklearn(kind, name, data):
    """Values, shapes, dtypes (integer counts, float weights), errors and warnings, labels=
    absent, repeated or empty, every option of each function."""
    y_true, y_pred, values = data.draw(targets(kind, min_labels=1))
    kwargs = {"sample_weight": sample_weight(data.draw, len(y_true))}
    if name in ("confusion_matrix", "multilabel_confusion_matrix", "classification_report") and data.draw(st.booleans()):
        kwargs["labels"] = data.draw(st.lists(st.sampled_from(values), max_size=len(values) + 2))
    if name == "confusion_matrix":
        kwargs["normalize"] = data.draw(st.sampled_from([None, "true", "pred", "all"]))
    elif name == "multilabel_confusion_matrix":
        kwargs["samplewise"] = data.draw(st.booleans())
    elif name == "balanced_accuracy_score":
        kwargs["adjusted"] = data.draw(st.booleans())
    elif name == "zero_one_loss":
        kwargs["normalize"] = data.draw(st.booleans())
    elif name == "classification_report":
        kwargs["output_dict"] = data.draw(st.booleans())
        kwargs["digits"] = data.draw(st.sampled_from([0, 2, 4]))
        kwargs["zero_division"] = data.draw(st.sampled_from(ZERO_DIVISION))
        if data.draw(st.booleans()):  # as many names as labels, or not (a warning, or an error)
            kwargs["target_names"] = [f"name {i}" for i in range(data.draw(st.integers(0, 5)))]
    compare(name, y_true, y_pred, **kwargs)


def scores_for(draw, y_true, columns, probabilities):
    """Scores for ``columns`` (1-D for one), with ties; rows summing to 1 when ``probabilities``."""
    n = len(y_true)
    if probabilities:
        raw = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 5.0]), min_size=n * columns,
                                     max_size=n * columns))).reshape(n, columns) + 1e-3
        scores = raw / raw.sum(axis=1, keepdims=True)
    else:
        scores = np.array(draw(st.lists(st.sampled_from([-1.0, 0.0, 0.1, 0.5, 0.7, 1.0, 3.0]), min_size=n * columns,
                                        max_size=n * columns))).reshape(n, columns)
    return scores[:, 0] if columns == 1 else scores


@settings(max_examples=examples(400), deadline=None)
@given(kind=st.sampled_from(["binary", "signs", "strings", "booleans", "multiclass", "words", "multilabel"]),
       name=st.sampled_from(["roc_curve", "precision_recall_curve", "roc_auc_score"]), data=st.data())
def test_ranking_metrics_equal_sklearn(kind, name, data):
    """The curves (pos_label, drop_intermediate) and ROC AUC (binary, multi-label with every
    average, multiclass one-vs-rest and one-vs-one, max_fpr, labels=)."""
    y_true, _, values = data.draw(targets(kind, min_labels=2))
    classes = y_true.shape[1] if y_true.ndim == 2 else len(np.unique(y_true))
    multiclass = y_true.ndim == 1 and classes > 2
    columns = classes if y_true.ndim == 2 or (multiclass and name == "roc_auc_score") else 1
    y_score = scores_for(data.draw, y_true, columns, multiclass and data.draw(st.booleans()))
    kwargs = {"sample_weight": weights_without_all_zeros(data.draw, len(y_true))}
    if name == "roc_auc_score":
        kwargs["average"] = data.draw(st.sampled_from([None, "micro", "macro", "weighted", "samples"]))
        kwargs["multi_class"] = data.draw(st.sampled_from(["raise", "ovr", "ovo"]))
        kwargs["max_fpr"] = data.draw(st.sampled_from([None, None, 0.5, 1.0]))
        if multiclass and data.draw(st.booleans()):
            kwargs["labels"] = data.draw(st.sampled_from([sorted(np.unique(y_true).tolist()), values[:classes]]))
    else:
        kwargs["drop_intermediate"] = data.draw(st.booleans())
        if data.draw(st.booleans()):
            kwargs["pos_label"] = data.draw(st.sampled_from(values))
    compare(name, y_true, y_score, **kwargs)


@settings(max_examples=examples(400), deadline=None)
@given(kind=st.sampled_from(["binary", "signs", "strings", "booleans", "multiclass", "words", "multilabel"]),
       name=st.sampled_from(["log_loss", "brier_score_loss", "top_k_accuracy_score"]), data=st.data())
def test_probability_metrics_equal_sklearn(kind, name, data):
    """log_loss and brier_score_loss on probabilities (1-D: of the greater label; rows that do
    not sum to 1, with the warning), labels=, pos_label, scale_by_half; top-k accuracy for every
    k, labels= and normalize."""
    y_true, _, values = data.draw(targets(kind, min_labels=2))
    classes = y_true.shape[1] if y_true.ndim == 2 else len(np.unique(y_true))
    given_labels = data.draw(st.booleans())
    width = len(values) if given_labels and y_true.ndim == 1 else classes
    columns = data.draw(st.sampled_from([1, width])) if width <= 2 else width
    y_proba = scores_for(data.draw, y_true, columns, data.draw(st.sampled_from([True, True, False])))
    if name != "top_k_accuracy_score":
        y_proba = np.clip(y_proba, 0, 1)
    kwargs = {"sample_weight": weights_without_all_zeros(data.draw, len(y_true))}
    if given_labels:
        kwargs["labels"] = data.draw(st.sampled_from([values, values[::-1]])) if y_true.ndim == 1 else list(range(classes))
    if name == "log_loss":
        kwargs["normalize"] = data.draw(st.booleans())
    elif name == "brier_score_loss":
        kwargs["scale_by_half"] = data.draw(st.sampled_from(["auto", True, False]))
        if data.draw(st.booleans()):
            kwargs["pos_label"] = data.draw(st.sampled_from(values))
    else:
        kwargs["k"] = data.draw(st.integers(1, 4))
        kwargs["normalize"] = data.draw(st.booleans())
        if np.ndim(kwargs["sample_weight"]) == 2:  # scikit-learn fails on them in NumPy (a TypeError), or earlier
            with pytest.raises(ValueError):  # evalkit: the weights' shape, or what scikit-learn says earlier
                ekm.top_k_accuracy_score(y_true, y_proba, **kwargs)
            with pytest.raises((ValueError, TypeError)):
                skm.top_k_accuracy_score(y_true, y_proba, **kwargs)
            return
    compare(name, y_true, y_proba, **kwargs)


@pytest.mark.parametrize("seed", range(4))
def test_larger_random_data_equal_sklearn(seed):
    """100 to 300 samples: every new function on binary, multiclass and multi-label data."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(100, 300)), int(rng.integers(3, 7))
    w = [None, rng.choice([0.0, 0.3, 1.0, 2.5], n)][seed % 2]
    multiclass = rng.integers(0, k, n), np.where(rng.random(n) < 0.6, 0, rng.integers(0, k, n))
    binary = multiclass[0] % 2, multiclass[1] % 2
    multilabel = (rng.random((n, k)) < 0.3).astype(int), (rng.random((n, k)) < 0.2).astype(int)
    proba = rng.dirichlet(np.ones(k), n)
    scores = np.round(rng.normal(size=(n, k)), 1)  # ties
    for y_true, y_pred in (binary, multiclass, multilabel):
        for name in COUNTS:
            compare(name, y_true, y_pred, sample_weight=w)
        compare("classification_report", y_true, y_pred, sample_weight=w, output_dict=True)
    for average in (None, "micro", "macro", "weighted", "samples"):
        compare("roc_auc_score", multilabel[0], scores, average=average, sample_weight=w)
    for multi_class in ("ovr", "ovo"):
        compare("roc_auc_score", multiclass[0], proba, multi_class=multi_class, average="weighted",
                sample_weight=w if multi_class == "ovr" else None)
    compare("roc_auc_score", binary[0], scores[:, 0], max_fpr=0.3, sample_weight=w)
    for name in ("roc_curve", "precision_recall_curve"):
        compare(name, binary[0], scores[:, 0], sample_weight=w)
    for name in ("log_loss", "brier_score_loss"):
        compare(name, multiclass[0], proba, sample_weight=w)
        compare(name, binary[0], proba[:, 0], sample_weight=w)
    compare("top_k_accuracy_score", multiclass[0], proba, k=2, sample_weight=w)


@pytest.mark.parametrize("name", [*COUNTS, *SCORES])
def test_signatures_match_sklearn(name):
    """scikit-learn's parameters, in its order, of its kinds, with its defaults (log_loss's
    deprecated y_pred= left out, its y_proba required); then evalkit's keyword-only ones."""
    deprecated = {"log_loss": {"y_pred"}}.get(name, set())
    theirs = {p: v for p, v in inspect.signature(getattr(skm, name)).parameters.items() if p not in deprecated}
    ours = inspect.signature(getattr(ekm, name)).parameters
    assert list(ours)[: len(theirs)] == list(theirs), name
    for p in theirs:
        default = inspect.Parameter.empty if (name, p) == ("log_loss", "y_proba") else theirs[p].default
        assert ours[p].kind == theirs[p].kind and ours[p].default == default, f"{name}: {p}"
    extra = list(ours)[len(theirs):]
    assert set(extra) <= {"tnorm", "representation", "positives_from"}, extra
    assert all(ours[p].kind is inspect.Parameter.KEYWORD_ONLY for p in extra)


# ------------------------------------------------------------------------------- soft labels

REF = np.array([[1.0, 0.0, 0.6], [0.2, 1.0, 0.0]])
PRED = np.array([[0.8, 0.1, 0.5], [0.0, 0.7, 0.3]])


def test_the_worked_example_of_the_docs():
    """docs/sklearn.md's cells and report rows, derived there by hand (rel 1e-12: sums of two
    memberships)."""
    by_hand = {  # per label: TN, FP, FN, TP
        "minimum": [[0.8, 0.0, 0.4, 0.8], [0.9, 0.1, 0.3, 0.7], [1.1, 0.3, 0.1, 0.5]],
        "product": [[0.8, 0.0, 0.4, 0.8], [0.9, 0.1, 0.3, 0.7], [0.9, 0.5, 0.3, 0.3]],
    }
    for tnorm, cells in by_hand.items():
        got = ekm.multilabel_confusion_matrix(REF, PRED, tnorm=tnorm)
        np.testing.assert_allclose(got.reshape(3, 4), cells, rtol=1e-12, atol=1e-15)
    report = ekm.classification_report(REF, PRED, output_dict=True)
    rows = {"0": (0.8 / 0.8, 0.8 / 1.2, 1.6 / 2.0, 1.2), "1": (0.7 / 0.8, 0.7, 1.4 / 1.8, 1.0),
            "2": (0.5 / 0.8, 0.5 / 0.6, 1.0 / 1.4, 0.6), "micro avg": (2.0 / 2.4, 2.0 / 2.8, 4 / 5.2, 2.8),
            "weighted avg": (2.45 / 2.8, 2.0 / 2.8, (1.6 / 2.0 * 1.2 + 1.4 / 1.8 + 1.0 / 1.4 * 0.6) / 2.8, 2.8)}
    for name, expected in rows.items():
        got = [report[name][key] for key in ("precision", "recall", "f1-score", "support")]
        assert got == pytest.approx(expected, rel=1e-12), name
    assert "accuracy" not in report and "samples avg" in report
    mu_ref, mu_pred = np.array([0.9, 0.2]), np.array([0.8, 0.4])
    cm = ekm.confusion_matrix(mu_ref, mu_pred)
    np.testing.assert_allclose(cm, [[0.7, 0.2], [0.1, 1.0]], rtol=1e-12)
    assert ekm.balanced_accuracy_score(mu_ref, mu_pred) == pytest.approx((0.7 / 0.9 + 1.0 / 1.1) / 2, rel=1e-12)
    assert ekm.matthews_corrcoef(mu_ref, mu_pred) == pytest.approx(1.36 / math.sqrt(1.92 * 1.98), rel=1e-12)
    cross_entropy = [-(0.9 * math.log(0.8) + 0.1 * math.log(0.2)), -(0.2 * math.log(0.4) + 0.8 * math.log(0.6))]
    assert ekm.log_loss(mu_ref, mu_pred) == pytest.approx(np.mean(cross_entropy), rel=1e-12)
    assert ekm.brier_score_loss(mu_ref, mu_pred) == pytest.approx((0.1**2 + 0.2**2) / 2, rel=1e-12)


memberships = st.floats(0, 1).map(lambda x: round(x, 3))


@st.composite
def soft_pair(draw, n_max=12, k_max=4):
    n, k = draw(st.integers(1, n_max)), draw(st.integers(2, k_max))  # (n, 1) is read as 1-D, as in scikit-learn
    cells = st.lists(memberships, min_size=n * k, max_size=n * k)
    ref, pred = (np.array(draw(cells)).reshape(n, k) for _ in range(2))
    ref[0, 0] = 0.5  # soft, whatever else was drawn
    return ref, pred


@settings(max_examples=examples(200), deadline=None)
@given(pair=soft_pair(), tnorm=st.sampled_from(["minimum", "product", "lukasiewicz", "hamacher", "drastic"]),
       weighted=st.booleans(), data=st.data())
def test_soft_confusion_cells_are_fuzzy_cardinalities(pair, tnorm, weighted, data):
    """TP = Σ T(μG, μP) and TN = Σ T(1 − μG, 1 − μP) (evalkit's own |G ∩ P| of the memberships
    and of their negations), TP + FP = |P|, TP + FN = |G|; per sample the same over labels; the
    four add up to the samples' weight under the T-norms with T + S = a + b; the report's rows
    are precision_recall_fscore_support's (rel 1e-12: sums in another order)."""
    ref, pred = pair
    weights = np.array(data.draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=len(ref), max_size=len(ref)))) \
        if weighted else None
    w = np.ones(len(ref)) if weights is None else weights
    tn, fp, fn, tp = ekm.multilabel_confusion_matrix(ref, pred, sample_weight=weights, tnorm=tnorm).reshape(-1, 4).T
    inter = evalkit.evaluate(ref, pred, tnorm=tnorm, averaging="none", metrics=["card_inter"], sample_weight=weights)
    neg = evalkit.evaluate(1 - ref, 1 - pred, tnorm=tnorm, averaging="none", metrics=["card_inter"],
                           sample_weight=weights)
    np.testing.assert_allclose(tp, inter["card_inter"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tn, neg["card_inter"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tp + fp, w @ pred, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tp + fn, w @ ref, rtol=1e-12, atol=1e-12)
    if tnorm in ("minimum", "product", "lukasiewicz"):
        np.testing.assert_allclose(tn + fp + fn + tp, w.sum(), rtol=1e-12)
    per_sample = ekm.multilabel_confusion_matrix(ref, pred, sample_weight=weights, tnorm=tnorm, samplewise=True)
    np.testing.assert_allclose(per_sample.reshape(-1, 4).sum(axis=0), [tn.sum(), fp.sum(), fn.sum(), tp.sum()],
                               rtol=1e-12, atol=1e-12)
    report = ekm.classification_report(ref, pred, sample_weight=weights, tnorm=tnorm, output_dict=True,
                                       zero_division=0)
    p, r, f, support = ekm.precision_recall_fscore_support(ref, pred, sample_weight=weights, tnorm=tnorm,
                                                           zero_division=0)
    for j in range(ref.shape[1]):
        row = report[str(j)]
        assert [row["precision"], row["recall"], row["f1-score"], row["support"]] == pytest.approx(
            [p[j], r[j], f[j], support[j]], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("tnorm", ["minimum", "product", "lukasiewicz", "hamacher", "einstein"])
def test_crisp_labels_in_floats_give_sklearns_counts_under_every_tnorm(tnorm):
    """T(0, x) = 0 and T(1, x) = x: 0/1 memberships are counts whatever the T-norm."""
    rng = np.random.default_rng(7)
    ref, pred = (rng.random((60, 4)) < 0.4).astype(float), (rng.random((60, 4)) < 0.3).astype(float)
    ref[0, 0] = 0.5  # one soft cell makes the input soft: compare the other rows
    got = ekm.multilabel_confusion_matrix(ref, pred, tnorm=tnorm) - ekm.multilabel_confusion_matrix(
        ref[:1], pred[:1], tnorm=tnorm)
    np.testing.assert_allclose(got, skm.multilabel_confusion_matrix(ref[1:].astype(int), pred[1:].astype(int)),
                               rtol=1e-12, atol=1e-12)


def test_soft_losses_are_cross_entropy_and_squared_error():
    """Against soft targets t: −Σ t log p and Σ (t − p)², averaged with the weights (halved for
    two classes: the binary Brier score); one-hot targets give scikit-learn's."""
    rng = np.random.default_rng(8)
    target, proba, w = rng.dirichlet(np.ones(3), 40), rng.dirichlet(np.ones(3), 40), rng.random(40)
    target[0] = [0.5, 0.25, 0.25]
    assert ekm.log_loss(target, proba, sample_weight=w) == pytest.approx(
        np.average(-(target * np.log(proba)).sum(axis=1), weights=w), rel=1e-12)
    assert ekm.log_loss(target, proba, normalize=False) == pytest.approx(-(target * np.log(proba)).sum(), rel=1e-12)
    assert ekm.brier_score_loss(target, proba, sample_weight=w) == pytest.approx(
        np.average(((target - proba) ** 2).sum(axis=1), weights=w), rel=1e-12)
    mu, p = rng.random(40), rng.random(40)
    assert ekm.brier_score_loss(mu, p) == pytest.approx(np.mean((mu - p) ** 2), rel=1e-12)
    assert ekm.log_loss(mu, p) == pytest.approx(np.mean(-(mu * np.log(p) + (1 - mu) * np.log(1 - p))), rel=1e-12)
    with pytest.raises(ValueError, match="soft targets are memberships, one column per class already"):
        ekm.log_loss(mu, p, labels=[0, 1])


def test_rankings_take_positives_from_or_refuse_soft_references():
    """A curve has no soft positives: positives_from= binarizes the reference (memberships at or
    above it, as the DCASE metrics'); without it the refusal says why and what to give."""
    rng = np.random.default_rng(9)
    mu, score = rng.random(50), np.round(rng.random(50), 1)
    crisp = (mu >= 0.5).astype(int)
    for name in ("roc_curve", "precision_recall_curve", "roc_auc_score"):
        with pytest.raises(ValueError, match=r"y_true holds memberships \(.* at 0\).*give positives_from=0\.5"):
            getattr(ekm, name)(mu, score)
        assert_same(getattr(ekm, name)(mu, score, positives_from=0.5), getattr(skm, name)(crisp, score), name)
    matrix, scores = rng.random((50, 3)), rng.random((50, 3))
    assert ekm.roc_auc_score(matrix, scores, positives_from=0.7, average="micro") == pytest.approx(
        skm.roc_auc_score((matrix >= 0.7).astype(int), scores, average="micro"), rel=1e-12)
    with pytest.raises(ValueError, match=r"positives_from: a membership in \(0, 1\]"):
        ekm.roc_auc_score(mu, score, positives_from=1.5)
    with pytest.raises(ValueError, match="memberships name no one label"):
        ekm.top_k_accuracy_score(mu, score, k=1)


def test_what_has_no_soft_definition_is_refused_with_the_reason():
    for name in ("confusion_matrix", "balanced_accuracy_score", "matthews_corrcoef"):
        with pytest.raises(ValueError, match="multilabel-indicator is not supported.*multilabel_confusion_matrix"):
            getattr(ekm, name)(REF, PRED)
    with pytest.raises(ValueError, match="binary problem of labels 0 and 1"):
        ekm.confusion_matrix(np.array([0.9, 0.2]), np.array([0.8, 0.4]), labels=[1, 2])
    with pytest.raises(ValueError, match="Samplewise metrics are not available outside of multilabel"):
        ekm.multilabel_confusion_matrix([0, 1, 2], [0, 2, 2], samplewise=True)
    with pytest.raises(TypeError, match="did you mean 'samplewise'"):
        ekm.multilabel_confusion_matrix(REF, PRED, sample_wise=True)


def test_warnings_point_at_the_call():
    with pytest.warns(UserWarning, match="A single label was found") as caught:
        ekm.matthews_corrcoef([1, 1], [1, 1])
    assert caught[0].filename == __file__


# ----------------------------------------------------------------------------------- scorers


def test_a_fuzzy_f1_scorer_drives_grid_search():
    """make_scorer(f1_score, response_method="predict_proba", tnorm=...) scores a multi-label
    classifier's probabilities as memberships (the fuzzy F1): GridSearchCV chooses the C that a
    hand loop over the same folds with the same function chooses, with the same mean scores."""
    from sklearn.base import clone
    from sklearn.datasets import make_multilabel_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.multiclass import OneVsRestClassifier
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # BLAS threads on tiny fits spin on a shared machine: 10x the CPU
        X, Y = make_multilabel_classification(n_samples=90, n_features=6, n_classes=3, random_state=0)
        model, grid, folds = OneVsRestClassifier(LogisticRegression()), [0.001, 0.1, 10.0], KFold(3)
        scorer = skm.make_scorer(ekm.f1_score, response_method="predict_proba", average="micro", tnorm="product")
        search = GridSearchCV(model, {"estimator__C": grid}, scoring=scorer, cv=folds).fit(X, Y)
        by_hand = []
        for c in grid:
            fold_scores = []
            for train, test in folds.split(X):
                fitted = clone(model).set_params(estimator__C=c).fit(X[train], Y[train])
                fold_scores.append(ekm.f1_score(Y[test], fitted.predict_proba(X[test]), average="micro",
                                                tnorm="product"))
            by_hand.append(np.mean(fold_scores))
    assert search.best_params_ == {"estimator__C": grid[int(np.argmax(by_hand))]}
    # rel 1e-12: the same fits and scores, averaged by GridSearchCV in its own order
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], by_hand, rtol=1e-12)
    assert len(set(np.round(by_hand, 6))) == len(grid)  # the grid's scores differ: the choice is a real one


@pytest.mark.parametrize("kwargs", [
    {"labels": [], "target_names": ["name 0"], "digits": 0},  # hypothesis found it: no row, names given
    {"labels": [0], "target_names": ["a very long name", "b"], "digits": 2},  # as wide as every name given
])
def test_the_text_report_is_as_wide_as_the_names_given(kwargs):
    y = np.array([0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the undefined ratios' warnings, the same on both sides
        assert ekm.classification_report(y, y, **kwargs) == skm.classification_report(y, y, **kwargs)
