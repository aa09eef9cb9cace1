"""Label matrices: soft labels as (samples x classes) arrays, with their ids, classes and origin.

Checks here give every bad value a place: the file, the sample (id or row) and the class.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np

from evalkit.components import Array
from evalkit.errors import DataError
from evalkit.items import Intervals, ItemSets
from evalkit.loading import check_header, unique_ids
from evalkit.score_series import ScoreSeries

MAX_LISTED = 5


@functools.lru_cache(maxsize=64)
def unnamed(n: int) -> tuple[str, ...]:
    """The classes of ``n`` columns that have no names ("0", "1", ...): arrays and lists of
    rows, or a DataFrame's default columns. Cached: an Evaluator asks for every batch."""
    return tuple(map(str, range(n)))


def named(classes: Sequence[str]) -> bool:
    """Whether ``classes`` are names, not only the positions of unnamed columns."""
    return tuple(classes) != unnamed(len(classes))


def setting(python: bool, argument: str, key: str) -> str:
    """A data setting as its user gives it: a keyword argument from Python (``missing="empty"``),
    a key under ``data:`` in a config (``missing: empty``)."""
    return f"`{argument}`" if python else f"`{key}` under `data:`"


def listed(classes: Sequence[str]) -> str:
    """``classes`` for a message: how many, and the first names."""
    if not named(classes):
        return f"{len(classes)} unnamed column{'' if len(classes) == 1 else 's'}"
    shown = ", ".join(map(repr, classes[:MAX_LISTED])) + (", ..." if len(classes) > MAX_LISTED else "")
    return f"{len(classes)} class{'' if len(classes) == 1 else 'es'} ({shown})"


@functools.lru_cache(maxsize=64)
def _valid_classes(classes: tuple[str, ...]) -> bool:
    """Whether class names pass :func:`check_header`, remembered: a training loop builds a
    matrix of the same classes thousands of times."""
    try:
        check_header(classes, "", what="class")
    except DataError:
        return False
    return True


@dataclass(frozen=True)
class LabelMatrix:
    """Memberships of shape (n_samples, n_classes), with sample ids when the source has them."""

    values: Array
    classes: tuple[str, ...]
    ids: tuple[str, ...] | None = None
    source: str = "<inline>"
    #: the file's row (from 0) of the first row, so that a part of a file names its rows
    first_row: int = 0

    def __post_init__(self) -> None:
        values = self.values
        if values.ndim != 2:
            raise DataError(f"{self.source}: expected a 2-D (samples x classes) matrix, got shape {values.shape}")
        if values.shape[1] != len(self.classes):
            raise DataError(
                f"{self.source}: {values.shape[1]} columns but {len(self.classes)} class names "
                f"({', '.join(self.classes[:MAX_LISTED])}{', ...' if len(self.classes) > MAX_LISTED else ''})"
            )
        if self.ids is not None and len(self.ids) != len(values):
            raise DataError(f"{self.source}: {len(values)} rows but {len(self.ids)} ids")
        if not _valid_classes(self.classes):  # a class twice: one would hide the other
            check_header(self.classes, self.source, what="class")

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, rows: slice) -> LabelMatrix:
        """A range of rows, with their ids."""
        shift = range(len(self))[rows][:1]  # the first row kept, if any
        return replace(
            self, values=self.values[rows], ids=None if self.ids is None else self.ids[rows],
            first_row=self.first_row + (shift[0] if shift else 0),
        )

    def take(self, rows: np.ndarray) -> LabelMatrix:
        """These rows, in this order; -1 is an empty row (all zero). Ids are dropped (the caller
        knows the new ones)."""
        padded = np.vstack([self.values, np.zeros((1, self.values.shape[1]), self.values.dtype)])
        return replace(self, values=padded[rows], ids=None, first_row=0)

    def where(self, row: int, col: int) -> str:
        number = self.first_row + row + 1
        sample = f"sample {self.ids[row]!r} (row {number})" if self.ids else f"row {number}"
        return f"{sample}, class {self.classes[col]!r}"

    def select(self, classes: Sequence[str]) -> LabelMatrix:
        """Keep only ``classes``, in that order; an unknown class is an error with suggestions."""
        index = {c: i for i, c in enumerate(self.classes)}
        missing = [c for c in classes if c not in index]
        if missing:
            import difflib

            hints = [
                f"{m!r}" + (f" (did you mean {close[0]!r}?)" if (close := difflib.get_close_matches(m, self.classes, 1)) else "")
                for m in missing
            ]
            raise DataError(
                f"{self.source}: no class {', '.join(hints)}; it has: {', '.join(self.classes)}"
            )
        columns = [index[c] for c in classes]
        return replace(self, values=self.values[:, columns], classes=tuple(classes))

    def check_memberships(self, clip: bool | None = None, python: bool = False) -> tuple[LabelMatrix, int]:
        """Reject NaN/inf always, and values outside [0, 1] unless ``clip``.

        ``clip=None`` means clipping is not offered (references are never clipped); ``python``:
        the advice names the keyword argument, not the config key.

        Returns the (possibly clipped) matrix and how many values were clipped. One min and one
        max over the array decide; only a failing array is searched for the offending cells.
        """
        lo, hi = self._finite_range()
        if lo >= 0 and hi <= 1:
            return self, 0
        values = self.values
        bad = np.argwhere((values < 0) | (values > 1))
        if not clip:
            first = tuple(bad[0])
            advice = (
                f"set {setting(python, 'clip=True', 'clip: true')} to clip predictions, e.g. outputs of systems "
                "trained with MSE" if clip is False else "fix the reference labels"
            )
            raise DataError(
                f"{self.source}: {len(bad)} value(s) outside [0, 1], first {values[first]:g} at "
                f"{self._places(bad)}. Memberships must lie in [0, 1]; {advice}"
            )
        return replace(self, values=np.clip(values, 0, 1)), len(bad)

    def check_scores(self) -> LabelMatrix:
        """Reject NaN/inf and empty data; any other value is a valid score (for ranking metrics)."""
        self._finite_range()
        return self

    def _finite_range(self) -> tuple[float, float]:
        """(min, max) of the values; no data, NaN or inf is an error naming the cells."""
        values = self.values
        if values.size == 0:
            raise DataError(f"{self.source}: no data (shape {values.shape}); give at least one sample and one class")
        lo, hi = values.min(), values.max()
        if np.isnan(lo) or np.isnan(hi) or np.isinf(lo) or np.isinf(hi):
            bad = np.argwhere(~np.isfinite(values))
            raise DataError(
                f"{self.source}: {len(bad)} value(s) are NaN or infinite, first at "
                f"{self._places(bad)}; fix or remove those samples"
            )
        return lo, hi

    def _places(self, bad: np.ndarray) -> str:
        shown = "; ".join(self.where(int(r), int(c)) for r, c in bad[:MAX_LISTED])
        return shown + (f"; and {len(bad) - MAX_LISTED} more" if len(bad) > MAX_LISTED else "")


#: The data :func:`align` aligns: memberships or item sets (what a loader returns).
Data = TypeVar("Data", LabelMatrix, ItemSets)


def match_classes(reference: LabelMatrix | ItemSets, prediction: Data, python: bool = False) -> Data:
    """The prediction with the reference's classes, in its order (an item set's absent class is
    empty); a missing or extra class is an error naming it (and ``python``'s keyword to select)."""
    if (
        isinstance(prediction, ItemSets) and prediction.absent_class_is_empty
        and set(prediction.classes) < set(reference.classes)
    ):
        prediction = prediction.select(reference.classes, fill=True)
    if set(prediction.classes) != set(reference.classes):
        missing_classes = [c for c in reference.classes if c not in prediction.classes]
        extra = [c for c in prediction.classes if c not in reference.classes]
        raise DataError(
            f"{prediction.source}: classes differ from the reference {reference.source}: "
            + "; ".join(
                part
                for part in (
                    f"missing {', '.join(map(repr, missing_classes))}" if missing_classes else "",
                    f"not in the reference {', '.join(map(repr, extra))}" if extra else "",
                )
                if part
            )
            + _likely_fix(prediction, reference, missing_classes, extra, python)
        )
    if prediction.classes != reference.classes:
        prediction = prediction.select(reference.classes)
    return prediction


def _likely_fix(
    prediction: Data, reference: LabelMatrix | ItemSets, missing: list[str], extra: list[str], python: bool
) -> str:
    """The end of the class-mismatch message: a rename where names differ only in case (the
    usual cause: ``Music`` and ``music``), else how to select common classes."""
    by_case = {str(c).casefold(): c for c in extra}
    twins = [(by_case[str(c).casefold()], c) for c in missing if str(c).casefold() in by_case]
    if twins:
        renames = ", ".join(f"{theirs!r} to {ours!r}" for theirs, ours in twins)
        return (
            f". {'They differ' if len(twins) > 1 else 'It differs'} only in case, and classes are matched "
            f"exactly: rename {renames} in {prediction.source}"
        )
    if named(prediction.classes) != named(reference.classes):
        return ". Unnamed columns are never matched with named classes by position: name them with " + setting(
            python, "classes=[...]", "classes:")
    return ". Select common classes with " + setting(python, "classes=[...]", "classes:")


def ids_on_both_or_neither(reference: LabelMatrix | ItemSets, prediction: LabelMatrix | ItemSets) -> None:
    """Ids on one side only are an error: rows can be matched neither by name nor, safely, by
    position (one side could be reordered without a word)."""
    if (reference.ids is None) != (prediction.ids is None):
        has, lacks = (reference, prediction) if prediction.ids is None else (prediction, reference)
        raise DataError(
            f"{lacks.source}: no sample ids, but {has.source} has them, so rows cannot be matched by "
            f"name. Give {lacks.source} the same ids (an id column, a DataFrame index, `ids=`), or, if "
            f"its rows are in the same order, drop the ids of {has.source} (`loader: {{name: csv, "
            "id_column: false}`, `frame.reset_index(drop=True)`) to match rows by position"
        )


def align(
    reference: LabelMatrix | ItemSets, prediction: Data, missing: str = "error", python: bool = False,
    ids_checked: bool = False,
) -> Data:
    """The prediction with its rows in the reference's order (by id when both have ids, by
    position when neither has) and its columns in the reference's class order. Ids on one side
    only, a missing or extra class or id, or an id twice on either side, is an error naming it;
    with ``missing="empty"`` a reference id absent from the prediction is an empty prediction
    (ids only in the prediction are added to the reference first: :func:`with_empty_samples`);
    ``missing="required"`` refuses it without offering ``missing="empty"`` (a sample weight has
    no empty value). ``python``: the messages name keyword arguments (``missing="empty"``), not
    config keys. ``ids_checked``: both sides' ids are known to be unique already.
    """
    prediction = match_classes(reference, named_as_reference(reference, prediction), python)
    for side in () if ids_checked else (reference, prediction):  # any order: a repeated id scores a sample twice
        if side.ids is not None:
            unique_ids(side.ids, side.source)
    ids_on_both_or_neither(reference, prediction)
    if reference.ids is not None and prediction.ids is not None:
        if prediction.ids != reference.ids:
            prediction = _reorder(reference, prediction, missing, python)
    elif len(prediction) != len(reference):
        raise DataError(
            f"{prediction.source}: {len(prediction)} samples, but {_the_reference(reference)} has "
            f"{len(reference)}; without ids on both sides rows are "
            "matched by position, so the counts must agree"
        )
    return prediction


def _the_reference(reference: LabelMatrix | ItemSets) -> str:
    """The reference as a message names it: by its file, or plainly where it is Python data
    (whose source is the word "reference", which read "the reference reference")."""
    return "the reference" if reference.source == "reference" else f"the reference {reference.source}"


def _reorder(reference: LabelMatrix | ItemSets, prediction: Data, missing: str, python: bool) -> Data:
    ref_ids, pred_ids = reference.ids, prediction.ids
    assert ref_ids is not None and pred_ids is not None, "align reorders by id only when both sides have ids"
    position = {sample: row for row, sample in enumerate(pred_ids)}
    absent = [i for i in ref_ids if i not in position]
    known = set(ref_ids)
    extra = [i for i in pred_ids if i not in known]
    if (absent and missing != "empty") or extra:
        parts = []
        if absent and missing != "empty":
            argument = 'missing="empty"'
            advice = (
                f" (set {setting(python, argument, 'missing: empty')} if an absent sample means an empty prediction)"
                if missing == "error" else ""
            )
            if missing == "error" and isinstance(prediction, ItemSets) and isinstance(prediction.samples, Intervals):
                advice = (
                    f" (a system's event list often leaves out the files where it detected nothing: set "
                    f"{setting(python, argument, 'missing: empty')} to score them as files without detections, as "
                    "DCASE tools do; evalkit asks first, so that a list cut short is not scored as silence)"
                )
            parts.append(f"missing {len(absent)} reference id(s): {', '.join(map(repr, absent[:MAX_LISTED]))}{advice}")
        if extra:
            parts.append(f"{len(extra)} id(s) not in the reference: {', '.join(map(repr, extra[:MAX_LISTED]))}")
        named = "" if reference.source == "reference" else f" (reference: {reference.source})"
        raise DataError(f"{prediction.source}: " + "; ".join(parts) + named)
    rows = np.fromiter((position.get(i, -1) for i in ref_ids), dtype=np.intp, count=len(ref_ids))
    return replace(prediction.take(rows), ids=ref_ids)



def named_as_reference(reference: LabelMatrix | ItemSets, prediction: Data) -> Data:
    """Score files are named by their audio file's stem (``a.tsv`` holds the scores of
    ``a.wav``): when a system's score series share no id with the reference as written, and
    every reference id is unique without its extension, the system's ids become the reference
    ids of the same stem, as sed_scores_eval matches them. Other data is returned as it is."""
    if not (isinstance(prediction, ItemSets) and isinstance(prediction.samples, ScoreSeries)):
        return prediction
    if reference.ids is None or prediction.ids is None or not set(reference.ids).isdisjoint(prediction.ids):
        return prediction
    by_stem = {i.rsplit(".", 1)[0]: i for i in reference.ids}
    if len(by_stem) != len(reference.ids):
        return prediction
    return replace(prediction, ids=tuple(by_stem.get(i, i) for i in prediction.ids))


def only_in_systems(reference: LabelMatrix | ItemSets, systems: Iterable[LabelMatrix | ItemSets]) -> list[str]:
    """The sample ids some system has and the reference does not, in first-seen order."""
    known = set(reference.ids or ())
    return list(dict.fromkeys(i for system in systems for i in (system.ids or ()) if i not in known))


def empty_reference_note(count: int) -> str:
    return f"{count:,} sample(s) that only systems list are empty in the reference (missing: empty)"


def with_empty_samples(reference: Data, ids: Sequence[str]) -> Data:
    """The reference with an empty sample (memberships 0, no items) for each of ``ids``: under
    ``missing: empty`` a sample absent from the reference (a sparse one, listing only active
    segments) is empty there, as one absent from a system is empty there."""
    if not ids:
        return reference
    assert reference.ids is not None, "samples are added by id"
    if isinstance(reference, LabelMatrix):
        zeros = np.zeros((len(ids), reference.values.shape[1]), reference.values.dtype)
        return replace(reference, values=np.vstack([reference.values, zeros]), ids=reference.ids + tuple(ids))
    samples = reference.samples
    grown: tuple[tuple[tuple, ...], ...] | Intervals
    if isinstance(samples, Intervals):
        grown = Intervals(samples.sample, samples.klass, samples.onset, samples.offset, samples.n_samples + len(ids),
                          samples.n_classes, samples.merge)
    else:
        grown = tuple(samples) + tuple(tuple(() for _ in reference.classes) for _ in ids)
    return replace(reference, samples=grown, ids=reference.ids + tuple(ids))


def rows_from(parts: Iterable[LabelMatrix], start: int) -> Iterator[LabelMatrix]:
    """The rows from ``start`` on of matrices read in order: for a loader's ``stream`` that
    cannot seek to a row (it reads the rows before and drops them)."""
    to_skip = start
    for part in parts:
        if to_skip >= len(part):
            to_skip -= len(part)
            continue
        yield part[to_skip:]
        to_skip = 0
