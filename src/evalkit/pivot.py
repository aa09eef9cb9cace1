"""Side-by-side tables from tidy rows: T-norms (and metrics) down, averaging schemes across.

Averagings across keeps the table narrow (it fits 80 columns for the usual two to four schemes)
while each row still compares the T-norms directly.

Terminal output and the Markdown report both render these plain tables. Their text comes from
configs and data files, so it is escaped where it meets a medium:
:func:`~evalkit.control_chars.visible` for a terminal, :func:`markdown` for Markdown.
(:meth:`Results.pivot <evalkit.results.Results.pivot>` pivots the same rows, with the same
:func:`~evalkit.results.grid`, into a DataFrame of numbers.)
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from evalkit.control_chars import visible
from evalkit.measures import PARTS
from evalkit.results import NOT_APPLICABLE, Results, Row, grid

INDEX = ("system", "representation", "similarity", "tnorm")


@dataclass
class TextTable:
    """A table of formatted text, ready to print or write (not :class:`~evalkit.table.CardinalityTable`, the numbers)."""

    title: str
    header: list[str]
    rows: list[list[str]]
    n_index: int  # the leading label columns; the rest hold numbers
    #: what the columns of numbers are (``averaging``), which a narrow terminal shows down
    #: instead (:mod:`evalkit.folding`); None: columns that cannot be put down (a test's columns)
    across: str | None = None


def fmt(value: float) -> str:
    return "undefined" if math.isnan(value) else f"{value:.4f}"


def fmt_row(row: Row) -> str:
    """The value, with its confidence interval when the run computed one: ``0.8468 [0.837, 0.856]``."""
    if row.ci_low is None or row.ci_high is None or math.isnan(row.value):
        return fmt(row.value)
    return f"{row.value:.4f} [{row.ci_low:.3f}, {row.ci_high:.3f}]"


def tables(results: Results) -> list[TextTable]:
    """The averaged metrics side by side, then per-class values, then data metrics, then
    per-level values; a sweep gets one table, its values down and the measures across."""
    swept = [r for r in results.rows if r.sweep is not None]
    rows = [r for r in results.rows if r.sweep is None]
    averaged = [r for r in rows if r.averaging is not None and r.class_ is None]
    per_class = [r for r in rows if r.class_ is not None]
    data = [r for r in rows if r.averaging is None and r.level is None and r.class_ is None]  # per class: above
    levels = [r for r in rows if r.level is not None]
    out = []
    if averaged:
        out.append(_pivot("Set metrics", averaged, "averaging", extra=("metric",)))
    if per_class:
        out.append(_pivot("Per class", per_class, "class_", extra=("averaging", "metric")))
    if data:
        out.append(_pivot("Data metrics", data, "metric", index=("system",)))
    if levels:  # levels down (there may be 22), systems and their differences across
        out.append(_pivot("Per level", [*levels, *level_differences(levels)], "system", index=("metric", "level")))
    for sweep in dict.fromkeys(r.sweep for r in swept):
        group = [r for r in swept if r.sweep == sweep]
        varying = [k for k in PARTS if len({getattr(r, k) for r in group}) > 1] or ["metric"]
        same = ", ".join(f"{k}: {getattr(group[0], k)}" for k in PARTS if k not in varying and getattr(group[0], k) is not None)
        title = f"Sweep over {sweep}" + (f" — {same}" if same else "")
        label = functools.partial(measure_label, keys=varying)
        table = _pivot(title, group, "measure", index=("system", "sweep_value"), label=label)
        out.append(replace(table, header=[str(sweep) if h == "sweep_value" else h for h in table.header]))
    return out


#: The labels of a paired test that apply to some measures only (a data metric has no T-norm).
TEST_LABELS = ("representation", "similarity", "tnorm", "averaging", "sweep_value")


def comparison_table(results: Results) -> TextTable | None:
    """The paired tests of a run: each system against the system it is compared with (the
    column ``against``, so that a system named ``baseline`` is not mistaken for it), the
    difference, its confidence interval, and the p-value; a p-value at its floor 1/(1 + resamples)
    shows as ``≤ 0.000999``, an upper bound."""
    return _comparison_table(results, results.comparisons) if results.comparisons else None


def comparison_tables(results: Results) -> list[TextTable]:
    """The paired tests as :func:`comparison_table`, in one table per set of labels that apply
    (the set metrics' tests apart from the data metrics', as their values are), so that neither
    carries columns of ``—`` for the other: a narrow terminal keeps a test on one line."""
    groups: dict[tuple[bool, ...], list] = {}
    for c in results.comparisons:
        groups.setdefault(tuple(getattr(c, k) is not None for k in TEST_LABELS), []).append(c)
    return [_comparison_table(results, comps) for comps in groups.values()]


def _comparison_table(results: Results, comps: Sequence) -> TextTable:
    optional = [k for k in TEST_LABELS if any(getattr(c, k) is not None for c in comps)]
    rows = [
        [c.system, c.baseline, *(_label(getattr(c, k)) for k in optional), c.metric,
         "undefined" if math.isnan(c.difference) else f"{c.difference:+.4f}", _interval(c.ci_low, c.ci_high),
         ("≤ " if c.p_at_floor else "") + p_value_text(c.p_value)]
        for c in comps
    ]
    methods = how_tested(results)
    statistics = results.config.get("statistics") if isinstance(results.config, dict) else None
    level = statistics.get("level") if isinstance(statistics, dict) else None
    interval = f"{level:.0%} interval" if isinstance(level, float) else "interval"
    header = ["system", "against", *(k.replace("_", " ") for k in optional), "metric", "difference", interval, "p-value"]
    return _constants_in_title(TextTable(f"Paired tests, system − against ({methods})", header, rows, len(header) - 3))


def how_tested(results: Results) -> str:
    """How the paired tests were made: ``permutation, 1,000 resamples`` (each kind once)."""
    return ", ".join(dict.fromkeys(f"{c.method}, {c.resamples:,} resamples" for c in results.comparisons))


def _interval(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "—"
    if math.isnan(low) or math.isnan(high):
        return "undefined"
    return f"[{low:+.4f}, {high:+.4f}]"


def p_value_text(value: float) -> str:
    if math.isnan(value):
        return "undefined"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.2e}"


def measure_label(row: Row, keys: Sequence[str] = PARTS) -> str:
    """What a row measures, in one column header: ``fuzzy · minimum · micro · f1``."""
    return row.measure.label(keys, sweep=False)


def level_differences(levels: Sequence[Row]) -> list[Row]:
    """Each other system's per-level values minus the first system's (Liu et al.'s Figure 3),
    as rows of a system named ``"other − first"``."""
    first = levels[0].system
    baseline = {(r.metric, r.level): r.value for r in levels if r.system == first}
    return [
        replace(r, system=f"{r.system} − {first}", value=r.value - baseline[(r.metric, r.level)])
        for r in levels
        if r.system != first and (r.metric, r.level) in baseline
    ]


def _pivot(
    title: str, rows: Sequence[Row], across: str, extra: Sequence[str] = (), index: Sequence[str] = INDEX,
    label: Callable[[Row], str] | None = None,
) -> TextTable:
    """``rows`` with the ``index`` and ``extra`` labels down and the Row attribute ``across``
    (or ``label`` of each row) across."""
    keys = [k for k in (*index, *extra) if any(getattr(r, k) is not None for r in rows)]
    column = label or (lambda r: getattr(r, across))
    columns, cells, _ = grid(rows, lambda r: tuple(_label(getattr(r, k)) for k in keys), column, fmt_row)
    body = [[*key, *(values.get(c, "") for c in columns)] for key, values in cells.items()]
    return _constants_in_title(TextTable(title, [*keys, *columns], body, len(keys), across.rstrip("_")))


def _constants_in_title(table: TextTable) -> TextTable:
    """A label column with one value in every row (one system, one averaging...) moves to the
    title, which keeps the numbers in view on narrow terminals; a table of one row keeps its
    labels unless it has several numbers (then they are all in the title)."""
    n = table.n_index
    if not table.rows or (len(table.rows) == 1 and len(table.header) - n < 2):
        return table
    constant = [i for i in range(n) if len({row[i] for row in table.rows}) == 1]
    if not constant:
        return table
    kept = [i for i in range(len(table.header)) if i not in constant]
    return replace(
        table, title=table.title + " — " + ", ".join(f"{table.header[i]}: {table.rows[0][i]}" for i in constant),
        header=[table.header[i] for i in kept], rows=[[row[i] for i in kept] for row in table.rows], n_index=n - len(constant),
    )


def _label(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return NOT_APPLICABLE if value is None else str(value)


#: What CommonMark would act on inside a line, each only where it would act: a backslash before
#: punctuation (or at the end); ``*`` and ``_`` that can open or close emphasis (``2 * 3`` and
#: ``snake_case`` cannot); ``]`` before ``(``, ``[`` or ``:`` (a link, a reference, a definition);
#: ``<`` that opens a tag, a comment or an autolink; ``&`` that makes an entity (``&amp;``).
_INLINE = re.compile(
    r"\\(?=[!-/:-@\[-`{-~]|$)"
    r"|\*(?=\S)|(?<=\S)\*"
    r"|(?<![^\W_])_(?=\S)|(?<=\S)_(?![^\W_])"
    r"|\](?=[(\[:])|<(?=[A-Za-z/!?])|&(?=#?\w+;)"
)
#: How a line starts that CommonMark reads as a block: a heading, a list item, a quote, a code
#: fence, a thematic break (``---``, or ``--`` after a list item's ``-``). Its first character is
#: escaped, or an ordered list's ``.``.
_BLOCK = re.compile(r"(?:#{1,6}|[-+*])(?=\s|$)|>|~{3,}|-(?=(?:\s*-)+\s*$)|(?P<number>\d{1,9})[.)](?=\s|$)")
#: A closing sequence of ``#`` at the end of a heading, which CommonMark would drop.
_CLOSING = re.compile(r"(?:^|(?<=\s))#+\s*$")


def markdown(content: TextTable | str) -> str:
    """A table as Markdown (a ``###`` title and a pipe table), or a text as a line of Markdown
    (a heading, a paragraph, a list item): control characters made visible, and the Markdown
    that CommonMark would act on escaped where it would act, no more, so that a name shows
    literally whatever renders the file (``p < 0.05`` stays as written; ``*star*`` is no
    emphasis, ``<script>`` no element, ``[x](javascript:…)`` no link)."""
    if isinstance(content, str):
        text = _inline(content)
        block = _BLOCK.match(text)
        if block:
            at = block.end("number") if block["number"] else 0
            text = text[:at] + "\\" + text[at:]
        closing = _CLOSING.search(text)
        return text[: closing.start()] + "\\" + text[closing.start():] if closing else text
    align = ["---"] * content.n_index + ["---:"] * (len(content.header) - content.n_index)
    lines = [f"### {markdown(content.title)}", "", _markdown_row(content.header), "|" + "|".join(align) + "|"]
    lines += [_markdown_row(row) for row in content.rows]
    return "\n".join(lines)


def _inline(text: str) -> str:
    """``text`` made visible, with what CommonMark would act on inside a line escaped."""
    text = visible(text)
    escaped = _INLINE.sub(lambda m: {"<": "&lt;", "&": "&amp;"}.get(m[0], "\\" + m[0]), text)
    return escaped.replace("`", "\\`") if text.count("`") > 1 else escaped


def _markdown_row(cells: Sequence[str]) -> str:
    """A row of a pipe table: each cell escaped as inline text, and its pipes, which would end it."""
    return "| " + " | ".join(_inline(cell).replace("|", "\\|") for cell in cells) + " |"
