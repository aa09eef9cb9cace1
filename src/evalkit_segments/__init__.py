"""Labelled time segments: length-based sets, fuzzy boundaries, segment overlap, Ziółko-style
fuzzy precision and recall, and the sound-event file formats (evalkit_segments.loaders).

Items are intervals ``(onset, offset)`` in seconds, per (file, class) cell. Fränti &
Mariescu-Istodor, "Soft precision and recall", Section 4.5: a set of segments is measured by its
length and an intersection by the shared length.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import (
    Array,
    BaseComponent,
    CardinalityTable,
    Cells,
    DataError,
    ItemSets,
    Similarity,
    TNorm,
    cross_blocks,
    hookimpl,
)
from evalkit_segments.collar import Collar
from evalkit_segments.collar_scores import CollarBestErrorRate, CollarBestFScore, CollarErrorRate, CollarFScore
from evalkit_segments.durations import Durations, DurationsSpec, ReadsDurations, durations_field
from evalkit_segments.event_based import EventBased
from evalkit_segments.intersection_based import IntersectionBased, IntersectionErrorRate
from evalkit_segments.intervals import THRESHOLD, IntervalSimilarity, cell_intervals
from evalkit_segments.loaders import EventListLoader, MaestroSoftLabels
from evalkit_segments.parquet_events import ParquetEventList
from evalkit_segments.psds import PSDS
from evalkit_segments.score_files import ScoreFiles
from evalkit_segments.segment_based import SegmentBased, SegmentErrorRate


@hookimpl
def evalkit_register_set_representations(register):
    for cls in (Segments, FuzzySegments, FuzzyPR, EventBased):
        register(cls)


@hookimpl
def evalkit_register_similarities(register):
    register(SegmentOverlap)
    register(Collar)


@hookimpl
def evalkit_register_loaders(register):
    register(EventListLoader)
    register(ParquetEventList)
    register(MaestroSoftLabels)
    register(ScoreFiles)


@hookimpl
def evalkit_register_metrics(register):
    for cls in (PSDS, SegmentBased, SegmentErrorRate, IntersectionBased, IntersectionErrorRate, CollarFScore,
                CollarBestFScore, CollarErrorRate, CollarBestErrorRate):
        register(cls)


def merge(cell: np.ndarray, onset: np.ndarray, offset: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each cell's intervals as disjoint intervals (overlapping or touching ones merged)."""
    if not len(cell):
        return cell, onset, offset
    ordered = (cell[1:] > cell[:-1]) | ((cell[1:] == cell[:-1]) & (onset[1:] >= onset[:-1]))
    if not ordered.all():  # loaders give sorted events; other sources are sorted here
        order = np.lexsort((onset, cell))
        cell, onset, offset = cell[order], onset[order], offset[order]
    # The furthest offset so far within each cell, exactly (shifting each cell above the previous
    # by a multiple of the time span would round times once cells x span passes 2**53 ulps).
    import pandas as pd  # type: ignore[import-untyped]

    reach = pd.Series(offset).groupby(cell, sort=False).cummax().to_numpy()
    starts = np.ones(len(cell), dtype=bool)
    starts[1:] = (cell[1:] != cell[:-1]) | (onset[1:] > reach[:-1])
    first = np.flatnonzero(starts)
    return cell[first], onset[first], np.maximum.reduceat(offset, first)


def lengths(merged: tuple[np.ndarray, np.ndarray, np.ndarray], n_cells: int) -> np.ndarray:
    return np.bincount(merged[0], weights=merged[2] - merged[1], minlength=n_cells)


def sweep(a: tuple, b: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The boundaries of two lists of ``(key, start, end)`` intervals, sorted by key then time,
    with how many intervals of each list are open just after each boundary."""
    n, m = len(a[0]), len(b[0])
    key = np.concatenate([a[0], a[0], b[0], b[0]])
    time = np.concatenate([a[1], a[2], b[1], b[2]])
    step_a = np.concatenate([np.ones(n), -np.ones(n), np.zeros(2 * m)])
    step_b = np.concatenate([np.zeros(2 * n), np.ones(m), -np.ones(m)])
    order = np.lexsort((time, key))
    return key[order], time[order], np.cumsum(step_a[order]), np.cumsum(step_b[order])


def shared_length(ref: tuple, pred: tuple, n_cells: int) -> np.ndarray:
    """Per cell, the length covered by both sides' disjoint intervals: one sweep over the sorted
    boundaries, O((n + m) log(n + m)), no time grid."""
    cell, time, in_ref, in_pred = sweep(ref, pred)
    # Between consecutive boundaries of one cell, both sides cover the gap iff both counts > 0.
    gap = np.where((in_ref[:-1] > 0) & (in_pred[:-1] > 0) & (cell[1:] == cell[:-1]), np.diff(time), 0.0)
    return np.bincount(cell[:-1], weights=gap, minlength=n_cells)


def substituted_length(ref: tuple, pred: tuple, n_samples: int, n_classes: int) -> np.ndarray:
    """Per sample (file), ∫ min(FN(t), FP(t)) dt: at each instant, FN counts the classes active in
    the reference only and FP those active in the prediction only; a miss and a false alarm at
    the same instant are a substitution (Mesaros et al. 2016, whose segments are the instants of
    a grid). Two sweeps: per cell for the one-sided parts, then per sample over those parts."""
    cell, time, in_ref, in_pred = sweep(ref, pred)
    gap = (cell[1:] == cell[:-1]) & (time[1:] > time[:-1])

    def parts(one_sided: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        at = np.flatnonzero(one_sided)
        return cell[at] // n_classes, time[at], time[at + 1]

    missed = parts(gap & (in_ref[:-1] > 0) & (in_pred[:-1] == 0))
    false = parts(gap & (in_pred[:-1] > 0) & (in_ref[:-1] == 0))
    sample, at, fn, fp = sweep(missed, false)
    length = np.where(sample[1:] == sample[:-1], np.diff(at), 0.0) * np.minimum(fn, fp)[:-1]
    return np.bincount(sample[:-1], weights=length, minlength=n_samples)[:n_samples]


class SegmentsParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    resolution: float | None = Field(
        None, gt=0, allow_inf_nan=False,
        description="seconds per segment of sed_eval's segment-based grid: an event covers segments "
        "floor(onset / resolution) to ceil(offset / resolution) - 1, and lengths count segments "
        "(none: exact lengths in seconds)",
    )
    durations: DurationsSpec = durations_field(
        "each file ends there, on the grid after ceil(duration / resolution) segments, and an event past the end "
        "is cut at it, as sed_scores_eval's segment-based metrics (audio_durations) and sed_eval's "
        "evaluated_length_seconds cut them (none: a file reaches its last offset on either side, as sed_eval's "
        "default)"
    )
    threshold: float | None = THRESHOLD


class Segments(ReadsDurations, BaseComponent[SegmentsParams]):
    """Segments by length: |A| = length of the union, |G ∩ P| = shared length (exact sweep).

    With ``resolution``, on sed_eval's segment grid (Mesaros, Heittola & Virtanen, "Metrics for
    polyphonic sound event detection", 2016): |G|, |P| and |G ∩ P| count the segments a class is
    active in, per file, as ``sed_eval.sound_event.SegmentBasedMetrics(time_resolution=...)``
    counts them (Nref, Nsys and Ntp). With ``durations``, each file's grid ends at its end.
    """

    name = "segments"
    uses: ClassVar[frozenset[str]] = frozenset()
    data = "items"
    Params = SegmentsParams

    def __init__(self, params: SegmentsParams) -> None:
        super().__init__(params)
        self.durations = Durations(params.durations, self.name) if params.durations is not None else None

    def cardinalities(
        self, reference: ItemSets, prediction: ItemSets, *, tnorm: TNorm | None, similarity: Similarity | None
    ) -> CardinalityTable:
        shape = (len(reference), len(reference.classes))
        n = shape[0] * shape[1]
        ends = self._ends(reference)
        ref, pred = (merge(*self._cut(self._on_grid(cell_intervals(side, self.params.threshold)), ends, shape[1]))
                     for side in (reference, prediction))
        card_ref, card_pred, inter = (c.reshape(shape) for c in (lengths(ref, n), lengths(pred, n), shared_length(ref, pred, n)))
        # a second sweep, made only when an error rate asks for the substitutions
        return CardinalityTable(card_ref, card_pred, inter, substitutions=lambda: substituted_length(ref, pred, *shape))

    def _on_grid(self, cells: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Intervals as the segments they touch (in segment units), as sed_eval's event roll
        takes them: ``floor(onset / r)`` to ``ceil(offset / r)``, the same float divisions."""
        resolution = self.params.resolution
        if resolution is None:
            return cells
        cell, onset, offset = cells
        return cell, np.floor(onset / resolution), np.ceil(offset / resolution)

    def _ends(self, reference: ItemSets) -> np.ndarray | None:
        """Where each file ends, in the units of :meth:`_on_grid` (None: nowhere)."""
        if self.durations is None:
            return None
        seconds = self.durations.of([reference.sample_name(row) for row in range(len(reference))], reference.source)
        resolution = self.params.resolution
        # ceil(duration / resolution) segments: sed_scores_eval's n_segments, sed_eval's evaluated_length_segments
        return seconds if resolution is None else np.ceil(seconds / resolution)

    @staticmethod
    def _cut(
        cells: tuple[np.ndarray, np.ndarray, np.ndarray], ends: np.ndarray | None, n_classes: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Intervals cut at their file's end (one past it: empty, at the end)."""
        if ends is None:
            return cells
        cell, onset, offset = cells
        end = ends[cell // n_classes]
        return cell, np.minimum(onset, end), np.minimum(offset, end)


class FuzzySegmentsParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    ramp: float = Field(1.0, ge=0, description="width (s) of the linear ramp centred on every onset and offset")
    onset_ramp: float | None = Field(None, ge=0, description="ramp width at onsets, if different")
    offset_ramp: float | None = Field(None, ge=0, description="ramp width at offsets, if different")
    tolerance: float = Field(
        1e-9, gt=0, description="absolute error bound per cell when the T-norm needs quadrature"
    )


class FuzzySegments(BaseComponent[FuzzySegmentsParams]):
    """Segments with trapezoidal (fuzzy) boundaries: |A| = ∫μ dt, |G ∩ P| = ∫T(μ_G, μ_P) dt.

    Exact for minimum, product and Łukasiewicz (piecewise-linear memberships); other T-norms by
    adaptive quadrature to ``tolerance`` per cell, or an error if it cannot be reached.
    """

    name = "fuzzy_segments"
    uses = frozenset({"tnorm"})
    data = "items"
    Params = FuzzySegmentsParams

    def cardinalities(
        self, reference: ItemSets, prediction: ItemSets, *, tnorm: TNorm | None, similarity: Similarity | None
    ) -> CardinalityTable:
        from evalkit_segments.fuzzy_boundaries import fuzzy_cardinalities

        assert tnorm is not None, "fuzzy_segments uses a T-norm, so evalkit always passes one"
        shape = (len(reference), len(reference.classes))
        p = self.params
        onset_ramp = p.ramp if p.onset_ramp is None else p.onset_ramp
        offset_ramp = p.ramp if p.offset_ramp is None else p.offset_ramp
        card_ref, card_pred, inter, error = fuzzy_cardinalities(
            merge(*cell_intervals(reference)), merge(*cell_intervals(prediction)), shape[0] * shape[1],
            onset_ramp, offset_ramp, tnorm, p.tolerance,
        )
        if len(error) and error.max() > p.tolerance:
            worst = int(np.argmax(error))
            sample, cls = divmod(worst, shape[1])
            raise DataError(
                f"fuzzy_segments with T-norm {tnorm.name!r}: the integral of sample "
                f"{reference.sample_name(sample)!r}, class {reference.classes[cls]!r} has an "
                f"error bound of {error[worst]:.3g}, above the tolerance {p.tolerance:g}; raise "
                "`tolerance`, or use minimum, product or lukasiewicz (integrated exactly)"
            )
        return CardinalityTable(*(c.reshape(shape) for c in (card_ref, card_pred, inter)))


class SegmentOverlapParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    variant: Literal["max", "iou"] = Field(
        "max", description="shared length over the longer segment's length (max) or over their union (iou)"
    )


class SegmentOverlap(IntervalSimilarity[SegmentOverlapParams]):
    """Shared length of two segments over the longer one's length (or over their union: iou)."""

    name = "segment_overlap"
    symmetric = True
    Params = SegmentOverlapParams

    def _similarity(self, on_a: Array, off_a: Array, on_b: Array, off_b: Array) -> Array:
        shared = np.maximum(np.minimum(off_a, off_b) - np.maximum(on_a, on_b), 0)
        len_a, len_b = off_a - on_a, off_b - on_b
        scale = np.maximum(len_a, len_b) if self.params.variant == "max" else len_a + len_b - shared
        ratio = np.divide(shared, scale, out=np.zeros(np.broadcast(shared, scale).shape), where=scale > 0)
        # An identical segment is 1, also when it has zero length.
        return np.where((on_a == on_b) & (off_a == off_b), 1.0, ratio)


class FuzzyPR(BaseComponent):
    """Ziółko-style fuzzy P/R: every segment scored by its most similar one on the other side.

    Recall = Σ_g max_p sim(g, p) / |G| and precision = Σ_p max_g sim(p, g) / |P| (|·| counts
    segments); F and the other metrics follow from P and R. |G ∩ P| reports the reference's
    matched mass.
    """

    name = "fuzzy_pr"
    uses = frozenset({"similarity"})
    data = "items"

    def cardinalities(
        self, reference: ItemSets, prediction: ItemSets, *, tnorm: TNorm | None, similarity: Similarity | None
    ) -> CardinalityTable:
        assert similarity is not None, "fuzzy_pr uses a similarity, so evalkit always passes one"
        cells = Cells(reference, prediction)
        matched_ref, matched_pred = np.zeros(len(cells.size)), np.zeros(len(cells.size))
        for cell, sim in cross_blocks(similarity, cells):
            matched_ref[cell] = sim.max(axis=1).sum()
            matched_pred[cell] = sim.max(axis=0).sum()
        shape = cells.shape
        n_ref, n_pred = cells.n_ref.reshape(shape).astype(np.float64), cells.n_pred.reshape(shape).astype(np.float64)
        return CardinalityTable(
            n_ref, n_pred, matched_ref.reshape(shape), matched_ref.reshape(shape), matched_pred.reshape(shape)
        )
