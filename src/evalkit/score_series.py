"""Score series: per sample, a system's score for every class on consecutive time frames.

This is what a sound-event detector outputs before any threshold (sed_scores_eval's score files:
one table per audio file, rows ``onset offset <one score per class>``). Threshold-free measures
such as PSDS read them whole; a representation that counts events first turns them into events
at a threshold (:meth:`ScoreSeries.detections`).

Held as columns, like :class:`evalkit.items.Intervals`: every frame's sample, onset and offset,
and a (frames, classes) score matrix, frames grouped by sample in time order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

from evalkit.gather import gather


class ScoreSeries(Sequence[tuple[tuple[tuple[float, float, float], ...], ...]]):
    """The frames of ``n_samples`` samples: ``sample``, ``onset``, ``offset`` (one per frame,
    grouped by sample, each sample's frames consecutive in time) and ``scores`` (frames × classes)."""

    def __init__(self, sample: np.ndarray, onset: np.ndarray, offset: np.ndarray, scores: np.ndarray, n_samples: int) -> None:
        self.sample = np.asarray(sample, np.int64)
        self.onset, self.offset = np.asarray(onset, np.float64), np.asarray(offset, np.float64)
        self.scores = np.asarray(scores, np.float64)  # frames x classes
        self.n_samples = n_samples

    @property
    def n_classes(self) -> int:
        return self.scores.shape[1]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The first frame of each sample and the frame after its last (equal when it has none)."""
        starts = np.searchsorted(self.sample, np.arange(self.n_samples + 1))
        return starts[:-1], starts[1:]

    def ends(self) -> np.ndarray:
        """Each sample's last frame offset (NaN for a sample without frames)."""
        first, stop = self.bounds()
        return np.where(stop > first, self.offset[np.maximum(stop - 1, 0)] if len(self.offset) else np.nan, np.nan)

    def latest_end(self) -> float | None:
        return float(self.offset.max()) if self.offset.size else None

    def detections(self, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cell, onset, offset) of the events where a class's score is above ``threshold``: each
        run of consecutive frames above it, from the first frame's onset to the last one's offset
        (as sed_scores_eval's ``scores_to_event_list``); cells numbered sample-major."""
        above = self.scores > threshold  # frames x classes
        frame, klass = np.nonzero(above)
        order = np.lexsort((frame, klass))  # by class, then time: a run is consecutive frames of one sample
        frame, klass = frame[order], klass[order]
        if not frame.size:  # nothing above the threshold (a chunk of quiet files)
            return np.empty(0, np.int64), np.empty(0), np.empty(0)
        next_frame = (frame[1:] == frame[:-1] + 1) & (self.sample[frame[1:]] == self.sample[frame[:-1]])
        same = np.r_[False, (klass[1:] == klass[:-1]) & next_frame]
        first = np.flatnonzero(~same)
        last = np.r_[first[1:], len(frame)] - 1
        cell = self.sample[frame[first]] * self.n_classes + klass[first]
        return cell, self.onset[frame[first]], self.offset[frame[last]]

    def take(self, rows: np.ndarray) -> ScoreSeries:
        """These samples, in this order, each as often as listed; -1 is a sample without frames."""
        keep, place = gather(self.sample, self.n_samples, rows)
        return ScoreSeries(place, self.onset[keep], self.offset[keep], self.scores[keep], len(rows))

    def select(self, positions: Sequence[int]) -> ScoreSeries:
        """The classes at ``positions``; -1, a class the system does not score, is never detected
        (a score of -inf)."""
        columns = np.asarray(positions, np.int64)
        scores = self.scores[:, np.maximum(columns, 0)] if len(columns) else np.empty((len(self.sample), 0))
        scores[:, columns < 0] = -np.inf
        return ScoreSeries(self.sample, self.onset, self.offset, scores, self.n_samples)

    def grown(self, extra: int) -> ScoreSeries:
        """With ``extra`` samples without frames after the others."""
        return ScoreSeries(self.sample, self.onset, self.offset, self.scores, self.n_samples + extra)

    def __add__(self, other: ScoreSeries) -> ScoreSeries:
        """These samples, then ``other``'s (two systems side by side, for a paired test)."""
        return ScoreSeries(
            np.r_[self.sample, other.sample + self.n_samples], np.r_[self.onset, other.onset],
            np.r_[self.offset, other.offset], np.vstack([self.scores, other.scores]), self.n_samples + other.n_samples,
        )

    def __len__(self) -> int:
        return self.n_samples

    @overload
    def __getitem__(self, row: int) -> tuple[tuple[tuple[float, float, float], ...], ...]: ...

    @overload
    def __getitem__(self, row: slice) -> ScoreSeries: ...

    def __getitem__(self, row: int | slice) -> tuple[tuple[tuple[float, float, float], ...], ...] | ScoreSeries:
        """A slice of samples, or one sample's frames per class as (onset, offset, score)."""
        if isinstance(row, slice):
            return self.take(np.arange(self.n_samples)[row])
        first, stop = self.bounds()
        at = slice(first[row], stop[row])
        frames = list(zip(self.onset[at].tolist(), self.offset[at].tolist()))
        return tuple(tuple((a, b, s) for (a, b), s in zip(frames, self.scores[at, c].tolist())) for c in range(self.n_classes))

    def __iter__(self) -> Iterator[tuple[tuple[tuple[float, float, float], ...], ...]]:
        return (self[i] for i in range(self.n_samples))

    def __repr__(self) -> str:
        return f"ScoreSeries({len(self.sample)} frames of {self.n_samples} samples x {self.n_classes} classes)"
