"""Benchmark: segment-length precision / recall / F1 of 1,000,000 reference and 1,000,000
predicted events over 1,000 files and 20 classes, against a numpy frame-based computation at
10 ms resolution in the same run.

    python benchmarks/bench_segments.py [--events N] [--files F] [--classes C] [--repeat K]

Events are seeded: per (file, class) cell about N / (F·C) events of 0.05–2 s in a file of 60 s
(so a 10 ms frame grid of every cell fits in memory); predictions shift each boundary by
N(0, 0.1 s) and drop or add 10% of the events.
The data are built as evalkit ItemSets before timing (building Python tuples is not timed).
The frame baseline renders every cell's merged intervals on a 10 ms grid with numpy (np.add.at
of +1/-1 boundary steps and a cumulative sum per cell row) and counts frames; it is an
approximation (±one frame per boundary), so the script also reports its difference.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
from timing import best_time, met

import evalkit
from evalkit.items import ItemSets

TARGET_SECONDS = 2.0
METRICS = ["precision", "recall", "f1"]


def make_events(n: int, files: int, classes: int, seed: int, duration: float = 60.0):
    rng = np.random.default_rng(seed)
    cell = rng.integers(0, files * classes, n)
    onset = rng.uniform(0, duration - 2, n)
    offset = onset + rng.uniform(0.05, 2.0, n)
    keep = rng.random(n) > 0.1
    p_on = np.clip(onset[keep] + rng.normal(0, 0.1, keep.sum()), 0, duration)
    p_off = np.maximum(np.clip(offset[keep] + rng.normal(0, 0.1, keep.sum()), 0, duration), p_on)
    extra = n - keep.sum()
    p_cell = np.concatenate([cell[keep], rng.integers(0, files * classes, extra)])
    e_on = rng.uniform(0, duration - 2, extra)
    p_on = np.concatenate([p_on, e_on])
    p_off = np.concatenate([p_off, e_on + rng.uniform(0.05, 2.0, extra)])
    return (cell, onset, offset), (p_cell, p_on, p_off)


def item_sets(events, files: int, classes: int) -> ItemSets:
    cell, onset, offset = events
    grid = [[[] for _ in range(classes)] for _ in range(files)]
    for c, on, off in zip(cell.tolist(), onset.tolist(), offset.tolist()):
        grid[c // classes][c % classes].append((on, off))
    return ItemSets(
        tuple(tuple(map(tuple, row)) for row in grid), tuple(f"c{k}" for k in range(classes)),
        tuple(f"f{k}" for k in range(files)),
    )


def frame_baseline(ref, pred, n_cells: int, resolution: float = 0.01, duration: float = 60.0):
    """Micro P/R/F from frames: each cell a row of duration / resolution frames."""
    n_frames = int(round(duration / resolution)) + 1

    def active(events) -> np.ndarray:
        cell, onset, offset = events
        steps = np.zeros((n_cells, n_frames + 1), dtype=np.int16)
        np.add.at(steps, (cell, np.round(onset / resolution).astype(np.int64)), 1)
        np.add.at(steps, (cell, np.round(offset / resolution).astype(np.int64)), -1)
        return np.cumsum(steps, axis=1)[:, :-1] > 0

    r, p = active(ref), active(pred)
    tp = np.count_nonzero(r & p)
    n_ref, n_pred = np.count_nonzero(r), np.count_nonzero(p)
    return {"precision": tp / n_pred, "recall": tp / n_ref, "f1": 2 * tp / (n_ref + n_pred)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--classes", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=2015)
    args = parser.parse_args()
    print("# bench_segments")
    print(f"python {platform.python_version()}, numpy {np.__version__}, evalkit {evalkit.__version__}, nproc {os.cpu_count()}")
    ref_events, pred_events = make_events(args.events, args.files, args.classes, args.seed)
    start = time.perf_counter()
    reference = item_sets(ref_events, args.files, args.classes)
    prediction = item_sets(pred_events, args.files, args.classes)
    print(f"data: {args.events:,} reference and {len(pred_events[0]):,} predicted events, {args.files} files x "
          f"{args.classes} classes (ItemSets built in {time.perf_counter() - start:.1f} s, not timed)")
    n_cells = args.files * args.classes

    def ours():
        return evalkit.evaluate(reference, prediction, representation="segments", averaging="micro", metrics=METRICS)

    t_ours, v_ours = best_time(ours, (), args.repeat)
    t_frames, v_frames = best_time(frame_baseline, (ref_events, pred_events, n_cells), args.repeat)
    print("\n| step | time (s) | precision | recall | f1 |\n|---|---:|---:|---:|---:|")
    print(f"| evalkit segments (exact sweep) | {t_ours:.2f} | " + " | ".join(f"{v_ours[m]:.6f}" for m in METRICS) + " |")
    print(f"| numpy frames at 10 ms | {t_frames:.2f} | " + " | ".join(f"{v_frames[m]:.6f}" for m in METRICS) + " |")
    diff = max(abs(v_ours[m] - v_frames[m]) for m in METRICS)
    print(f"\nlargest difference to the 10 ms frames: {diff:.2e} (frames round each boundary to 10 ms)")
    print(f"target: under {TARGET_SECONDS:g} s: {t_ours:.2f} s: {met(t_ours < TARGET_SECONDS)}; "
          f"faster than frames: {t_frames / t_ours:.1f}x: {met(t_ours < t_frames)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
