"""Segment-based measures over every threshold from score series, on sed_scores_eval's grid.

sed_scores_eval's ``segment_based`` cuts each file into segments of ``segment_length`` seconds,
``ceil(duration / segment_length)`` of them (the duration from ``durations:``, else the later of
the last score frame and the last reference offset), boundaries rounded to ``time_decimals``. A
segment's score is the highest of the frames overlapping it (0 for a segment past the last
frame), and it is a positive of a class when a reference event of the class overlaps it. Over
every threshold, its best F (a threshold per class), ROC area, average precision and the F at a
given threshold follow (:mod:`evalkit_segments.operating_points`).

The state is, per class and distinct segment score, how many positive (TP) and negative (FP)
segments score it (:class:`~evalkit_segments.psds.Counts`): it adds up across files, so a
streamed or Dask run takes these measures, and it grows with the distinct scores, not the files.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import BaseComponent, DataError, ItemSets, PerClass, ScoreSeries
from evalkit_segments.durations import Durations, DurationsSpec, ReadsDurations, durations_field
from evalkit_segments.intervals import cell_intervals
from evalkit_segments.operating_points import (
    BETA,
    MIN_PRECISION,
    MIN_RECALL,
    ClassThresholds,
    Operating,
    Threshold,
    error_rates,
    fscores,
)
from evalkit_segments.psds import Counts

AT_THRESHOLD = Field(
    None, description="also the F (or error rates) at this decision threshold (detected: scoring above it), one for "
    "all classes or one per class by name ({Speech: 0.4, Dog: 0.6}: e.g. the best thresholds of a development set), "
    "as sed_scores_eval's fscore (error_rate); -inf detects every frame, inf none",
)
TIME_DECIMALS = Field(6, ge=0, le=12, description="times are compared rounded to this many decimals")


class SegmentGridParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    segment_length: float = Field(1.0, gt=0, allow_inf_nan=False, description="seconds per segment of the grid")
    durations: DurationsSpec = durations_field(
        "each file's grid ends there; without it at the later of its last score frame and its last reference offset"
    )
    time_decimals: int = TIME_DECIMALS
    threshold: Threshold | dict[str, Threshold] | None = AT_THRESHOLD


G = TypeVar("G", bound=SegmentGridParams)


class SegmentBasedParams(SegmentGridParams):
    beta: float = BETA
    min_precision: float = MIN_PRECISION
    min_recall: float = MIN_RECALL
    max_fpr: float | None = Field(
        None, gt=0, le=1, allow_inf_nan=False, description="the ROC's partial area up to this FP rate, divided by it",
    )


class SegmentCounts(ReadsDurations, ClassThresholds, BaseComponent[G]):
    """The state of the segment-based measures: per class and segment score, the positive and
    negative segments (the module's)."""

    data = "items"

    def __init__(self, params: G) -> None:
        super().__init__(params)
        self.durations = Durations(params.durations, self.name) if params.durations is not None else None

    def update(self, reference: ItemSets, prediction: ItemSets) -> Counts:
        series = prediction.samples
        if not isinstance(series, ScoreSeries):
            raise DataError(
                f"{prediction.source}: {self.name} reads a system's scores over time (a folder of score files, "
                "loader sed_scores), not an event list"
            )
        p = self.params
        n_classes = len(reference.classes)
        cell, onset, offset = cell_intervals(reference)
        first, stop = series.bounds()
        frame_on, frame_off = np.round(series.onset, p.time_decimals), np.round(series.offset, p.time_decimals)
        ends = np.r_[frame_off, 0.0][np.where(stop > first, stop - 1, -1)]  # each file's last frame end, or 0
        if self.durations is None:
            last_offset = np.zeros(series.n_samples)
            np.maximum.at(last_offset, cell // n_classes, offset)
            duration = np.maximum(ends, last_offset)
        else:
            duration = self.durations.of([reference.sample_name(row) for row in range(len(reference))], reference.source)
        n_segments = np.ceil(duration / p.segment_length).astype(np.int64)
        grid = np.round(np.arange(int(n_segments.max(initial=0)) + 1) * p.segment_length, p.time_decimals)
        start = np.cumsum(n_segments) - n_segments  # each file's first segment among all
        pooled = _pooled(series, frame_on, frame_off, grid, n_segments, start)
        positive = np.zeros((int(n_segments.sum()) + 1, n_classes), np.int64)
        file = cell // n_classes
        low = np.searchsorted(grid[1:], onset, side="right")  # segments j with grid[j+1] > onset ...
        high = np.minimum(np.searchsorted(grid, offset, side="left"), n_segments[file])  # ... and grid[j] < offset
        some = low < high
        klass = cell[some] % n_classes
        np.add.at(positive, (start[file[some]] + low[some], klass), 1)
        np.add.at(positive, (start[file[some]] + high[some], klass), -1)
        hit = np.cumsum(positive[:-1], axis=0) > 0
        klass = np.broadcast_to(np.arange(n_classes), hit.shape).ravel()
        change = np.column_stack([hit.ravel(), ~hit.ravel()]).astype(np.float64)
        n_ref = hit.sum(axis=0).astype(np.float64)
        return Counts.of(klass, pooled.ravel(), change, n_ref, np.zeros(n_classes), 0.0)


class SegmentBased(SegmentCounts[SegmentBasedParams]):
    """sed_scores_eval's segment-based measures from score series against event lists: the best
    F with class-wise thresholds, the ROC area, average precision, and F at a threshold."""

    name = "segment_based"
    Params = SegmentBasedParams
    glossary = {
        "segment_best_fscore": "Segment-based F with each class at its own best threshold, averaged over classes "
                               "(an optimistic bound: the thresholds are chosen on the data scored).",
        "segment_best_fscore_micro": "Segment-based F of the counts summed over classes, each at its best threshold.",
        "segment_best_fscore_per_class": "Each class's best segment-based F over thresholds.",
        "segment_best_fscore_threshold": "The threshold of each class's best segment-based F (-inf: all detected).",
        "segment_fscore": "Segment-based F at the given threshold, averaged over classes.",
        "segment_fscore_micro": "Segment-based F at the given threshold of the counts summed over classes.",
        "segment_fscore_per_class": "Each class's segment-based F at the given threshold.",
        "segment_auroc": "Area under each class's segment-based ROC curve, averaged over classes (0.5 is chance).",
        "segment_auroc_per_class": "Each class's area under its segment-based ROC curve.",
        "segment_ap": "Segment-based average precision, averaged over classes.",
        "segment_ap_per_class": "Each class's segment-based average precision.",
    }

    def compute(self, state: Counts) -> dict[str, Any]:
        p = self.params
        out = fscores("segment_best_fscore", state, p.beta, None, p.min_precision, p.min_recall)
        if self.thresholds is not None:
            out |= fscores("segment_fscore", state, p.beta, self.thresholds)
        n = len(state.n_ref)
        auroc, ap = np.full(n, np.nan), np.full(n, np.nan)
        negative = np.bincount(state.klass, weights=state.change[:, 1], minlength=n)
        for c in np.flatnonzero(state.n_ref > 0):
            points = Operating.of(state, int(c))
            ap[c] = points.average_precision()
            if negative[c] > 0:
                auroc[c] = points.auroc(negative[c], p.max_fpr)
        return out | {
            "segment_auroc": _mean(auroc), "segment_auroc_per_class": PerClass(auroc),
            "segment_ap": _mean(ap), "segment_ap_per_class": PerClass(ap),
        }


class SegmentErrorRate(SegmentCounts[SegmentGridParams]):
    """sed_scores_eval's segment-based error rates from score series against event lists: each
    class's lowest error rate over thresholds (``best_error_rate``) and, given a threshold, the
    rates there (``error_rate``); a class alone has no substitutions."""

    name = "segment_error_rate"
    Params = SegmentGridParams
    lower_is_better = (
        "segment_best_error_rate",
        "segment_best_insertion_rate",
        "segment_best_deletion_rate",
        "segment_error_rate",
        "segment_insertion_rate",
        "segment_deletion_rate",
    )  # the rates, not their thresholds
    glossary = {
        "segment_best_error_rate": "Each class's lowest segment-based error rate ((insertions + deletions) / positive "
                                   "segments) over thresholds, averaged over classes (an optimistic bound).",
        "segment_best_error_rate_per_class": "Each class's lowest segment-based error rate over thresholds.",
        "segment_best_error_rate_threshold": "The threshold of each class's lowest segment-based error rate (-inf: all "
                                             "detected).",
        "segment_best_insertion_rate": "The insertion rate at each class's lowest error rate, averaged over classes.",
        "segment_best_insertion_rate_per_class": "Each class's insertion rate at its lowest error rate.",
        "segment_best_deletion_rate": "The deletion rate at each class's lowest error rate, averaged over classes.",
        "segment_best_deletion_rate_per_class": "Each class's deletion rate at its lowest error rate.",
        "segment_error_rate": "Segment-based error rate at the given threshold, averaged over classes.",
        "segment_error_rate_per_class": "Each class's segment-based error rate at the given threshold.",
        "segment_insertion_rate": "False positive segments per positive segment at the threshold, averaged over classes.",
        "segment_insertion_rate_per_class": "Each class's false positive segments per positive segment at the threshold.",
        "segment_deletion_rate": "Missed positive segments per positive segment at the threshold, averaged over classes.",
        "segment_deletion_rate_per_class": "Each class's share of missed positive segments at the threshold.",
    }

    def compute(self, state: Counts) -> dict[str, Any]:
        return error_rates("segment", state, self.thresholds)


def _mean(values: np.ndarray) -> float:
    return float(np.nanmean(values)) if not np.isnan(values).all() else np.nan


def _pooled(
    series: ScoreSeries, frame_on: np.ndarray, frame_off: np.ndarray, grid: np.ndarray, n_segments: np.ndarray,
    start: np.ndarray,
) -> np.ndarray:
    """Each segment's score per class, (segments, classes): the highest of the frames that
    overlap it (times rounded, as sed_scores_eval rounds a file's timestamps), 0 where none does."""
    low = np.searchsorted(grid[1:], frame_on, side="right")  # the first segment ending after the frame starts
    high = np.minimum(np.searchsorted(grid, frame_off, side="left"), n_segments[series.sample])  # past the last
    pooled = np.zeros((int(n_segments.sum()), series.n_classes))
    covered = np.zeros(len(pooled), bool)
    for k in range(int((high - low).max(initial=0))):  # a frame overlaps segments low .. high - 1
        inside = np.flatnonzero(low + k < high)
        at = start[series.sample[inside]] + low[inside] + k  # rising: frames are in time order, files in turn
        first = np.flatnonzero(np.r_[True, at[1:] != at[:-1]])
        highest = np.maximum.reduceat(series.scores[inside], first, axis=0)
        at = at[first]
        pooled[at] = np.where(covered[at, None], np.maximum(pooled[at], highest), highest)
        covered[at] = True
    return pooled
