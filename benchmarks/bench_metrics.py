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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sklearn-repeat", type=int, default=1)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the rows (a quick look)")
    parser.add_argument("--only", choices=["soft", "crisp"], help="one workload of the two")
    parser.add_argument("--function", default="", help="only the functions whose row starts so (f1_score, ...)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # zero divisions on empty columns: scikit-learn's and ours alike
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
