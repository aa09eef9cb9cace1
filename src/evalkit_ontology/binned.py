"""Average precision from score histograms: a state of fixed size (classes x bins x 2) that
merges by ``+``, with a guaranteed bound on the exact AP.

Scores in [0, 1] fall in ``bins`` equal bins (a score of 1 in the last). Each class keeps, per
bin, the weight of its positive and of its negative clips. Taking each bin as one tie group
gives the binned AP, scikit-learn's step sum Σ (R_t − R_{t−1}) P_t with one threshold per bin:
exactly the AP of the scores rounded down to their bins.

**The bound.** Only the order of the clips inside a bin is lost. Let a bin hold positives of
weight p and negatives of weight q, below A positives and F negatives of the higher bins. The
exact step sum takes one term per tie group g of the bin, δ_g · (A + T_g) / (A + T_g + F + N_g),
with T_g ≤ p and N_g ≤ q the positive and negative weight of the bin down to that group, and
Σ δ_g = p. So:

- upper: N_g ≥ 0 and T_g ≤ p give each precision at most (A + p) / (A + p + F): the bin adds at
  most p (A + p) / (A + p + F) — all its positives ranked before its negatives;
- lower: N_g ≤ q gives precision at least h(T_g), h(x) = (A + x) / (A + x + F + q), an
  increasing function; Σ δ_g h(T_g) is a right Riemann sum of h, so at least ∫₀ᵖ h(x) dx
  = p − (F + q) ln((A + p + F + q) / (A + F + q)) — no better than the negatives all first.

Summed over bins and divided by the positive weight, they bound each class's exact AP, whatever
the scores inside the bins, ties and weights included; the binned AP, p (A + p) / (A + p + F +
q) per bin, lies between them.
"""

from __future__ import annotations

import numpy as np


def histogram(targets: np.ndarray, scores: np.ndarray, bins: int, weights: np.ndarray | None = None) -> np.ndarray:
    """(C, bins, 2) weights of the negatives ([..., 0]) and positives ([..., 1]) of each class
    whose score falls in each bin; ``targets`` 0/1 and ``scores`` in [0, 1], both (N, C)."""
    n, c = scores.shape
    index = np.minimum((scores * bins).astype(np.int64), bins - 1)  # a score of 1: the last bin
    cell = (np.arange(c)[None, :] * bins + index) * 2 + targets.astype(np.int64)
    cell_weights = None if weights is None else np.broadcast_to(weights[:, None], (n, c)).ravel()
    counts = np.bincount(cell.ravel(), weights=cell_weights, minlength=c * bins * 2)
    return counts.astype(np.float64).reshape(c, bins, 2)


def binned_average_precision(hist: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per class (C,): the binned AP and the lower and upper bounds of the exact AP (module
    docstring); 0 for a class without positive weight."""
    top_down = hist[:, ::-1, :]  # the highest scores first
    q, p = top_down[..., 0], top_down[..., 1]
    above_neg = np.cumsum(q, axis=1) - q  # F: negatives of the higher bins
    above_pos = np.cumsum(p, axis=1) - p  # A
    reached = above_pos + p
    with np.errstate(invalid="ignore", divide="ignore"):
        binned = np.where(p > 0, p * (reached / (reached + above_neg + q)), 0.0)
        upper = np.where(p > 0, p * (reached / (reached + above_neg)), 0.0)
        below = above_pos + above_neg + q  # A + F + q
        lower = np.where(below > 0, p - (above_neg + q) * np.log1p(p / np.where(below > 0, below, 1)), p)
    lower = np.clip(np.where(p > 0, lower, 0.0), 0.0, binned)  # rounding never crosses the binned term
    total = p.sum(axis=1)
    scale = np.where(total > 0, total, 1.0)
    return binned.sum(axis=1) / scale, lower.sum(axis=1) / scale, upper.sum(axis=1) / scale
