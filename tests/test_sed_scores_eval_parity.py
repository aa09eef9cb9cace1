"""``best_fscore`` is sed_scores_eval's segment-based ``best_fscore`` (Harju & Mesaros's "Hard /
OT"): on seeded score matrices of 1 s segments (ties included), the per-class best F, its mean,
the micro F at the class thresholds and the thresholds themselves equal the peer's, for
β = 1 and 2."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import evalkit
from evalkit.errors import DataError

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from sed_scores_eval import segment_based
    from sed_scores_eval.base_modules import roc as peer_roc
    from sed_scores_eval.base_modules.curves import staircase_auc
    from sed_scores_eval.base_modules.scores import create_score_dataframe

CLASSES = ["alarm", "dog", "speech"]


def runs(active: np.ndarray, label: str) -> list[tuple[float, float, str]]:
    """Runs of active 1 s segments as events (the peer refuses touching events)."""
    edges = np.flatnonzero(np.diff(np.r_[0, active.astype(int), 0]))
    return [(float(a), float(b), label) for a, b in zip(edges[::2], edges[1::2])]


def data(seed: int):
    """Per file, targets and scores on 1 s segments; scores rounded to 0.01 so that they tie."""
    rng = np.random.default_rng(seed)
    scores, ground_truth, durations, targets_all, scores_all, ids = {}, {}, {}, [], [], []
    for f in range(10):
        n, name = int(rng.integers(5, 20)), f"file{f:02d}"
        targets = rng.random((n, len(CLASSES))) < 0.3
        score = np.round(rng.random((n, len(CLASSES))) * 0.6 + targets * 0.3, 2)
        scores[name] = create_score_dataframe(score, np.arange(n + 1, dtype=float), CLASSES)
        ground_truth[name] = [e for c, label in enumerate(CLASSES) for e in runs(targets[:, c], label)]
        durations[name] = float(n)
        targets_all.append(targets)
        scores_all.append(score)
        ids += [f"{name}@{k}" for k in range(n)]
    return (scores, ground_truth, durations), (np.vstack(targets_all).astype(float), np.vstack(scores_all), ids)


def scored(metric: dict, targets: np.ndarray, scores: np.ndarray, ids: list[str]) -> dict:
    """The metric's values of the segment matrices, keyed by (metric, class)."""
    results = evalkit.run({
        "name": "peer", "metrics": [metric],
        "data": {"reference": {"values": targets.tolist(), "classes": CLASSES, "ids": ids},
                 "systems": {"s": {"values": scores.tolist(), "classes": CLASSES, "ids": ids}}},
    })
    return {(r.metric, r.class_): r.value for r in results.rows}


@pytest.mark.parametrize("beta", [1.0, 2.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_best_fscore_and_thresholds_equal_sed_scores_eval(seed, beta):
    peer_inputs, (targets, scores, ids) = data(seed)
    f, _, _, thresholds, _ = segment_based.best_fscore(*peer_inputs, segment_length=1.0, beta=beta)
    got = scored({"name": "best_fscore", "beta": beta}, targets, scores, ids)
    assert got[("best_fscore", None)] == pytest.approx(f["macro_average"], rel=1e-12)
    assert got[("best_fscore_micro", None)] == pytest.approx(f["micro_average"], rel=1e-12)
    for label in CLASSES:
        assert got[("best_fscore_per_class", label)] == pytest.approx(f[label], rel=1e-12), label
        assert got[("best_fscore_threshold", label)] == pytest.approx(thresholds[label], rel=1e-12), label


def test_a_class_without_positives_is_left_out_and_scores_may_be_logits():
    targets = np.array([[1, 0], [0, 0], [1, 0]], dtype=float)
    logits = np.array([[2.0, -1.0], [-3.0, 0.5], [0.1, 4.0]])
    results = evalkit.run({"name": "ot", "metrics": ["best_fscore"],
                           "data": {"reference": targets.tolist(), "systems": {"s": logits.tolist()}, "classes": ["a", "b"]}})
    got = {(r.metric, r.class_): r.value for r in results.rows}
    assert got[("best_fscore_per_class", "a")] == 1.0  # both positives above the negative: F 1
    assert got[("best_fscore_threshold", "a")] == pytest.approx((0.1 + -3.0) / 2)
    assert np.isnan(got[("best_fscore_per_class", "b")]) and got[("best_fscore", None)] == 1.0


def staircase_without_ties(y: np.ndarray, x: np.ndarray, max_x: float | None = None) -> float:
    """The peer's staircase area of its ROC (sorted by FPR, then TPR) with each run of equal FPRs
    cut to its last point, the highest TPR. The peer sorts by FPR again with numpy's unstable
    argsort, so which TPR of a tie it held followed numpy's sort, which numpy picks by CPU: with
    NPY_DISABLE_CPU_FEATURES=X86_V3 its AUROC of seed 0 was 0.8711 instead of 0.8741."""
    last = np.r_[x[1:] != x[:-1], True]
    return staircase_auc(y[last], x[last], max_x=max_x)


@pytest.mark.parametrize("max_fpr", [None, 0.1, 0.5])
@pytest.mark.parametrize("seed", [0, 3])
def test_auroc_equals_sed_scores_eval(seed, max_fpr, monkeypatch):
    monkeypatch.setattr(peer_roc, "staircase_auc", staircase_without_ties)
    peer_inputs, (targets, scores, ids) = data(seed)
    expected, _ = segment_based.auroc(*peer_inputs, segment_length=1.0, max_fpr=max_fpr)
    got = scored({"name": "auroc", "max_fpr": max_fpr}, targets, scores, ids)
    assert got[("auroc", None)] == pytest.approx(expected["mean"], rel=1e-12)
    for label in CLASSES:
        assert got[("auroc_per_class", label)] == pytest.approx(expected[label], rel=1e-12), label


def test_soft_references_need_positives_from_which_binarizes_them():
    soft = np.array([[0.8, 0.2], [0.4, 0.6], [0.5, 0.0], [0.1, 0.9]])
    scores = np.array([[0.9, 0.1], [0.3, 0.7], [0.6, 0.2], [0.2, 0.8]])
    run = {"name": "soft", "data": {"reference": soft.tolist(), "systems": {"s": scores.tolist()}, "classes": ["a", "b"]}}
    with pytest.raises(DataError, match="targets must be binary.*or give the metric `positives_from: 0.5`"):
        evalkit.run({**run, "metrics": ["best_fscore"]})
    for name in ("best_fscore", "auroc"):
        from_soft = evalkit.run({**run, "metrics": [{"name": name, "positives_from": 0.5}]})
        binary = {**run, "data": {**run["data"], "reference": (soft >= 0.5).astype(float).tolist()}}
        from_binary = evalkit.run({**binary, "metrics": [name]})
        assert [r.value for r in from_soft.rows] == [r.value for r in from_binary.rows]  # the same targets


@pytest.mark.parametrize("seed", [0, 3])
def test_roc_and_pr_curves_equal_sed_scores_eval(seed):
    """With ``curves: true``, each class's ROC points (auroc) and precision-recall points
    (best_fscore) are the peer's roc_curve and precision_recall_curve, point for point."""
    peer_inputs, (targets, scores, ids) = data(seed)
    results = evalkit.run({
        "name": "curves", "metrics": [{"name": "auroc", "curves": True}, {"name": "best_fscore", "curves": True}],
        "data": {"reference": {"values": targets.tolist(), "classes": CLASSES, "ids": ids},
                 "systems": {"s": {"values": scores.tolist(), "classes": CLASSES, "ids": ids}}},
    })
    curves = {(c.metric, c.class_): c.curve for c in results.curves}
    assert len(curves) == 2 * len(CLASSES)
    roc = segment_based.roc_curve(*peer_inputs, segment_length=1.0)
    pr = segment_based.precision_recall_curve(*peer_inputs, segment_length=1.0)
    for label in CLASSES:
        tpr, fpr, *_ = roc[label]
        np.testing.assert_allclose(curves["roc_curve", label].x, fpr, atol=1e-12)
        np.testing.assert_allclose(curves["roc_curve", label].y, tpr, atol=1e-12)
        precision, recall, *_ = pr[label]
        np.testing.assert_allclose(curves["pr_curve", label].x, recall, atol=1e-12)
        np.testing.assert_allclose(curves["pr_curve", label].y, precision, atol=1e-12)
    from evalkit_reports import plots

    drawn = [p.name for p in plots.gallery(results).plots if p.kind == "curve"]
    assert drawn == ["curve-roc_curve", "curve-pr_curve"]
