"""Tables that fit a width: a wide table folds instead of wrapping into broken boxes.

Without a width (stdout is a file or a pipe) a table is printed whole, as is a table that fits.
A table too wide is laid out every way that folds it, and the layout that takes the fewest
lines (its legend included) is printed:

- long labels abbreviated (``event_based(…)``, more or less), with a legend of their full text;
  the parts of a header (``fuzzy · minimum · micro``) one under another;
- one table per system, or all systems in one;
- the columns of numbers in groups that fit beside the labels, or the measures down (what the
  columns were becomes a label column, and one column of numbers remains);
- and in each, the labels wrapped in their columns as far as the width needs (numbers never
  wrap).

Widths are rich's default box: each column takes its text's width plus 3 (padding and a rule),
and the table one more.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterator
from dataclasses import dataclass, replace

from rich.cells import cell_len, set_cell_size
from rich.table import Table as RichTable
from rich.text import Text

from evalkit.control_chars import visible
from evalkit.pivot import TextTable

#: How long a label may stay in each layout tried (None: as it is); a header part may also
#: stay as wide as its column's numbers, and a label column's name as wide as its labels.
LABEL_LIMITS = (None, 24, 16, 10, 8, 6)
#: What a line of legend costs, in lines of table: a reader must look an abbreviation up.
LEGEND_COST = 3
#: How many wrapped cells a wrapped column name is as bad as.
HEADER_WEIGHT = 5
#: Labels wrap in columns no narrower than this, nor than their name's longest word (a word
#: of a column's name is never broken: it is abbreviated instead).
WRAP_FLOOR = 6
#: How the parts of a measure's label are joined (:func:`evalkit.pivot.measure_label`).
PART = " · "
_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


@dataclass(frozen=True)
class Block:
    """One table to print, and the width each column wraps in (None: its text's width)."""

    table: TextTable
    widths: list[int | None]


@dataclass(frozen=True)
class Folded:
    """A table as printed at a width: its blocks, and the full text of abbreviated labels."""

    blocks: list[Block]
    legend: dict[str, str]  # abbreviation -> full label

    def rich_tables(self) -> list[RichTable]:
        """The blocks as rich tables: labels left, numbers right and never wrapped, a rule
        between systems."""
        return [_rich(block) for block in self.blocks]


def _rich(block: Block) -> RichTable:
    """Each column is given its width (the text's, when it does not wrap), which is what rich
    would measure: so rich does not measure every cell again (half of printing tnorms' tables)."""
    table = block.table
    out = RichTable(title=Text(table.title, "table.title"), title_justify="left")
    for i, (name, width, natural) in enumerate(zip(table.header, block.widths, column_widths(table))):
        out.add_column(Text(name), justify="right" if i >= table.n_index else "left", no_wrap=width is None,
                       width=width or natural, overflow="fold")
    by_system = table.header[0] == "system"
    for row, following in zip(table.rows, table.rows[1:] + [None]):
        out.add_row(*map(Text, row), end_section=by_system and following is not None and following[0] != row[0])
    return out


def fold_to_width(table: TextTable, width: int | None) -> Folded:
    """``table`` folded to lines of at most ``width`` characters, in the layout of fewest lines
    (see the module's note); ``None`` leaves it whole. Below about 40 characters a table may
    still not fit.

    Its text is made visible first (control characters as escapes, :func:`~evalkit.control_chars.visible`),
    so that every line break in a cell is the layout's.
    """
    table = replace(table, title=visible(table.title), header=[visible(h) for h in table.header],
                    rows=[[visible(cell) for cell in row] for row in table.rows])
    if width is None or table_width(table) <= width:
        return Folded([Block(table, [None] * len(table.header))], {})
    best = min(_layouts(table, width), key=lambda layout: layout[0])[1]
    shown = "\n".join(t for b in best.blocks for t in [b.table.title, *b.table.header, *(c for r in b.table.rows for c in r)])
    return replace(best, legend={short: full for short, full in best.legend.items() if short in shown})


def _layouts(table: TextTable, width: int) -> Iterator[tuple[tuple[int, bool, int, int, int], Folded]]:
    """Every way of folding the table, each with its cost: how far it still overflows, whether
    it splits columns that are not one kind (a test's difference and p-value), how many words
    it breaks (``lukasie`` / ``wicz``: an abbreviation in the legend reads better), how many
    lines it takes (a legend's count :data:`LEGEND_COST` times), and how much it abbreviates."""
    for rank, limit in enumerate(LABEL_LIMITS):
        legend: dict[str, str] = {}
        short = table if limit is None else _abbreviated(table, limit, legend)
        systems = _per_system(short)
        legend_lines = sum(-(-cell_len(f"{k} = {v}") // width) for k, v in legend.items())
        for parts in [[short], systems] if len(systems) > 1 else [[short]]:
            arrangements = [parts, [t for part in parts for t in _groups(part, width)]]
            if short.across is not None and short.n_index and len(short.header) - short.n_index > 1:
                arrangements.append([_measures_down(part, short.across) for part in parts])
            for tables in arrangements:
                blocks = [Block(t, _wrap_widths(t, width)) for t in tables]
                overflow = max(max(block_width(b) - width for b in blocks), 0)
                scattered = short.across is None and len(tables) > len(parts)
                lines = sum(map(_height, blocks)) + LEGEND_COST * legend_lines
                broken = sum(map(_broken_words, blocks))
                yield (overflow, scattered, broken, lines, rank), Folded(blocks, legend)


def table_width(table: TextTable) -> int:
    return sum(w + 3 for w in column_widths(table)) + 1


def column_widths(table: TextTable) -> list[int]:
    """Each column's text width: its widest line, header included."""
    return [max(_text_width(cell) for cell in column) for column in zip(table.header, *table.rows)]


@functools.lru_cache(maxsize=1 << 16)
def _text_width(text: str) -> int:
    """The widest line of a cell (cached: every layout tried measures the same cells)."""
    return max(cell_len(line) for line in text.split("\n"))


def _abbreviated(table: TextTable, limit: int, legend: dict[str, str]) -> TextTable:
    """Labels and the label columns' names over ``limit`` characters (header parts over their
    column's numbers, if wider) shortened, the abbreviations added to ``legend``; a header's
    parts put one under another."""
    n = table.n_index
    value_widths = [max((_text_width(row[i]) for row in table.rows), default=0) for i in range(n, len(table.header))]
    cuts: dict[str, str] = {}  # full label -> abbreviation

    def note(label: str, room: int) -> None:
        if cell_len(label) > room:
            cuts.setdefault(label, _cut(label, room))

    labels = [cell for row in table.rows for cell in row[:n]]
    for label in labels:
        note(label, limit)
    for name in table.header[:n]:  # ``representation`` over ``fuzzy``
        note(name, limit)
    for label, w in zip(table.header[n:], value_widths):
        for part in label.split(PART):
            note(part, max(limit, w))
    short = _distinct(cuts, {*labels, *table.header})
    legend.update({short[full]: full for full in cuts})

    def header(label: str) -> str:
        return (PART.rstrip() + "\n").join(short.get(part, part) for part in label.split(PART))

    return replace(
        table,
        header=[*(short.get(name, name) for name in table.header[:n]), *map(header, table.header[n:])],
        rows=[[*(short.get(cell, cell) for cell in row[:n]), *row[n:]] for row in table.rows],
    )


def _cut(label: str, limit: int) -> str:
    """``name(…)`` for a label with parameters, else its first characters and ``…``."""
    stem, paren, _ = label.partition("(")
    cut = stem + "(…)" if paren else label
    if cell_len(cut) <= limit:
        return cut
    return (stem if cell_len(stem) < limit else set_cell_size(stem, max(limit - 1, 1))) + "…"


def _distinct(cuts: dict[str, str], labels: set[str]) -> dict[str, str]:
    """full label -> its abbreviation, numbered where two labels (or a label and an
    abbreviation) would read the same."""
    groups: dict[str, list[str]] = {}
    for full, cut in cuts.items():
        groups.setdefault(cut, []).append(full)
    out = {}
    for cut, fulls in groups.items():
        numbered = len(fulls) > 1 or cut in labels
        for i, full in enumerate(fulls, 1):
            out[full] = cut + str(i).translate(_SUPERSCRIPTS) if numbered else cut
    return out


def _per_system(table: TextTable) -> list[TextTable]:
    """One table per system, the system in its title (the table itself when it has one)."""
    systems = list(dict.fromkeys(row[0] for row in table.rows))
    if table.header[0] != "system" or table.n_index < 2 or len(systems) < 2:
        return [table]
    return [
        replace(table, title=f"{table.title} — system: {system}", header=table.header[1:],
                rows=[row[1:] for row in table.rows if row[0] == system], n_index=table.n_index - 1)
        for system in systems
    ]


def _groups(table: TextTable, width: int) -> list[TextTable]:
    """The table with its columns of numbers in groups that fit beside the labels (at least
    one column each)."""
    n, widths = table.n_index, column_widths(table)
    room = width - sum(w + 3 for w in widths[:n]) - 1
    groups: list[list[int]] = [[]]
    used = 0
    for i in range(n, len(widths)):
        if groups[-1] and used + widths[i] + 3 > room:
            groups.append([])
            used = 0
        groups[-1].append(i)
        used += widths[i] + 3
    if len(groups) == 1:
        return [table]
    return [
        replace(table, title=f"{table.title} (part {k} of {len(groups)})",
                header=[*table.header[:n], *(table.header[i] for i in group)],
                rows=[[*row[:n], *(row[i] for i in group)] for row in table.rows])
        for k, group in enumerate(groups, 1)
    ]


def _measures_down(table: TextTable, across: str) -> TextTable:
    """What the columns were goes down, as a label column before the last one (so a sweep
    lists each measure's values one under another), and one column of numbers remains."""
    n = table.n_index
    names = [h.replace("\n", " ") for h in table.header[n:]]
    groups: dict[tuple[str, ...], int] = {}
    down = [
        (groups.setdefault(tuple(row[: n - 1]), len(groups)), k, [*row[: n - 1], name, row[n - 1], value])
        for row in table.rows for k, (name, value) in enumerate(zip(names, row[n:])) if value
    ]
    rows = [row for _, _, row in sorted(down, key=lambda item: item[:2])]
    return replace(table, header=[*table.header[: n - 1], across, table.header[n - 1], "value"], rows=rows, n_index=n + 1)


def _wrap_widths(table: TextTable, width: int) -> list[int | None]:
    """Widths for the label columns to wrap in so that the table fits, taken a character at a
    time from the column where that wraps the fewest cells (a header counts
    :data:`HEADER_WEIGHT` cells), none below :data:`WRAP_FLOOR` (None: a column keeps its
    text's width)."""
    n, widths = table.n_index, column_widths(table)
    cells = [sorted(_text_width(row[i]) for row in table.rows) for i in range(n)]
    heads = [_text_width(h) for h in table.header[:n]]
    floors = [max(WRAP_FLOOR, *(cell_len(word) for word in h.split())) for h in table.header[:n]]

    def wrapped(i: int, w: int) -> int:
        return len(cells[i]) - bisect.bisect_right(cells[i], w) + HEADER_WEIGHT * (heads[i] > w)

    labels = widths[:n]
    for _ in range(sum(w + 3 for w in widths) + 1 - width):
        narrowable = [i for i in range(n) if labels[i] > floors[i]]
        if not narrowable:
            break
        i = min(narrowable, key=lambda i: (wrapped(i, labels[i] - 1) - wrapped(i, labels[i]), -labels[i]))
        labels[i] -= 1
    return [w if w != natural else None for w, natural in zip(labels, widths)] + [None] * (len(widths) - n)


def block_width(block: Block) -> int:
    """The width rich prints ``block`` at."""
    return sum((w or natural) + 3 for w, natural in zip(block.widths, column_widths(block.table))) + 1


def _broken_words(block: Block) -> int:
    """How many label cells (header included) have a word wider than the column they wrap in."""
    return sum(
        1 for w, column in zip(block.widths, zip(block.table.header, *block.table.rows)) if w is not None
        for cell in column if any(cell_len(word) > w for word in cell.split())
    )


def _height(block: Block) -> int:
    """The lines a block takes: title, rules, header and rows (a wrapped cell about
    ``ceil(length / width)`` lines), and a rule between systems."""
    table = block.table

    def lines(text: str, width: int | None) -> int:
        parts = text.split("\n")
        return len(parts) if width is None else sum(max(1, -(-cell_len(p) // width)) for p in parts)

    def tallest(cells: list[str]) -> int:
        return max(lines(cell, w) for cell, w in zip(cells, block.widths))

    systems = len({row[0] for row in table.rows}) if table.header[0] == "system" else 1
    return 5 + tallest(table.header) + sum(map(tallest, table.rows)) + systems - 1
