"""An in-memory run over folders of data files (score files: one a sample) reads each system's
folder a chunk of files at a time, as a streamed run does, through the same fold: each chunk is
prepared and reduced as any partition is (:mod:`evalkit.reduction`) and the tallies add up by
``+``. So its memory is a chunk's files, not the folder's, while it keeps what an in-memory run
gives: any order of the reference's samples, per-sample values, every statistic keyed by sample.

The rest of the data (the reference, event lists, weights) is read whole, as in memory, and
prepared once with each folder listed rather than read (its loader's ``sample_ids``: a sample
without values for each file), so ids are checked, matched (score files by stem) and ordered,
and every message and note is the whole read's. Then the reference's samples are taken
:data:`~evalkit.budget.FOLDER_ROWS` at a time with each folder's files of those samples, read
by its loader's ``stream``. The chunks follow the first folder's order (:func:`_folder_order`), so
each file is read once however the reference lists them; per-sample values are put back in the
reference's order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from evalkit import budget
from evalkit.data import named_as_reference
from evalkit.engine import take
from evalkit.items import ItemSets
from evalkit.per_sample import Part
from evalkit.plan import Source, Work
from evalkit.progress import Progress
from evalkit.reduction import Data, Tally, prepare, reduce_partition
from evalkit.streaming import chunks_of, joined


def listed(work: Work, source: Source) -> ItemSets:
    """The folder's samples without values: its ids (``sample_ids``), with the classes of its
    first file (the one file read), each sample empty."""
    assert source.full is not None and source.loader is not None, "a folder with its loader"
    ids = tuple(source.loader.sample_ids(source.full))
    first = next(chunks_of(work, source, 1))
    assert isinstance(first, ItemSets), "a folder read in chunks holds item data"
    return replace(first.take(np.full(len(ids), -1)), ids=ids)


class _Reader:
    """A folder's files read in its order :data:`~evalkit.budget.FOLDER_ROWS` at a time, the
    samples asked for taken from the chunk that holds them; asked for a sample before that chunk,
    or far past it, the reading starts again from its file. A reference in the folder's order
    (as DCASE lists are) reads every file once."""

    def __init__(self, work: Work, source: Source, listed: ItemSets, ids: tuple[str, ...]) -> None:
        self.work, self.source, self.empty = work, source, listed[:0]
        self.ids = ids  # each file's sample, as the reference names it
        self.file_of = {sample: row for row, sample in enumerate(ids)}
        self._read_from(0)

    def _read_from(self, file: int) -> None:
        self.chunks = chunks_of(self.work, self.source, budget.FOLDER_ROWS, file)
        self.first = file
        self.held: Data = self.empty

    def _holding(self, file: int) -> Data:
        """The chunk that holds ``file``, read on from the one held, or from ``file`` itself."""
        while not self.first <= file < self.first + len(self.held):
            after = self.first + len(self.held)
            if not after <= file < after + budget.FOLDER_ROWS:
                self._read_from(file)
            self.first, self.held = self.first + len(self.held), next(self.chunks)
        return self.held

    def take(self, samples: tuple[str, ...]) -> Data:
        """The folder's rows of these reference ids, named as the reference names them; those it
        lacks are left out (``missing: empty`` makes them empty, as in a whole read)."""
        files = sorted(self.file_of[s] for s in samples if s in self.file_of)
        parts: list[tuple[Data, list[int]]] = []  # each chunk read, and the files taken from it
        for file in files:
            held = self._holding(file)
            if not parts or parts[-1][0] is not held:
                parts.append((held, []))
            parts[-1][1].append(file - self.first)
        taken = [held.take(np.array(rows)) for held, rows in parts]
        return replace(joined(taken) if taken else self.empty, ids=tuple(self.ids[f] for f in files))


def folder_tally(
    work: Work, reference: Data, systems: dict[str, list[Data | None]], weights: Data | None,
    progress: Progress | None = None, total: Callable[[int], int] = int,
) -> Tally:
    """The tally of an in-memory run whose systems' runs given as None are folders read a chunk
    of files at a time. ``progress`` counts ``total(samples)`` rows."""
    job = work.job
    folders = {(name, run): source for name, runs in work.systems.items() for run, source in enumerate(runs)
               if systems[name][run] is None}
    lists = {key: listed(work, source) for key, source in folders.items()}
    given = {name: [lists[name, run] if data is None else data for run, data in enumerate(runs)]
             for name, runs in systems.items()}
    whole, tally = prepare(job, reference, given, weights, files=work.from_files)  # type: ignore[arg-type]
    readers = {key: _Reader(work, source, lists[key], named_as_reference(reference, lists[key]).ids or ())
               for key, source in folders.items()}  # named as prepare names them: before the reference gains samples
    if progress:
        progress.start("evaluating", total(len(whole.reference)))
    order = _folder_order(whole.reference.ids or (), next(iter(readers.values())))
    for first in range(0, len(order), budget.FOLDER_ROWS):
        rows = order[first : first + budget.FOLDER_ROWS]
        chunk = take(whole.reference, rows)
        parts = {name: [readers[name, run].take(chunk.ids or ()) if (name, run) in readers else take(data, rows)
                        for run, data in enumerate(runs)] for name, runs in whole.systems.items()}
        part, counted = prepare(job, chunk, parts, files=work.from_files, ids_checked=True)
        part.weights = None if whole.weights is None else whole.weights[rows]
        tally += counted
        tally += reduce_partition(job, part, progress)  # replicate states added in place
    tally.per_sample = _in_reference_order(tally.per_sample, np.argsort(order))
    return tally


def _folder_order(samples: tuple[str, ...], reader: _Reader) -> np.ndarray:
    """The reference's rows in the order of a folder's files (the samples it lacks after them,
    in the reference's order): each chunk's files follow the previous chunk's, so each file is
    read once whatever order the reference lists them in. Inside a chunk the rows keep the
    reference's order, so a chunk ranks its worst samples, ties included, as the whole run ranks
    them (in sample order): a sample among the run's worst is among its chunk's."""
    n = len(reader.ids)
    order = np.argsort([reader.file_of.get(sample, n + row) for row, sample in enumerate(samples)], kind="stable")
    for first in range(0, len(order), budget.FOLDER_ROWS):
        order[first : first + budget.FOLDER_ROWS].sort()
    return order


def _in_reference_order(parts: list[Part], place: np.ndarray) -> list[Part]:
    """The chunks' per-sample values as one part, as a whole read lists them: the sample read
    ``place[i]``-th is the reference's ``i``-th."""
    if not parts:
        return parts
    samples = [s for part in parts for s in part.samples]
    values = {label: np.concatenate([part.values[label] for part in parts])[place] for label in parts[0].values}
    return [Part(tuple(samples[i] for i in place), parts[0].ids, values)]
