"""Collar-based F-score and error rate of score series at every decision threshold, as
sed_scores_eval's ``collar_based`` module computes them.

Mesaros, Heittola & Virtanen, "Metrics for polyphonic sound event detection" (2016), §2.2: a
detection of a class counts as a true positive when it is matched one to one (a maximum
bipartite matching) to a reference event of the class whose onset is within ``onset_collar``
and whose offset is within max(``offset_collar``, ``offset_collar_rate`` × the event's length);
|distance| − collar is rounded to ``time_decimals`` first. The other detections are false
positives (insertions), the unmatched events deletions. Ebbers et al., "Threshold-Independent
Evaluation of Sound Event Detection Scores" (ICASSP 2022), take these counts at every threshold
at once: the detections at a threshold are the runs of frames scoring at least it.

The state is the counts' changes per (class, distinct score): TP, FP, and the number of files
whose counts change there (so that a score where the changes of two files cancel is still a
point of the curve, as in the peer, which centres its best threshold between such points). It
merges by ``+`` (:class:`~evalkit_segments.psds.Counts`), so streamed and Dask runs take it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import BaseComponent, Curve, CurvePerClass, DataError, ItemSets, PerClass, ScoreSeries
from evalkit_segments.event_based import maximum_matching
from evalkit_segments.intervals import cell_intervals
from evalkit_segments.operating_points import BETA, MIN_PRECISION, MIN_RECALL, Threshold, f_beta, named_rates, rates
from evalkit_segments.psds import BLOCK_FRAMES, Counts, file_blocks, noisy_blocks, quiet_changes, refuse_connected, runs

TP, FP, FILES = 0, 1, 2


class CollarParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    onset_collar: float = Field(..., ge=0, allow_inf_nan=False, description="seconds an onset may be off")
    offset_collar: float = Field(..., ge=0, allow_inf_nan=False, description="seconds an offset may be off (at least)")
    offset_collar_rate: float = Field(
        0.0, ge=0, allow_inf_nan=False,
        description="an offset may be off by this share of the reference event's length, when more than offset_collar",
    )
    time_decimals: int = Field(6, ge=0, le=12, description="|distance| - collar is rounded to this many decimals")


class ErrorRateParams(CollarParams):
    threshold: Threshold | dict[str, Threshold] = Field(
        ..., description="the decision threshold (a frame scoring above it is detected): one number, or one per class "
        "({dog: 0.4, ...}, as best thresholds are reported; -inf detects every frame, inf none)",
    )


class FScoreParams(ErrorRateParams):
    beta: float = BETA


class BestFScoreParams(CollarParams):
    beta: float = BETA
    min_precision: float = MIN_PRECISION
    min_recall: float = MIN_RECALL


def counts(series: ScoreSeries, reference: ItemSets, p: CollarParams) -> Counts:
    """The collar-based counts of a partition, per class and score (see the module)."""
    n_classes = len(reference.classes)
    cell, onset, offset = cell_intervals(reference)
    order = np.lexsort((onset, cell))
    cell, onset, offset = cell[order], onset[order], offset[order]
    refuse_connected(reference, cell, onset, offset)
    n_ref = np.bincount(cell % n_classes, minlength=n_classes).astype(np.float64)
    noisy = np.zeros((series.n_samples, n_classes), dtype=bool)  # cells with reference events
    noisy[cell // n_classes, cell % n_classes] = True
    zero = np.zeros(n_classes)
    state = Counts.tally([], 3, n_ref, zero, 0.0)
    for frames in file_blocks(series, max(BLOCK_FRAMES // max(n_classes, 1), 1)):
        klass, column, sign, score = quiet_changes(series, ~noisy, frames)  # every detection a FP
        files = (klass, np.full(len(klass), FILES), np.ones(len(klass), np.int64), score)
        state = state + Counts.tally([(klass, column, sign, score), files], 3, zero, zero, 0.0)
    for block in noisy_blocks(series, noisy):
        state = state + _noisy_counts(series, block, cell, onset, offset, n_classes, p)
    return state


def _noisy_counts(
    series: ScoreSeries, block: tuple[np.ndarray, np.ndarray], cell: np.ndarray, onset: np.ndarray,
    offset: np.ndarray, n_classes: int, p: CollarParams,
) -> Counts:
    """The counts of (file, class) cells with reference events: at every score where a cell's TP
    or FP count changes (per cell, as the peer takes it), the change, and one file."""
    file, klass, on, off, born, dies, died = runs(series, *block)
    keep = born > -np.inf  # a class the system does not score is never detected
    file, klass, on, off, born, dies, died = (a[keep] for a in (file, klass, on, off, born, dies, died))
    run_cell = file * n_classes + klass
    # every (run, event of its cell) pair that the collars accept
    low, high = np.searchsorted(cell, run_cell, "left"), np.searchsorted(cell, run_cell, "right")
    n = high - low
    run = np.repeat(np.arange(len(run_cell)), n)
    event = np.arange(int(n.sum())) + np.repeat(low - (np.cumsum(n) - n), n)
    d = p.time_decimals
    offset_collar = np.maximum(p.offset_collar, p.offset_collar_rate * (offset[event] - onset[event]))
    hit = (np.round(np.abs(on[run] - onset[event]) - p.onset_collar, decimals=d) <= 0.0) & (
        np.round(np.abs(off[run] - offset[event]) - offset_collar, decimals=d) <= 0.0)
    run, event = run[hit], event[hit]
    tp_cell, tp_score, tp_change = _true_positives(run_cell[run], born[run], dies[run], died[run], run, event)
    # the detections alive: one more at each run's birth, one fewer where it dies; FP = alive - TP
    grow = np.r_[np.ones(len(born)), -np.ones(int(died.sum()))]
    change = np.zeros((len(grow) + len(tp_change), 3))
    change[: len(grow), FP] = grow
    change[len(grow) :, TP] = tp_change
    change[len(grow) :, FP] = -tp_change
    zero = np.zeros(n_classes)
    per_cell = Counts.of(np.r_[run_cell, run_cell[died], tp_cell], np.r_[born, dies[died], tp_score], change,
                         zero, zero, 0.0)  # summed per (cell, score); those that cancel are dropped
    per_cell.change[:, FILES] = 1
    return Counts.of(per_cell.klass % n_classes, per_cell.score, per_cell.change, zero, zero, 0.0)


def _true_positives(
    cell: np.ndarray, born: np.ndarray, dies: np.ndarray, died: np.ndarray, run: np.ndarray, event: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The TP changes of a cell's (run, event) pairs that the collars accept: at each score where
    one of these runs is born or dies, the size of a maximum matching of the runs alive there
    (born >= score > dies) with their events, less that at the cell's next higher such score.
    Returns (cell, score, change) per point."""
    points = np.unique(np.r_[born, dies[died]])
    width = len(points) + 1
    key = cell * width  # a point of a cell: cell * width + the rank of its score
    top, bottom = key + np.searchsorted(points, born), key + np.searchsorted(points, dies)
    point = np.unique(np.r_[top, bottom[died]])
    first = np.where(died, np.searchsorted(point, bottom, "right"), np.searchsorted(point, key))
    alive = np.searchsorted(point, top, "right") - first
    tp = np.zeros(len(point))
    for part in _whole_cells(cell, alive):
        tp += _matched(first[part], alive[part], run[part], event[part], len(point))
    point_cell = point // width
    above = np.r_[tp[1:], 0.0] * np.r_[point_cell[1:] == point_cell[:-1], False]  # at the next higher score
    return point_cell, points[point % width], tp - above


#: (pair, score) rows matched at once: the matchings of a block of cells are made a few cells at a
#: time, since a cell's rows grow with its runs times its scores.
MATCH_ROWS = 1 << 19


def _whole_cells(cell: np.ndarray, rows: np.ndarray) -> Iterator[slice]:
    """Slices of pairs (sorted by cell) of whole cells, about :data:`MATCH_ROWS` rows at a time
    (a larger cell alone)."""
    starts = np.r_[np.flatnonzero(np.r_[True, cell[1:] != cell[:-1]]), len(cell)]
    total = np.r_[0, np.cumsum(rows)]
    begin = 0
    while begin < len(cell):
        reach = int(np.searchsorted(total, total[begin] + MATCH_ROWS, "right")) - 1  # pairs within the rows
        end = int(starts[np.searchsorted(starts, max(reach, begin + 1))])  # rounded up to a whole cell
        yield slice(begin, end)
        begin = end


def _matched(first: np.ndarray, alive: np.ndarray, run: np.ndarray, event: np.ndarray, n_points: int) -> np.ndarray:
    """The size of a maximum matching at each point, of the pairs alive there (pair i at points
    ``first[i]`` to ``first[i] + alive[i] - 1``)."""
    pair = np.repeat(np.arange(len(run)), alive)
    at = np.arange(int(alive.sum())) + np.repeat(first - (np.cumsum(alive) - alive), alive)
    event_key, event_node = np.unique(at * (int(event.max(initial=0)) + 1) + event[pair], return_inverse=True)
    run_key, run_node = np.unique(at * (int(run.max(initial=0)) + 1) + run[pair], return_inverse=True)
    matched = maximum_matching(event_node.ravel(), run_node.ravel(), len(event_key), len(run_key))
    node_at = np.zeros(len(event_key), np.int64)
    node_at[event_node.ravel()] = at
    return np.bincount(node_at[matched >= 0], minlength=n_points).astype(np.float64)


def curve(state: Counts, c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One class's (scores, TP, FP) at every point of its curve, rising scores, +inf (nothing
    detected) last: the counts at a score hold for the thresholds just below it."""
    rows = state.klass == c
    change = state.change[rows][:, :2]
    stats = np.vstack([np.cumsum(change[::-1], axis=0)[::-1], np.zeros((1, 2))])
    return np.r_[state.score[rows], np.inf], stats[:, TP], stats[:, FP]


def fscore(tp: Any, fp: Any, n_ref: Any, beta: float) -> tuple[Any, Any, Any]:
    """(F, precision, recall) of a class, as sed_scores_eval takes them: precision 1 where nothing
    is detected."""
    precision = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 1.0)
    recall = tp / n_ref
    return f_beta(precision, recall, beta), precision, recall


def micro(tp: np.ndarray, fp: np.ndarray, n_ref: np.ndarray, beta: float) -> tuple[float, float, float]:
    """(F, precision, recall) of counts summed over classes, as sed_scores_eval's ``micro_average``
    (a precision of nothing detected is 0 here)."""
    precision, recall = tp.sum() / max(tp.sum() + fp.sum(), 1), tp.sum() / max(n_ref.sum(), 1)
    return float(f_beta(precision, recall, beta)), float(precision), float(recall)


def centred(scores: np.ndarray, best: int) -> float:
    """The threshold of a curve's point: between its score and the next lower point's (-inf
    for the lowest: every frame detected)."""
    return float((scores[best] + scores[best - 1]) / 2) if best > 0 else -np.inf


class _Collar(BaseComponent[Any]):
    """The collar-based counts of score series against event lists, at every threshold."""

    name: ClassVar[str]
    data = "items"
    classes: tuple[str, ...] = ()
    Params: ClassVar[type[CollarParams]]

    def prepare(self, classes: Any) -> None:
        self.classes = tuple(classes)
        threshold = getattr(self.params, "threshold", None)
        if isinstance(threshold, dict) and set(threshold) != set(self.classes):
            missing, extra = sorted(set(self.classes) - set(threshold)), sorted(set(threshold) - set(self.classes))
            raise DataError(
                f"{self.name}: `threshold` gives a threshold per class, but "
                + "; ".join(part for part in (f"none for {missing}" if missing else "",
                                              f"one for {extra}, which the data does not have" if extra else "") if part)
                + f"; give one for each of {list(self.classes)}, or one number for all"
            )

    def update(self, reference: ItemSets, prediction: ItemSets) -> Counts:
        if not isinstance(prediction.samples, ScoreSeries):
            raise DataError(
                f"{prediction.source}: {self.name} reads a system's scores over time (a folder of score files, "
                "loader sed_scores), not an event list; for an event list use the representation event_based"
            )
        return counts(prediction.samples, reference, self.params)

    def thresholds(self) -> np.ndarray:
        threshold = self.params.threshold
        if isinstance(threshold, dict):
            return np.array([threshold[c] for c in self.classes], dtype=np.float64)
        return np.full(len(self.classes), float(threshold))

    def at_thresholds(self, state: Counts) -> tuple[np.ndarray, np.ndarray]:
        """Each class's (TP, FP) at its threshold (the first point scoring above it)."""
        tp, fp = np.zeros(len(state.n_ref)), np.zeros(len(state.n_ref))
        for c, threshold in enumerate(self.thresholds()):
            scores, tps, fps = curve(state, c)
            at = min(int(np.searchsorted(scores, threshold, "right")), len(scores) - 1)
            tp[c], fp[c] = tps[at], fps[at]
        return tp, fp


def _mean(values: np.ndarray, defined: np.ndarray) -> float:
    return float(np.mean(values[defined])) if defined.any() else np.nan


class CollarFScore(_Collar):
    """Collar-based F, precision and recall of score series at a threshold, per class, their mean
    over classes and the micro ones: sed_scores_eval's ``collar_based.fscore``. A class without
    reference events has no recall: NaN, left out of the means (its detections still count in
    the micro precision)."""

    name = "collar_fscore"
    Params = FScoreParams
    glossary = {
        "collar_fscore": "Collar-based F at the threshold: each class's F (detections matched one to one to "
                         "reference events within the onset and offset collars), averaged over classes.",
        "collar_fscore_micro": "Collar-based F at the threshold from the matches summed over classes.",
        "collar_fscore_per_class": "Each class's collar-based F at the threshold.",
        "collar_precision": "Collar-based precision at the threshold, averaged over classes.",
        "collar_precision_micro": "Collar-based precision at the threshold from the counts summed over classes.",
        "collar_precision_per_class": "Each class's collar-based precision at the threshold.",
        "collar_recall": "Collar-based recall at the threshold, averaged over classes.",
        "collar_recall_micro": "Collar-based recall at the threshold from the counts summed over classes.",
        "collar_recall_per_class": "Each class's collar-based recall at the threshold.",
    }

    def compute(self, state: Counts) -> dict[str, Any]:
        tp, fp = self.at_thresholds(state)
        defined = state.n_ref > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            values = fscore(tp, fp, np.where(defined, state.n_ref, np.nan), self.params.beta)
        out: dict[str, Any] = {}
        for name, value, total in zip(("fscore", "precision", "recall"), values, micro(tp, fp, state.n_ref, self.params.beta)):
            out[f"collar_{name}"] = _mean(value, defined)
            out[f"collar_{name}_micro"] = total
            out[f"collar_{name}_per_class"] = PerClass(np.where(defined, value, np.nan))
        return out


class CollarBestFScore(_Collar):
    """The best collar-based F of score series over each class's thresholds, with the thresholds,
    their mean, the micro F at them and each class's precision-recall curve: sed_scores_eval's
    ``collar_based.best_fscore``. Under ``min_precision`` / ``min_recall`` a class that reaches
    none has F 0 at the threshold +inf. A class without reference events is NaN and left out."""

    name = "collar_best_fscore"
    Params = BestFScoreParams
    glossary = {
        "collar_best_fscore": "Each class's collar-based F at its own best decision threshold, averaged over "
                              "classes (an optimistic bound: the thresholds are chosen on the data scored).",
        "collar_best_fscore_micro": "The collar-based micro F with every class at its own best threshold.",
        "collar_best_fscore_per_class": "Each class's best collar-based F over decision thresholds.",
        "collar_best_fscore_threshold": "The decision threshold at which each class's collar-based F is best "
                                        "(-inf: best with every frame detected).",
    }

    def compute(self, state: Counts) -> dict[str, Any]:
        p = self.params
        n = len(state.n_ref)
        f, threshold, tp, fp = np.full(n, np.nan), np.full(n, np.nan), np.zeros(n), np.zeros(n)
        curves = []
        for c in range(n):
            scores, tps, fps = curve(state, c)
            if not state.n_ref[c]:
                curves.append(Curve(np.empty(0), np.empty(0), "recall", "precision"))
                continue
            fs, precision, recall = fscore(tps, fps, state.n_ref[c], p.beta)
            fs[(precision < p.min_precision) | (recall < p.min_recall)] = 0.0
            best = len(fs) - 1 - int(np.argmax(fs[::-1]))  # the highest threshold among the best
            f[c], threshold[c], tp[c], fp[c] = fs[best], centred(scores, best), tps[best], fps[best]
            order = np.lexsort((precision, recall))  # by recall, then precision, as sed_scores_eval orders them
            curves.append(Curve(recall[order], precision[order], "recall", "precision"))
        defined = state.n_ref > 0
        return {
            "collar_best_fscore": _mean(f, defined),
            "collar_best_fscore_micro": micro(tp[defined], fp[defined], state.n_ref[defined], p.beta)[0]
            if defined.any() else np.nan,
            "collar_best_fscore_per_class": PerClass(f),
            "collar_best_fscore_threshold": PerClass(threshold),
            "collar_pr_curve": CurvePerClass(tuple(curves)),
        }


class CollarErrorRate(_Collar):
    """Collar-based error, insertion and deletion rates of score series at a threshold, per class
    (insertions plus deletions over the reference events; a class alone has no substitutions)
    and their means over classes: sed_scores_eval's ``collar_based.error_rate``. A class without
    reference events has no rate: NaN, left out of the means."""

    name = "collar_error_rate"
    Params = ErrorRateParams
    lower_is_better = (
        "collar_error_rate",
        "collar_insertion_rate",
        "collar_deletion_rate",
    )  # the rates, not their thresholds
    glossary = {
        "collar_error_rate": "Collar-based error rate at the threshold: each class's (insertions + deletions) / "
                             "reference events, averaged over classes.",
        "collar_error_rate_per_class": "Each class's collar-based error rate at the threshold.",
        "collar_insertion_rate": "False detections per reference event at the threshold, averaged over classes.",
        "collar_insertion_rate_per_class": "Each class's false detections per reference event at the threshold.",
        "collar_deletion_rate": "Missed reference events per reference event at the threshold, averaged over classes.",
        "collar_deletion_rate_per_class": "Each class's share of missed reference events at the threshold.",
    }

    def compute(self, state: Counts) -> dict[str, Any]:
        tp, fp = self.at_thresholds(state)
        defined = state.n_ref > 0
        return named_rates("collar", rates(tp, fp, np.where(defined, state.n_ref, np.nan)), defined)


class CollarBestErrorRate(_Collar):
    """The lowest collar-based error rate of score series over each class's thresholds, with its
    insertion and deletion rates, the thresholds and the means over classes: sed_scores_eval's
    ``collar_based.best_error_rate``. A class without reference events is NaN and left out."""

    name = "collar_best_error_rate"
    Params = CollarParams
    lower_is_better = (
        "collar_best_error_rate",
        "collar_best_insertion_rate",
        "collar_best_deletion_rate",
    )  # the rates, not their thresholds
    glossary = {
        "collar_best_error_rate": "Each class's lowest collar-based error rate over decision thresholds, averaged "
                                  "over classes (an optimistic bound: the thresholds are chosen on the data scored).",
        "collar_best_error_rate_per_class": "Each class's lowest collar-based error rate over decision thresholds.",
        "collar_best_insertion_rate": "The insertion rate at each class's best error rate, averaged over classes.",
        "collar_best_insertion_rate_per_class": "Each class's insertion rate at its best error rate.",
        "collar_best_deletion_rate": "The deletion rate at each class's best error rate, averaged over classes.",
        "collar_best_deletion_rate_per_class": "Each class's deletion rate at its best error rate.",
        "collar_best_error_rate_threshold": "The decision threshold at which each class's collar-based error rate "
                                            "is lowest (-inf: lowest with every frame detected).",
    }

    def compute(self, state: Counts) -> dict[str, Any]:
        n = len(state.n_ref)
        best_tp, best_fp, threshold = np.zeros(n), np.zeros(n), np.full(n, np.nan)
        for c in np.flatnonzero(state.n_ref > 0):
            scores, tps, fps = curve(state, int(c))
            er = rates(tps, fps, state.n_ref[c])[0]
            best = len(er) - 1 - int(np.argmin(er[::-1]))  # the highest threshold among the best
            best_tp[c], best_fp[c], threshold[c] = tps[best], fps[best], centred(scores, best)
        defined = state.n_ref > 0
        out = named_rates("collar_best", rates(best_tp, best_fp, np.where(defined, state.n_ref, np.nan)), defined)
        return {**out, "collar_best_error_rate_threshold": PerClass(threshold)}
