"""Report writers: Markdown (side-by-side tables), JSON, CSV and Parquet (tidy rows), a
self-contained HTML report with plots, and the plots as PNG or SVG files."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from evalkit.plugin import (
    COLUMNS,
    SAMPLE_COLUMNS,
    BaseComponent,
    Results,
    agreement_note,
    atomic_write,
    comparison_table,
    floor_note,
    glossary_of,
    hookimpl,
    markdown,
    marked,
    opening_lines,
    tables,
    unit_note,
    visible,
)
from evalkit_reports.html import HtmlWriter, PngWriter, SvgWriter


@hookimpl
def evalkit_register_report_writers(register):
    for cls in (MarkdownWriter, JsonWriter, CsvWriter, ParquetWriter, HtmlWriter, PngWriter, SvgWriter):
        register(cls)


class MarkdownWriter(BaseComponent):
    """Side-by-side Markdown tables: T-norms and metrics down, averaging schemes across."""

    name = "markdown"
    suffix = ".md"

    def render(self, results: Results) -> str:
        parts = [f"# {markdown(results.name or 'evalkit results')}", ""]
        lines = opening_lines(results)
        if lines:
            parts += ["## Summary", "", *(f"- {markdown(line)}" for line in lines), ""]
        parts += [markdown(marked(table)) + "\n" for table in tables(results)]
        parts += [f"{markdown(note)}\n" for note in [unit_note(results.rows)] if note]
        compared = comparison_table(results)
        if compared is not None:
            parts.append(markdown(compared) + "\n")
            parts += [f"{markdown(note)}\n" for note in [floor_note(results)] if note]
        if results.agreement:
            note = agreement_note(results)
            if note:
                parts.append(markdown(note) + "\n")
            else:
                taus = [a.tau for a in results.agreement if a.tau == a.tau]
                parts.append(
                    f"Rank agreement: Kendall's τ over {len(results.agreement)} pairs of measures"
                    + (f", from {min(taus):.3f} to {max(taus):.3f}" if taus else "")
                    + " (every pair in the JSON and HTML reports).\n"
                )
        words = glossary_of(results)
        if words:
            parts += ["## Glossary", "", *(f"- `{markdown(k)}`: {markdown(v)}" for k, v in words.items()), ""]
        parts += [f"- {markdown(note)}" for note in results.notes]
        return "\n".join(parts).rstrip() + "\n"


class JsonWriter(BaseComponent):
    """Tidy rows as JSON: {"rows": [...], "notes": [...], "config": {...}}."""

    name = "json"
    suffix = ".json"

    def render(self, results: Results) -> str:
        return results.to_json()  # one document, which Results.from_json reads back


#: How a cell starts that a spreadsheet would take for a formula (OWASP, "CSV Injection"; the
#: tab and carriage return it also lists reach no cell: they are shown as ``\t`` and ``\r``).
FORMULA = ("=", "+", "-", "@")

#: A plain number, which a spreadsheet reads as the number it is whatever its sign.
NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")


class CsvWriter(BaseComponent):
    """Tidy rows as CSV, one row per value; control characters in names are shown as escapes
    (``cat`` prints the file to a terminal) and a name that starts like a formula is quoted with `'`."""

    name = "csv"
    suffix = ".csv"

    def render(self, results: Results) -> str:
        return _csv(COLUMNS, (row.as_dict() for row in results.rows))

    def write(self, results: Results, out: Path) -> list[Path]:
        """``NAME.csv``, and with per-sample values (``per_sample: true``) ``NAME-per_sample.csv``:
        one line per sample, system, combination and quantity, as :meth:`Results.per_sample`."""
        paths = [atomic_write(out.with_name(out.name + self.suffix), self.render(results))]
        if results.sample_values:
            lines = ({"sample": sample, **block.as_dict(), "value": value}
                     for block in results.sample_values for sample, value in zip(block.samples, block.values))
            paths.append(atomic_write(out.with_name(f"{out.name}-per_sample{self.suffix}"), _csv(SAMPLE_COLUMNS, lines)))
        return paths


def _csv(columns: Sequence[str], records: Iterable[dict[str, object]]) -> str:
    """Records as CSV lines of ``columns`` (other keys left out), each cell made safe."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows({k: _cell(v) for k, v in record.items()} for record in records)
    return buffer.getvalue()


class ParquetWriter(BaseComponent):
    """Tidy rows as Parquet, typed columns: ``NAME.parquet`` (the rows; the notes, config and
    provenance in its metadata) and ``NAME-comparisons``, ``-agreement``, ``-curves`` and
    ``-per_sample.parquet``, which :meth:`Results.from_parquet` reads back."""

    name = "parquet"
    suffix = ".parquet"

    def render(self, results: Results) -> str:
        """An index of the files ``write`` makes (Parquet files are binary)."""
        return "".join(f"{part or 'rows'}: {len(data):,} bytes\n" for part, data in results.to_parquet().items())

    def write(self, results: Results, out: Path) -> list[Path]:
        return [atomic_write(out.with_name(f"{out.name}{part}{self.suffix}"), data)
                for part, data in results.to_parquet().items()]


def _cell(value: object) -> object:
    """``value`` for a CSV cell: control and bidirectional characters shown as escapes, as on
    the terminal (ESC as ``\x1b``); a text that a spreadsheet would run as a formula
    (``=cmd|...``, ``@SUM(...)``) gets a leading ``'``, which makes it text, as OWASP advises;
    numbers, and texts that are plain numbers (``-0.25``), stay as they are."""
    if not isinstance(value, str):
        return value
    value = visible(value)
    return "'" + value if value.startswith(FORMULA) and not NUMBER.match(value) else value
