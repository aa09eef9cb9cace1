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
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalkit.plugin import BaseComponent, ConfigPath, Curve, DataError, ItemSets, PerClass, ScoreSeries
from evalkit_segments.intervals import cell_intervals

SECONDS = {"second": 1.0, "minute": 60.0, "hour": 3600.0}


class PSDSParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dtc_threshold: float = Field(
        ..., gt=0, le=1, allow_inf_nan=False,
        description="detection tolerance criterion: the share of a detection that must overlap the class's reference "
        "events (above 0: at 0 a detection far from every event would pass)",
    )
    gtc_threshold: float = Field(
        ..., ge=0, le=1, allow_inf_nan=False,
        description="ground-truth intersection criterion: the share of a reference event the relevant detections must cover",
    )
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
    durations: ConfigPath | None = Field(
        None, description="a table of audio durations (columns filename and duration, tab- or comma-separated, as "
        "DCASE ships them); without it a file's duration is the end of its last score frame",
    )
    time_decimals: int = Field(6, ge=0, le=12, description="times are compared rounded to this many decimals")

    @model_validator(mode="after")
    def _cross_triggers(self) -> PSDSParams:
        if self.alpha_ct > 0 and self.cttc_threshold is None:
            raise ValueError("alpha_ct > 0 counts cross-triggers: give cttc_threshold too")
        if self.alpha_ct == 0 and self.cttc_threshold is not None:
            raise ValueError("cttc_threshold is used only with alpha_ct > 0: give alpha_ct, or leave cttc_threshold out")
        return self


@dataclass
class Deltas:
    """What one part of the data adds to every class's counts, as changes at the scores where
    they change (a change applies to every threshold at or below its score)."""

    klass: np.ndarray  # the class of each change point
    score: np.ndarray  # its score
    change: np.ndarray  # (points, 2 + classes): TP, FP, then cross-triggers per other class
    n_ref: np.ndarray  # reference events per class
    t_ref: np.ndarray  # their total length per class
    duration: float  # audio seconds

    def __add__(self, other: Deltas) -> Deltas:
        return Deltas(
            np.r_[self.klass, other.klass], np.r_[self.score, other.score], np.vstack([self.change, other.change]),
            self.n_ref + other.n_ref, self.t_ref + other.t_ref, self.duration + other.duration,
        )


class PSDS(BaseComponent[PSDSParams]):
    """The Polyphonic Sound Detection Score of score series against event lists (``psds`` and
    ``psds_per_class``), equal to sed_scores_eval's ``intersection_based.psds``, and the PSD-ROC
    it is the area of (``psd_roc``, drawn in reports)."""

    name = "psds"
    Params = PSDSParams
    keeps_data = "it has no bounded variant yet; run it in memory"
    glossary = {
        "psds": "Polyphonic Sound Detection Score: the area under the PSD-ROC (TPR against effective false "
                "positives per unit of time; the classes' mean less α_st times their spread) up to max_efpr, "
                "divided by max_efpr.",
        "psds_per_class": "Each class's area under its own ROC (TPR against effective false positives per "
                          "unit of time) up to max_efpr, divided by max_efpr.",
    }
    data = "items"
    classes: tuple[str, ...] = ()

    def __init__(self, params: PSDSParams) -> None:
        super().__init__(params)
        self.durations = read_durations(params.durations) if params.durations is not None else None

    def prepare(self, classes: Any) -> None:
        self.classes = tuple(classes)

    def update(self, reference: ItemSets, prediction: ItemSets) -> Deltas:
        series = prediction.samples
        if not isinstance(series, ScoreSeries):
            raise DataError(
                f"{prediction.source}: psds reads a system's scores over time (a folder of score files, "
                "loader sed_scores), not an event list"
            )
        n_classes = len(reference.classes)
        cell, onset, offset = cell_intervals(reference)
        order = np.lexsort((np.arange(len(cell)), cell))  # by cell, in the listed order
        cell, onset, offset = cell[order], onset[order], offset[order]
        _refuse_connected(reference, cell, onset, offset)
        length = offset - onset
        per_class = cell % n_classes
        n_ref = np.bincount(per_class, minlength=n_classes).astype(np.float64)
        t_ref = np.bincount(per_class, weights=length, minlength=n_classes)
        duration = float(self._durations(reference, series).sum())
        parts = [_quiet_changes(series, cell, n_classes, self.params.cttc_threshold is not None)]
        events_at = np.searchsorted(cell, np.arange(len(reference) * n_classes + 1))
        first, stop = series.bounds()
        cross = self.params.cttc_threshold is not None
        for sample in np.flatnonzero(stop > first):
            at = slice(first[sample], stop[sample])
            times = np.r_[series.onset[at], series.offset[stop[sample] - 1]]
            bounds = events_at[sample * n_classes : (sample + 1) * n_classes + 1]
            in_file = slice(bounds[0], bounds[-1])  # the file's events, by class
            events = (onset[in_file], offset[in_file], per_class[in_file])
            for c in _noisy_classes(per_class[in_file], n_classes, cross):
                parts.append(self._changes(series.scores[at, c], times, events, c, n_classes))
        klass, score, change = (np.concatenate(column) for column in zip(*parts))
        return Deltas(klass, score, change.reshape(len(score), -1), n_ref, t_ref, duration)

    def _durations(self, reference: ItemSets, series: ScoreSeries) -> np.ndarray:
        if self.durations is None:
            ends = series.ends()
            if np.isnan(ends).any():
                row = int(np.argmax(np.isnan(ends)))
                raise DataError(
                    f"psds: {reference.sample_name(row)!r} has no score frames, so its duration is unknown; "
                    "give the metric `durations:` (a table of filename and duration)"
                )
            return ends
        known, source = self.durations
        found = []
        for row in range(len(reference)):
            name = reference.sample_name(row)
            duration = known.get(name, known.get(name.rsplit(".", 1)[0]))
            if duration is None:
                raise DataError(f"psds: {name!r} has no duration in {source}; every evaluated file needs one")
            found.append(duration)
        return np.asarray(found)

    def _changes(
        self, scores: np.ndarray, times: np.ndarray, events: tuple[np.ndarray, np.ndarray, np.ndarray], c: int,
        n_classes: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The change points of one file and class: every distinct score at which TP, FP or a
        cross-trigger count changes, and the change. ``events``: the file's reference events
        (onsets, offsets, classes), grouped by class."""
        p = self.params
        decimals = p.time_decimals
        own = events[2] == c
        onset, offset = events[0][own], events[1][own]
        thresholds = np.unique(scores)
        on, off = detections(scores, times, thresholds)
        length = off - on
        active = length > 0
        overlap = np.maximum(np.minimum(off[..., None], offset) - np.maximum(on[..., None], onset), 0.0)
        relevant = (np.round(overlap.sum(-1), decimals) >= np.round(p.dtc_threshold * length, decimals)) & active
        covered = np.round((relevant[..., None] * overlap).sum(-2), decimals)
        tp = (covered >= np.round(p.gtc_threshold * (offset - onset), decimals)).sum(-1)
        fp = active.sum(-1) - relevant.sum(-1)
        stats = np.zeros((len(thresholds), 2 + (n_classes if p.cttc_threshold is not None else 0)))
        stats[:, 0], stats[:, 1] = tp, fp
        if p.cttc_threshold is not None and not own.all():
            other_on, other_off, other_class = (column[~own] for column in events)
            cross = np.maximum(np.minimum(off[..., None], other_off) - np.maximum(on[..., None], other_on), 0.0)
            starts = np.flatnonzero(np.r_[True, other_class[1:] != other_class[:-1]])  # one group per other class
            hit = np.round(np.add.reduceat(~relevant[..., None] * cross, starts, axis=-1), decimals)
            crossing = (hit >= np.round(p.cttc_threshold * length, decimals)[..., None]) & active[..., None]
            stats[:, 2 + other_class[starts]] = crossing.sum(-2)
        change = stats - np.vstack([stats[1:], np.zeros_like(stats[:1])])
        keep = np.abs(change).sum(axis=1) > 0
        return np.full(int(keep.sum()), c), thresholds[keep], change[keep].ravel()

    def compute(self, state: Deltas) -> dict[str, Any]:
        defined = np.flatnonzero(state.n_ref > 0)  # a class without reference events has no TPR
        rocs = [self._roc(state, int(c)) for c in defined]
        area = np.full(len(state.n_ref), np.nan)
        area[defined] = [staircase_area(tpr, efpr, self.params.max_efpr) for tpr, efpr in rocs]
        if not rocs:
            return {"psds": np.nan, "psds_per_class": PerClass(area)}
        tpr, efpr = psd_roc(rocs, self.params.alpha_st, self.params.max_efpr)
        roc = Curve(efpr, tpr, f"effective FP rate per {self.params.unit_of_time}", "effective TP rate")
        return {"psds": staircase_area(tpr, efpr, self.params.max_efpr), "psds_per_class": PerClass(area), "psd_roc": roc}

    def _roc(self, state: Deltas, c: int) -> tuple[np.ndarray, np.ndarray]:
        """One class's ROC: (TPR, eFPR) over every threshold, monotone, up to ``max_efpr``."""
        p = self.params
        mine = state.klass == c
        _, inverse = np.unique(state.score[mine], return_inverse=True)
        change = state.change[mine]
        summed = np.zeros((inverse.max() + 1 if len(inverse) else 0, change.shape[1]))
        np.add.at(summed, inverse, change)
        stats = np.vstack([np.cumsum(summed[::-1], axis=0)[::-1], np.zeros((1, change.shape[1]))])  # the last: threshold inf
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


def _refuse_connected(reference: ItemSets, cell: np.ndarray, onset: np.ndarray, offset: np.ndarray) -> None:
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


def detections(scores: np.ndarray, times: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(onsets, offsets), (thresholds, detections): at each threshold, the runs of frames scoring
    at least it, padded with empty (0, 0) detections to one width."""
    above = np.zeros((len(thresholds), len(scores) + 2), dtype=np.int8)
    above[:, 1:-1] = scores >= thresholds[:, None]
    edge = np.diff(above, axis=1)
    row, start = np.nonzero(edge == 1)
    _, end = np.nonzero(edge == -1)
    count = np.bincount(row, minlength=len(thresholds))
    slot = np.arange(len(row)) - np.repeat(np.cumsum(count) - count, count)
    on = np.zeros((len(thresholds), int(count.max(initial=0))))
    off = np.zeros_like(on)
    on[row, slot], off[row, slot] = times[start], times[end]
    return on, off


def _noisy_classes(present: np.ndarray, n_classes: int, cross: bool) -> list[int]:
    """The classes of a file whose counts need the detections: those with reference events, and
    with cross-triggers counted, every class when any has."""
    if cross and present.size:
        return list(range(n_classes))
    return sorted(set(present.tolist()))


def _quiet_changes(
    series: ScoreSeries, cell: np.ndarray, n_classes: int, cross: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The change points of every (file, class) whose detections all count as false positives
    (no reference event there, and no cross-trigger counted): the number of detections rises by
    one where the threshold falls below a local maximum and drops by one below a local minimum,
    so these come from the scores alone, for all such files at once."""
    first, stop = series.bounds()
    has_events = np.zeros((series.n_samples, n_classes), dtype=bool)
    has_events[cell // n_classes, cell % n_classes] = True
    if cross:
        has_events[has_events.any(axis=1)] = True
    quiet = ~has_events[series.sample]  # frames x classes
    scores = series.scores
    is_first = np.zeros(len(scores), dtype=bool)
    is_first[first[stop > first]] = True
    is_last = np.zeros(len(scores), dtype=bool)
    is_last[stop[stop > first] - 1] = True
    before = np.where(is_first[:, None], -np.inf, np.roll(scores, 1, axis=0))
    after = np.where(is_last[:, None], -np.inf, np.roll(scores, -1, axis=0))
    delta = ((scores > before).astype(np.int64) - (after > scores)) * (scores > -np.inf)
    frame, klass = np.nonzero((delta != 0) & quiet)
    width = 2 + (n_classes if cross else 0)
    change = np.zeros((len(frame), width))
    change[:, 1] = delta[frame, klass]
    return klass, scores[frame, klass], change.ravel()


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


def read_durations(path: Any) -> tuple[dict[str, float], str]:
    """``{filename: seconds}`` from a table with columns filename and duration."""
    import pandas as pd  # type: ignore[import-untyped]

    try:
        with open(path, encoding="utf-8-sig") as handle:
            header = handle.readline()
    except OSError as exc:
        raise DataError(f"psds durations: cannot read {path} ({exc.strerror or exc})") from None
    try:
        with warnings.catch_warnings():  # a row of more fields than the header: an error, not a dropped field
            warnings.simplefilter("error", pd.errors.ParserWarning)
            table = pd.read_csv(path, sep="\t" if "\t" in header else ",", dtype=str, keep_default_na=False,
                                index_col=False, encoding="utf-8-sig")
    except (pd.errors.ParserError, pd.errors.ParserWarning, UnicodeDecodeError) as exc:
        raise DataError(f"psds durations: {path} is not a table of filename and duration ({exc})") from None
    table.columns = [str(c).strip().lower() for c in table.columns]
    if not {"filename", "duration"} <= set(table.columns):
        raise DataError(f"{path}:1: columns {', '.join(table.columns)}; a durations table has the columns filename and duration")
    seconds = pd.to_numeric(table["duration"], errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero(~np.isfinite(seconds) | (seconds <= 0))
    if bad.size:
        k = bad[0]
        raise DataError(
            f"{path}:{k + 2}: duration {table['duration'].iloc[k].strip()!r} of {table['filename'].iloc[k].strip()!r} "
            "is not a positive number of seconds"
        )
    names = table["filename"].str.strip()
    twice = names[names.duplicated()]
    if len(twice):
        raise DataError(f"{path}:{twice.index[0] + 2}: {twice.iloc[0]!r} is listed twice")
    return dict(zip(names, seconds.tolist())), str(path)
