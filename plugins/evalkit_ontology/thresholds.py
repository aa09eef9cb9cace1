"""The best F with a class-wise optimal decision threshold: sed_scores_eval's ``best_fscore``, the
"Hard / OT" column of Harju & Mesaros's Table 2.

For each class, every distinct score is tried as a threshold (a sample is detected when its
score is at least the threshold); the class's F_β is the largest over them (0 if nothing
detected is best), and its threshold is reported centred between the lowest detected score and
the next smaller score (−inf when every sample is detected). ``best_fscore`` is the mean over
classes; ``best_fscore_micro`` the F_β of the true and false positives summed over the classes
at their own thresholds. Like ``map`` it needs every score (``ranks = True``: any finite scores).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import Array, PerClass
from evalkit_ontology.metrics import _RankingMetric


class BestFParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    beta: float = Field(1.0, gt=0, allow_inf_nan=False, description="weight of recall against precision")


class BestFScore(_RankingMetric[BestFParams]):
    """The best F_β per class over decision thresholds, its mean over classes, the micro F at
    those thresholds, and the thresholds: ``best_fscore``, ``best_fscore_micro``,
    ``best_fscore_per_class``, ``best_fscore_threshold``. A class without a positive sample has
    no recall: its F and threshold are NaN, and it is left out of the mean."""

    name = "best_fscore"
    Params = BestFParams
    weighted = False

    def score(self, targets: Array, scores: Array, weights: Array | None) -> dict[str, Any]:
        best = [self._best(targets[:, c] != 0, scores[:, c]) for c in range(targets.shape[1])]
        f, threshold, tp, detected = (np.array(column, dtype=np.float64) for column in zip(*best))
        positives = (targets != 0).sum(axis=0)
        defined = positives > 0
        beta2 = self.params.beta**2
        micro = (1 + beta2) * tp[defined].sum() / max(beta2 * positives[defined].sum() + detected[defined].sum(), 1e-15)
        return {
            "best_fscore": float(f[defined].mean()) if defined.any() else np.nan,
            "best_fscore_micro": float(micro) if defined.any() else np.nan,
            "best_fscore_per_class": PerClass(np.where(defined, f, np.nan)),
            "best_fscore_threshold": PerClass(np.where(defined, threshold, np.nan)),
        }

    def _best(self, positive: Array, scores: Array) -> tuple[float, float, float, float]:
        """(F, threshold, true positives, detections) at the best threshold of one class."""
        order = np.argsort(-scores, kind="stable")
        ranked, hits = scores[order], positive[order]
        last = np.flatnonzero(np.r_[ranked[1:] != ranked[:-1], True])  # the last sample of each distinct score
        tp = np.cumsum(hits)[last].astype(np.float64)
        detected = (last + 1).astype(np.float64)
        n = float(positive.sum())
        if n == 0:
            return np.nan, np.nan, 0.0, 0.0
        beta2 = self.params.beta**2
        precision, recall = tp / detected, tp / n
        f = (1 + beta2) * precision * recall / np.maximum(beta2 * precision + recall, 1e-15)
        if not len(f) or f.max() <= 0:  # detecting nothing is as good: no threshold below inf
            return 0.0, np.inf, 0.0, 0.0
        k = int(np.argmax(f))  # the highest threshold among the best
        lower = ranked[last[k] + 1] if last[k] + 1 < len(ranked) else -np.inf
        return float(f[k]), float((ranked[last[k]] + lower) / 2), float(tp[k]), float(detected[k])
