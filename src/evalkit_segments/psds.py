"""PSDS, the Polyphonic Sound Detection Score, from score series over every decision threshold.

Bilen et al., "A Framework for the Robust Evaluation of Sound Event Detection" (ICASSP 2020),
define it with intersection-based detections; Ebbers et al., "Threshold-Independent Evaluation
of Sound Event Detection Scores" (ICASSP 2022), compute it exactly, over every threshold at which
a detection changes, as sed_scores_eval does. For one class and one threshold θ, the system's
detections are the runs of frames scoring at least θ:

- a detection is *relevant* when its intersection with the class's reference events is at least
  ``dtc_threshold`` of its length (DTC); the others are false positives (FP);
- a reference event is *detected* when the relevant detections cover at least
  ``gtc_threshold`` of it (GTC): the true positives (TP);
- a false detection is a *cross-trigger* on another class when that class's reference events
  cover at least ``cttc_threshold`` of it (CTTC); CT_k counts them.

Over the whole dataset: TPR = TP / N_ref, and the effective FP rate
eFPR = (FP / duration + α_ct · mean_k CT_k / T_ref,k) per unit of time, where T_ref,k is the
length of class k's reference events. Each class gives a staircase ROC of (eFPR, TPR) pairs,
kept monotone (the highest TPR at each eFPR up to ``max_efpr``); the PSD-ROC is their mean minus
α_st times their standard deviation, on the union of their eFPRs. PSDS is its area up to
``max_efpr``, divided by ``max_efpr``; ``psds_per_class`` is each class's own area the same way.
A class without reference events has no TPR: it is NaN and left out of the PSD-ROC (sed_scores_eval
refuses such data; a bootstrap resample may draw it).

Times are compared after rounding to ``time_decimals`` decimals, as sed_scores_eval does, so a
detection meeting a criterion exactly is not lost to floating-point error.

The state is not the scores but what the ROCs are built from: per class and distinct score, how
many TPs, FPs and cross-triggers start or stop counting there (:class:`Counts`). Each file's
detections at every threshold are found at once (:func:`runs`: at most one per frame) and
reduced to these counts, which add up across files; so a streamed or Dask run takes psds, and
its memory grows with the distinct scores, not with the files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalkit.plugin import BaseComponent, Curve, DataError, ItemSets, PerClass, ScoreSeries
from evalkit_segments.durations import Durations, DurationsSpec, ReadsDurations, durations_field
from evalkit_segments.intervals import cell_intervals

SECONDS = {"second": 1.0, "minute": 60.0, "hour": 3600.0}


class Folds(BaseModel):
    """sed_scores_eval's ``bootstrap_from_deltas``: ``n_iterations`` times, the files (sorted by
    name, without extension) are shuffled by ``np.random.RandomState(i)`` and cut into ``n_folds``
    folds; each subset leaves one fold out. The interval is the ``confidence`` percentile
    interval of the subsets' values, the mean their mean."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    n_folds: int = Field(5, ge=2, description="folds per repetition: each subset leaves one out")
    n_iterations: int = Field(20, ge=1, description="repetitions, each shuffled by np.random.RandomState(i)")
    confidence: float = Field(0.9, gt=0, lt=1, description="the interval's coverage")


DTC = Field(
    ..., gt=0, le=1, allow_inf_nan=False,
    description="detection tolerance criterion: the share of a detection that must overlap the class's reference "
    "events (above 0: at 0 a detection far from every event would pass)",
)
GTC = Field(
    ..., ge=0, le=1, allow_inf_nan=False,
    description="ground-truth intersection criterion: the share of a reference event the relevant detections must cover",
)


class PSDSParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    dtc_threshold: float = DTC
    gtc_threshold: float = GTC
    cttc_threshold: float | None = Field(
        None, ge=0, le=1, allow_inf_nan=False, description="cross-trigger tolerance criterion (needed when alpha_ct > 0)",
    )
    alpha_ct: float = Field(
        0.0, ge=0, allow_inf_nan=False, description="weight of the cross-trigger rate in the effective FP rate",
    )
    alpha_st: float = Field(
        0.0, ge=0, allow_inf_nan=False, description="weight of the classes' TPR standard deviation subtracted from their mean",
    )
    max_efpr: float = Field(
        100.0, gt=0, allow_inf_nan=False, description="the effective FP rate (per unit_of_time) up to which the area is taken",
    )
    unit_of_time: Literal["second", "minute", "hour"] = Field("hour", description="the unit of the FP rates")
    durations: DurationsSpec = durations_field("without it a file's duration is the end of its last score frame")
    time_decimals: int = Field(6, ge=0, le=12, description="times are compared rounded to this many decimals")
    bootstrapped: Folds | None = Field(
        None, description="also sed_scores_eval's bootstrapped_psds: the mean and interval of PSDS over its file "
        "subsets (each repetition's files shuffled and cut into folds, each fold left out once); keeps each file's "
        "counts (none: no subsets)",
    )

    @model_validator(mode="after")
    def _cross_triggers(self) -> PSDSParams:
        if self.alpha_ct > 0 and self.cttc_threshold is None:
            raise ValueError("alpha_ct > 0 counts cross-triggers: give cttc_threshold too")
        if self.alpha_ct == 0 and self.cttc_threshold is not None:
            raise ValueError("cttc_threshold is used only with alpha_ct > 0: give alpha_ct, or leave cttc_threshold out")
        return self


#: Frames of score series handled together: the runs and their overlaps with a file's events are
#: arrays of about this many rows (times the events of a file), whatever the number of files.
BLOCK_FRAMES = 1 << 17
#: Change points counted together (32 bytes each) before they join the counts.
TALLY_POINTS = 1 << 21

#: Change points: for each, the class, the count it changes (0 TP, 1 FP, 2 + k cross-triggers on
#: class k), the change (+1 or -1) and the score from which on (downwards) it holds.
Points = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclass
class Counts:
    """What part of the data adds to every class's counts, as changes at the scores where they
    change (a change applies to every threshold at or below its score): one row per (class,
    distinct score), sorted. It merges by ``+`` (the sorted union of the scores, the changes
    added), and its size is bounded by the distinct scores times the classes, not by the files."""

    klass: np.ndarray  # the class of each change point
    score: np.ndarray  # its score
    change: np.ndarray  # (points, 2 + classes): TP, FP, then cross-triggers per other class
    n_ref: np.ndarray  # reference events per class
    t_ref: np.ndarray  # their total length per class
    duration: float  # audio seconds

    @classmethod
    def of(cls, klass: np.ndarray, score: np.ndarray, change: np.ndarray, n_ref: np.ndarray, t_ref: np.ndarray,
           duration: float) -> Counts:
        """The changes summed per (class, score) (whole numbers: the sums are exact); those that
        cancel are dropped."""
        order = np.lexsort((score, klass))
        klass, score, change = klass[order], score[order], change[order]
        first = np.flatnonzero(np.r_[True, (klass[1:] != klass[:-1]) | (score[1:] != score[:-1])][: len(klass)])
        summed = np.add.reduceat(change, first, axis=0) if len(first) else change
        keep = (summed != 0).any(axis=1)
        return cls(klass[first][keep], score[first][keep], summed[keep], n_ref, t_ref, duration)

    @classmethod
    def tally(cls, points: list[Points], width: int, n_ref: np.ndarray, t_ref: np.ndarray, duration: float) -> Counts:
        """The counts of change points, each one more or one fewer of one count (``column``) of
        one class at one score. They are grouped by (class, column, sign) (a radix sort of small
        integers), and the scores of each group sorted and counted: the fast sorts, where a
        sort of (class, score) pairs took most of the time."""
        klass, column, sign, score = (np.concatenate(part) for part in zip(*points)) if points else (np.zeros(0, np.int64),) * 4
        n_classes = len(n_ref)
        key = (klass * width + column) * 2 + (sign < 0)
        order = np.argsort(key.astype(np.int16 if 2 * n_classes * width < 1 << 15 else np.int64), kind="stable")
        key, score = key[order], score[order]
        bounds = np.searchsorted(key, np.arange(2 * n_classes * width + 1))
        rows = []
        for c in range(n_classes):
            groups = {}
            for j in range(width):
                for negative in (0, 1):
                    at = (c * width + j) * 2 + negative
                    if bounds[at + 1] > bounds[at]:
                        values = np.sort(score[bounds[at] : bounds[at + 1]])
                        new = np.r_[True, values[1:] != values[:-1]]
                        groups[j, negative] = values[new], np.diff(np.r_[np.flatnonzero(new), len(values)])
            if not groups:
                continue
            grid = np.unique(np.concatenate([values for values, _ in groups.values()]))
            change = np.zeros((len(grid), width))
            for (j, negative), (values, counts) in groups.items():
                change[np.searchsorted(grid, values), j] += -counts if negative else counts
            rows.append((np.full(len(grid), c), grid, change))
        if not rows:
            return cls(np.zeros(0, np.int64), np.zeros(0), np.zeros((0, width)), n_ref, t_ref, duration)
        klass, grid, change = (np.concatenate(part) for part in zip(*rows))
        keep = (change != 0).any(axis=1)
        return cls(klass[keep], grid[keep], change[keep], n_ref, t_ref, duration)

    def __add__(self, other: Counts) -> Counts:
        return Counts.of(
            np.r_[self.klass, other.klass], np.r_[self.score, other.score], np.vstack([self.change, other.change]),
            self.n_ref + other.n_ref, self.t_ref + other.t_ref, self.duration + other.duration,
        )


@dataclass
class FileCounts:
    """Each file's counts by its name without extension (as sed_scores_eval names files): what
    the subsets of ``bootstrapped`` are summed from. It merges by ``+`` (the files of both), and
    grows with the files."""

    names: tuple[str, ...]
    counts: tuple[Counts, ...]

    def __add__(self, other: FileCounts) -> FileCounts:
        return FileCounts(self.names + other.names, self.counts + other.counts)

    def summed(self) -> Callable[[np.ndarray], Counts]:
        """The counts of any subset of the files (a mask): the files' rows are grouped by
        (class, score) once, and a subset's changes are summed per group by ``bincount`` (whole
        numbers: exactly), the groups that sum to 0 dropped, as :meth:`Counts.of` drops them."""
        klass = np.concatenate([c.klass for c in self.counts])
        score = np.concatenate([c.score for c in self.counts])
        change = np.vstack([c.change for c in self.counts])
        file = np.repeat(np.arange(len(self.counts)), [len(c.klass) for c in self.counts])
        n_ref, t_ref = np.array([c.n_ref for c in self.counts]), np.array([c.t_ref for c in self.counts])
        duration = np.array([c.duration for c in self.counts])
        order = np.lexsort((score, klass))
        new = np.r_[True, (klass[order][1:] != klass[order][:-1]) | (score[order][1:] != score[order][:-1])][: len(order)]
        group = np.empty(len(order), np.int64)
        group[order] = np.cumsum(new) - 1
        grid_klass, grid_score = klass[order][new], score[order][new]

        def of(files: np.ndarray) -> Counts:
            rows = files[file]
            summed = np.column_stack([
                np.bincount(group[rows], weights=change[rows, j], minlength=len(grid_klass)) for j in range(change.shape[1])
            ])
            keep = (summed != 0).any(axis=1)
            return Counts(grid_klass[keep], grid_score[keep], summed[keep], n_ref[files].sum(axis=0),
                          t_ref[files].sum(axis=0), float(duration[files].sum()))

        return of


class PSDS(ReadsDurations, BaseComponent[PSDSParams]):
    """The Polyphonic Sound Detection Score of score series against event lists (``psds`` and
    ``psds_per_class``), equal to sed_scores_eval's ``intersection_based.psds``, and the PSD-ROC
    it is the area of (``psd_roc``, drawn in reports)."""

    name = "psds"
    Params = PSDSParams
    glossary = {
        "psds": "Polyphonic Sound Detection Score: the area under the PSD-ROC (TPR against effective false "
                "positives per unit of time; the classes' mean less α_st times their spread) up to max_efpr, "
                "divided by max_efpr.",
        "psds_per_class": "Each class's area under its own ROC (TPR against effective false positives per "
                          "unit of time) up to max_efpr, divided by max_efpr.",
        "bootstrapped_psds_mean": "The mean PSDS over sed_scores_eval's file subsets (each repetition's files "
                                  "shuffled into folds, each fold left out once).",
        "bootstrapped_psds_low": "The low end of the percentile interval of PSDS over sed_scores_eval's file subsets.",
        "bootstrapped_psds_high": "The high end of the percentile interval of PSDS over sed_scores_eval's file subsets.",
        "bootstrapped_psds_mean_per_class": "Each class's mean PSDS over sed_scores_eval's file subsets.",
        "bootstrapped_psds_low_per_class": "The low end of each class's PSDS interval over the file subsets.",
        "bootstrapped_psds_high_per_class": "The high end of each class's PSDS interval over the file subsets.",
    }
    data = "items"
    classes: tuple[str, ...] = ()

    def __init__(self, params: PSDSParams) -> None:
        super().__init__(params)
        self.durations = Durations(params.durations, "psds") if params.durations is not None else None

    @property
    def kept_per_byte(self) -> float:
        """With ``bootstrapped``, each file's counts are kept: per byte of score-file text, 1.54
        without cross-triggers and 5.54 with them (measured on 200 files of 1,000 frames x 10
        classes at 4 decimals; a cross-trigger column per class: more classes, more)."""
        if self.params.bootstrapped is None:
            return 0.0
        return 1.6 if self.params.cttc_threshold is None else 5.6

    def prepare(self, classes: Any) -> None:
        self.classes = tuple(classes)

    def update(self, reference: ItemSets, prediction: ItemSets) -> Counts | FileCounts:
        series = prediction.samples
        if not isinstance(series, ScoreSeries):
            raise DataError(
                f"{prediction.source}: psds reads a system's scores over time (a folder of score files, "
                "loader sed_scores), not an event list"
            )
        durations = self._durations(reference, series)
        if self.params.bootstrapped is None:
            return self.counts(reference, series, float(durations.sum()))
        return FileCounts(
            tuple(reference.sample_name(row).rsplit(".", 1)[0] for row in range(len(reference))),
            tuple(self.counts(reference[row : row + 1], series[row : row + 1], float(durations[row]))
                  for row in range(len(reference))),
        )

    def counts(self, reference: ItemSets, series: ScoreSeries, duration: float, cells: bool = False) -> Counts:
        """The counts of score series against their files' reference events, with the files'
        ``duration`` in seconds (the intersection-based F reads them without one: 0). With
        ``cells``, a last column counts the changes sed_scores_eval keeps at each score: a
        score stays where two files' changes cancel. Of a cell with reference events a change is
        its counts' net change at a score (:func:`cell_counts`); of one without, each frame's
        change in the number of detections, as the peer takes those frame by frame."""
        n_classes = len(reference.classes)
        cell, onset, offset = cell_intervals(reference)
        order = np.lexsort((np.arange(len(cell)), cell))  # by cell, in the listed order
        cell, onset, offset = cell[order], onset[order], offset[order]
        refuse_connected(reference, cell, onset, offset)
        length = offset - onset
        per_class = cell % n_classes
        n_ref = np.bincount(per_class, minlength=n_classes).astype(np.float64)
        t_ref = np.bincount(per_class, weights=length, minlength=n_classes)
        cross = self.params.cttc_threshold is not None
        width = 2 + (n_classes if cross else 0)
        noisy = np.zeros((series.n_samples, n_classes), dtype=bool)  # the (file, class) cells whose counts need
        noisy[cell // n_classes, per_class] = True  # the detections: with reference events, and with cross-
        if cross:  # triggers counted, every class of a file with any
            noisy[noisy.any(axis=1)] = True
        events = Events(cell // n_classes, per_class, onset, offset, series.n_samples)
        counts = Counts.tally([], width + cells, n_ref, t_ref, duration)
        tally = (lambda parts: cell_counts(parts, width, n_classes)) if cells else (
            lambda parts: Counts.tally(parts, width, 0 * n_ref, 0 * t_ref, 0.0))
        quiet_tally = (lambda parts: Counts.tally(parts + [(k, np.full(len(k), width), np.ones(len(k), np.int64), s)
                                                           for k, _, _, s in parts], width + 1, 0 * n_ref, 0 * t_ref, 0.0)
                       ) if cells else tally
        parts: list[Points] = []
        for frames in file_blocks(series, max(BLOCK_FRAMES // n_classes, 1)):
            parts.append(quiet_changes(series, ~noisy, frames))
            if sum(len(part[0]) for part in parts) > TALLY_POINTS:
                counts, parts = counts + quiet_tally(parts), []
        counts, parts = counts + quiet_tally(parts), []
        for block in noisy_blocks(series, noisy):
            parts += self._changes(series, block, events, n_classes, cells)
            if sum(len(part[0]) for part in parts) > TALLY_POINTS:
                counts, parts = counts + tally(parts), []
        return counts + tally(parts)

    def _durations(self, reference: ItemSets, series: ScoreSeries) -> np.ndarray:
        if self.durations is None:
            ends = series.ends()
            if np.isnan(ends).any():
                row = int(np.argmax(np.isnan(ends)))
                raise DataError(
                    f"psds: {reference.sample_name(row)!r} has no score frames, so its duration is unknown; "
                    "give the metric `durations:` (a table of filename and duration, or `column`)"
                )
            return ends
        return self.durations.of([reference.sample_name(row) for row in range(len(reference))], reference.source)

    def _changes(
        self, series: ScoreSeries, block: tuple[np.ndarray, np.ndarray], events: Events, n_classes: int,
        cells: bool = False,
    ) -> list[Points]:
        """The change points of a block of (file, class) series: every score at which TP, FP or a
        cross-trigger count changes, and the change. Each detection that exists at some threshold
        (a run of frames, :func:`runs`) counts as a FP, or for its TPs and cross-triggers, over
        the thresholds it lives at; a reference event is detected over the thresholds at which
        the relevant detections alive cover enough of it (:func:`_detected`). The points are
        keyed by class, or with ``cells`` by (file, class) cell."""
        p = self.params

        def key(file: np.ndarray, klass: np.ndarray) -> np.ndarray:
            return file * n_classes + klass if cells else klass

        decimals = p.time_decimals
        every = runs(series, *block)
        file, on, off = every[0], every[2], every[3]
        # A run outside its file's events (before the first onset, after the last offset) is a
        # FP, unless a criterion rounds to 0 on it; the others are looked at event by event.
        smallest = min(p.dtc_threshold, p.cttc_threshold if p.cttc_threshold is not None else 1.0)
        near = ((off > events.start[file]) & (on < events.end[file])) | (np.round(smallest * (off - on), decimals) <= 0)
        far = ~near
        parts = [_lives(key(every[0][far], every[1][far]), every[4][far], every[5][far], every[6][far], 1)]
        file, klass, on, off, born, dies, died = (column[near] for column in every)
        length = off - on
        first = events.first[file]  # the file's events: columns first .. first + width
        width = events.width
        at = first[:, None] + np.arange(width)
        inside = np.arange(width) < events.count[file][:, None]
        at = np.where(inside, at, len(events.onset))  # past the end: an empty event
        ev_on, ev_off, ev_class = events.onset_pad[at], events.offset_pad[at], events.klass_pad[at]
        overlap = np.maximum(np.minimum(off[:, None], ev_off) - np.maximum(on[:, None], ev_on), 0.0)
        own = ev_class == klass[:, None]
        relevant = np.round((overlap * own).sum(-1), decimals) >= np.round(p.dtc_threshold * length, decimals)
        parts.append(_lives(key(file[~relevant], klass[~relevant]), born[~relevant], dies[~relevant], died[~relevant], 1))
        if p.cttc_threshold is not None:  # the runs that can cross-trigger: false ones on another class's events
            need = np.round(p.cttc_threshold * length, decimals)
            can = np.flatnonzero((~relevant & ((overlap > 0) & ~own).any(axis=1)) | (need <= 0))
            crossed, theirs_at, cleared, needed = overlap[can], ev_class[can], relevant[can], need[can]
            for k in range(n_classes):
                theirs = theirs_at == k
                hit = np.where(cleared, 0.0, (crossed * theirs).sum(-1))
                crossing = can[theirs.any(axis=1) & (klass[can] != k) & (np.round(hit, decimals) >= needed)]
                parts.append(_lives(key(file[crossing], klass[crossing]), born[crossing], dies[crossing], died[crossing], 2 + k))
        need = np.round(p.gtc_threshold * (events.offset - events.onset), decimals)
        run, slot = np.nonzero(relevant[:, None] & own & (overlap > 0) & (need[np.minimum(at, len(need) - 1)] > 0))
        owner = key(events.file, events.klass)
        parts.append(_detected(at[run, slot], overlap[run, slot], born[run], dies[run], died[run], owner, need, decimals))
        parts.append(_always(series, block, events, owner, need, n_classes))
        return parts

    def compute(self, state: Counts | FileCounts) -> dict[str, Any]:
        if isinstance(state, Counts):
            return self._psds(state)
        subset = state.summed()
        return self._psds(subset(np.ones(len(state.counts), bool))) | self._bootstrapped(state, subset)

    def _bootstrapped(self, state: FileCounts, subset: Callable[[np.ndarray], Counts]) -> dict[str, Any]:
        """PSDS and each class's over sed_scores_eval's file subsets (:class:`Folds`): their
        mean and percentile interval, as its ``confidence_interval`` takes them."""
        folds = self.params.bootstrapped
        assert folds is not None, "file counts are kept only for bootstrapped"
        order = sorted(range(len(state.names)), key=state.names.__getitem__)
        cuts = np.linspace(0, len(order), folds.n_folds + 1).astype(int)
        values, per_class = [], []
        for i in range(folds.n_iterations):
            np.random.RandomState(i).shuffle(order)  # in place: each repetition shuffles the last one's order
            for j in range(folds.n_folds):
                files = np.ones(len(order), bool)
                files[order[cuts[j] : cuts[j + 1]]] = False
                result = self._psds(subset(files))
                values.append(result["psds"])
                per_class.append(result["psds_per_class"].values)
        low, high = (1 - folds.confidence) / 2 * 100, (folds.confidence + (1 - folds.confidence) / 2) * 100
        return {
            "bootstrapped_psds_mean": float(np.mean(values)),
            "bootstrapped_psds_low": float(np.percentile(values, low)),
            "bootstrapped_psds_high": float(np.percentile(values, high)),
            "bootstrapped_psds_mean_per_class": PerClass(np.mean(per_class, axis=0)),
            "bootstrapped_psds_low_per_class": PerClass(np.percentile(per_class, low, axis=0)),
            "bootstrapped_psds_high_per_class": PerClass(np.percentile(per_class, high, axis=0)),
        }

    def _psds(self, state: Counts) -> dict[str, Any]:
        defined = np.flatnonzero(state.n_ref > 0)  # a class without reference events has no TPR
        rocs = [self._roc(state, int(c)) for c in defined]
        area = np.full(len(state.n_ref), np.nan)
        area[defined] = [staircase_area(tpr, efpr, self.params.max_efpr) for tpr, efpr in rocs]
        if not rocs:
            return {"psds": np.nan, "psds_per_class": PerClass(area)}
        tpr, efpr = psd_roc(rocs, self.params.alpha_st, self.params.max_efpr)
        roc = Curve(efpr, tpr, f"effective FP rate per {self.params.unit_of_time}", "effective TP rate")
        return {"psds": staircase_area(tpr, efpr, self.params.max_efpr), "psds_per_class": PerClass(area), "psd_roc": roc}

    def _roc(self, state: Counts, c: int) -> tuple[np.ndarray, np.ndarray]:
        """One class's ROC: (TPR, eFPR) over every threshold, monotone, up to ``max_efpr``."""
        p = self.params
        change = state.change[state.klass == c]  # one row per distinct score, rising
        stats = np.vstack([np.cumsum(change[::-1], axis=0)[::-1], np.zeros((1, change.shape[1]))])  # the last: threshold inf
        tpr = stats[:, 0] / max(state.n_ref[c], 1)
        efpr = stats[:, 1] / state.duration
        if p.alpha_ct:
            others = [k for k in range(len(state.n_ref)) if k != c]
            rates = [stats[:, 2 + k] / max(state.t_ref[k], 1e-12) for k in others]
            efpr = efpr + p.alpha_ct * np.mean(rates, axis=0)
        efpr = efpr * SECONDS[p.unit_of_time]
        order = np.lexsort((tpr, efpr))
        tpr, efpr = tpr[order], efpr[order]
        rising = np.r_[True, np.maximum.accumulate(tpr)[1:] > np.maximum.accumulate(tpr)[:-1]]
        tpr, efpr = tpr[rising], efpr[rising]
        last = np.r_[efpr[1:] != efpr[:-1], True]  # the highest TPR at each eFPR
        tpr, efpr = tpr[last], efpr[last]
        inside = efpr <= p.max_efpr
        return tpr[inside], efpr[inside]


def refuse_connected(reference: ItemSets, cell: np.ndarray, onset: np.ndarray, offset: np.ndarray) -> None:
    """PSDS counts reference events one by one: two of one class that overlap or touch would
    count one sound twice (sed_scores_eval refuses them too)."""
    order = np.lexsort((onset, cell))
    cell, onset, offset = cell[order], onset[order], offset[order]
    joined = np.flatnonzero((cell[1:] == cell[:-1]) & (onset[1:] <= offset[:-1]))
    if joined.size:
        k = joined[0]
        sample, c = divmod(int(cell[k]), len(reference.classes))
        raise DataError(
            f"{reference.source}: {reference.sample_name(sample)!r} has two {reference.classes[c]!r} events that "
            f"{'touch' if onset[k + 1] == offset[k] else 'overlap'} ({onset[k]:g}-{offset[k]:g} and "
            f"{onset[k + 1]:g}-{offset[k + 1]:g}); PSDS counts reference events one by one, so merge them into one"
        )


@dataclass
class Events:
    """A partition's reference events, grouped by file and class (in the listed order), with
    each file's range, padded by one empty event (index ``len(onset)``) for files with fewer."""

    file: np.ndarray
    klass: np.ndarray
    onset: np.ndarray
    offset: np.ndarray
    n_files: int

    def __post_init__(self) -> None:
        self.count = np.bincount(self.file, minlength=self.n_files)
        self.first = np.cumsum(self.count) - self.count
        self.width = int(self.count.max(initial=0))
        self.onset_pad, self.offset_pad = np.r_[self.onset, 0.0], np.r_[self.offset, 0.0]
        self.klass_pad = np.r_[self.klass, -1]
        self.start = np.full(self.n_files, np.inf)  # each file's first onset and last offset
        np.minimum.at(self.start, self.file, self.onset)
        self.end = np.full(self.n_files, -np.inf)
        np.maximum.at(self.end, self.file, self.offset)


def file_blocks(series: ScoreSeries, frames: int) -> Iterator[slice]:
    """The frames of whole files, about ``frames`` at a time (a longer file alone)."""
    first, stop = series.bounds()
    start = 0
    while start < len(series.sample):
        end = int(stop[series.sample[min(start + frames, len(series.sample)) - 1]])
        yield slice(start, end)
        start = end


def noisy_blocks(series: ScoreSeries, noisy: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The (file, class) cells marked ``noisy`` whose files have frames, in blocks of about
    :data:`BLOCK_FRAMES` frames."""
    first, stop = series.bounds()
    files, classes = np.nonzero(noisy & (stop > first)[:, None])
    ends = np.cumsum((stop - first)[files])
    cut = np.searchsorted(ends, np.arange(BLOCK_FRAMES, int(ends[-1]) if len(ends) else 0, BLOCK_FRAMES), side="right")
    for part in np.split(np.arange(len(files)), np.unique(cut)):
        if len(part):
            yield files[part], classes[part]


def runs(series: ScoreSeries, files: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every detection of these (file, class) series at any threshold: each is a run of frames
    whose lowest score (its first lowest frame) is higher than its neighbours'. It exists from
    that score (``born``) down to, and without, the higher of its neighbours' scores (``dies``;
    ``died`` False for a run of the whole series, which never ends). A series of n frames has at
    most n of them (stack-free: :func:`_nearest_lower`). Returns (file, class, onset, offset,
    born, dies, died) per run."""
    first, stop = series.bounds()
    n = stop[files] - first[files]
    start = np.cumsum(n) - n  # each series' place in the flat block
    total = int(n.sum())
    group = np.repeat(np.arange(len(files)), n)
    begin, end = start[group], (start + n)[group]
    frame = np.arange(total) - begin + first[files][group]
    s = series.scores[frame, classes[group]]
    left = _nearest_lower(s, begin, strict=True)
    keep = np.flatnonzero(_nearest_lower(s, begin, strict=False) == left)  # the first lowest frame of its run
    back = _nearest_lower(s[::-1], (total - end)[::-1], strict=True)[::-1]  # the nearest lower after, reversed
    left, back = left[keep], back[keep]
    has_right = back >= 0
    right = total - 1 - back
    a = np.where(left >= 0, left + 1, begin[keep])
    e = np.where(has_right, right, end[keep]) - 1
    after = np.where(e + 1 < end[keep], series.onset[np.minimum(frame[e] + 1, len(series.onset) - 1)],
                     series.offset[frame[e]])  # the next frame's onset, as the frames' times are read
    lower = np.where(left >= 0, s[np.maximum(left, 0)], -np.inf)
    dies = np.maximum(lower, np.where(has_right, s[np.minimum(right, total - 1)], -np.inf))
    return (files[group[keep]], classes[group[keep]], series.onset[frame[a]], after, s[keep], dies,
            (left >= 0) | has_right)


def _nearest_lower(s: np.ndarray, begin: np.ndarray, strict: bool) -> np.ndarray:
    """For each element, the nearest one before it in its series (which starts at ``begin``)
    scoring lower (``strict``) or not higher; -1 for none. Pointer jumping: each element follows
    the answers of those before it, so every round halves the way left."""
    index = np.arange(len(s))
    near = np.where(index > begin, index - 1, -1)
    todo = np.flatnonzero(near >= 0)
    while todo.size:
        ahead = near[todo]
        todo = todo[s[ahead] >= s[todo]] if strict else todo[s[ahead] > s[todo]]
        near[todo] = near[near[todo]]
        todo = todo[near[todo] >= 0]
    return near


def _lives(
    klass: np.ndarray, born: np.ndarray, dies: np.ndarray, died: np.ndarray, column: int,
) -> Points:
    """Changes of one count (``column``) by runs: one more at the score each is born at, one
    fewer at the score it dies at."""
    sign = np.r_[np.ones(len(born), np.int64), -np.ones(int(died.sum()), np.int64)]
    return np.r_[klass, klass[died]], np.full(len(sign), column), sign, np.r_[born, dies[died]]


def _detected(
    event: np.ndarray, cover: np.ndarray, born: np.ndarray, dies: np.ndarray, died: np.ndarray, owner: np.ndarray,
    need: np.ndarray, decimals: int,
) -> Points:
    """TP changes: a reference event counts at the thresholds where the relevant runs alive
    cover at least ``gtc`` of it. ``event``, ``cover``: each (relevant run, event it overlaps)
    pair and the overlap; the cover is summed from the highest score down (a run adds its
    overlap where it is born, takes it away where it dies) and compared at every score where it
    changes. ``owner``: each event's key (its class, or its cell). ``need``: the cover each event
    needs (rounded), above 0."""
    event, score = np.r_[event, event[died]], np.r_[born, dies[died]]
    value = np.r_[cover, -cover[died]]
    order = np.lexsort((-score, event))
    event, score, value = event[order], score[order], value[order]
    new = np.r_[True, event[1:] != event[:-1]][: len(event)]
    total = np.cumsum(value)
    covered = total - (total - value)[np.flatnonzero(new)][np.cumsum(new) - 1]
    last = np.r_[(event[1:] != event[:-1]) | (score[1:] != score[:-1]), True][: len(event)]  # every change at a score
    event, score, covered = event[last], score[last], covered[last]
    new = np.r_[True, event[1:] != event[:-1]][: len(event)]
    hit = (np.round(covered, decimals) >= need[event]).astype(np.float64)
    change = (hit - np.where(new, 0.0, np.r_[0.0, hit[:-1]])).astype(np.int64)
    keep = change != 0
    return owner[event[keep]], np.zeros(int(keep.sum()), np.int64), change[keep], score[keep]


def _always(
    series: ScoreSeries, block: tuple[np.ndarray, np.ndarray], events: Events, owner: np.ndarray, need: np.ndarray,
    n_classes: int,
) -> Points:
    """TP changes of the block's events that need no cover (a GTC of 0): detected at every
    threshold up to their series' highest score."""
    cells = block[0] * n_classes + block[1]
    free = np.flatnonzero((need <= 0) & np.isin(events.file * n_classes + events.klass, cells))
    first, stop = series.bounds()
    top = [series.scores[first[f] : stop[f], c].max() for f, c in zip(events.file[free], events.klass[free])]
    return owner[free], np.zeros(len(free), np.int64), np.ones(len(free), np.int64), np.asarray(top, np.float64)


def quiet_changes(series: ScoreSeries, quiet: np.ndarray, frames: slice) -> Points:
    """The change points of the (file, class) cells marked ``quiet`` among these frames (of whole
    files): cells whose detections all count as false positives (no reference event there, and
    no cross-trigger counted). The number of detections rises by one where the threshold falls
    below a local maximum and drops by one below a local minimum, so these come from the scores
    alone, for all such cells at once."""
    sample, scores = series.sample[frames], series.scores[frames]
    is_first = np.r_[True, sample[1:] != sample[:-1]]
    is_last = np.r_[sample[1:] != sample[:-1], True]
    before = np.where(is_first[:, None], -np.inf, np.roll(scores, 1, axis=0))
    after = np.where(is_last[:, None], -np.inf, np.roll(scores, -1, axis=0))
    delta = ((scores > before).astype(np.int64) - (after > scores)) * (scores > -np.inf)
    frame, klass = np.nonzero((delta != 0) & quiet[sample])
    return klass, np.ones(len(frame), np.int64), delta[frame, klass], scores[frame, klass]


def cell_counts(parts: list[Points], width: int, n_classes: int) -> Counts:
    """Counts of change points keyed by (file, class) cell: summed per cell and score first (a
    cell's changes that cancel are no change, as sed_scores_eval takes a file's deltas where it
    has reference events), then
    per class and score with one more column, the cells that change there, so a score where two
    files' changes cancel stays a point (the peer keeps it: its best threshold is centred on it)."""
    cell, column, sign, score = (np.concatenate(part) for part in zip(*parts)) if parts else (np.zeros(0, np.int64),) * 4
    change = np.zeros((len(cell), width + 1))
    change[np.arange(len(cell)), column] = sign
    zero = np.zeros(n_classes)
    per_cell = Counts.of(cell, score, change, zero, zero, 0.0)
    per_cell.change[:, width] = 1
    return Counts.of(per_cell.klass % n_classes, per_cell.score, per_cell.change, zero, zero, 0.0)


def psd_roc(rocs: list[tuple[np.ndarray, np.ndarray]], alpha_st: float, max_efpr: float) -> tuple[np.ndarray, np.ndarray]:
    """The PSD-ROC: on the union of the classes' eFPRs, the mean of their TPRs (each held from
    its last point, 0 before its first) minus ``alpha_st`` standard deviations, not below 0, and
    held up to ``max_efpr``."""
    grid = np.unique(np.concatenate([efpr for _, efpr in rocs]))
    held = []
    for tpr, efpr in rocs:
        at = np.searchsorted(efpr, grid, side="right") - 1
        held.append(np.where(at >= 0, tpr[np.maximum(at, 0)], 0.0))
    curve = np.maximum(np.mean(held, axis=0) - alpha_st * np.std(held, axis=0), 0.0)
    return np.r_[curve, curve[-1]], np.r_[grid, max_efpr]


def staircase_area(y: np.ndarray, x: np.ndarray, max_x: float) -> float:
    """The area under a staircase curve (each y held until the next x) up to ``max_x``, divided
    by ``max_x``. Of points at one x the last given holds: the sort is stable, since numpy's
    default sort orders ties differently by CPU."""
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    inside = int(np.searchsorted(x, max_x, side="right"))
    x = np.r_[x[:inside], max_x]
    return float(np.sum(y[:inside] * np.diff(x)) / max_x)
