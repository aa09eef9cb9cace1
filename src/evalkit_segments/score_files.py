"""sed_scores_eval score files: a folder with one tab-separated table per audio file.

Each table (``<audio stem>.tsv``) has the header ``onset offset <class> <class> ...`` and one
row per time frame: the frame's onset and offset and the system's score for each class, before
any threshold. The frames follow each other without gaps (each onset is the previous offset).
This is what sed_scores_eval reads (``read_sed_scores``) and what the DCASE task 4 baselines write.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from evalkit.plugin import BaseComponent, DataError, ItemSets, ScoreSeries, clean_text, text_lines


class ScoreFiles(BaseComponent):
    """A folder of score files as score series (:class:`evalkit.plugin.ScoreSeries`); the sample
    of ``a.tsv`` is ``a``, and it matches a reference id ``a.wav`` (ids are matched by stem when
    none matches as written). Every file must have the same classes; the order may differ."""

    name = "sed_scores"
    kind = "items"
    suffixes = ("/",)

    def sniff(self, path: Path) -> bool:
        """A folder whose first .tsv file's header is ``onset offset <class> ...`` (MAESTRO's
        soft-label folders have no header)."""
        first = min((f for f in path.iterdir() if f.is_file() and f.suffix.lower() == ".tsv"), default=None)
        if first is None:
            return False
        with first.open("rb") as handle:
            header = handle.readline().removeprefix(b"\xef\xbb\xbf").rstrip(b"\r\n").split(b"\t")
        return len(header) >= 3 and header[:2] == [b"onset", b"offset"]

    def sample_ids(self, path: Path) -> tuple[str, ...]:
        """The folder's samples in :meth:`load`'s order, from the file names alone: an in-memory
        run reads the files of a chunk of samples at a time (:mod:`evalkit.folders`)."""
        return _ids(_listed(path))

    def load(self, path: Path, role: str) -> ItemSets:
        files = _listed(path)
        classes, counts, table = _read_together(files) or _read_each(files)
        return _items(path, files, classes, counts, table)

    def stream(self, path: Path, role: str, rows: int, start: int = 0) -> Iterator[ItemSets]:
        """The files from the ``start``-th (in name order, as :meth:`load` numbers them) as score
        series of ``rows`` files (fewer at the end) with the first file's classes, each parsed
        :data:`STREAM_FILES` files at a time and joined once: a streamed run holds one part's
        scores, and the text of a few files."""
        files = _listed(path)
        classes = _read(files[0])[0] if start else None  # the class order of every part
        for first in range(start, len(files), rows):
            part = files[first : first + rows]
            counts, tables = [], []
            for at in range(0, len(part), STREAM_FILES):
                batch = part[at : at + STREAM_FILES]
                read = _read_together(batch)
                if read is None or (classes is not None and read[0] != classes):
                    read = _read_each(batch, classes, files[0])
                classes = read[0]
                counts.append(read[1])
                tables.append(read[2])
            assert classes is not None, "a part has at least one file"
            yield _items(path, part, classes, np.concatenate(counts), np.concatenate(tables))


#: Score files parsed together by :meth:`ScoreFiles.stream` (100 files of 1,000 frames of 10
#: classes: 9 MB of text).
STREAM_FILES = 100


def _listed(path: Path) -> list[Path]:
    """The score files of a folder, in name order: only .tsv files, at least one."""
    files = sorted(f for f in path.iterdir() if f.is_file() and not f.name.startswith("."))
    others = [f.name for f in files if f.suffix.lower() != ".tsv"]
    if others:
        raise DataError(
            f"{path}: {others[0]!r} is not a .tsv score file; a folder of score files holds one "
            "'<audio>.tsv' per audio file and nothing else"
        )
    if not files:
        raise DataError(f"{path}: no .tsv score files; expected one per audio file, with the header 'onset offset <classes>'")
    return files


def _items(path: Path, files: list[Path], classes: tuple[str, ...], counts: np.ndarray, table: np.ndarray) -> ItemSets:
    """Score files read into one table (rows of onset, offset, then scores) as score series."""
    ids = _ids(files)
    series = ScoreSeries(np.repeat(np.arange(len(files)), counts), table[:, 0], table[:, 1], table[:, 2:], len(files))
    return ItemSets(series, classes, ids, str(path))


def _ids(files: list[Path]) -> tuple[str, ...]:
    """The sample of each score file: its name without ``.tsv``."""
    return tuple(f.name[: -len(".tsv")] for f in files)


def _read_each(
    files: list[Path], classes: tuple[str, ...] | None = None, first: Path | None = None,
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """(classes, frames per file, all rows, columns in the class order of ``classes``, by default
    the first file's; ``first``: the file they come from), file by file, naming the file and line
    of a problem."""
    first = first or files[0]
    tables = []
    for file in files:
        header, table = _read(file)
        if classes is None:
            classes = header
        elif set(header) != set(classes):
            raise DataError(
                f"{file}:1: classes {', '.join(header)} differ from {first.name}'s "
                f"({', '.join(classes)}); every score file scores the same classes"
            )
        column = {c: i for i, c in enumerate(header)}
        tables.append(table[:, [0, 1, *(2 + column[c] for c in classes)]])
    assert classes is not None
    counts = np.fromiter((len(t) for t in tables), dtype=np.int64, count=len(tables))
    return classes, counts, np.vstack(tables)


def _read_together(files: list[Path]) -> tuple[tuple[str, ...], np.ndarray, np.ndarray] | None:
    """(classes, frames per file, all rows) of files with one header, parsed in one pass of
    pyarrow's reader (thousands of small files cost little more than one file of their size); or
    None at the first sign of anything else (another header, a blank line, a bad value or frame),
    and the files are read one by one to name the problem."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.csv as pc  # type: ignore[import-untyped]

    bodies, header = [], None
    for file in files:
        raw = file.read_bytes().removeprefix(b"\xef\xbb\xbf")
        head, _, body = raw.partition(b"\n")
        if header is None:
            header = head
        if head != header or not body or b"\n\n" in body or b"\n\r\n" in body or body.startswith((b"\n", b"\r\n")):
            return None
        bodies.append(body if body.endswith(b"\n") else body + b"\n")
    names = tuple(clean_text(n) for n in (header or b"").decode("utf-8", "replace").rstrip("\r").split("\t"))
    if len(names) < 3 or names[:2] != ("onset", "offset") or len(set(names)) != len(names) or not all(names):
        return None
    counts = np.fromiter((body.count(b"\n") for body in bodies), dtype=np.int64, count=len(bodies))
    columns = [f"c{i}" for i in range(len(names))]
    text = pa.py_buffer(b"".join(bodies))
    del bodies  # the text is held once while it is parsed
    try:
        table = pc.read_csv(
            text,
            read_options=pc.ReadOptions(column_names=columns),
            parse_options=pc.ParseOptions(delimiter="\t", quote_char=False),
            convert_options=pc.ConvertOptions(column_types=dict.fromkeys(columns, pa.float64()), strings_can_be_null=False),
        )
    except (pa.ArrowException, ValueError):
        return None
    if table.num_rows != counts.sum():
        return None
    del text
    values = np.empty((table.num_rows, len(columns)))
    for i in range(len(columns)):  # a column at a time: no second copy of the whole table
        values[:, i] = table.column(i).to_numpy()
    del table
    onset, offset = values[:, 0], values[:, 1]
    first = np.r_[0, np.cumsum(counts)[:-1]]
    follows = np.ones(len(values), dtype=bool)
    follows[1:] = onset[1:] == offset[:-1]
    follows[first] = True
    if not (np.isfinite(values).all() and (onset >= 0).all() and (offset > onset).all() and follows.all()):
        return None
    return names[2:], counts, values


def _read(file: Path) -> tuple[tuple[str, ...], np.ndarray]:
    """The classes of a score file's header and its rows as numbers, checked."""
    import pyarrow as pa
    import pyarrow.csv as pc

    try:
        table = pc.read_csv(
            file, parse_options=pc.ParseOptions(delimiter="\t", quote_char=False),
            convert_options=pc.ConvertOptions(strings_can_be_null=False),
        )
    except (pa.ArrowException, OSError):
        table = None
    if table is None or any(not pa.types.is_floating(t) and not pa.types.is_integer(t) for t in table.schema.types):
        _explain(file)
    header = tuple(clean_text(name) for name in table.column_names)
    if len(header) < 3 or header[:2] != ("onset", "offset"):
        raise DataError(
            f"{file}:1: header {' '.join(header)!r}; a score file's header is 'onset offset' and then "
            "one column per class (tab-separated)"
        )
    classes = header[2:]
    if len(set(classes)) != len(classes) or not all(classes):
        twice = next((c for n, c in enumerate(classes) if c in classes[:n] or not c), "")
        raise DataError(f"{file}:1: class {twice!r} is {'empty' if not twice else 'named twice'} in the header")
    values = np.column_stack([table.column(i).to_numpy().astype(np.float64) for i in range(table.num_columns)])
    _check_frames(file, values)
    return classes, values


def _check_frames(file: Path, values: np.ndarray) -> None:
    """Finite numbers; frames of positive length, from time 0 on, each starting where the
    previous one ended."""
    line = 2  # the first row's line (after the header)
    bad = np.flatnonzero(~np.isfinite(values).all(axis=1))
    if bad.size:
        row = values[bad[0]]
        raise DataError(f"{file}:{bad[0] + line}: {row[~np.isfinite(row)][0]!r} is not a finite number; scores and times must be")
    onset, offset = values[:, 0], values[:, 1]
    bad = np.flatnonzero((offset <= onset) | (onset < 0))
    if bad.size:
        k = bad[0]
        raise DataError(
            f"{file}:{k + line}: frame {onset[k]:g}-{offset[k]:g}; a frame starts at 0 or later and ends after it starts"
        )
    gap = np.flatnonzero(onset[1:] != offset[:-1])
    if gap.size:
        k = gap[0] + 1
        raise DataError(
            f"{file}:{k + line}: frame onset {onset[k]!r} is not the previous frame's offset {offset[k - 1]!r}; "
            "score frames follow each other without gaps or overlaps"
        )


def _explain(file: Path) -> None:
    """Name the line of a file the columnar reader rejected."""
    width, rows = None, 0
    for line, text in text_lines(file):
        fields = text.split("\t")
        if width is None:
            width = len(fields)
            continue
        rows += 1
        if len(fields) != width:
            raise DataError(f"{file}:{line}: {len(fields)} tab-separated fields; the header has {width}")
        for name, field in zip(("onset", "offset") + ("score",) * (width - 2), fields):
            try:
                number = float(field)
            except ValueError:
                raise DataError(f"{file}:{line}: {name} {field.strip()!r} is not a number") from None
            if not np.isfinite(number):
                raise DataError(f"{file}:{line}: {name} {field.strip()!r} is not a finite number; scores and times must be")
    if width is not None and not rows:
        raise DataError(f"{file}: a header and no frames; a score file has one row per time frame")
    raise DataError(f"{file}: not a score file (a tab-separated table with the header 'onset offset <classes>')")
