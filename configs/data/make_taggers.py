"""Make synthetic AudioSet tagging data: multi-label targets and two taggers' scores.

Targets, over the 527 AudioSet classes (``audioset/class_labels_indices.csv``, hop distances in
``audioset/ontology.json``): balanced like AudioSet's evaluation set, each class is the first
label of about N / 527 clips; each clip has 1 + Poisson(1) labels (at most 6, about two on
average), a further label being, with probability 0.6, a class within two hops of a label
already drawn (Speech with Male speech, Music with Guitar) and otherwise a draw with Zipf-like
class frequency (p ∝ rank^-1.1).

Scores, float32 like model outputs: a sigmoid of 3.15·label + confusion + 0.4·log(class frequency
· C) − 3.5 + N(0, 1). The two taggers differ only in where their confusions go:

- ``near_miss`` confuses ontology neighbours: a negative at distance d from the clip's nearest
  label gets 2.5·exp(1 − d) (2.5 for a parent or child, 0.9 two hops away);
- ``far_miss`` spreads the very same confusion values over the clip's negatives at random.

So both rank equally well on average (about the same mAP), but ``near_miss``'s false positives
lie close to the truth, which OmAP forgives, and ``far_miss``'s do not. With N = 20,000 these
constants give mAP 0.43, OmAP 0.76 and OmAP₀ 0.57 for ``near_miss`` (PANN in Liu et al.'s
Table 1: 0.43, 0.77, 0.54). ``benchmarks/bench_omap.py`` uses the same generator. Seeded, so
re-running writes the same files:

    python configs/data/make_taggers.py [OUT_DIR] [--clips N]
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
CLIPS = 1054  # two first labels per class
SEED = 2023


def audioset_classes() -> list[str]:
    with (HERE / "audioset" / "class_labels_indices.csv").open(newline="", encoding="utf-8") as handle:
        return [row["mid"] for row in csv.DictReader(handle)]


def min_label_distance(targets: np.ndarray, distances: np.ndarray) -> np.ndarray:
    """(N, C): the distance from each class to the nearest label of each clip."""
    out = np.full(targets.shape, np.inf)
    rows, cols = np.nonzero(targets)
    for k in np.unique(cols):
        r = rows[cols == k]
        out[r] = np.minimum(out[r], distances[k])
    return out


def class_frequency(n_classes: int, rng: np.random.Generator) -> np.ndarray:
    """Zipf-like class frequencies (p ∝ rank^-1.1), in a random class order."""
    freq = 1.0 / rng.permutation(np.arange(1, n_classes + 1)) ** 1.1
    return freq / freq.sum()


def simulate_targets(n_clips: int, distances: np.ndarray, freq: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(N, C) boolean targets: balanced first labels, further ones near a label or by frequency."""
    n_classes = distances.shape[0]
    near = [np.flatnonzero((distances[c] > 0) & (distances[c] <= 2)) for c in range(n_classes)]
    first = rng.permutation(np.resize(rng.permutation(n_classes), n_clips))
    n_labels = np.minimum(1 + rng.poisson(1.0, n_clips), 6)
    y = np.zeros((n_clips, n_classes), dtype=bool)
    for n in range(n_clips):
        labels = [first[n]]
        for _ in range(n_labels[n] - 1):
            anchor = near[labels[rng.integers(len(labels))]]
            if rng.random() < 0.6 and anchor.size:
                c = anchor[rng.integers(anchor.size)]
            else:
                c = rng.choice(n_classes, p=freq)
            if c not in labels:
                labels.append(c)
        y[n, labels] = True
    return y


def simulate_scores(
    targets: np.ndarray, distances: np.ndarray, freq: np.ndarray, rng: np.random.Generator, *, near: bool = True
) -> np.ndarray:
    """(N, C) float32 scores whose confusions fall near the clip's labels (``near``) or anywhere."""
    n_classes = targets.shape[1]
    confusion = np.where(targets, 0.0, 2.5 * np.exp(1.0 - min_label_distance(targets, distances)))
    if not near:  # the same values, moved to random negatives of the same clip
        for n in range(len(targets)):
            negatives = np.flatnonzero(~targets[n])
            confusion[n, negatives] = confusion[n, rng.permutation(negatives)]
    logit = (
        3.15 * targets + confusion + 0.4 * np.log(freq * n_classes)[None, :] - 3.5
        + rng.standard_normal(targets.shape)
    )
    return (1.0 / (1.0 + np.exp(-logit))).astype(np.float32)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=HERE / "taggers")
    parser.add_argument("--clips", type=int, default=CLIPS)
    args = parser.parse_args(argv)

    from evalkit_ontology import load_ontology

    mids = audioset_classes()
    distances = load_ontology(HERE / "audioset" / "ontology.json").distances(mids)
    rng = np.random.default_rng(SEED)
    freq = class_frequency(len(mids), rng)
    targets = simulate_targets(args.clips, distances, freq, rng)
    ids = np.array([f"clip{n:05d}" for n in range(args.clips)])
    args.out.mkdir(parents=True, exist_ok=True)
    common = {"classes": np.array(mids), "ids": ids}
    np.savez_compressed(args.out / "targets.npz", values=targets.astype(np.uint8), **common)
    for name, near in (("near_miss", True), ("far_miss", False)):
        scores = simulate_scores(targets, distances, freq, rng, near=near)
        # four decimals, as scores written to text usually are (ties are handled like any other)
        np.savez_compressed(args.out / f"{name}.npz", values=np.round(scores, 4), **common)
    print(f"wrote targets and 2 taggers ({args.clips} clips x {len(mids)} classes, "
          f"{targets.sum(axis=1).mean():.2f} labels per clip) to {args.out}")


if __name__ == "__main__":
    main()
