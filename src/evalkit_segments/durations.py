"""Clip durations, as DCASE ships them: where each file's time axis ends, for the metrics that
cut their grid there (sed_scores_eval's ``audio_durations``).

``durations:`` names either a table (``durations.tsv``: columns filename and duration), or
``column``: the reference event list's own ``duration`` column, a file's duration on each of its
rows (DCASE metadata that carries it beside the events), which must then agree. Only a reference
gives durations: a system's score file ends at its last frame, which is not the clip's end."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from evalkit.plugin import ConfigPath, DataError

#: The column of a reference event list that ``durations: column`` reads.
COLUMN = "duration"
#: A row of a reference's duration column: ((where, "line N" or "row N"), filename, duration text).
Row = tuple[tuple[str, str], str, str]
#: The ``durations`` parameter of the metrics that cut their grid at each file's end.
DurationsSpec = ConfigPath | Literal["column"] | None


def durations_field(ends: str) -> Any:
    """The ``durations`` parameter, described for a component whose grid ends as ``ends`` says."""
    return Field(
        None, description="a table of clip durations (columns filename and duration, as DCASE's durations.tsv), or "
        f"`column`: the reference event list's '{COLUMN}' column (each row gives its file's duration; the rows of "
        f"a file must agree); {ends}",
    )


class Durations:
    """``{filename: seconds}`` read from a table with columns filename and duration, or (``column``)
    from the reference's duration column, read once per reference file; a file is found by its
    name or by its name without the extension on either side (``a.wav`` and ``a``), as
    sed_scores_eval keys files by the name without it."""

    def __init__(self, spec: Path | str, who: str) -> None:
        self.who = who
        self.from_reference = spec == "column"
        self.source = "" if self.from_reference else str(spec)
        self.seconds: dict[str, float] = {} if self.from_reference else _read(spec, who)
        self.by_stem = _stems(self.seconds)

    def of(self, names: Sequence[str], reference: str) -> np.ndarray:
        """The duration of each named file of ``reference`` (the reference's source); a file
        without one is an error naming it."""
        if self.from_reference and reference != self.source:
            self.source, self.seconds = reference, _from_column(reference, self.who)
            self.by_stem = _stems(self.seconds)
        found = np.empty(len(names))
        for row, name in enumerate(names):
            seconds = self.seconds.get(name, self.by_stem.get(_stem(name)))
            if seconds is None:
                add = f"a '{COLUMN}' to its rows" if self.from_reference else f"a row '{name}<TAB>seconds'"
                raise DataError(
                    f"{self.who}: file {name!r} has no duration in {self.source}; add {add} there (every evaluated "
                    "file needs one)"
                )
            found[row] = seconds
        return found


    def check(self, reference: Path | None) -> None:
        """At plan time, before any data is read: a reference file whose duration column this
        reads has one (its header), and is a file (None: inline data)."""
        if self.from_reference:
            _rows_of(None if reference is None else str(reference), self.who)


class ReadsDurations:
    """A component with ``durations``: `validate` refuses a reference without the column it reads."""

    durations: Durations | None

    def check_reference(self, path: Path | None) -> None:
        if self.durations is not None:
            self.durations.check(path)


def _stems(seconds: dict[str, float]) -> dict[str, float]:
    stems: dict[str, float] = {}
    for name, value in seconds.items():
        stems.setdefault(_stem(name), value)
    return stems


def _from_column(reference: str, who: str) -> dict[str, float]:
    """Each file's duration from a reference event list's duration column: every row of a file
    gives it, and they agree (else an error naming the file and its rows)."""
    rows = _rows_of(reference, who)
    seen: dict[str, dict[float, list[str]]] = {}
    for (where, at), name, text in rows:
        seconds = _seconds(text)
        if seconds is None:
            raise DataError(f"{where}: {COLUMN} {text!r} of {name!r} is not a positive number of seconds")
        seen.setdefault(name, {}).setdefault(seconds, []).append(at)
    for name, values in seen.items():
        if len(values) > 1:
            given = "; ".join(f"{value:g} on {_rows_named(at)}" for value, at in values.items())
            raise DataError(
                f"{reference}: file {name!r} has {len(values)} durations in its '{COLUMN}' column ({given}); every row "
                "of a file gives the file's duration, so they must agree"
            )
    return {name: next(iter(values)) for name, values in seen.items()}


def _rows_of(reference: str | None, who: str) -> Iterator[Row]:
    """The rows of a reference event list, its header checked now (the rows are read as used)."""
    if reference is None or not Path(reference).is_file():
        raise DataError(
            f"{who}: `durations: column` reads the reference event list's '{COLUMN}' column, but the reference is "
            f"{reference or 'inline data'}, not an event-list file; give `durations:` a table of filename and duration"
        )
    path = Path(reference)
    if path.suffix.lower() in (".parquet", ".pq"):
        return _parquet_rows(path, *_parquet_columns(path))
    return _text_rows(path, *_text_columns(path))


def _rows_named(at: list[str]) -> str:
    """``line 3``, ``lines 3, 4 and 9``: the rows of ``at`` (each ``line N`` or ``row N``)."""
    kind, numbers = at[0].split()[0], [a.split()[1] for a in at]
    shown = ", ".join(numbers[:5]) + (f" and {len(numbers) - 5} more" if len(numbers) > 5 else "")
    return f"{kind}{'s' if len(at) > 1 else ''} {shown}"


def _seconds(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 < value < math.inf else None


def _refused(where: str, names: str) -> DataError:
    return DataError(
        f"{where}: `durations: column` reads a '{COLUMN}' column, but the header names {names}; add a column "
        f"'{COLUMN}' (each row: its file's duration in seconds), or give `durations:` a table of filename and duration"
    )


def _text_columns(path: Path) -> tuple[int, int, int]:
    """The filename and duration columns of a tab- or comma-separated list, and its width."""
    from evalkit_segments.loaders import _COLUMN_OF, _rows

    rows = _rows(path)
    try:
        first = next(rows, None)
    finally:
        rows.close()
    names = [field.lower() for field in first[1]] if first is not None else []
    if COLUMN not in names or "filename" not in {_COLUMN_OF.get(n) for n in names}:
        raise _refused(f"{path}:{first[0] if first is not None else 1}",
                       ", ".join(map(repr, first[1])) if first is not None else "nothing")
    return next(i for i, n in enumerate(names) if _COLUMN_OF.get(n) == "filename"), names.index(COLUMN), len(names)


def _text_rows(path: Path, file_at: int, at: int, width: int) -> Iterator[Row]:
    from evalkit_segments.loaders import _rows

    rows = _rows(path)
    next(rows, None)  # the header
    for line, fields in rows:  # a file written as its name alone has no duration: an error
        name, text = (fields[file_at], fields[at]) if len(fields) == width else (fields[0], "")
        yield (f"{path}:{line}", f"line {line}"), name, text


def _parquet_columns(path: Path) -> tuple[str, str]:
    """The filename and duration columns of a Parquet event list."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from evalkit_segments.loaders import _COLUMN_OF

    names = pq.read_schema(path).names
    file_at = next((n for n in names if _COLUMN_OF.get(str(n).strip().lower()) == "filename"), None)
    at = next((n for n in names if str(n).strip().lower() == COLUMN), None)
    if file_at is None or at is None:
        raise _refused(str(path), ", ".join(map(repr, names)))
    return file_at, at


def _parquet_rows(path: Path, file_at: str, at: str) -> Iterator[Row]:
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=[file_at, at]).to_pydict()
    for row, (name, value) in enumerate(zip(table[file_at], table[at]), start=1):
        yield (f"{path}, row {row}", f"row {row}"), str(name).strip(), "" if value is None else str(value)


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0]


def _read(path: Any, who: str) -> dict[str, float]:
    import pandas as pd  # type: ignore[import-untyped]

    try:
        with open(path, encoding="utf-8-sig") as handle:
            header = handle.readline()
    except OSError as exc:
        raise DataError(f"{who} durations: cannot read {path} ({exc.strerror or exc})") from None
    try:
        with warnings.catch_warnings():  # a row of more fields than the header: an error, not a dropped field
            warnings.simplefilter("error", pd.errors.ParserWarning)
            table = pd.read_csv(path, sep="\t" if "\t" in header else ",", dtype=str, keep_default_na=False,
                                index_col=False, encoding="utf-8-sig")
    except (pd.errors.ParserError, pd.errors.ParserWarning, UnicodeDecodeError) as exc:
        raise DataError(f"{who} durations: {path} is not a table of filename and duration ({exc})") from None
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
    return dict(zip(names, seconds.tolist()))
