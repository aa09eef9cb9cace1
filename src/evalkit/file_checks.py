"""The author kit's checks of the components that touch files: loaders and report writers
(re-exported by :mod:`evalkit.testing`, where a plugin's tests import them).

Each component is driven the way evalkit drives it: a loader wrapped in the guard every loader
gets (so an unreadable file must become a message naming it, not "a bug in the plugin"), a
report writer through :func:`evalkit.reporting.write_reports` (the folder's lock, the set of
files renamed together).
"""

from __future__ import annotations

import shutil
import tempfile
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from evalkit.components import describe
from evalkit.contracts import guard
from evalkit.data import LabelMatrix
from evalkit.errors import DataError
from evalkit.items import ItemSets
from evalkit.protocols import optional, report_file, report_pattern
from evalkit.results import Results

# ---------------------------------------------------------------------------------------------
# Loaders
# ---------------------------------------------------------------------------------------------


def check_loader(
    loader: Any, files: Sequence[Path | str], *, bad_files: Iterable[Path | str] = (), role: str = "reference",
) -> None:
    """Check that ``loader`` reads ``files`` as evalkit needs; raise AssertionError at the first
    failure.

    The properties: each file's suffix (``"/"`` for a folder) is one of ``suffixes``; ``load``
    returns the data of the loader's ``kind`` (a LabelMatrix for "matrix", ItemSets for "items"),
    whose ``source`` names the file, the same data each time; ``sniff`` (if any) accepts each
    file; ``header_classes`` (if any) are the classes ``load`` finds; ``sample_ids`` (if any) are the
    ids ``load`` gives, in its order; ``stream`` (if any) from any
    row, in chunks of any size, gives the rows ``load`` gives from there; every file of
    ``bad_files``, and an empty file, each file cut in half and each file with bytes that are not
    UTF-8, either loads or raises :class:`~evalkit.errors.DataError` naming the file, never
    another exception.

    Args:
        loader: an instance.
        files: files (or folders) it reads, written by the test or shipped with it.
        bad_files: files it must refuse, each with a DataError naming it.
        role: the role ``load`` is given ("reference" or "prediction").

    Raises:
        AssertionError: naming the loader, the property and the file.
    """
    guarded = guard("loader", loader, f"loader {describe(loader)}")
    for path in map(Path, files):
        data = _loads(loader, guarded, path, role)
        _same_data(loader, _loads(loader, guarded, path, role), data, f"{path} loaded twice")
        sniff = optional(loader, "sniff")
        if sniff is not None and not sniff(path):
            _fail(loader, f"sniff() refuses {path}, which load() reads")
        header = optional(loader, "header_classes")
        declared = header(path) if header is not None else None
        if declared is not None and tuple(declared) != tuple(data.classes):
            _fail(loader, f"header_classes() of {path} is {list(declared)}, load() finds {list(data.classes)}")
        if optional(loader, "sample_ids") is not None and tuple(guarded.sample_ids(path)) != data.ids:
            _fail(loader, f"sample_ids() of {path} are not the ids load() gives, in its order")
        if optional(loader, "stream") is not None:
            _streams(loader, guarded, path, role, data)
    with tempfile.TemporaryDirectory(prefix="evalkit-check-loader-") as scratch:
        for bad in [*map(Path, bad_files), *_damaged([Path(f) for f in files], Path(scratch), loader)]:
            try:
                guarded.load(bad, role)
            except DataError as exc:
                if str(bad) not in str(exc) and bad.name not in str(exc):
                    _fail(loader, f"the error for {bad} does not name the file: {exc}")
            except Exception as exc:  # what evalkit would report as a bug in the plugin
                _fail(loader, f"{bad} raised {type(exc).__name__}: {exc}; expected a DataError naming the file")
            else:
                if bad in map(Path, bad_files):
                    _fail(loader, f"{bad} loaded; it is one of the bad files it must refuse")


def _loads(loader: Any, guarded: Any, path: Path, role: str) -> LabelMatrix | ItemSets:
    suffix = "/" if path.is_dir() else path.suffix.lower()
    if suffix not in loader.suffixes:
        _fail(loader, f"{path} has the suffix {suffix!r}, not one of its suffixes {loader.suffixes}")
    data = guarded.load(path, role)
    expected = LabelMatrix if loader.kind == "matrix" else ItemSets
    if not isinstance(data, expected):
        _fail(loader, f"load({path}) returned {type(data).__name__}; a {loader.kind!r} loader returns {expected.__name__}")
    if path.name not in str(data.source):
        _fail(loader, f"load({path}) gives data whose source {data.source!r} does not name the file (messages use it)")
    return data


def _streams(loader: Any, guarded: Any, path: Path, role: str, whole: LabelMatrix | ItemSets) -> None:
    """``stream`` from several rows in several chunk sizes equals ``load``'s rows from there."""
    n = len(whole)
    for start in sorted({0, 1, n // 2, n}):
        for rows in (1, 7, max(n, 1)):
            got = _joined(list(guarded.stream(path, role, rows, start)), whole)  # chunks of *about* rows
            _same_data(loader, got, whole[start:], f"stream({path}, rows={rows}, start={start}) joined")


def _joined(chunks: list[Any], like: LabelMatrix | ItemSets) -> LabelMatrix | ItemSets:
    from evalkit.streaming import joined

    return joined(chunks) if chunks else like[:0]


def _same_data(loader: Any, got: Any, want: Any, what: str) -> None:
    if tuple(got.classes) != tuple(want.classes) or len(got) != len(want):
        _fail(loader, f"{what}: {len(got)} rows of {list(got.classes)[:5]}, expected {len(want)} rows of "
              f"{list(want.classes)[:5]}")
    if (got.ids is None) != (want.ids is None) or (got.ids is not None and list(got.ids) != list(want.ids)):
        _fail(loader, f"{what}: other sample ids")
    if isinstance(want, LabelMatrix):
        if not np.array_equal(got.values, want.values, equal_nan=True):
            _fail(loader, f"{what}: other values")
    elif [tuple(map(_items, row)) for row in got.samples] != [tuple(map(_items, row)) for row in want.samples]:
        _fail(loader, f"{what}: other items")


def _items(items: Any) -> Any:
    return items.tolist() if isinstance(items, np.ndarray) else list(items)


def _damaged(files: list[Path], scratch: Path, loader: Any) -> list[Path]:
    """An empty file, and each file cut in half and with bytes that are not UTF-8 (folders are
    left out: what damages one is the loader's to say), named with the loader's suffixes."""
    suffix = next((s for s in loader.suffixes if s != "/"), None)
    if suffix is None:
        return []
    damaged = {scratch / f"empty{suffix}": b""}
    for number, path in enumerate(f for f in files if f.is_file()):
        data = path.read_bytes()
        damaged[scratch / f"half{number}{path.suffix}"] = data[: len(data) // 2]
        damaged[scratch / f"bytes{number}{path.suffix}"] = data[: len(data) // 3] + b"\xff\xfe\xc3(" + data[len(data) // 3:]
    for path, data in damaged.items():
        path.write_bytes(data)
    return list(damaged)


def _fail(component: Any, message: str, kind: str = "loader") -> NoReturn:
    raise AssertionError(f"{kind} {describe(component)}: {message}")


# ---------------------------------------------------------------------------------------------
# Report writers
# ---------------------------------------------------------------------------------------------

#: Names a report must show as text, never as markup or terminal control: HTML, a Markdown
#: table's separator, a newline, ANSI escapes, a right-to-left override, quotes and a comma.
HOSTILE = ("<script>alert(1)</script>", "a|b", "two\nlines", "\x1b[31mred", "\u202eevil", '"quoted", and')
_MARKUP = (".html", ".htm", ".svg", ".md", ".markdown")


def check_report_writer(writer: Any, results: Results | None = None) -> None:
    """Check that ``writer`` writes reports as evalkit needs; raise AssertionError at the first
    failure.

    The properties, through evalkit's own report writing (:func:`evalkit.reporting.write_reports`):
    it writes its files (``out`` plus its ``suffix``, and with ``write`` also ``out-*`` plus it)
    and nothing else, and ``render`` returns text; names with markup, control characters and quotes
    (:data:`HOSTILE`) appear in no text file raw (no control character, no ``<script>`` in HTML,
    SVG or Markdown); and when one of its files cannot be written, the failure names it and the
    writer's other files are kept whole, as they were, with no temporary file left behind.

    Args:
        writer: an instance.
        results: what to report; by default the results of a small evaluation whose system and
            class names are :data:`HOSTILE`.

    Raises:
        AssertionError: naming the writer, the property and the file.
    """
    from evalkit.reporting import write_reports

    results = results if results is not None else _hostile_results()
    with tempfile.TemporaryDirectory(prefix="evalkit-check-report-") as scratch:
        out = Path(scratch) / "report"
        written = write_reports(results, {writer.name: writer}, out)
        if written.failures:
            _fail(writer, f"could not write its report: {written.failures[0]}", "report writer")
        found = sorted(p for p in Path(scratch).iterdir() if p.name != ".evalkit.lock")
        named = {report_file(out, writer).name} | {p.name for p in Path(scratch).glob(report_pattern(out, writer))}
        if not found or any(p.name not in named for p in found) or sorted(written.paths) != found:
            _fail(writer, f"wrote {[p.name for p in found]}, reported {[p.name for p in written.paths]}; expected "
                  f"{report_file(out, writer).name} or files matching {report_pattern(out, writer)!r}", "report writer")
        if not isinstance(writer.render(results), str):
            _fail(writer, f"render() returned {type(writer.render(results)).__name__}, not text", "report writer")
        for path in found:
            _shown_as_text(writer, path)
        _kept_whole(writer, results, out, found)


def _hostile_results() -> Results:
    from evalkit.evaluator import Evaluator

    evaluator = Evaluator(averaging=["micro", "none"], classes=list(HOSTILE))
    rng = np.random.default_rng(0)
    evaluator.update(rng.random((8, len(HOSTILE))), rng.random((8, len(HOSTILE))))
    return evaluator.compute(system=HOSTILE[0])


def _shown_as_text(writer: Any, path: Path) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return  # an image
    controls = [c for c in text if unicodedata.category(c) in ("Cc", "Cf") and c not in "\n\r\t\ufeff"]
    if controls:
        _fail(writer, f"{path.name} holds the control character {controls[0]!r} raw", "report writer")
    if path.suffix.lower() in _MARKUP and "<script>alert" in text:
        _fail(writer, f"{path.name} holds the name {HOSTILE[0]!r} as markup, not as text", "report writer")


def _kept_whole(writer: Any, results: Results, out: Path, files: list[Path]) -> None:
    """With its last file replaced by a folder (which no rename can replace), writing other
    results must fail naming that file and leave the others as they were."""
    from evalkit.reporting import write_reports

    before = {path: path.read_bytes() for path in files}
    blocked = files[-1]
    blocked.unlink()
    blocked.mkdir()
    try:
        written = write_reports(replace(results, name=f"{results.name} (again)"), {writer.name: writer}, out)
        changed = [path.name for path in files[:-1] if path.read_bytes() != before[path]]
        leftover = [p.name for p in out.parent.iterdir() if p.name.endswith(".part")]
        if changed or leftover:
            _fail(writer, f"a failed write changed {changed} and left {leftover}: write each file with "
                  "evalkit.plugin.atomic_write, so a writer's files are kept whole or not at all", "report writer")
        if not written.failures or blocked.name not in written.failures[0]:
            _fail(writer, f"writing over a folder {blocked.name} gave {written.failures or 'no failure'}; expected "
                  "a failure naming it (evalkit.plugin.atomic_write names it)", "report writer")
    finally:
        shutil.rmtree(blocked, ignore_errors=True)
