"""Benchmark: fuzzy precision / recall / F1 (minimum T-norm), micro + macro, on a large soft-label pair.

Run as a script, not a test::

    python benchmarks/bench_fuzzy.py [--rows N] [--repeat K] [--sklearn-repeat K] [--profile]

On a seeded N x 17 float32 pair (reference soft labels and predictions in [0, 1]) it measures,
each as the best of K repeats (``time.perf_counter``):

1. evalkit, "fuzzy micro + macro P/R/F" as one unit, two ways:
   a. one pass: ``evalkit.run`` with the arrays inline and ``averaging: [micro, macro]`` --
      the cardinality table is reduced once and both averagings read it;
   b. the public API: two ``evalkit.evaluate(..., averaging="micro"|"macro")`` calls.
2. the numpy floor: ``np.minimum(ref, pred)``, three ``.sum(axis=0)`` and the P/R/F arithmetic.
3. scikit-learn ``precision_recall_fscore_support(ref > 0.5, pred > 0.5, average=...)`` for
   micro and macro (binarization is done beforehand and NOT timed).

It checks that evalkit's numbers equal a float64 floor (computed separately) to a relative 1e-6,
measures the peak memory allocated during each evalkit unit with ``tracemalloc`` (numpy reports
its buffers to it), and prints a Markdown table with the targets: evalkit within 1.5x of the
numpy floor, at least 20x faster than scikit-learn, peak extra memory at most twice the inputs.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings

import numpy as np
from timing import best_time, met, peak_memory, profile

import evalkit
from evalkit.discovery import default_registry

METRICS = ("precision", "recall", "f1")
AVERAGINGS = ("micro", "macro")
KEYS = [(a, m) for a in AVERAGINGS for m in METRICS]
RTOL = 1e-6
TARGET_FLOOR_RATIO = 1.5  # evalkit time / numpy floor time, at most
TARGET_SKLEARN_RATIO = 20.0  # sklearn time / evalkit time, at least
TARGET_MEMORY_RATIO = 2.0  # evalkit peak extra memory / inputs' bytes, at most

Values = dict[tuple[str, str], float]


# --------------------------------------------------------------------------------------- data


def make_pair(rows: int, classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Reference memberships uniform in [0, 1]; predictions = reference + N(0, 0.25), clipped."""
    rng = np.random.default_rng(seed)
    ref = rng.random((rows, classes), dtype=np.float32)
    noise = rng.standard_normal((rows, classes), dtype=np.float32)
    noise *= np.float32(0.25)
    noise += ref
    pred = np.clip(noise, 0, 1, out=noise)
    return ref, pred


# ------------------------------------------------------------------------------------ evalkit


def evalkit_one_pass(ref: np.ndarray, pred: np.ndarray) -> Values:
    """Micro and macro P/R/F from one reduction of the table, through the public evalkit.run."""
    results = evalkit.run(
        {
            "data": {"reference": ref, "systems": {"s": pred}},
            "representation": "fuzzy", "tnorm": "minimum",
            "averaging": list(AVERAGINGS), "metrics": list(METRICS),
        },
        write_reports=False,
    )
    return {(row.averaging, row.metric): row.value for row in results.rows}


def evalkit_two_calls(ref: np.ndarray, pred: np.ndarray) -> Values:
    """The public API: one evaluate() per averaging."""
    values: Values = {}
    for averaging in AVERAGINGS:
        result = evalkit.evaluate(
            ref, pred, representation="fuzzy", tnorm="minimum", averaging=averaging, metrics=list(METRICS)
        )
        values.update({(averaging, m): float(result[m]) for m in METRICS})
    return values


# ---------------------------------------------------------------------------------- the floor


def prf(sum_ref: np.ndarray, sum_pred: np.ndarray, sum_inter: np.ndarray) -> Values:
    """Micro and macro P/R/F1 from per-class sums (no zero-division handling: none occurs here)."""
    r, p, i = sum_ref.sum(), sum_pred.sum(), sum_inter.sum()
    return {
        ("micro", "precision"): float(i / p),
        ("micro", "recall"): float(i / r),
        ("micro", "f1"): float(2 * i / (r + p)),
        ("macro", "precision"): float((sum_inter / sum_pred).mean()),
        ("macro", "recall"): float((sum_inter / sum_ref).mean()),
        ("macro", "f1"): float((2 * sum_inter / (sum_ref + sum_pred)).mean()),
    }


def numpy_floor(ref: np.ndarray, pred: np.ndarray) -> Values:
    """The simplest honest numpy implementation, in the data's own dtype (float32)."""
    inter = np.minimum(ref, pred)
    return prf(ref.sum(axis=0), pred.sum(axis=0), inter.sum(axis=0))


def float64_reference(ref: np.ndarray, pred: np.ndarray) -> Values:
    """The check's ground truth: sums in float64, in blocks to bound memory. Not timed."""
    sums = np.zeros((3, ref.shape[1]), dtype=np.float64)
    for start in range(0, len(ref), 1 << 18):
        r = ref[start : start + (1 << 18)].astype(np.float64)
        p = pred[start : start + (1 << 18)].astype(np.float64)
        sums += [r.sum(axis=0), p.sum(axis=0), np.minimum(r, p).sum(axis=0)]
    return prf(*sums)


# ------------------------------------------------------------------------------------ sklearn


def sklearn_both(y_true: np.ndarray, y_pred: np.ndarray) -> Values:
    from sklearn.metrics import precision_recall_fscore_support

    values: Values = {}
    for averaging in AVERAGINGS:
        p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average=averaging, zero_division=0)
        values.update({(averaging, "precision"): p, (averaging, "recall"): r, (averaging, "f1"): f})
    return values


def crisp_numpy(y_true: np.ndarray, y_pred: np.ndarray) -> Values:
    """Counts on the binarized data, to check that the sklearn call computes what we think."""
    t = y_true.sum(axis=0, dtype=np.int64)
    p = y_pred.sum(axis=0, dtype=np.int64)
    tp = (y_true & y_pred).sum(axis=0, dtype=np.int64)
    return prf(t.astype(np.float64), p.astype(np.float64), tp.astype(np.float64))


# -------------------------------------------------------------------------------- measurement




def max_rel_diff(ours: Values, truth: Values) -> float:
    return max(abs(ours[k] - truth[k]) / abs(truth[k]) for k in KEYS)




def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info

        return ", ".join(f"{i['internal_api']} {i['version']} ({i['num_threads']} threads)" for i in threadpool_info())
    except Exception:  # threadpoolctl comes with scikit-learn; optional here
        return "unknown"


def mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="samples (default 1,000,000)")
    parser.add_argument("--classes", type=int, default=17, help="classes (default 17)")
    parser.add_argument("--repeat", type=int, default=5, help="repeats for evalkit and numpy; best is kept")
    parser.add_argument("--sklearn-repeat", type=int, default=2, help="repeats for scikit-learn (slow)")
    parser.add_argument("--seed", type=int, default=20240501)
    parser.add_argument("--profile", action="store_true", help="cProfile the evalkit units and print the top")
    args = parser.parse_args(argv)
    wall = time.perf_counter()

    registry = default_registry()
    if "minimum" not in registry.names("tnorm"):
        failures = "; ".join(str(f) for f in registry.failures) or "none reported"
        print(
            f"error: no 'minimum' T-norm is registered (plugin failures: {failures}). If "
            "src/evalkit_tnorms exists but was added after `pip install -e .`, re-run that install "
            "(the editable finder maps only the packages present at install time) or set PYTHONPATH=src",
            file=sys.stderr,
        )
        return 2

    print("# bench_fuzzy")
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, evalkit {evalkit.__version__}, "
        f"nproc {os.cpu_count()}, BLAS: {blas_info()}"
    )
    ref, pred = make_pair(args.rows, args.classes, args.seed)
    inputs = ref.nbytes + pred.nbytes
    print(f"data: {args.rows:,} x {args.classes} float32, seed {args.seed}; inputs {mb(inputs)} "
          f"(reference {mb(ref.nbytes)} + prediction {mb(pred.nbytes)})")

    # -- correctness first: the numbers must agree before their timings mean anything
    truth = float64_reference(ref, pred)

    t_one, v_one = best_time(evalkit_one_pass, (ref, pred), args.repeat)
    t_two, v_two = best_time(evalkit_two_calls, (ref, pred), args.repeat)
    t_floor, v_floor = best_time(numpy_floor, (ref, pred), args.repeat)

    y_true, y_pred = ref > 0.5, pred > 0.5  # binarization: not timed
    try:
        import sklearn

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_sk, v_sk = best_time(sklearn_both, (y_true, y_pred), args.sklearn_repeat)
        sk_version = sklearn.__version__
    except ImportError:
        t_sk, v_sk, sk_version = float("nan"), None, "not installed"

    m_one = peak_memory(evalkit_one_pass, (ref, pred))
    m_two = peak_memory(evalkit_two_calls, (ref, pred))
    m_floor = peak_memory(numpy_floor, (ref, pred))

    d_one, d_two, d_floor = (max_rel_diff(v, truth) for v in (v_one, v_two, v_floor))
    print()
    print("## Correctness (vs. a float64 floor computed separately)")
    print()
    print("| quantity | float64 floor | evalkit one pass | evalkit 2x evaluate() | numpy float32 floor |")
    print("|---|---|---|---|---|")
    for k in KEYS:
        print(f"| {k[0]} {k[1]} | {truth[k]:.9f} | {v_one[k]:.9f} | {v_two[k]:.9f} | {v_floor[k]:.9f} |")
    print()
    print(f"max relative difference: evalkit one pass {d_one:.2e}, evalkit evaluate() {d_two:.2e}, "
          f"numpy float32 floor {d_floor:.2e} (tolerance {RTOL:g} for evalkit)")
    ok = d_one <= RTOL and d_two <= RTOL
    if v_sk is not None:
        d_sk = max_rel_diff(v_sk, crisp_numpy(y_true, y_pred))
        print(f"scikit-learn (scikit-learn {sk_version}) vs. numpy counts on the binarized data: "
              f"max relative difference {d_sk:.2e}")
        ok = ok and d_sk <= 1e-12
    print("correctness:", "OK" if ok else "FAILED")


    print()
    print(f"## Timings (best of {args.repeat}; scikit-learn best of {args.sklearn_repeat}, binarization excluded)")
    print()
    print("| step | time (s) | / numpy floor | scikit-learn / this | peak extra memory | / inputs |")
    print("|---|---:|---:|---:|---:|---:|")
    rows = [
        ("evalkit, one pass (micro + macro)", t_one, m_one),
        ("evalkit, 2x evaluate() (micro, macro)", t_two, m_two),
        ("numpy floor (minimum + 3 column sums)", t_floor, m_floor),
    ]
    for name, t, m in rows:
        print(f"| {name} | {t:.4f} | {t / t_floor:.2f}x | {t_sk / t:.1f}x | {mb(m)} | {m / inputs:.3f} |")
    print(f"| scikit-learn micro + macro (binarized) | {t_sk:.4f} | {t_sk / t_floor:.2f}x | 1.0x | n/a | n/a |")

    print()
    print("## Targets")
    print()
    print("| target | evalkit one pass | evalkit 2x evaluate() |")
    print("|---|---|---|")
    print(f"| within {TARGET_FLOOR_RATIO}x of the numpy floor | {t_one / t_floor:.2f}x: "
          f"{met(t_one / t_floor <= TARGET_FLOOR_RATIO)} | {t_two / t_floor:.2f}x: "
          f"{met(t_two / t_floor <= TARGET_FLOOR_RATIO)} |")
    print(f"| at least {TARGET_SKLEARN_RATIO:g}x faster than scikit-learn | {t_sk / t_one:.1f}x: "
          f"{met(t_sk / t_one >= TARGET_SKLEARN_RATIO)} | {t_sk / t_two:.1f}x: {met(t_sk / t_two >= TARGET_SKLEARN_RATIO)} |")
    print(f"| peak extra memory at most {TARGET_MEMORY_RATIO:g}x the inputs ({mb(inputs)}) | "
          f"{m_one / inputs:.3f}x: {met(m_one / inputs <= TARGET_MEMORY_RATIO)} | "
          f"{m_two / inputs:.3f}x: {met(m_two / inputs <= TARGET_MEMORY_RATIO)} |")

    if args.profile:
        for name, fn in (("evalkit one pass", evalkit_one_pass), ("evalkit 2x evaluate()", evalkit_two_calls)):
            print(f"\n## cProfile: {name} (sorted by own time)\n")
            print("```")
            print(profile(fn, (ref, pred)).strip())
            print("```")

    print(f"\ntotal wall time {time.perf_counter() - wall:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
