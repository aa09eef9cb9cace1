"""Benchmark: OmAP over all coarse levels on 20,000 clips x 527 AudioSet classes.

Run as a script from the repository root, not as a test::

    python benchmarks/bench_omap.py [--clips N] [--repeat K] [--sklearn-repeat K] [--profile]

Distances: the AudioSet ontology (``../shared/data/audioset_ontology.json``: all 632 nodes, one
undirected edge per ``child_ids`` entry, no virtual root), hop counts by
``scipy.sparse.csgraph.shortest_path`` (unweighted, undirected), restricted to the 527 classes in
the order of ``audioset_class_labels_indices.csv`` -- the matrix the authors ship (D_max = 21,
22 levels). With ``--random-tree`` (or if those files are missing) a seeded random tree of 632
nodes is used instead.

Data (seeded, not timed): the generator of ``configs/data/make_taggers.py`` (its ``near_miss``
tagger): 1 + Poisson(1) labels per clip (mean about 2), first labels balanced over the classes,
further ones near a label or by Zipf-like frequency; float32 scores that confuse ontology
neighbours. At 20,000 clips: mAP ≈ 0.42, OmAP ≈ 0.76, OmAP_0 ≈ 0.54, close to the paper's
Table 1 (PANN: 43.3, 76.7, 54.3).

Timed, each best of K after one untimed warm-up, on the same matrices:

1. ``evalkit_ontology.omap.omap``: OmAP, OmAP_0, all 22 per-level values and the 22 x 527 APs.
2. scikit-learn ``average_precision_score(targets, scores, average="macro")``: plain mAP, the
   floor (one AP pass over the classes). Target: OmAP under 10 s on 2 cores; the ratio is
   reported.
3. ``evalkit_ontology.omap.average_precision`` (plain AP, same code path as OmAP without levels).
4. A per-class numpy loop (one argsort per class, then per level a weighted cumulative sum, as
   the authors' ``_binary_clf_curve`` does per class and level, but with the clip weights taken
   from a precomputed minimum-distance matrix instead of the authors' numba loop over clips).
   It is also the correctness check: OmAP must equal it to 1e-9, and evalkit's mAP must equal
   scikit-learn's to 1e-12.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from timing import best_time, met, peak_memory, profile

from evalkit_ontology.omap import average_precision, omap

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "configs" / "data"))
from make_taggers import class_frequency, min_label_distance, simulate_scores, simulate_targets  # noqa: E402

TARGET_SECONDS = 10.0
DATA = ROOT.parent / "shared" / "data"


# ------------------------------------------------------------------------------ distances


def audioset_distances(ontology: Path, labels_csv: Path) -> np.ndarray:
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    nodes = json.loads(ontology.read_text(encoding="utf-8"))
    index = {node["id"]: i for i, node in enumerate(nodes)}
    edges = [(index[node["id"]], index[child]) for node in nodes for child in node["child_ids"]]
    src, dst = np.array(edges).T
    graph = coo_matrix((np.ones(src.size), (src, dst)), shape=(len(nodes),) * 2).tocsr()
    dist = shortest_path(graph, directed=False, unweighted=True)
    with labels_csv.open(newline="", encoding="utf-8") as fh:
        mids = [row["mid"] for row in csv.DictReader(fh)]
    cls = np.array([index[m] for m in mids])
    return dist[np.ix_(cls, cls)]


def random_tree_distances(n_nodes: int, n_classes: int, rng: np.random.Generator) -> np.ndarray:
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    child = np.arange(1, n_nodes)
    parent = (rng.random(n_nodes - 1) * child).astype(np.int64)
    graph = coo_matrix((np.ones(child.size), (parent, child)), shape=(n_nodes, n_nodes)).tocsr()
    dist = shortest_path(graph, directed=False, unweighted=True)
    cls = np.sort(rng.choice(n_nodes, n_classes, replace=False))
    return dist[np.ix_(cls, cls)]


# ----------------------------------------------------------------------------------- data


def make_data(n_clips: int, d: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Targets and ``near_miss`` scores from the taggers config's generator."""
    rng = np.random.default_rng(seed)
    freq = class_frequency(d.shape[0], rng)
    y = simulate_targets(n_clips, d, freq, rng)
    return y, simulate_scores(y, d, freq, rng, near=True)


# ------------------------------------------------------------------------------ baselines


def sklearn_macro(y: np.ndarray, s: np.ndarray) -> float:
    from sklearn.metrics import average_precision_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # classes without positives (AP 0, with a warning)
        return float(average_precision_score(y, s, average="macro"))


def per_class_loop(y: np.ndarray, s: np.ndarray, d: np.ndarray) -> np.ndarray:
    """(L, C) OmAP APs: per class one sort, per level a weighted cumulative FP sum (numpy)."""
    n_classes = d.shape[0]
    levels = np.arange(int(d.max()) + 1)
    off = ~np.eye(n_classes, dtype=bool)
    mus = [np.where(d > lam, d, 0.0)[off].mean() for lam in levels]
    dmin = min_label_distance(y, d)
    ap = np.zeros((levels.size, n_classes))
    for c in range(n_classes):
        order = np.argsort(s[:, c], kind="mergesort")[::-1]
        yc, sc, dc = y[order, c], s[order, c], dmin[order, c]
        n_pos = yc.sum()
        if n_pos == 0:
            continue
        ends = np.r_[np.flatnonzero(np.diff(sc)), yc.size - 1]
        tps = np.cumsum(yc)[ends]
        recall = tps / n_pos
        step = np.diff(np.r_[0.0, recall])
        for lam in levels:
            w = np.where(dc > lam, dc, 0.0)
            w = w / mus[lam] if mus[lam] > 1e-9 else w
            fps = np.cumsum(np.where(yc, 0.0, w))[ends]
            with np.errstate(invalid="ignore", divide="ignore"):
                precision = np.where(tps > 0, tps / (tps + fps), 0.0)
            ap[lam, c] = np.sum(step * precision)
    return ap


# ----------------------------------------------------------------------------- reporting


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3, help="repeats for evalkit; best is kept")
    parser.add_argument("--sklearn-repeat", type=int, default=2, help="repeats for scikit-learn and the loop")
    parser.add_argument("--seed", type=int, default=20240501)
    parser.add_argument("--random-tree", action="store_true", help="random tree instead of AudioSet")
    parser.add_argument("--profile", action="store_true", help="cProfile one omap call")
    args = parser.parse_args(argv)
    wall = time.perf_counter()

    ontology, labels_csv = DATA / "audioset_ontology.json", DATA / "audioset_class_labels_indices.csv"
    if not args.random_tree and ontology.exists() and labels_csv.exists():
        t0 = time.perf_counter()
        d = audioset_distances(ontology, labels_csv)
        source = f"AudioSet ontology (632 nodes, 527 classes; built in {time.perf_counter() - t0:.2f} s)"
    else:
        d = random_tree_distances(632, 527, np.random.default_rng(args.seed))
        source = "random tree of 632 nodes, 527 of them classes"
    t0 = time.perf_counter()
    y, s = make_data(args.clips, d, args.seed)
    t_data = time.perf_counter() - t0

    import sklearn

    print("# bench_omap")
    print(f"python {platform.python_version()}, numpy {np.__version__}, scikit-learn {sklearn.__version__}, "
          f"nproc {os.cpu_count()}")
    off = d[~np.eye(d.shape[0], dtype=bool)]
    print(f"distances: {source}; D_max {int(d.max())}, off-diagonal mean {off.mean():.4f}, "
          f"{int(d.max()) + 1} levels")
    print(f"data: {y.shape[0]:,} clips x {y.shape[1]} classes, seed {args.seed}, "
          f"{y.sum(axis=1).mean():.2f} labels per clip, {int((y.sum(axis=0) > 0).sum())} classes with a "
          f"positive, scores float32 (generated in {t_data:.1f} s, not timed)")

    t_omap, out = best_time(omap, (y, s, d), args.repeat)
    t_ap, ap = best_time(average_precision, (y, s), args.repeat)
    t_sk, sk_map = best_time(sklearn_macro, (y, s), args.sklearn_repeat)
    t_loop, loop_ap = best_time(per_class_loop, (y, s, d), args.sklearn_repeat)
    m_omap = peak_memory(omap, (y, s, d))

    d_map = abs(ap.mean() - sk_map)
    d_omap = float(np.max(np.abs(out["ap_per_level"] - loop_ap)))
    d_levels = float(np.max(np.abs(out["omap_per_level"] - loop_ap.mean(axis=1))))
    ok = d_map <= 1e-12 and d_omap <= 1e-9 and d_levels <= 1e-9
    print()
    print("## Values")
    print()
    print(f"mAP (scikit-learn macro) {sk_map:.6f}; evalkit mAP {ap.mean():.6f} (difference {d_map:.1e}); "
          f"OmAP {out['omap']:.6f}; OmAP_0 {out['omap_lambda0']:.6f}")
    print("OmAP per level: " + " ".join(f"{v:.4f}" for v in out["omap_per_level"]))
    print(f"OmAP vs. the per-class loop: max |AP difference| over {loop_ap.shape[0]} x {loop_ap.shape[1]} {d_omap:.1e}, "
          f"per level {d_levels:.1e} (tolerance 1e-9)")
    print("correctness:", "OK" if ok else "FAILED")
    print()
    print(f"## Timings (best of {args.repeat}; scikit-learn and the loop best of {args.sklearn_repeat})")
    print()
    print("| step | time (s) | / scikit-learn macro mAP |")
    print("|---|---:|---:|")
    for name, t in (
        (f"evalkit `omap`: all {out['omap_per_level'].size} levels, 527 classes", t_omap),
        ("evalkit `average_precision` (plain AP per class)", t_ap),
        ("scikit-learn `average_precision_score(average=\"macro\")` (floor)", t_sk),
        ("per-class numpy loop, all levels (check)", t_loop),
    ):
        print(f"| {name} | {t:.3f} | {t / t_sk:.2f}x |")
    print()
    print(f"peak memory allocated during one omap call: {m_omap / 1e6:.0f} MB "
          f"(inputs: targets {y.nbytes / 1e6:.1f} MB + scores {s.nbytes / 1e6:.1f} MB)")
    print()
    print(f"target: OmAP over all levels under {TARGET_SECONDS:g} s: {t_omap:.2f} s: {met(t_omap < TARGET_SECONDS)}; "
          f"ratio to scikit-learn's macro mAP: {t_omap / t_sk:.2f}x")
    if args.profile:
        print("\n## cProfile: one omap call (sorted by own time)\n")
        print("```")
        print(profile(omap, (y, s, d)).strip())
        print("```")
    print(f"\ntotal wall time {time.perf_counter() - wall:.1f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
