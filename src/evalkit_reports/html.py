"""The HTML report (one self-contained file) and the png / svg writers of its figures.

``html`` renders one page with everything inline: CSS in a ``<style>`` element, figures as PNG
data URIs, no scripts and no external resources, so it opens offline from a file or an e-mail
attachment. Two renders of the same results are byte-identical except the text of the
``<time class="created">`` element (the results' creation time, or the rendering time when the
results do not record one).

matplotlib is imported only where a figure is drawn, so registering these writers costs
evalkit's start-up nothing; ``evalkit run`` starts the process that draws them (``start``) before
it scores the run, which imports it meanwhile, and hands it the figures (``results_ready``) before it
prints the tables.
"""

from __future__ import annotations

import base64
import html
import json
import math
import struct
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

from evalkit.plugin import (
    MARK,
    BaseComponent,
    Results,
    __version__,
    agreement_note,
    comparison_table,
    floor_note,
    glossary,
    glossary_of,
    how_tested,
    marked,
    opening_lines,
    p_value_text,
    tables,
    unit_note,
    visible,
)

#: (heading, Row attribute) of each comparison axis listed at the top of the report.
AXES = (
    ("systems", "system"),
    ("representations", "representation"),
    ("similarities", "similarity"),
    ("T-norms", "tnorm"),
    ("averagings", "averaging"),
    ("metrics", "metric"),
    ("classes", "class_"),
    ("levels", "level"),
)


#: Agreement tables longer than this show the least agreeing pairs, and every pair folded away.
MAX_AGREEMENT_ROWS = 60
#: What folds: a section or table the config asked for (the summary, the result tables, the
#: paired tests, the agreement, the figures, the glossary) starts open however long it is; only
#: supporting detail starts folded: a per-class table longer than this (its heading says how
#: many rows), more notes than :data:`MAX_OPEN_NOTES`, the provenance.
MAX_OPEN_ROWS = 40
#: More notes than this start folded under their heading, which says how many.
MAX_OPEN_NOTES = 10


class _DrawsFigures(BaseComponent):
    #: what its figures are drawn as
    format: ClassVar[str] = "png"

    def start(self) -> None:
        """The worker that draws the figures, started while the run is scored."""
        from evalkit_reports.plots import start_pool

        start_pool()

    def results_ready(self, results: Results) -> None:
        """The figures, handed to the worker while the tables print."""
        from evalkit_reports.plots import submit

        submit(results, self.format)

    def stop(self) -> None:
        """The worker, once the report is written (or the run failed first)."""
        from evalkit_reports.plots import stop_pool

        stop_pool()


class HtmlWriter(_DrawsFigures):
    """One self-contained HTML page: config, data checksums, tables, tests, figures."""

    name = "html"
    suffix = ".html"

    def render(self, results: Results) -> str:
        return render_html(results)


class _ImageWriter(_DrawsFigures):
    """One image file per figure, ``{out}-{figure name}{suffix}``."""

    suffix: ClassVar[str]

    def render(self, results: Results) -> str:
        """An index of the figures ``write`` makes (the images themselves are binary files)."""
        from evalkit_reports.plots import gallery

        found = gallery(results)
        lines = [f"{plot.name}{self.suffix}: {plot.caption}" for plot in found.plots]
        return "\n".join([*lines, *found.notes]) + "\n"

    def write(self, results: Results, out: Path) -> list[Path]:
        from evalkit_reports.plots import write_images

        return write_images(results, Path(out), self.format)


class PngWriter(_ImageWriter):
    """The report's figures as PNG files, one per figure."""

    name = "png"
    suffix = ".png"
    format = "png"


class SvgWriter(_ImageWriter):
    """The report's figures as SVG files, one per figure."""

    name = "svg"
    suffix = ".svg"
    format = "svg"


def _sweep_label(value: float | None) -> str:
    return "—" if value is None else f"{value:g}"


# --- the page ---------------------------------------------------------------------------------

def render_html(results: Results) -> str:
    provenance = results.provenance or {}
    title = results.name or "evalkit results"
    version = provenance.get("evalkit_version") or __version__
    created = provenance.get("created")
    stamp_label = "created"
    if not created:
        created, stamp_label = datetime.now(timezone.utc).isoformat(timespec="seconds"), "rendered"

    sections: list[tuple[str, str, str, bool]] = []  # (id, heading, body, open)
    brief = _summary(results)
    if brief:
        sections.append(("summary", "Summary", brief, True))
    sections.append(("axes", "What was compared", _axes(results), True))
    figures_html, figure_notes = _figures(results)
    notes = [*results.notes, *figure_notes]
    if notes:
        heading = "Notes" if len(notes) <= MAX_OPEN_NOTES else f"Notes ({len(notes):,})"
        sections.append(("notes", heading, "<ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>",
                         len(notes) <= MAX_OPEN_NOTES))
    sections.append(("tables", "Results", _tables(results), True))
    if results.comparisons:
        sections.append(("comparisons", f"Paired comparisons ({len(results.comparisons):,})", _comparisons(results), True))
    if results.agreement:
        note = agreement_note(results)
        body = f'<p class="hint">{_e(note)}</p>' if note else _agreement(results)
        sections.append(("agreement", "Rank agreement", body, True))
    worst = _worst(results)
    if worst:
        sections.append(("worst", "Worst files", worst, True))
    if figures_html:
        sections.append(("figures", "Figures", figures_html, True))
    words = _glossary(results)
    if words:
        sections.append(("glossary", "Glossary", words, True))
    sections.append(("provenance", "Provenance", _provenance(results), False))

    meta = [f"evalkit {_e(version)}"]
    if version != __version__:
        meta.append(f"rendered by evalkit {_e(__version__)}")
    meta.append(f'{stamp_label} <time class="created" datetime="{_e(created)}">{_e(created)}</time>')
    if provenance.get("config_file"):
        meta.append(f"config <code>{_e(provenance['config_file'])}</code>")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="evalkit {_e(__version__)}">',
        f"<title>{_e(title)} — evalkit report</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        "<header>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="meta">{" · ".join(meta)}</p>',
        "</header>",
        '<nav aria-label="Contents"><ol>'
        + "".join(f'<li><a href="#{sid}">{_e(heading)}</a></li>' for sid, heading, _, _ in sections)
        + "</ol></nav>",
        "<main>",
    ]
    for sid, heading, body, unfolded in sections:  # each folds away under its heading
        parts += [f'<section id="{sid}">', f'<details{" open" if unfolded else ""}>',
                  f"<summary><h2>{_e(heading)}</h2></summary>", body, "</details>", "</section>"]
    parts += ["</main>", "</body>", "</html>", ""]
    return "\n".join(parts)


def _e(value: object) -> str:
    """Text for the page: control and bidirectional characters shown as escapes, as on the
    terminal (``cat report.html`` must not retitle it), lines and tabs kept; HTML escaped."""
    return html.escape(visible(str(value), lines=True), quote=True)


def _axes(results: Results) -> str:
    rows = []
    for heading, attribute in AXES:
        values = [v for v in dict.fromkeys(getattr(r, attribute) for r in results.rows) if v is not None]
        if values:
            rows.append((heading, [str(v) for v in values]))
    sweeps: dict[str, list[str]] = {}
    for r in results.rows:
        if r.sweep is not None:
            sweeps.setdefault(r.sweep, [])
            value = _sweep_label(r.sweep_value)
            if value not in sweeps[r.sweep]:
                sweeps[r.sweep].append(value)
    for sweep, values in sweeps.items():
        rows.append((f"sweep values ({sweep})", values))
    if not rows:
        return "<p>No results.</p>"
    body = "".join(
        f'<tr><th scope="row">{_e(heading)}</th><td>'
        + "".join(f'<span class="chip">{_e(v)}</span>' for v in values)
        + "</td></tr>"
        for heading, values in rows
    )
    return f'<table class="axes"><tbody>{body}</tbody></table>'


def _statistics_line(results: Results) -> str:
    """How the intervals were computed, from the config's ``statistics`` (when it says)."""
    if not any(r.ci_low is not None for r in results.rows):
        return ""
    stats = results.config.get("statistics") if isinstance(results.config, dict) else None
    text = "Values in brackets are confidence intervals"
    if isinstance(stats, dict):
        level = stats.get("level")
        boot = stats.get("bootstrap")
        if isinstance(level, (int, float)):
            text = f"Values in brackets are {level:.0%} confidence intervals"
        if isinstance(boot, dict):
            details = [
                str(boot[k]) + (" resamples" if k == "resamples" else "")
                for k in ("method", "resamples")
                if boot.get(k) is not None
            ]
            text += " (bootstrap over samples" + (", " + ", ".join(details) if details else "") + ")"
    return f'<p class="hint">{_e(text)}.</p>'


def _summary(results: Results) -> str:
    """The best system per measure, where the measures disagree, and the paired tests in brief."""
    lines = opening_lines(results)
    return "<ul>" + "".join(f"<li>{_e(line)}</li>" for line in lines) + "</ul>" if lines else ""


def _tables(results: Results) -> str:
    found = tables(results)
    if not found:
        return "<p>No rows.</p>"
    parts = [_statistics_line(results), *map(_folding_table, map(marked, found))]
    note = unit_note(results.rows)
    if note:
        parts.append(f'<p class="hint out-note">{_e(note)}</p>')
    if results.ceilings:
        parts.append('<p class="hint">The ceiling of each T-norm: the reference scored against itself, the most a perfect '
                     "system can reach on it. Only the minimum gives 1 (T(μ, μ) = μ); the product gives Σ μ² / Σ μ, "
                     "Łukasiewicz less still, so read a value against its T-norm's ceiling.</p>")
        parts += [_folding_table(replace(table, title=f"Ceiling per T-norm: {table.title}"))
                  for table in tables(Results(results.ceilings))]
    return "\n".join(p for p in parts if p)


def _folding_table(table: Any) -> str:
    """A table under its heading: open, unless it is a per-class table over :data:`MAX_OPEN_ROWS` rows."""
    folded = "Per class" in table.title and len(table.rows) > MAX_OPEN_ROWS
    return (f"<details{'' if folded else ' open'}><summary><h3>{_e(table.title)}</h3> "
            f'<span class="count">({len(table.rows):,} rows)</span></summary>'
            + _table(table.header, table.rows, table.n_index, group_by_first=True) + "</details>")


def _glossary(results: Results) -> str:
    """What the names in the tables mean, from their components: every T-norm and averaging
    (the well-known ones too: the values of a comparison depend on what each is), then the
    unfamiliar metrics."""
    named = [getattr(r, kind) for kind in ("tnorm", "averaging") for r in results.rows if getattr(r, kind) is not None]
    lines = glossary(named, kinds=("tnorm", "averaging"), well_known=frozenset())
    lines.update({k: v for k, v in glossary_of(results).items() if k not in lines})
    if not lines:
        return ""
    return "<dl>" + "".join(f"<dt><code>{_e(k)}</code></dt><dd>{_e(v)}</dd>" for k, v in lines.items()) + "</dl>"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], n_index: int, group_by_first: bool = False,
           classes: Sequence[str] = (), numeric: Iterable[int] | None = None) -> str:
    """An HTML table: the first ``n_index`` columns label the rows; ``numeric`` (by default the
    others) are right-aligned. ``group_by_first`` rules a line where the first column changes."""
    numeric = set(range(n_index, len(header)) if numeric is None else numeric)
    right = ' class="num"'
    head = "".join(f'<th scope="col"{right if i in numeric else ""}>{_e(h)}</th>' for i, h in enumerate(header))
    body, previous = [], None
    for row in rows:
        attrs = ""
        if group_by_first and n_index > 1 and previous is not None and row[0] != previous:
            attrs = ' class="group"'
        previous = row[0]
        cells = []
        for i, cell in enumerate(map(str, row)):
            kind = ["num"] if i in numeric else []
            if cell == "undefined":
                kind.append("undef")
            if cell.endswith(MARK):
                kind.append("out")
            kind += [classes[i]] if i < len(classes) and classes[i] else []
            cls = f' class="{" ".join(kind)}"' if kind else ""
            title = ' title="outside [0, 1]: see the note below the tables"' if cell.endswith(MARK) else ""
            cells.append(f"<td{cls}{title}>{_e(cell)}</td>")
        body.append(f"<tr{attrs}>{''.join(cells)}</tr>")
    return (f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _number(value: float | None, digits: int = 4, sign: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "undefined"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def _comparisons(results: Results) -> str:
    table = comparison_table(results)
    assert table is not None, "called only for results with comparisons"
    methods = how_tested(results)
    held = table.title.partition(" — ")[2]  # what every test shares (one system against, one representation)
    hint = ('<p class="hint">difference = system − against, on the same samples, with its confidence interval '
            "(paired bootstrap); the p-value is two-sided, for the hypothesis of no difference "
            f"({_e(methods)}).{f' In every test: {_e(held)}.' if held else ''}</p>")
    floor = floor_note(results)
    if floor:
        hint += f'<p class="hint">{_e(floor)}</p>'
    return hint + _table(table.header, table.rows, table.n_index, group_by_first=True)


def _agreement(results: Results) -> str:
    header = ["measure A", "measure B", "Kendall's τ", "p-value", "systems"]

    def rows(pairs):
        return [[a.measure_a, a.measure_b, _number(a.tau, 3, sign=True), p_value_text(a.p_value), str(a.n_systems)]
                for a in pairs]

    pairs = results.agreement
    hint = ('<p class="hint">Kendall\'s τ between the rankings of the systems by two measures (each '
            "oriented so that higher is better): 1 = the same order, −1 = reversed.</p>")
    if len(pairs) <= MAX_AGREEMENT_ROWS:
        return hint + _table(header, rows(pairs), 2)
    least = sorted(pairs, key=lambda a: (math.inf if math.isnan(a.tau) else a.tau))[:20]
    return (hint + f"<h3>The {len(least)} pairs that agree least (of {len(pairs):,})</h3>" + _table(header, rows(least), 2)
            + f"<details><summary>All {len(pairs):,} pairs</summary>" + _table(header, rows(pairs), 2) + "</details>")


def _worst(results: Results) -> str:
    """Each system's worst files (``per_sample: true``) with their counts; their timelines are
    among the figures."""
    ranked = results.worst_samples()
    if not ranked:
        return ""
    first = next(iter(ranked.values()))[0]
    measure = " · ".join(str(p) for p in (first.metric, first.representation, first.similarity, first.tnorm) if p)
    order = "highest" if first.metric in results.lower_is_better else "lowest"
    counts = [c for c in ("n_ref", "n_sys", "tp", "fn", "fp", "substitutions")
              if any(b.metric == c for b in results.sample_values)]
    values = {(b.system, b.representation, b.similarity, b.tnorm, b.sweep_value, b.metric): dict(zip(b.samples, b.values))
              for b in results.sample_values if b.metric in counts}
    parts = [f'<p class="hint">The files with the {order} {_e(measure)} per system, worst first (files with nothing on '
             "either side, and undefined values, left out); every file's values are in the json, csv and parquet "
             "reports. Counts are summed over the file's classes: n_ref = |G|, n_sys = |P|, tp = |G ∩ P|, "
             "fn = |G| − tp, fp = |P| − tp." + (" Their events are drawn in the figures." if results.timelines else "")
             + "</p>"]
    for system, (block, worst) in ranked.items():
        key = (system, block.representation, block.similarity, block.tnorm, block.sweep_value)
        rows = [[str(rank), sample, _number(value), *(f"{values[key + (c,)][sample]:.6g}" for c in counts)]
                for rank, (sample, value) in enumerate(worst, start=1)]
        parts.append(f"<h3>{_e(system)}</h3>" + _table(["#", "file", block.metric, *counts], rows, 2))
    return "\n".join(parts)


def _figures(results: Results) -> tuple[str, list[str]]:
    if not results.rows and not results.agreement:
        return "", []
    from evalkit_reports.plots import DISPLAY_DPI, DPI, drawn

    found, pngs = drawn(results, "png")
    parts = []
    for n, (plot, png) in enumerate(zip(found.plots, pngs), start=1):
        width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
        width, height = round(width * DISPLAY_DPI / DPI), round(height * DISPLAY_DPI / DPI)
        data = base64.b64encode(png).decode("ascii")
        parts.append(
            f'<figure id="figure-{_e(plot.name)}">'
            f'<img src="data:image/png;base64,{data}" alt="{_e(plot.alt)}" width="{width}" height="{height}">'
            f"<figcaption><b>Figure {n}.</b> {_e(plot.caption)} <span class=\"file\">({_e(plot.name)})</span>"
            "</figcaption></figure>"
        )
    return "\n".join(parts), found.notes


def _provenance(results: Results) -> str:
    provenance = results.provenance or {}
    text = provenance.get("config_text")
    if not text:
        text = _dump(results.config) if results.config else ""
    source = provenance.get("config_file")
    parts = ["<h3>Configuration</h3>"]
    if source:
        parts.append(f'<p class="hint">From <code>{_e(source)}</code>, as written.</p>')
    elif text:
        parts.append('<p class="hint">The configuration as evalkit read it (the file\'s text was not recorded).</p>')
    parts.append(f'<pre class="config">{_e(text)}</pre>' if text else "<p>Not recorded.</p>")

    parts.append("<h3>Data files</h3>")
    data = provenance.get("data") or []
    if data:
        rows = []
        for entry in data:
            size = entry.get("bytes")
            rows.append([
                str(entry.get("role") or "—"), str(entry.get("system") or "—"), str(entry.get("path") or "—"),
                str(entry.get("sha256") or "—"), _size(size),
            ])
        parts.append(_table(["role", "system", "path", "sha256", "bytes"], rows, 4,
                            classes=["", "", "path", "hash", ""]))
    else:
        parts.append("<p>No data files recorded (data given inline, or results without provenance).</p>")

    extra = {k: v for k, v in provenance.items()
             if k not in ("evalkit_version", "created", "config_file", "config_text", "data")}
    if extra:
        parts.append("<h3>Other provenance</h3>")
        rows = [[k, v if isinstance(v, str) else json.dumps(v, sort_keys=True, ensure_ascii=False, default=str)]
                for k, v in extra.items()]
        parts.append(_table(["key", "value"], rows, 2))
    return "\n".join(parts)


def _dump(config: Any) -> str:
    import yaml  # only reports need it: registering the writers imports this module

    try:
        return yaml.safe_dump(config, sort_keys=False, allow_unicode=True, default_flow_style=False)
    except yaml.YAMLError:
        return json.dumps(config, indent=2, ensure_ascii=False, default=str)


def _size(size: Any) -> str:
    if not isinstance(size, int):
        return "—" if size is None else str(size)
    if size < 1024:
        return f"{size:,}"
    value = float(size)
    for unit in ("KiB", "MiB", "GiB", "TiB"):  # noqa: B007 - the unit it stops at is used below
        value /= 1024
        if value < 1024:
            break
    return f"{size:,} ({value:.1f} {unit})"


CSS = """
:root { color-scheme: light; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --head: #f3f5f7; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1120px; padding: 24px 28px 56px; color: var(--fg); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif; }
header { border-bottom: 3px solid var(--accent); padding-bottom: 10px; }
h1 { font-size: 1.9em; margin: 0 0 4px; }
h2 { font-size: 1.35em; margin: 2.2em 0 .6em; padding-bottom: .25em; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05em; margin: 1.6em 0 .5em; }
a { color: var(--accent); }
.meta, .hint, figcaption { color: var(--muted); }
.meta { margin: 0; }
.hint { margin: .2em 0 .8em; font-size: 14px; }
nav ol { margin: 14px 0 0; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: 4px 18px; }
.scroll { overflow-x: auto; margin: 0 0 1.2em; max-width: 100%; }
table { border-collapse: collapse; font-size: 13.5px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 12px 4px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top;
  white-space: nowrap; }
thead th { background: var(--head); border-bottom: 2px solid #afb8c1; font-weight: 600; }
tbody tr:nth-child(even) { background: #f9fafb; }
tr.group td { border-top: 2px solid #8c959f; }
.num { text-align: right; }
td.undef { color: var(--muted); font-style: italic; }
td.hash { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; white-space: normal;
  word-break: break-all; min-width: 22ch; }
td.path { white-space: normal; word-break: break-all; }
table.axes th { background: none; width: 11em; font-weight: 600; vertical-align: middle; }
table.axes td { white-space: normal; }
table.axes tr { background: none; }
.chip { display: inline-block; padding: 0 8px; margin: 2px 4px 2px 0; border: 1px solid var(--line); border-radius: 10px;
  background: var(--head); font-size: 13px; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
pre { background: #f6f8fa; border: 1px solid var(--line); border-radius: 4px; padding: 12px 14px; overflow-x: auto;
  font-size: 13px; line-height: 1.45; }
figure { margin: 1.8em 0; }
figure img { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 14px; margin-top: .4em; max-width: 90ch; }
details { margin: .5em 0 1.2em; }
summary { cursor: pointer; color: var(--accent); margin-bottom: .5em; }
summary h2, summary h3 { display: inline; color: var(--fg); }
section > details > summary { margin: 2.2em 0 .6em; padding-bottom: .25em; border-bottom: 1px solid var(--line); }
section > details > summary h2 { font-size: 1.35em; margin: 0; padding: 0; border: none; }
summary h3 { margin: 0; }
.count { color: var(--muted); font-size: 13px; }
td.out { color: #b35900; font-weight: 600; }
dl { margin: 0; }
dt { margin-top: .5em; }
dd { margin: 0 0 0 1.5em; color: var(--muted); }
figcaption .file { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
@media print { nav { display: none; } figure, table { break-inside: avoid; } }
""".strip()
