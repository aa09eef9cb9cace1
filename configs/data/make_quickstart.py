"""Make the quickstart data: soft reference labels and three systems of different quality.

The shape follows DCASE 2023 task 4B (Harju & Mesaros): one-second segments of recordings from a
few scenes, soft references from averaged crowd-sourced annotator votes, systems trained on them
emitting values in [0, 1]. Seeded, so re-running it reproduces the committed files exactly:

    python configs/data/make_quickstart.py
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

CLASSES = ["speech", "birds", "car", "footsteps", "children", "wind", "brakes", "large vehicle", "dishes", "metro"]
#: Classes that occur in each scene (others are absent there), as in MAESTRO's scenes.
SCENES = {
    "cafe": ["speech", "dishes", "footsteps", "children"],
    "street": ["speech", "car", "footsteps", "brakes", "large vehicle", "wind"],
    "park": ["birds", "children", "speech", "wind", "footsteps"],
    "metro": ["metro", "speech", "footsteps", "brakes"],
}
RECORDINGS_PER_SCENE, SECONDS = 3, 25
ANNOTATORS = 5
OUT = Path(__file__).parent / "quickstart"


def activity(rng: np.random.Generator, n: int, p_on: float, p_stay: float) -> np.ndarray:
    """A two-state Markov chain: events persist over neighbouring seconds."""
    state, out = rng.random() < p_on, np.empty(n, bool)
    for t in range(n):
        out[t] = state
        state = state if rng.random() < p_stay else rng.random() < p_on
    return out


def soft_reference(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
    """Each annotator hears an active class with probability 0.8 and imagines an inactive one
    with probability 0.08; the soft label is the mean vote, so values are multiples of 0.2."""
    p_vote = np.where(truth, 0.8, 0.08)
    votes = rng.random((ANNOTATORS, *truth.shape)) < p_vote
    return votes.mean(axis=0)


def system(rng: np.random.Generator, reference: np.ndarray, noise: float, bias: float, smear: int) -> np.ndarray:
    """A trained system: tracks the reference with noise and a bias, smoothed over time."""
    out = reference + bias + rng.normal(0, noise, reference.shape)
    if smear > 1:
        kernel = np.ones(smear) / smear
        out = np.apply_along_axis(lambda c: np.convolve(c, kernel, mode="same"), 0, out)
    return np.clip(out, 0, 1)


def write(path: Path, ids: list[str], values: np.ndarray) -> None:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["segment", *CLASSES])
        for sample, row in zip(ids, values):
            writer.writerow([sample, *(f"{v:.3f}" for v in row)])


def main() -> None:
    rng = np.random.default_rng(2023)
    ids, truth = [], []
    for scene, present in SCENES.items():
        for recording in range(1, RECORDINGS_PER_SCENE + 1):
            block = np.zeros((SECONDS, len(CLASSES)), bool)
            for name in present:
                block[:, CLASSES.index(name)] = activity(rng, SECONDS, p_on=0.35, p_stay=0.85)
            truth.append(block)
            ids += [f"{scene}{recording:02d}_{second:03d}" for second in range(SECONDS)]
    truth = np.concatenate(truth)
    reference = soft_reference(rng, truth)
    OUT.mkdir(exist_ok=True)
    write(OUT / "reference.csv", ids, reference)
    systems = {
        "dwsnet": system(rng, reference, noise=0.10, bias=0.0, smear=1),
        "baseline": system(rng, reference, noise=0.16, bias=0.02, smear=3),
        "tiny": system(rng, reference, noise=0.22, bias=0.05, smear=5),
    }
    for name, values in systems.items():
        write(OUT / f"{name}.csv", ids, values)
    print(f"wrote {len(ids)} segments x {len(CLASSES)} classes to {OUT}")


if __name__ == "__main__":
    main()
