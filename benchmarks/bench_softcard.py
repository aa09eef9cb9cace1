"""Benchmark: soft precision / recall / F1 (soft cardinality + Levenshtein), one large document
and many small ones.

Run as a script, not a test::

    python benchmarks/bench_softcard.py [--set-size 1000] [--docs 100000] [--sample 200]
                                        [--repeat 5] [--profile]

(a) One document: two seeded sets of ``--set-size`` random words (3-12 lowercase letters).
    evalkit ``evaluate([xs], [ys], representation="soft_cardinality", similarity="levenshtein",
    averaging="samples")`` against ONE ``rapidfuzz.process.cdist(xs2000, list(xs2000),
    scorer=Levenshtein.normalized_similarity, workers=-1, dtype=np.float32)`` over the
    concatenated strings (the whole similarity matrix a soft cardinality needs). Target: evalkit
    within 1.3x of that cdist. Also timed, to explain the gap: ``process.cpdist`` over the same
    4,000,000 ordered pairs evalkit scores (its ``pairs`` route), and the "matrix route": one
    cdist plus the soft-cardinality sums in numpy (float64, and float32 as the baseline). Best of ``--repeat``; evalkit's
    values are checked against the matrix route (1e-9). When the target is missed a cProfile
    of the evalkit call is printed.

(b) ``--docs`` documents (default 100,000) of about 10 keywords per side: reference keywords
    drawn from a seeded vocabulary of 5,000 random words; the prediction keeps each keyword
    with probability 0.8, gives a kept one a one-letter typo with probability 0.3, and adds 0-3
    random vocabulary words. One timed ``evalkit.evaluate(..., representation=
    "soft_cardinality", similarity="levenshtein", averaging="samples")`` over all documents
    (after an untimed warm-up on 1,000 of them); documents per second, against the peer loop:
    one ``rapidfuzz.process.cdist`` per document over G ⧺ P, then the three soft cardinalities
    in numpy (timed right after evalkit, the better of two runs each, interleaved). Targets
    (issue 25, item 3): 50,000 documents a second and evalkit within 1.2x of that loop. Also
    timed, interleaved with them: the loop's ``cdist`` calls alone, without the sums (the floor of
    any route that scores each document as one matrix), and once the ``cpdist`` calls alone over
    the same within-document pairs (the floor of the ``pairs`` route evalkit used before).
    Against it, a plain Python implementation (a pure-Python Levenshtein DP in a double loop over
    G ⧺ P, then the soft-cardinality formulas) timed on the first ``--sample`` documents and
    extrapolated per document. evalkit's per-document P/R/F (one evaluate() per sample document)
    must equal the plain ones to 1e-9.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import rapidfuzz
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein
from timing import best_time, met, profile

import evalkit
from evalkit.discovery import default_registry

LETTERS = "abcdefghijklmnopqrstuvwxyz"
METRICS = ("precision", "recall", "f1")
TARGET_CDIST_RATIO = 1.3  # (a): evalkit time / one cdist over the 2,000 strings, at most
TARGET_DOCS = 50_000  # (b): documents a second, at least
TARGET_LOOP_RATIO = 1.2  # (b): evalkit time / the per-document cdist + numpy loop, at most
ATOL = 1e-9
SOFT = {"representation": "soft_cardinality", "similarity": "levenshtein", "averaging": "samples",
        "metrics": list(METRICS)}

# --------------------------------------------------------------------------------------- data


def random_words(rng: np.random.Generator, n: int, lo: int = 3, hi: int = 12) -> list[str]:
    lengths = rng.integers(lo, hi + 1, n)
    codes = rng.integers(0, 26, lengths.sum())
    text = "".join(LETTERS[c] for c in codes)
    ends = np.cumsum(lengths)
    return [text[e - n_ : e] for e, n_ in zip(ends, lengths)]


def typo(rng: np.random.Generator, word: str) -> str:
    """One random edit: add, remove or substitute a letter (never leaves an empty word)."""
    op = rng.integers(3) if len(word) > 1 else 0
    at = int(rng.integers(len(word) + (op == 0)))
    letter = LETTERS[rng.integers(26)]
    if op == 0:
        return word[:at] + letter + word[at:]
    if op == 1:
        return word[:at] + word[at + 1 :]
    return word[:at] + letter + word[at + 1 :]


def make_documents(n: int, vocabulary: int, seed: int) -> tuple[list[list[str]], list[list[str]]]:
    rng = np.random.default_rng(seed)
    vocab = list(dict.fromkeys(random_words(rng, int(vocabulary * 1.2))))[:vocabulary]
    reference, prediction = [], []
    for _ in range(n):
        truth = [vocab[i] for i in rng.choice(len(vocab), size=int(rng.integers(8, 13)), replace=False)]
        kept = [w for w, keep in zip(truth, rng.random(len(truth)) < 0.8) if keep]
        kept = [typo(rng, w) if t else w for w, t in zip(kept, rng.random(len(kept)) < 0.3)]
        extra = [vocab[i] for i in rng.integers(0, len(vocab), int(rng.integers(0, 4)))]
        reference.append(truth)
        prediction.append(kept + extra)
    return reference, prediction


# ------------------------------------------------------------------------------ plain python


def levenshtein_py(a: str, b: str) -> int:
    """Wagner-Fischer, two rows."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def similarity_py(a: str, b: str) -> float:
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1 - levenshtein_py(a, b) / longest


def soft_prf_py(truth: list[str], prediction: list[str]) -> tuple[float, float, float]:
    """Soft cardinality (eqs. 4, 5, 7): one double loop over G ⧺ P, then the three sums."""
    items = truth + prediction
    n_ref = len(truth)
    sims = [[similarity_py(a, b) for b in items] for a in items]
    card_ref = sum(1 / sum(row[:n_ref]) for row in sims[:n_ref])
    card_pred = sum(1 / sum(row[n_ref:]) for row in sims[n_ref:])
    card_union = sum(1 / sum(row) for row in sims)
    inter = max(card_ref + card_pred - card_union, 0.0)
    return inter / card_pred, inter / card_ref, 2 * inter / (card_ref + card_pred)


# ------------------------------------------------------------------------ (a) one document


def evalkit_one(xs: list[str], ys: list[str]) -> dict[str, float]:
    return {k: float(v) for k, v in evalkit.evaluate([xs], [ys], **SOFT).items()}


def one_cdist(x2: list[str]) -> np.ndarray:
    return process.cdist(x2, list(x2), scorer=Levenshtein.normalized_similarity, workers=-1, dtype=np.float32)


def pairs_floor(x2: list[str]) -> np.ndarray:
    """What evalkit's `pairs` route asks rapidfuzz for: every ordered pair as two 4e6-lists."""
    n = len(x2)
    i, j = np.divmod(np.arange(n * n), n)
    arr = np.array(x2, dtype=object)
    return process.cpdist(arr[i].tolist(), arr[j].tolist(), scorer=Levenshtein.normalized_similarity,
                          workers=-1, dtype=np.float64)


def matrix_route(xs: list[str], ys: list[str], dtype=np.float64) -> dict[str, float]:
    """One cdist, then soft cardinalities from row sums of its blocks."""
    x2 = xs + ys
    sim = process.cdist(x2, list(x2), scorer=Levenshtein.normalized_similarity, workers=-1, dtype=dtype)
    n = len(xs)
    card_ref = (1 / sim[:n, :n].sum(axis=1, dtype=np.float64)).sum()
    card_pred = (1 / sim[n:, n:].sum(axis=1, dtype=np.float64)).sum()
    card_union = (1 / sim.sum(axis=1, dtype=np.float64)).sum()
    inter = max(card_ref + card_pred - card_union, 0.0)
    return {"precision": inter / card_pred, "recall": inter / card_ref, "f1": 2 * inter / (card_ref + card_pred)}


def cdist_loop(reference: list[list[str]], prediction: list[list[str]]) -> list[float]:
    """The peer of (b): one cdist per document over G ⧺ P, then the soft F1 from its row sums."""
    f1 = []
    for g, p in zip(reference, prediction):
        items, n = g + p, len(g)
        sim = process.cdist(items, list(items), scorer=Levenshtein.normalized_similarity, dtype=np.float64)
        card_ref = (1 / sim[:n, :n].sum(axis=1)).sum()
        card_pred = (1 / sim[n:, n:].sum(axis=1)).sum()
        inter = max(card_ref + card_pred - (1 / sim.sum(axis=1)).sum(), 0.0)
        f1.append(2 * inter / (card_ref + card_pred))
    return f1


def cdist_calls(reference: list[list[str]], prediction: list[list[str]]) -> None:
    """The peer loop's cdist calls alone, without the sums: the floor of a matrix per document."""
    for g, p in zip(reference, prediction):
        items = g + p
        process.cdist(items, list(items), scorer=Levenshtein.normalized_similarity, dtype=np.float64)


def pairs_floor_docs(reference: list[list[str]], prediction: list[list[str]], chunk: int = 16384) -> float:
    """Seconds spent in cpdist alone over every ordered within-document pair, in evalkit's chunks
    of 16,384 documents (building the pair lists is not timed)."""
    total = 0.0
    for start in range(0, len(reference), chunk):
        xs, ys = [], []
        for g, p in zip(reference[start : start + chunk], prediction[start : start + chunk]):
            items = g + p
            for a in items:
                xs += [a] * len(items)
                ys += items
        gc.collect()
        begin = time.perf_counter()
        process.cpdist(xs, ys, scorer=Levenshtein.normalized_similarity, workers=-1, dtype=np.float64)
        total += time.perf_counter() - begin
        del xs, ys
    return total


# -------------------------------------------------------------------------------- measurement




def once(fn: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    result = fn(*args)
    return time.perf_counter() - start, result






def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set-size", type=int, default=1000, help="(a) strings per side (default 1,000)")
    parser.add_argument("--docs", type=int, default=100_000, help="(b) documents (default 100,000)")
    parser.add_argument("--vocabulary", type=int, default=5000, help="(b) vocabulary size (default 5,000)")
    parser.add_argument("--sample", type=int, default=200, help="(b) documents for the plain-Python baseline")
    parser.add_argument("--repeat", type=int, default=5, help="(a) repeats; the best is kept")
    parser.add_argument("--seed", type=int, default=20230815)
    parser.add_argument("--profile", action="store_true", help="also cProfile (a) when it meets the target, and (b)")
    args = parser.parse_args(argv)
    wall = time.perf_counter()

    registry = default_registry()
    missing = [(k, n) for k, n in (("representation", "soft_cardinality"), ("similarity", "levenshtein"))
               if n not in registry.names(k)]
    if missing:
        print(f"error: not registered: {missing}; re-run `pip install -e '.[test]'` (plugin failures: "
              f"{'; '.join(map(str, registry.failures)) or 'none'})", file=sys.stderr)
        return 2

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print("# bench_softcard")
    print(f"python {platform.python_version()}, numpy {np.__version__}, rapidfuzz {rapidfuzz.__version__}, "
          f"evalkit {evalkit.__version__}, cores available {cores} (nproc {os.cpu_count()})")
    ok = True

    # ---------------------------------------------------------------- (a)
    rng = np.random.default_rng(args.seed)
    xs, ys = random_words(rng, args.set_size), random_words(rng, args.set_size)
    x2 = xs + ys
    n2 = len(x2)
    t_ev, v_ev = best_time(evalkit_one, (xs, ys), args.repeat)
    t_cd, _ = best_time(one_cdist, (x2,), args.repeat)
    t_cp, _ = best_time(pairs_floor, (x2,), args.repeat)
    t_mr, v_mr = best_time(matrix_route, (xs, ys), args.repeat)
    t_m32, v_m32 = best_time(matrix_route, (xs, ys, np.float32), args.repeat)
    d_a = max(abs(v_ev[m] - v_mr[m]) for m in METRICS)
    ok_a = d_a <= ATOL
    ok = ok and ok_a
    ratio = t_ev / t_cd
    print()
    print(f"## (a) One document: {args.set_size:,} + {args.set_size:,} random words "
          f"(3-12 letters, seed {args.seed}); {n2 * n2:,} ordered pairs")
    print()
    print("| quantity | evalkit | matrix route (float64 cdist + numpy) |")
    print("|---|---|---|")
    for m in METRICS:
        print(f"| {m} | {v_ev[m]:.12f} | {v_mr[m]:.12f} |")
    print(f"\nmax difference {d_a:.1e} (tolerance {ATOL:g}): {'OK' if ok_a else 'FAILED'}; the float32 "
          f"matrix route differs by {max(abs(v_ev[m] - v_m32[m]) for m in METRICS):.1e}")
    print()
    print(f"Timings, best of {args.repeat}:")
    print()
    print("| step | time (s) | / one cdist |")
    print("|---|---:|---:|")
    for name, t in (
        ("evalkit.evaluate (soft_cardinality + levenshtein, samples)", t_ev),
        (f"one cdist {n2:,} x {n2:,} float32, workers=-1 (the baseline)", t_cd),
        (f"cpdist over the {n2 * n2:,} ordered pairs, float64, workers=-1 (evalkit's `pairs` call alone)", t_cp),
        ("matrix route: one float64 cdist + soft cardinalities in numpy", t_mr),
        ("matrix route with a float32 cdist (sums in float64)", t_m32),
    ):
        print(f"| {name} | {t:.4f} | {t / t_cd:.2f}x |")
    print()
    print(f"target: evalkit within {TARGET_CDIST_RATIO}x of one cdist: {ratio:.1f}x: {met(ratio <= TARGET_CDIST_RATIO)}")
    if ratio > TARGET_CDIST_RATIO or args.profile:
        print("\ncProfile of the evalkit call (sorted by own time):\n\n```")
        print(profile(evalkit_one, (xs, ys)))
        print("```")

    # ---------------------------------------------------------------- (b)
    start = time.perf_counter()
    reference, prediction = make_documents(args.docs, args.vocabulary, args.seed + 1)
    t_make = time.perf_counter() - start
    n_items = sum(map(len, reference)) + sum(map(len, prediction))
    n_pairs = sum((len(g) + len(p)) ** 2 for g, p in zip(reference, prediction))
    print()
    print(f"## (b) {args.docs:,} documents, vocabulary {args.vocabulary:,}, seed {args.seed + 1}")
    print()
    print(f"keywords per document: reference {np.mean([len(g) for g in reference]):.2f}, prediction "
          f"{np.mean([len(p) for p in prediction]):.2f}; {n_items:,} items, {n_pairs:,} ordered "
          f"within-document pairs (made in {t_make:.1f} s, not timed)")

    evalkit.evaluate(reference[:1000], prediction[:1000], **SOFT)  # warm-up
    t_all = t_loop = t_calls = float("inf")
    for _ in range(2):  # interleaved, the better of two each: the machine may be shared
        t, v_all = once(lambda: evalkit.evaluate(reference, prediction, **SOFT))
        t_all = min(t_all, t)
        t, loop_f1 = once(cdist_loop, reference, prediction)
        t_loop = min(t_loop, t)
        t_calls = min(t_calls, once(cdist_calls, reference, prediction)[0])
    rate = args.docs / t_all
    d_loop = abs(float(v_all["f1"]) - float(np.mean(loop_f1)))
    t_floor = pairs_floor_docs(reference, prediction)

    k = min(args.sample, args.docs)
    t_plain, plain = once(lambda: [soft_prf_py(g, p) for g, p in zip(reference[:k], prediction[:k])])
    per_doc_plain = t_plain / k
    per_doc_ev = [evalkit.evaluate([g], [p], **SOFT) for g, p in zip(reference[:k], prediction[:k])]
    d_doc = max(abs(float(e[m]) - q[i]) for e, q in zip(per_doc_ev, plain) for i, m in enumerate(METRICS))
    batch = evalkit.evaluate(reference[:k], prediction[:k], **SOFT)
    d_mean = max(abs(float(batch[m]) - np.mean([q[i] for q in plain])) for i, m in enumerate(METRICS))
    ok_b = d_doc <= ATOL and d_mean <= ATOL and d_loop <= ATOL
    ok = ok and ok_b
    print()
    print("| step | time | documents / s | per document |")
    print("|---|---:|---:|---:|")
    print(f"| evalkit.evaluate, all {args.docs:,} documents (one call) | {t_all:.2f} s | {rate:,.0f} | "
          f"{t_all / args.docs * 1e6:.1f} µs |")
    print(f"| peer loop: one rapidfuzz cdist per document + numpy | {t_loop:.2f} s | {args.docs / t_loop:,.0f} | "
          f"{t_loop / args.docs * 1e6:.1f} µs |")
    print(f"| the peer loop's cdist calls alone (no sums) | {t_calls:.2f} s | {args.docs / t_calls:,.0f} | "
          f"{t_calls / args.docs * 1e6:.1f} µs |")
    print(f"| cpdist alone over the {n_pairs:,} pairs (all ordered pairs, chunks of 16,384 documents; "
          "evalkit scores each unordered pair once) | "
          f"{t_floor:.2f} s | {args.docs / t_floor:,.0f} | {t_floor / args.docs * 1e6:.1f} µs |")
    print(f"| plain Python, first {k} documents | {t_plain:.2f} s | {1 / per_doc_plain:,.1f} | {per_doc_plain * 1e6:,.0f} µs |")
    print(f"| plain Python, extrapolated to {args.docs:,} | {per_doc_plain * args.docs:,.0f} s | | |")
    print()
    print(f"evalkit is {per_doc_plain / (t_all / args.docs):,.0f}x faster per document than the plain-Python loop.")
    print(f"target: {TARGET_DOCS:,} documents a second: {rate:,.0f}: {met(rate >= TARGET_DOCS)}; within "
          f"{TARGET_LOOP_RATIO}x of the peer loop: {t_all / t_loop:.2f}x: {met(t_all <= TARGET_LOOP_RATIO * t_loop)}")
    print(f"evalkit / the loop's cdist calls alone: {t_all / t_calls:.2f}x; the loop / its cdist calls: "
          f"{t_loop / t_calls:.2f}x")
    print("samples-averaged over all documents: " + ", ".join(f"{m} {float(v_all[m]):.6f}" for m in METRICS))
    print(f"check on the first {k} documents: per-document max |evalkit - plain| {d_doc:.1e}, "
          f"mean of the sample {d_mean:.1e}; all documents' F1 against the peer loop {d_loop:.1e} "
          f"(tolerance {ATOL:g}): {'OK' if ok_b else 'FAILED'}")
    if args.profile:
        m = min(args.docs, 16384)
        print(f"\ncProfile of evalkit.evaluate on the first {m:,} documents (one chunk), by own time:\n\n```")
        print(profile(lambda: evalkit.evaluate(reference[:m], prediction[:m], **SOFT), ()))
        print("```")

    print(f"\ncorrectness: {'OK' if ok else 'FAILED'}; total wall time {time.perf_counter() - wall:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
