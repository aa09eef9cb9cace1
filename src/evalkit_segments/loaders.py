"""Loaders for sound-event data: sed_eval / DCASE event lists and MAESTRO soft segment labels.

- :class:`EventListLoader` (``events``, item data): rows ``filename, onset, offset, event_label``
  as sed_eval and the DCASE tools read them. The events are kept as listed (event-based metrics
  count them); read as items, a (file, class) cell's intervals are sorted, with those that
  overlap or touch merged.
- :class:`MaestroSoftLabels` (``maestro``, matrix data): a folder with one tab-separated file per
  recording, rows ``onset offset label soft_value`` on a grid of segments (DCASE 2023 task 4B,
  MAESTRO Real). One matrix row per (recording, segment), id ``"<recording>@<onset>-<offset>"``;
  references and predictions are then aligned by these ids like any other matrix.

Both take an optional ``labels`` parameter (``loader: {name: events, labels: [...]}``): the full
list of classes, in that order. A row with another label is then an error naming its line, and a
class that never occurs in the file is still a class (with no events / all zeros), so that a
system that never predicts a class still lines up with the reference.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Generator, Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import BaseComponent, DataError, Intervals, ItemSets, LabelMatrix, clean_text, csv_rows, text_lines
from evalkit_segments.columnar import event_blocks, labels_in, read_events
from evalkit_segments.event_stream import Block, Unhandled, samples

#: Rows the exact reader checks and hands on at a time when it streams.
BLOCK_ROWS = 65_536
#: An event list's columns of filename, onset, offset and label, the line of its header (0:
#: none), its number of columns and the column of its scores (None: none); see :func:`_layout`.
Layout = tuple[list[int], int, int, int | None]

#: Accepted header names of the four columns of an event list (case-insensitive).
HEADER_NAMES = {
    "filename": ("filename", "file", "audio_filename"),
    "onset": ("onset", "event_onset"),
    "offset": ("offset", "event_offset"),
    "event_label": ("event_label", "label"),
}
_COLUMN_OF = {alias: column for column, aliases in HEADER_NAMES.items() for alias in aliases}
COLUMNS = tuple(HEADER_NAMES)
#: A fifth column DCASE system outputs carry: an event's score, or a field that changes no event.
SCORE_NAMES = ("score", "probability", "confidence", "event_probability")
IGNORED_NAMES = ("scene_label", "identifier", "source_label")
#: A row-index column's header name: pandas writes an unnamed one (``to_csv`` with its default
#: ``index=True``), or one named ``index`` (``reset_index``). Read as what it is: ignored.
INDEX_NAMES = ("", "index", "unnamed: 0")
#: A clip's duration on each of its rows (DCASE metadata): no part of an event, read by the
#: metrics given ``durations: column`` (:mod:`evalkit_segments.durations`).
DURATION_NAME = "duration"


class LabelsParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    labels: list[str] | None = Field(
        None,
        description="all class labels, in this order; another label in the file is an error, "
        "and a label absent from the file is still a class (default: the labels seen, sorted)",
    )


def _number(text: str) -> float | None:
    """``text`` as a float, or None if it is not a number (NaN and inf are numbers here)."""
    try:
        return float(text)
    except ValueError:
        return None


def _time(text: str, what: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is not None and 0 <= value < math.inf:  # the common case; NaN fails this too
        return value
    if value is None:
        raise DataError(f"{where}: {what} {text!r} is not a number (times are in seconds)")
    if not math.isfinite(value):
        raise DataError(f"{where}: {what} {text} is not a finite time")
    raise DataError(f"{where}: {what} {text} is negative; times are seconds from the start of the file")


def _check_label(label: str, known: set[str] | None, where: str) -> None:
    if not label:
        raise DataError(f"{where}: empty event label; every event needs a class label")
    if known is not None and label not in known:
        import difflib

        close = difflib.get_close_matches(label, sorted(known), 1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise DataError(f"{where}: unknown label {label!r}{hint}; the given labels are: {', '.join(sorted(known))}")


def _classes(seen: set[str], labels: list[str] | None, source: Path) -> tuple[str, ...]:
    if labels is None:
        return tuple(sorted(seen))
    if len(set(labels)) != len(labels):
        raise DataError(f"{source}: the `labels` parameter lists a label more than once: {labels}")
    return tuple(labels)


# --- event lists ---------------------------------------------------------------------------------


def separator(path: Path) -> str:
    """The field separator of an event list: a tab for .tsv and .txt; for .csv a comma, unless
    its first line holds more tabs than commas (DCASE 2023 task 4B ships a tab-separated
    ``gt_dev.csv``)."""
    if path.suffix.lower() != ".csv":
        return "\t"
    lines = text_lines(path)
    try:
        first = next((text for _, text in lines if text.strip()), "")
    finally:
        lines.close()
    return "\t" if first.count("\t") > first.count(",") else ","


def _rows(path: Path) -> Generator[tuple[int, list[str]], None, None]:
    """(line number, stripped fields) of every non-empty line: split on tabs only when the
    :func:`separator` is a tab (labels may contain spaces), else comma-separated with CSV quoting."""
    records: Iterator[tuple[int, list[str]]] = (
        csv_rows(path) if separator(path) == ","
        else ((line, text.split("\t")) for line, text in text_lines(path))
    )
    for line, fields in records:
        fields = [clean_text(f) for f in fields]
        if any(fields):
            yield line, fields


def _header(fields: list[str]) -> bool:
    """A first row is a header when it has four to seven non-empty fields (after an unnamed
    index column) and no two numbers where a layout puts the onset and offset."""
    named = fields[1:] if fields and not fields[0] else fields
    return 4 <= len(named) <= 7 and all(named) and _timed_at(fields) is None


def _known_header(fields: list[str]) -> bool:
    """The four columns named once each, and besides them at most a row index, a duration and
    one score or ignored column."""
    names = [f.lower() for f in fields]
    extra = [n for n in names if n not in _COLUMN_OF]
    index = [n for n in extra if n in INDEX_NAMES]
    other = [n for n in extra if n not in INDEX_NAMES + (DURATION_NAME,)]
    return {_COLUMN_OF.get(n) for n in names} - {None} == set(COLUMNS) and len(names) - len(extra) == 4 and (
        len(index) <= 1 and extra.count(DURATION_NAME) <= 1 and len(other) <= 1
        and all(n in SCORE_NAMES + IGNORED_NAMES for n in other)
    )


def index_notes(path: Path) -> tuple[str, ...]:
    """What a list's row-index and duration columns became, when its header has them."""
    rows = _rows(path)
    try:
        first = next(rows, None)
    finally:
        rows.close()
    if first is None or not _header(first[1]) or not _known_header(first[1]):
        return ()
    notes = []
    for at, name in enumerate(first[1]):
        if name.lower() in INDEX_NAMES:
            shown = repr(name) if name else "unnamed"
            notes.append(f"{path}: column {at + 1} ({shown}) is a row index, as pandas writes one; ignored")
        elif name.lower() == DURATION_NAME:
            notes.append(f"{path}: column {at + 1} ({name!r}) is each row's clip duration, no part of an event: a "
                         "reference's is read by the metrics given `durations: column` (segments, segment_based, psds), "
                         "else it is ignored")
    return tuple(notes)


def _timed_at(fields: list[str]) -> int | None:
    """Where a headerless row's onset is: after the filename (1), or after a filename and a
    scene label (2, five fields); None when neither pair of fields is numeric."""
    for at in (1, 2) if len(fields) == 5 else (1,):
        if _number(fields[at]) is not None and _number(fields[at + 1]) is not None:
            return at
    return None


class EventListParams(LabelsParams):
    merge: bool = Field(
        True,
        description="as item lists (soft cardinality, Crisp*), a file's overlapping or touching events of one class "
        "are one interval; false keeps every event as listed, for similarities that compare events (collar). "
        "Segment and event-based representations read the events as listed either way",
    )
    min_score: float | None = Field(
        None, allow_inf_nan=False,
        description="for a list with a score column (a fifth column of event scores): the events scoring at "
        "least this count; null: every event counts, as sed_eval takes them (the list refuses to load until "
        "this is given)",
    )


class EventListLoader(BaseComponent[EventListParams]):
    """sed_eval / DCASE event lists (.tsv, .txt: tab-separated; .csv: comma-separated, or
    tab-separated when its first line has more tabs than commas).

    Columns ``filename, onset, offset, event_label``; a header row is optional and, when present,
    may name the columns in any order (filename|file|audio_filename, onset|event_onset,
    offset|event_offset, event_label|label). A row with only a filename (or with empty onset,
    offset and label) lists a file without events. Sample ids are the file names in first-seen
    order; classes are the labels, sorted (or the ``labels`` parameter); items are
    ``(onset, offset)`` tuples of floats in seconds, sorted by onset, where intervals of one
    class in one file that overlap or touch (an offset equal to the next onset) are merged into
    one interval; the events themselves are kept as listed (:class:`evalkit.plugin.Intervals`),
    for the representations that count events (``event_based``).

    DCASE system outputs with five columns load too: a scene label after the filename, or an
    identifier after the label (neither changes an event), or an event score after the label
    (a numeric fifth field, or a header column score|probability|confidence). A list with scores
    loads only once ``min_score`` says which events count (``null``: all, as sed_eval counts them).
    """

    name = "events"
    kind = "items"
    suffixes = (".tsv", ".csv", ".txt")
    Params = EventListParams

    def sniff(self, path: Path) -> bool:
        """The first non-empty line has one field (a file without events), or four with a
        numeric onset and offset or an event-list header. An ``id,item`` header is not ours."""
        rows = _rows(path)
        try:
            first = next(rows, None)
        except (OSError, DataError):
            return False
        finally:
            rows.close()
        if first is None:
            return False
        fields = first[1]
        if not any(fields[1:]):  # a filename alone: a file without events
            return True
        if len(fields) in (4, 5) and _timed_at(fields) is not None:
            return True
        return 4 <= len(fields) <= 8 and _known_header(fields)

    def diagnose(self, path: Path) -> str | None:
        """A header that names two or more of an event list's columns but is not one: what
        ``load`` says of it (the names it accepts)."""
        rows = _rows(path)
        try:
            first = next(rows, None)
        finally:
            rows.close()
        if first is None or len({_COLUMN_OF.get(f.lower()) for f in first[1]} - {None}) < 2:
            return None
        try:
            _layout(path)
        except DataError as exc:
            return str(exc)
        return None

    def load(self, path: Path, role: str) -> ItemSets:
        """Read column by column (:mod:`evalkit_segments.columnar`); a file that reader does not
        take is read row by row, which names the line of any problem."""
        order, header_line, width, score_at = self._layout(path)
        fast = read_events(path, order, header_line, self.params.labels, separator(path)) if width == 4 else None
        items = fast or self._load_rows(path, order, header_line, width, score_at)
        assert isinstance(items.samples, Intervals), "both readers hold the events as columns"
        items.samples.merge = self.params.merge
        notes = index_notes(path)
        return replace(items, notes=notes) if notes else items

    def stream(self, path: Path, role: str, rows: int, start: int = 0) -> Iterator[ItemSets]:
        """The files from the ``start``-th (first-seen order, as :meth:`load` numbers them) as item
        sets of at most ``rows`` files, read a block at a time (column by column, or row by row
        from where that reader stops, as :meth:`load`), each with the classes of the whole list
        (a first pass reads the label column alone). A file's rows must be together."""
        notes = index_notes(path)
        for chunk in self._chunks(path, rows, start):
            yield replace(chunk, notes=notes) if notes else chunk

    def _chunks(self, path: Path, rows: int, start: int) -> Iterator[ItemSets]:
        layout = self._layout(path)
        order, header_line, width, _ = layout
        classes = self._all_classes(path, layout)
        take = functools.partial(samples, classes=classes, rows=rows, source=str(path), merge=self.params.merge,
                                 where=lambda line: f"{path}:{line}", earlier=functools.partial(self._earlier, path, layout))
        given = 0
        if width == 4:
            try:
                for chunk in take(event_blocks(path, order, header_line, classes, separator(path)), start=start):
                    yield chunk
                    given += len(chunk)
                return
            except Unhandled:  # read again row by row, past the files already given
                pass
        files = yield from take(self._blocks(path, layout, classes), start=start + given)
        if not files:
            raise _no_rows(path)

    def _layout(self, path: Path) -> Layout:
        """:func:`_layout`, once the parameters fit the list: a label listed twice, or a score
        column without ``min_score``, is an error."""
        if self.params.labels is not None:
            _classes(set(), self.params.labels, path)  # a label listed twice is an error either way
        layout = _layout(path)
        score_at = layout[3]
        if score_at is not None and "min_score" not in self.params.model_fields_set:
            raise DataError(
                f"{path}: column {score_at + 1} holds event scores; say which events count: "
                f"{{path: {path.name}, loader: {{name: events, min_score: 0.5}}}} keeps those scoring at least 0.5, "
                "min_score: null keeps every event (as sed_eval does)"
            )
        return layout

    def _all_classes(self, path: Path, layout: Layout) -> tuple[str, ...]:
        """The classes :meth:`load` gives the whole list: the ``labels`` parameter, or every label
        of an event row, sorted (those of events below ``min_score`` too). Read from the label
        column alone, or row by row up to the first bad row (which the stream then names)."""
        if self.params.labels is not None:
            return tuple(self.params.labels)
        order, header_line, width, _ = layout
        seen = labels_in(path, order, header_line, width, separator(path))
        if seen is None:
            seen = set()
            try:
                for _, fields in _rows(path):
                    if len(fields) == width and fields[order[3]] and any(fields[i] for i in order[1:]):
                        seen.add(fields[order[3]])
            except DataError:
                pass
        return _classes(seen, None, path)

    def _blocks(self, path: Path, layout: Layout, classes: tuple[str, ...]) -> Iterator[Block]:
        """The rows read one by one (:meth:`_records`), in blocks of :data:`BLOCK_ROWS`."""
        column = {name: i for i, name in enumerate(classes)}
        records = self._records(path, *layout)
        while batch := list(itertools.islice(records, BLOCK_ROWS)):
            lines, names, labels, onsets, offsets, counts = zip(*batch)
            files: dict[str, int] = {}
            file = np.array([files.setdefault(name, len(files)) for name in names], np.int64)
            klass = np.array([column[label] if event else -1 for label, event in zip(labels, counts)], np.int64)
            yield Block(tuple(files), file, klass, np.array(onsets, np.float64), np.array(offsets, np.float64),
                        np.array(lines, np.int64))

    def _earlier(self, path: Path, layout: Layout, name: str, line: int) -> int | None:
        """The first line before ``line`` that lists file ``name`` (None: none does)."""
        for at, filename, *_ in self._records(path, *layout):
            if at >= line:
                return None
            if filename == name:
                return at
        return None

    def _load_rows(
        self, path: Path, order: list[int], header_line: int, width: int = 4, score_at: int | None = None,
    ) -> ItemSets:
        files: dict[str, int] = {}  # first-seen order
        events: list[tuple[int, str, float, float]] = []  # in file order, not merged: event metrics count them
        dropped: set[str] = set()
        for _, filename, label, onset, offset, counts in self._records(path, order, header_line, width, score_at):
            file = files.setdefault(filename, len(files))
            if counts:
                events.append((file, label, onset, offset))
            elif label:
                dropped.add(label)  # scored below min_score: the file and the class stay
        if not files:
            raise _no_rows(path)
        classes = _classes({label for _, label, _, _ in events} | dropped, self.params.labels, path)
        column = {label: i for i, label in enumerate(classes)}
        file_of, label_of, onsets, offsets = zip(*events) if events else ((), (), (), ())
        intervals = Intervals(
            np.array(file_of, np.int64), np.array([column[c] for c in label_of], np.int64),
            np.array(onsets, np.float64), np.array(offsets, np.float64), len(files), len(classes),
        )
        return ItemSets(intervals, classes, tuple(files), str(path))

    def _records(
        self, path: Path, order: list[int], header_line: int, width: int = 4, score_at: int | None = None,
    ) -> Iterator[tuple[int, str, str, float, float, bool]]:
        """(line, filename, label, onset, offset, counts) of every row, checked; a file without
        events has an empty label; ``counts`` is False for such a row and for an event scored below
        ``min_score``."""
        labels = self.params.labels
        known = set(labels) if labels is not None else None
        rows = (row for row in _rows(path) if row[0] > header_line)
        for line, fields in rows:
            where = f"{path}:{line}"
            if len(fields) == width:
                filename, rest = fields[order[0]], [fields[i] for i in order[1:]]
            else:
                filename, rest = fields[0], fields[1:]
            if not any(rest):  # a file without events: only a filename (perhaps empty fields)
                if not filename:
                    raise DataError(f"{where}: empty filename")
                _not_space_separated(filename, path, where)
                yield line, filename, "", math.nan, math.nan, False
                continue
            if len(fields) != width:
                raise DataError(
                    f"{where}: {len(fields)} fields; expected {width} (filename, onset, offset, event_label"
                    f"{', and one more' if width == 5 else ''}) or 1 (a filename: a file without events)"
                )
            onset_text, offset_text, label = (fields[i] for i in order[1:])
            if not filename:
                raise DataError(f"{where}: empty filename")
            onset = _time(onset_text, "onset", where)
            offset = _time(offset_text, "offset", where)
            if offset < onset:
                raise DataError(f"{where}: offset {offset_text} is before onset {onset_text}")
            _check_label(label, known, where)
            counts = score_at is None or self._counts(fields[score_at], where)
            yield line, filename, label, onset, offset, counts

    def _counts(self, text: str, where: str) -> bool:
        """Whether an event of this score counts (``min_score``)."""
        score = _number(text)
        if score is None or not math.isfinite(score):
            raise DataError(f"{where}: event score {text!r} is not a finite number")
        return self.params.min_score is None or score >= self.params.min_score


def _no_rows(path: Path) -> DataError:
    return DataError(
        f"{path}: no rows; expected rows of filename, onset, offset, event_label (a file "
        "without events as a row with only its filename)"
    )


def _layout(path: Path) -> Layout:
    """The columns of filename, onset, offset and label, the line of the header (0: none), the
    number of columns (4, or 5 with a score or an ignored field) and the score's column (None:
    none). A first row that looks like a header but names other columns is an error. Without a
    header, five fields are ``filename onset offset label score`` (a numeric fifth field),
    ``filename onset offset label identifier``, or ``filename scene_label onset offset label``."""
    rows = _rows(path)
    try:
        first = next(rows, None)
    finally:
        rows.close()
    if first is None or not any(first[1][1:]):
        return list(range(4)), 0, 4, None
    line, fields = first
    if not _header(fields):
        if len(fields) != 5:
            return list(range(4)), 0, 4, None
        if _timed_at(fields) == 2:
            return [0, 2, 3, 4], 0, 5, None
        return list(range(4)), 0, 5, (4 if _number(fields[4]) is not None else None)
    if not _known_header(fields):
        raise DataError(
            f"{path}:{line}: the first row looks like a header (its onset or offset is "
            f"not a number) but names the columns {', '.join(map(repr, fields))}; "
            "expected " + ", ".join("|".join(a) for a in HEADER_NAMES.values())
            + f", and optionally one of {', '.join(SCORE_NAMES + IGNORED_NAMES)}, a '{DURATION_NAME}' (each file's "
            "clip duration) and a row index (an unnamed first column, or 'index')"
        )
    names = [f.lower() for f in fields]
    position = {_COLUMN_OF[n]: i for i, n in enumerate(names) if n in _COLUMN_OF}
    score = next((i for i, n in enumerate(names) if n in SCORE_NAMES), None)
    return [position[c] for c in COLUMNS], line, len(fields), score


def _not_space_separated(filename: str, path: Path, where: str) -> None:
    """A lone field that reads as a whole event row is a file with the wrong separator, not a
    file without events named "a.wav 1.0 2.0 speech"."""
    tokens = filename.split()
    if len(tokens) >= 4 and _number(tokens[1]) is not None and _number(tokens[2]) is not None:
        found = "comma-separated"
        if separator(path) == "\t":
            found = "tab-separated" + (" (its first line has more tabs than commas)" if path.suffix.lower() == ".csv" else "")
        raise DataError(
            f"{where}: {filename!r} is one field, but it reads as an event row; the file was read as {found}: "
            "separate every field that way"
        )


# --- MAESTRO soft labels -------------------------------------------------------------------------


class MaestroSoftLabels(BaseComponent[LabelsParams]):
    """A folder of soft segment labels as DCASE 2023 task 4B (MAESTRO Real) ships them.

    One tab-separated file per recording (``*.txt`` or ``*.tsv``, the recording is the file's
    stem), no header, rows ``onset offset label soft_value``: one row per segment and class.
    Fields are split on tabs only, since labels contain spaces and "/" ("door opens/closes").

    The result is a matrix on the segment grid: one row per (recording, segment) that occurs in
    the folder, with id ``f"{recording}@{onset:g}-{offset:g}"`` (e.g. ``"street_01@3-4"``), rows
    sorted by recording then onset; classes are every label seen in the folder, sorted (or the
    ``labels`` parameter). A class without a row for a segment is 0 there. A reference and a
    prediction are then aligned by these ids (the core's ``align``): both must use the same
    grid, and a recording (or segment) on one side only is an error, or zeros in the prediction
    with ``data: {missing: empty}``. Values outside [0, 1] are left to the core's membership
    check, which names the sample and class; NaN and non-numbers are rejected here by line.
    """

    name = "maestro"
    kind = "matrix"
    suffixes = ("/",)
    Params = LabelsParams

    def load(self, path: Path, role: str) -> LabelMatrix:
        files = sorted(f for f in path.iterdir() if f.is_file() and f.suffix.lower() in (".txt", ".tsv")
                       and not f.name.startswith("."))
        if not files:
            raise DataError(
                f"{path}: no .txt or .tsv files; expected one tab-separated file per recording "
                "with rows onset, offset, label, soft value"
            )
        labels = self.params.labels
        known = set(labels) if labels is not None else None
        stems: dict[str, Path] = {}
        cells: dict[tuple[str, float, float], dict[str, float]] = {}
        for file in files:
            recording = file.stem
            if recording in stems:
                raise DataError(f"{path}: two files for recording {recording!r}: {stems[recording].name} and {file.name}")
            stems[recording] = file
            _read_soft_labels(file, recording, cells, known)
        seen = {label for values in cells.values() for label in values}
        classes = _classes(seen, labels, path)
        column = {c: i for i, c in enumerate(classes)}
        keys = sorted(cells)
        ids = tuple(f"{recording}@{onset:g}-{offset:g}" for recording, onset, offset in keys)
        if len(set(ids)) != len(ids):
            first = next(i for n, i in enumerate(ids) if i in ids[:n])
            raise DataError(
                f"{path}: two different segments both print as {first!r}; segment times must "
                "differ within 6 significant digits"
            )
        values = np.zeros((len(keys), len(classes)))
        for row, key in enumerate(keys):
            for label, value in cells.pop(key).items():  # dropped as copied: the values are held once
                values[row, column[label]] = value
        return LabelMatrix(values, classes, ids, str(path))


def _read_soft_labels(
    file: Path, recording: str, cells: dict[tuple[str, float, float], dict[str, float]],
    known: set[str] | None,
) -> None:
    first_line: dict[tuple[float, float, str], int] = {}
    for line, text in text_lines(file):
        if not text.strip():
            continue
        where = f"{file}:{line}"
        fields = [clean_text(f) for f in text.split("\t")]
        if len(fields) != 4:
            raise DataError(
                f"{where}: {len(fields)} tab-separated fields; expected 4: onset, offset, "
                "label, soft value (no header)"
            )
        onset_text, offset_text, label, value_text = fields
        onset = _time(onset_text, "onset", where)
        offset = _time(offset_text, "offset", where)
        if offset < onset:
            raise DataError(f"{where}: offset {offset_text} is before onset {onset_text}")
        _check_label(label, known, where)
        value = _number(value_text)
        if value is None:
            raise DataError(f"{where}: soft value {value_text!r} of {label!r} is not a number")
        if not math.isfinite(value):
            raise DataError(f"{where}: soft value {value_text!r} of {label!r} is not a finite number")
        key = (onset, offset, label)
        if key in first_line:
            raise DataError(
                f"{where}: a second value for {label!r} in segment {onset:g}-{offset:g} "
                f"(the first is on line {first_line[key]})"
            )
        first_line[key] = line
        cells.setdefault((recording, onset, offset), {})[label] = value
