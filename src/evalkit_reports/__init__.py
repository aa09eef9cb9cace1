"""Report writers: Markdown (side-by-side tables), JSON and CSV (tidy rows), a self-contained
HTML report with plots, and the plots as PNG or SVG files."""

from __future__ import annotations

import csv
import io
import re

from evalkit.plugin import (
    COLUMNS,
    BaseComponent,
    Results,
    comparison_table,
    hookimpl,
    markdown,
    tables,
    visible,
)
from evalkit_reports.findings import agreement_note, floor_note, glossary_of, marked, opening_lines, unit_note
from evalkit_reports.html import HtmlWriter, PngWriter, SvgWriter


@hookimpl
def evalkit_register_report_writers(register):
    for cls in (MarkdownWriter, JsonWriter, CsvWriter, HtmlWriter, PngWriter, SvgWriter):
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
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: _cell(v) for k, v in row.as_dict().items()} for row in results.rows)
        return buffer.getvalue()


def _cell(value: object) -> object:
    """``value`` for a CSV cell: control and bidirectional characters shown as escapes, as on
    the terminal (ESC as ``\x1b``); a text that a spreadsheet would run as a formula
    (``=cmd|...``, ``@SUM(...)``) gets a leading ``'``, which makes it text, as OWASP advises;
    numbers, and texts that are plain numbers (``-0.25``), stay as they are."""
    if not isinstance(value, str):
        return value
    value = visible(value)
    return "'" + value if value.startswith(FORMULA) and not NUMBER.match(value) else value
