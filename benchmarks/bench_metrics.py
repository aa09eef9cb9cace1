"""Benchmark: ``evalkit.metrics`` (the scikit-learn-shaped functions) against the Evaluator.

Run as a script, not a test::

    python benchmarks/bench_metrics.py [--repeat 5] [--sklearn-repeat 1] [--scale 1.0] [--only soft|crisp]
                                       [--function f1_score]

Two seeded workloads: 1,000,000 x 17 soft labels (float32 memberships; average precision
ranks the predictions against the reference thresholded at 0.5) and 100,000 x 527 crisp ones
(float32 0/1). For each of ``f1_score`` micro and macro, ``precision_recall_fscore_support``
(``average=None``) and ``average_precision_score`` (macro) it times, interleaved (one call of
each contender per round, best of the rounds: the 2-core machine is shared):

- ``evalkit.metrics.X`` on the arrays;
- the Evaluator on the same arrays (``evalkit.evaluate`` with the matching averaging and
  metrics: ``f1``; ``precision, recall, f1, card_ref``; ``map``);
- the numpy floor: ``np.minimum`` and column sums in float64 (16,384 rows at a time, one BLAS
  product per block) then the ratio; for AP a column argsort, a cumulative sum and the step sum (ties unmerged);
- scikit-learn on the same arrays (binarized at 0.5 for the soft labels, not timed).

and prints a Markdown table of times and ratios. The target (issue 25, item 2) is
``evalkit.metrics`` within 1.5x of the Evaluator.

``--rest`` times instead the rest of scikit-learn's classification metrics (issue 27, item 2)
against scikit-learn itself, interleaved on the same seeded 100,000 x 17 data: multi-label 0/1
labels and scores (the confusion matrices, the report, ROC AUC, log loss of the rows'
probabilities), multiclass labels of 17 classes with their probabilities (the confusion matrix,
balanced accuracy, MCC, top-k, log loss, Brier) and one column's binary labels and scores (the
curves). evalkit's soft version of each (memberships) is timed beside it, where it has one.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from timing import interleaved

import evalkit
from evalkit import metrics


def _cardinalities(ref: np.ndarray, pred: np.ndarray, rows: int = 16_384) -> tuple[np.ndarray, ...]:
    """Per-column sums of the minimum, the reference and the prediction, in float64: a block of
    rows at a time, each cast in cache and summed by one BLAS product (the fastest plain numpy)."""
    inter, r, p = (np.zeros(ref.shape[1]) for _ in range(3))
    for i in range(0, len(ref), rows):
        a, b = ref[i : i + rows].astype(np.float64), pred[i : i + rows].astype(np.float64)
        ones = np.ones(len(a))
        inter += ones @ np.minimum(a, b)
        r += ones @ a
        p += ones @ b
    return inter, r, p


def floor_f1(ref: np.ndarray, pred: np.ndarray, average: str) -> Any:
    inter, r, p = _cardinalities(ref, pred)
    if average == "micro":
        inter, r, p = inter.sum(), r.sum(), p.sum()
    f1 = 2 * inter / (r + p)
    return f1 if average == "micro" else f1.mean()


def floor_prfs(ref: np.ndarray, pred: np.ndarray) -> Any:
    inter, r, p = _cardinalities(ref, pred)
    return inter / p, inter / r, 2 * inter / (r + p), r


def floor_ap(true: np.ndarray, score: np.ndarray) -> float:
    order = np.argsort(-score, axis=0, kind="stable")
    hits = np.take_along_axis(true, order, axis=0).astype(np.float64)
    tp = np.cumsum(hits, axis=0)
    precision = tp / np.arange(1, len(true) + 1)[:, None]
    return float(((precision * hits).sum(axis=0) / tp[-1]).mean())


def workloads(scale: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(20240501)
    n = int(1_000_000 * scale)
    ref = rng.random((n, 17), dtype=np.float32)
    pred = np.clip(ref + rng.normal(0, 0.25, ref.shape).astype(np.float32), 0, 1)
    m = int(100_000 * scale)
    crisp_ref = (rng.random((m, 527)) < 0.05).astype(np.float32)
    noisy = np.clip(crisp_ref + rng.normal(0, 0.4, crisp_ref.shape), 0, 1).astype(np.float32)
    return {f"{n:,} x 17 soft": (ref, pred), f"{m:,} x 527 crisp": (crisp_ref, noisy)}


def contenders(ref: np.ndarray, pred: np.ndarray) -> dict[str, dict[str, Callable[[], Any]]]:
    """For each function: (evalkit.metrics, Evaluator, numpy floor, scikit-learn)."""
    import sklearn.metrics as sk

    hard_ref, hard_pred = ref > 0.5, pred > 0.5  # scikit-learn's crisp labels, binarized once
    pred_crisp = (pred > 0.5).astype(np.float32)  # F and P/R/F on crisp data use crisp predictions
    soft = bool(((ref > 0) & (ref < 1)).any())
    p = pred if soft else pred_crisp
    out: dict[str, dict[str, Callable[[], Any]]] = {}
    for average in ("micro", "macro"):
        out[f"f1_score {average}"] = {
            "metrics": lambda a=average: metrics.f1_score(ref, p, average=a),
            "Evaluator": lambda a=average: evalkit.evaluate(ref, p, averaging=a, metrics=["f1"]),
            "floor": lambda a=average: floor_f1(ref, p, a),
            "sklearn": lambda a=average: sk.f1_score(hard_ref, hard_pred, average=a),
        }
    out["precision_recall_fscore_support"] = {
        "metrics": lambda: metrics.precision_recall_fscore_support(ref, p),
        "Evaluator": lambda: evalkit.evaluate(
            ref, p, averaging="none", metrics=["precision", "recall", "f1", "card_ref"]),
        "floor": lambda: floor_prfs(ref, p),
        "sklearn": lambda: sk.precision_recall_fscore_support(hard_ref, hard_pred),
    }
    true = hard_ref.astype(np.float32)  # AP ranks the predictions against 0/1 labels
    out["average_precision_score"] = {
        "metrics": lambda: metrics.average_precision_score(true, pred),
        "Evaluator": lambda: evalkit.evaluate(true, pred, metrics=["map"]),
        "floor": lambda: floor_ap(true, pred),
        "sklearn": lambda: sk.average_precision_score(hard_ref, pred),
    }
    return out


def rest_workload(scale: float) -> dict[str, Any]:
    """Seeded 100,000 x 17 data of the kinds the rest of scikit-learn's metrics read."""
    rng = np.random.default_rng(20261126)
    n, k = int(100_000 * scale), 17
    truth = rng.random((n, k)) < 0.2
    noisy = np.clip(truth + rng.normal(0, 0.35, (n, k)), 0, 1)
    classes = rng.integers(0, k, n)
    logits = rng.normal(0, 1, (n, k)) + 2 * np.eye(k)[classes]
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return {"labels": truth.astype(np.int64), "predicted": (noisy > 0.5).astype(np.int64), "scores": noisy,
            "soft": np.clip(truth * 0.8 + rng.random((n, k)) * 0.2, 0, 1), "classes": classes,
            "guesses": proba.argmax(axis=1), "proba": proba}


def rest_contenders(d: dict[str, Any]) -> dict[str, dict[str, Callable[[], Any]]]:
    """For each function: evalkit.metrics, scikit-learn, and evalkit on soft labels (where defined)."""
    import sklearn.metrics as sk

    labels, predicted, scores, soft = d["labels"], d["predicted"], d["scores"], d["soft"]
    classes, guesses, proba = d["classes"], d["guesses"], d["proba"]
    column, column_scores = labels[:, 0], scores[:, 0]
    calls: dict[str, tuple[str, tuple[Any, ...], dict[str, Any], tuple[Any, ...] | None]] = {
        "multilabel_confusion_matrix": ("multilabel_confusion_matrix", (labels, predicted), {}, (soft, scores)),
        "classification_report": ("classification_report", (labels, predicted), {"zero_division": 0},
                                  (soft, scores)),
        "confusion_matrix 17 classes": ("confusion_matrix", (classes, guesses), {}, None),
        "balanced_accuracy_score": ("balanced_accuracy_score", (classes, guesses), {}, None),
        "matthews_corrcoef": ("matthews_corrcoef", (classes, guesses), {}, None),
        "zero_one_loss": ("zero_one_loss", (labels, predicted), {}, (soft, scores)),
        "roc_curve": ("roc_curve", (column, column_scores), {}, None),
        "precision_recall_curve": ("precision_recall_curve", (column, column_scores), {}, None),
        "roc_auc_score macro": ("roc_auc_score", (labels, scores), {}, None),
        "roc_auc_score ovr": ("roc_auc_score", (classes, proba), {"multi_class": "ovr"}, None),
        "log_loss": ("log_loss", (classes, proba), {}, (np.eye(proba.shape[1])[classes] * 0.9 + 0.1 / 17, proba)),
        "brier_score_loss": ("brier_score_loss", (classes, proba), {}, None),
        "top_k_accuracy_score": ("top_k_accuracy_score", (classes, proba), {"k": 3}, None),
    }
    out: dict[str, dict[str, Callable[[], Any]]] = {}
    for row, (name, args, kwargs, soft_args) in calls.items():
        fns = {"metrics": lambda n=name, a=args, kw=kwargs: getattr(metrics, n)(*a, **kw),
               "sklearn": lambda n=name, a=args, kw=kwargs: getattr(sk, n)(*a, **kw)}
        if soft_args is not None:
            fns["soft"] = lambda n=name, a=soft_args, kw=kwargs: getattr(metrics, n)(*a, **kw)
        out[row] = fns
    return out


def main_rest(args: argparse.Namespace) -> None:
    print(f"best of {args.repeat} interleaved rounds; times in ms\n")
    print("| function | evalkit.metrics | scikit-learn | sklearn / metrics | evalkit, soft labels |")
    print("|---|---:|---:|---:|---:|")
    for function, fns in rest_contenders(rest_workload(args.scale)).items():
        if not function.startswith(args.function):
            continue
        t = interleaved(fns, args.repeat)
        soft = f"{t['soft'] * 1e3:.1f}" if "soft" in t else "—"
        print(f"| {function} | {t['metrics'] * 1e3:.1f} | {t['sklearn'] * 1e3:.1f} | "
              f"{t['sklearn'] / t['metrics']:.2f}x | {soft} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sklearn-repeat", type=int, default=1)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the rows (a quick look)")
    parser.add_argument("--only", choices=["soft", "crisp"], help="one workload of the two")
    parser.add_argument("--function", default="", help="only the functions whose row starts so (f1_score, ...)")
    parser.add_argument("--rest", action="store_true", help="the rest of scikit-learn's metrics (issue 27)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # zero divisions on empty columns: scikit-learn's and ours alike
    if args.rest:
        main_rest(args)
        return
    print(f"best of {args.repeat} interleaved rounds (scikit-learn: {args.sklearn_repeat}); times in ms\n")
    print("| data | function | evalkit.metrics | Evaluator | numpy floor | scikit-learn | metrics / Evaluator "
          "| metrics / floor | sklearn / metrics |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for data, (ref, pred) in workloads(args.scale).items():
        if args.only and args.only not in data:
            continue
        for function, fns in contenders(ref, pred).items():
            if not function.startswith(args.function):
                continue
            t = interleaved(fns, args.repeat, {"sklearn": args.sklearn_repeat})
            print(f"| {data} | {function} | {t['metrics'] * 1e3:.1f} | {t['Evaluator'] * 1e3:.1f} "
                  f"| {t['floor'] * 1e3:.1f} | {t['sklearn'] * 1e3:.0f} | {t['metrics'] / t['Evaluator']:.2f}x "
                  f"| {t['metrics'] / t['floor']:.2f}x | {t['sklearn'] / t['metrics']:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
