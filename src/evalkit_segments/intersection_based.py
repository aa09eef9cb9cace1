"""Intersection-based F from score series: sed_scores_eval's ``intersection_based.fscore`` and
``best_fscore``.

A detection (a run of frames scoring above the threshold) is a true positive when at least
``dtc_threshold`` of it overlaps the class's reference events, and a reference event is detected
when such detections cover at least ``gtc_threshold`` of it (Bilen et al., "A Framework for the
Robust Evaluation of Sound Event Detection", ICASSP 2020). The counts over every threshold are
PSDS's (:meth:`evalkit_segments.psds.PSDS.counts`, without cross-triggers): TPs and FPs per class
and distinct score, which add up across files, so a streamed or Dask run takes them.

sed_scores_eval keeps every score at which some file's counts change, also where the changes of
two files cancel (and, in a file without reference events of the class, every score where a
frame starts or ends a detection), and centres a best threshold between its score and the next
lower one kept. So the counts here carry a third column counting those changes at each score
(:meth:`evalkit_segments.psds.PSDS.counts` with ``cells``): such a score stays, and the best
thresholds are the peer's.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from evalkit.plugin import BaseComponent, DataError, ItemSets, ScoreSeries
from evalkit_segments.operating_points import (
    BETA,
    MIN_PRECISION,
    MIN_RECALL,
    ClassThresholds,
    Threshold,
    error_rates,
    fscores,
)
from evalkit_segments.psds import DTC, GTC, PSDS, Counts, PSDSParams
from evalkit_segments.segment_based import AT_THRESHOLD, TIME_DECIMALS


class IntersectionParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    dtc_threshold: float = DTC
    gtc_threshold: float = GTC
    time_decimals: int = TIME_DECIMALS
    threshold: Threshold | dict[str, Threshold] | None = AT_THRESHOLD


C = TypeVar("C", bound=IntersectionParams)


class IntersectionBasedParams(IntersectionParams):
    beta: float = BETA
    min_precision: float = MIN_PRECISION
    min_recall: float = MIN_RECALL


class IntersectionCounts(ClassThresholds, BaseComponent[C]):
    """The state of the intersection-based measures: PSDS's counts per class and score, with the
    cells changing there (the module's)."""

    data = "items"

    def __init__(self, params: C) -> None:
        super().__init__(params)
        criteria = params.model_dump(include={"dtc_threshold", "gtc_threshold", "time_decimals"})
        self.counter = PSDS(PSDSParams.model_validate(criteria))

    def update(self, reference: ItemSets, prediction: ItemSets) -> Counts:
        if not isinstance(prediction.samples, ScoreSeries):
            raise DataError(
                f"{prediction.source}: {self.name} reads a system's scores over time (a folder of score "
                "files, loader sed_scores), not an event list"
            )
        return self.counter.counts(reference, prediction.samples, 0.0, cells=True)


class IntersectionBased(IntersectionCounts[IntersectionBasedParams]):
    """sed_scores_eval's intersection-based F from score series against event lists: the best F
    with class-wise thresholds, and F at a threshold."""

    name = "intersection_based"
    Params = IntersectionBasedParams
    glossary = {
        "intersection_best_fscore": "Intersection-based F (detections and events matched by DTC and GTC) with each "
                                    "class at its own best threshold, averaged over classes (an optimistic bound).",
        "intersection_best_fscore_micro": "Intersection-based F of the counts summed over classes, each at its best "
                                          "threshold.",
        "intersection_best_fscore_per_class": "Each class's best intersection-based F over thresholds.",
        "intersection_best_fscore_threshold": "The threshold of each class's best intersection-based F (-inf: all "
                                              "detected).",
        "intersection_fscore": "Intersection-based F at the given threshold, averaged over classes.",
        "intersection_fscore_micro": "Intersection-based F at the given threshold of the counts summed over classes.",
        "intersection_fscore_per_class": "Each class's intersection-based F at the given threshold.",
    }

    def compute(self, state: Counts) -> dict[str, Any]:
        p = self.params
        out = fscores("intersection_best_fscore", state, p.beta, None, p.min_precision, p.min_recall)
        if self.thresholds is not None:
            out |= fscores("intersection_fscore", state, p.beta, self.thresholds)
        return out


class IntersectionErrorRate(IntersectionCounts[IntersectionParams]):
    """sed_scores_eval's intersection-based error rates from score series against event lists:
    each class's lowest error rate over thresholds (``best_error_rate``) and, given a threshold,
    the rates there (``error_rate``); a class alone has no substitutions."""

    name = "intersection_error_rate"
    Params = IntersectionParams
    lower_is_better = (
        "intersection_best_error_rate",
        "intersection_best_insertion_rate",
        "intersection_best_deletion_rate",
        "intersection_error_rate",
        "intersection_insertion_rate",
        "intersection_deletion_rate",
    )  # the rates, not their thresholds
    glossary = {
        "intersection_best_error_rate": "Each class's lowest intersection-based error rate ((insertions + deletions) "
                                        "/ reference events) over thresholds, averaged over classes (an optimistic "
                                        "bound).",
        "intersection_best_error_rate_per_class": "Each class's lowest intersection-based error rate over thresholds.",
        "intersection_best_error_rate_threshold": "The threshold of each class's lowest intersection-based error rate "
                                                  "(-inf: all detected).",
        "intersection_best_insertion_rate": "The insertion rate at each class's lowest error rate, averaged over "
                                            "classes.",
        "intersection_best_insertion_rate_per_class": "Each class's insertion rate at its lowest error rate.",
        "intersection_best_deletion_rate": "The deletion rate at each class's lowest error rate, averaged over classes.",
        "intersection_best_deletion_rate_per_class": "Each class's deletion rate at its lowest error rate.",
        "intersection_error_rate": "Intersection-based error rate at the given threshold, averaged over classes.",
        "intersection_error_rate_per_class": "Each class's intersection-based error rate at the given threshold.",
        "intersection_insertion_rate": "False detections per reference event at the threshold, averaged over classes.",
        "intersection_insertion_rate_per_class": "Each class's false detections per reference event at the threshold.",
        "intersection_deletion_rate": "Missed reference events per reference event at the threshold, averaged over "
                                      "classes.",
        "intersection_deletion_rate_per_class": "Each class's share of missed reference events at the threshold.",
    }

    def compute(self, state: Counts) -> dict[str, Any]:
        return error_rates("intersection", state, self.thresholds)
