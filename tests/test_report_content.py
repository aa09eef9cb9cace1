"""What the HTML and Markdown reports say: the summary at the top, paired tests with the
difference's interval and their p-value floor, rank agreement only where it can say something,
per-class figures, folded sections, values outside [0, 1] marked and explained, the glossary;
and figures drawn in worker processes byte for byte as here. Real runs, real renders."""

from __future__ import annotations

import base64
import html
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml
from in_process import evalkit_cli
from processes import alive
from scipy import stats as scipy_stats

import evalkit
from evalkit import cli, findings
from evalkit.discovery import default_registry
from evalkit.measures import Measure
from evalkit.results import Agreement, Results, Row
from evalkit_reports import plots
from evalkit_reports.html import MAX_OPEN_ROWS, render_html

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "configs" / "data" / "quickstart"
SYSTEMS = ("dwsnet", "baseline", "tiny")
_cache: dict[str, Results] = {}


def config_run(name: str) -> Results:
    """A bundled config's results, without report files (run once per session)."""
    if name not in _cache:
        _cache[name] = evalkit.run(ROOT / "configs" / f"{name}.yaml", write_reports=False)
    return _cache[name]


def markdown(results: Results) -> str:
    return default_registry().create("report_writer", "markdown").render(results)


def compared_results() -> Results:
    """Three systems, permutation tests at their p floor, and rank agreement."""
    if "tested" not in _cache:
        _cache["tested"] = evalkit.run({
            "name": "tested",
            "data": {"reference": str(DATA / "reference.csv"), "systems": {s: str(DATA / f"{s}.csv") for s in SYSTEMS}},
            "tnorm": ["minimum", "product"], "averaging": ["micro", "macro"], "metrics": ["precision", "f1"],
            "statistics": {"test": {"resamples": 99, "seed": 1}, "agreement": True},
        }, write_reports=False)
    return _cache["tested"]


def soft_above_one() -> Results:
    """docs/faq.md's example: soft precision 7/6 (unbounded), 1 (bound: true)."""
    if "soft" not in _cache:
        _cache["soft"] = evalkit.run({
            "name": "soft", "data": {"reference": [["cat", "dog"]], "systems": {"system": [["pet"]], "other": [["cat"]]}},
            "representation": ["soft_cardinality", {"name": "soft_cardinality", "bound": True}],
            "similarity": {"name": "matrix", "values": [["pet", "cat", 0.5], ["pet", "dog", 0.5]], "default": 0},
            "averaging": "micro", "metrics": ["card_inter", "precision", "recall", "f1"],
        }, write_reports=False)
    return _cache["soft"]


def section(page: str, sid: str) -> str:
    found = re.search(rf'<section id="{sid}">(.*?)</section>', page, re.S)
    assert found, f"no section {sid}"
    return found.group(1)


# --- summary ----------------------------------------------------------------------------------

def test_the_summary_names_the_best_system_of_every_measure_a_loss_lowest():
    results = evalkit.run(ROOT / "configs" / "quickstart.yaml", write_reports=False)
    # 4 component combinations x 3 metrics x 2 averagings, and KLD: dwsnet is highest on each
    # ratio and lowest on KLD (0.0519 against 0.1889 and 0.1982)
    assert results.lower_is_better == ["kld"]
    line = "dwsnet is best on every measure (25)."
    assert f"<li>{line}</li>" in section(render_html(results), "summary")
    assert f"## Summary\n\n- {line}\n" in markdown(results)


def test_the_summary_says_where_the_measures_disagree_and_where_systems_tie():
    rows = [Row(s, "fuzzy", None, "minimum", a, "f1", v) for s, a, v in (
        ("a", "micro", 0.8), ("b", "micro", 0.7), ("a", "macro", 0.6), ("b", "macro", 0.65),
        ("a", "weighted", 0.9), ("b", "weighted", 0.5), ("a", "samples", 0.5), ("b", "samples", 0.5))]
    rows += [Row("a", None, None, None, None, "kld", 0.3), Row("b", None, None, None, None, "kld", 0.2)]
    rows += [Row(s, "fuzzy", None, "minimum", "micro", "card_inter", v) for s, v in (("a", 3.0), ("b", 9.0))]
    results = Results(rows, "disagree", lower_is_better=["kld"])
    assert findings.best_systems_lines(findings.best_systems(results)) == [
        "a is best on 2 of 5 measures.",
        "b is best on 2 of 5 measures.",
        "The measures disagree about the best system: where a is not best, "
        "fuzzy · minimum · macro · f1 → b; kld → b.",
        "Tied for best on 1 measures: fuzzy · minimum · samples · f1 (a = b).",
    ]  # card_inter is a size: no system is best on it
    assert "where a is not best, fuzzy · minimum · macro · f1 → b; kld → b." in render_html(results)
    assert findings.best_systems(Results(rows[:1], "one system")) is None


# --- paired tests -----------------------------------------------------------------------------

def test_paired_tests_show_the_difference_its_interval_and_the_p_floor():
    results = compared_results()
    page, text = render_html(results), markdown(results)
    comparisons = section(page, "comparisons")
    header = re.search(r"<thead>(.*?)</thead>", comparisons).group(1)
    assert re.findall(r">([^<]+)</th>", header) == [  # one system against, one representation: in the title
        "system", "tnorm", "averaging", "metric", "difference", "95% interval", "p-value"]
    assert "(permutation, 99 resamples). In every test: against: dwsnet, representation: fuzzy.</p>" in comparisons
    first = results.comparisons[0]
    assert (first.system, first.baseline) == ("baseline", "dwsnet")
    assert first.ci_low < first.difference < first.ci_high < 0 and first.p_value == pytest.approx(1 / 100)
    cells = f"<td class=\"num\">{first.difference:+.4f}</td><td class=\"num\">[{first.ci_low:+.4f}, {first.ci_high:+.4f}]</td>" \
            "<td class=\"num\">≤ 0.0100</td>"
    assert cells in comparisons
    at_floor = sum(c.p_at_floor for c in results.comparisons)
    note = (f"{at_floor} of 16 p-values sit at their floor, shown as “≤”: p ≤ 1/(99 + 1) = 0.01. "
            "The true p may be far smaller: increase resamples to resolve smaller p.")
    assert at_floor >= 8 and note in comparisons and note in text
    assert f"| baseline | minimum | micro | precision | {first.difference:+.4f} | " \
           f"[{first.ci_low:+.4f}, {first.ci_high:+.4f}] | ≤ 0.0100 |" in text  # brackets make no link: as written
    below = sum(1 for c in results.comparisons if c.system == "tiny" and c.ci_high < 0)
    significant = sum(1 for c in results.comparisons if c.system == "tiny" and c.p_value < 0.05)
    assert (f"tiny against dwsnet: p &lt; 0.05 on {significant} of 8 measures; the difference&#x27;s 95% interval "
            f"excludes 0 on {below}: tiny is worse on all {below}.") in section(page, "summary")


def test_the_summary_says_better_or_worse_by_each_metrics_direction():
    """kld is a loss: a difference above 0 is worse on it, as one below 0 is on precision (issue 28)."""
    results = evalkit.run({
        "name": "oriented",
        "data": {"reference": str(DATA / "reference.csv"), "systems": {s: str(DATA / f"{s}.csv") for s in SYSTEMS[:2]}},
        "tnorm": "minimum", "averaging": "micro", "metrics": ["precision", "f1", "kld"],
        "statistics": {"bootstrap": {"resamples": 99, "seed": 1}, "test": {"resamples": 99, "seed": 1}},
    }, write_reports=False)
    assert results.lower_is_better == ["kld"]
    (system, against), = {(c.system, c.baseline) for c in results.comparisons}
    worse = sum(1 for c in results.comparisons if (c.ci_low > 0 if c.metric == "kld" else c.ci_high < 0))
    kld = next(c for c in results.comparisons if c.metric == "kld")
    assert kld.ci_low > 0 and worse == len(results.comparisons) == 3  # the system is worse on the loss too
    assert findings.comparison_lines(results)[0].endswith(
        f"the difference's 95% interval excludes 0 on 3: {system} is worse on all 3.")
    mixed = [replace(c, ci_low=0.01, ci_high=0.02) for c in results.comparisons]  # all above 0: better but on kld
    assert findings.comparison_lines(replace(results, comparisons=mixed))[0].endswith(
        f"excludes 0 on 3: {system} is better on 2 and worse on 1.")
    unclear = [replace(c, ci_low=-0.01, ci_high=0.02) for c in results.comparisons]
    assert findings.comparison_lines(replace(results, comparisons=unclear))[0].endswith("interval excludes 0 on 0.")


# --- rank agreement ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_the_smallest_p_of_kendalls_tau_is_that_of_a_perfect_order(n: int):
    exact = scipy_stats.kendalltau(np.arange(n), np.arange(n), method="exact").pvalue
    assert findings.smallest_tau_p(n) == pytest.approx(exact) == pytest.approx(2 / math.factorial(n))
    assert findings.min_systems(0.05) == 5 and findings.min_systems(0.1) == 4 and findings.min_systems(0.01) == 6


def test_rank_agreement_of_three_systems_is_left_out_with_one_line_why():
    results = compared_results()
    assert results.agreement and {a.n_systems for a in results.agreement} == {3}
    note = ("Rank agreement is left out: with 3 systems Kendall's τ can take only a few values and its smallest "
            "two-sided p-value is 2/3! = 0.333, above α = 0.05, so no pair of measures can be shown to agree or "
            "disagree (it needs at least 5 systems). The JSON report holds every τ.")
    page = render_html(results)
    assert section(page, "agreement").count("<p") == 1 and "<table>" not in section(page, "agreement")
    assert note.replace("'", "&#x27;") in section(page, "agreement")
    assert "agreement" not in [plot.kind for plot in plots.gallery(results).plots]
    assert note in markdown(results)


def test_rank_agreement_where_every_pair_agrees_says_so_instead_of_a_matrix():
    measures = [Measure("set", "f1", "fuzzy", None, t, "micro") for t in ("minimum", "product", "drastic")]
    agreement = [Agreement(a, b, 1.0, 0.0167, 5) for i, a in enumerate(measures) for b in measures[i + 1:]]
    results = Results([], "agree", agreement=agreement)
    assert findings.agreement_note(results) == ("Rank agreement: all 3 pairs of measures rank the 5 systems in "
                                                "the same order (Kendall's τ = 1 for each).")
    assert plots.gallery(results).plots == []
    mixed = Results([], "informative", agreement=[Agreement(measures[0], measures[1], 0.6, 0.14, 5)])
    assert findings.agreement_note(mixed) is None and [p.kind for p in plots.gallery(mixed).plots] == ["agreement"]
    assert "<table>" in section(render_html(mixed), "agreement")


# --- per-class figures ------------------------------------------------------------------------

def test_a_per_class_run_gets_a_per_class_figure_per_component_combination():
    results = evalkit.run(ROOT / "configs" / "soft_keywords.yaml", write_reports=False)  # averaging: none
    found = plots.gallery(results).plots
    assert [p.name for p in found] == [
        "classes-exact_match-none", "classes-threshold_match-levenshtein-accent_fold-true-none",
        "classes-soft_cardinality-levenshtein-accent_fold-true-none"]
    assert "7 metrics" not in found[0].caption and "of each class (2)" in found[0].caption
    png = plots.image(found[0], "png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    page = render_html(results)
    assert len(re.findall(r"<img\b", section(page, "figures"))) == 3


# --- what the heatmaps and the dot plot show -------------------------------------------------

@pytest.mark.parametrize("name", ["quickstart", "tnorms"])
def test_heatmaps_colour_every_value_and_write_it_in_panels_of_up_to_max_annotated_cells(name: str):
    """quickstart's 3 T-norms x 2 averagings are written in their cells; tnorms' 12 x 4 (144
    texts a figure, a third of its cost) are coloured only, and caption and alt text say so."""
    results = config_run(name)
    heatmaps = [p for p in plots.gallery(results).plots if p.kind == "heatmap"]
    assert [p.title for p in heatmaps] == [f"{s} — fuzzy" for s in SYSTEMS]
    for plot, system in zip(heatmaps, SYSTEMS):
        rows = [r for r in results.rows if r.system == system and r.representation == "fuzzy" and r.class_ is None]
        metrics, tnorms, averagings = ([*dict.fromkeys(getattr(r, part) for r in rows)]
                                       for part in ("metric", "tnorm", "averaging"))
        written = len(tnorms) * len(averagings) <= plots.MAX_ANNOTATED
        assert written == (name == "quickstart")
        assert ("Values are not written in the cells" in plot.caption) is not written
        assert ("each cell annotated with its value" in plot.alt) is written
        value = {(r.metric, r.tnorm, r.averaging): r.value for r in rows}
        with plots.style():
            panels = [ax for ax in plot.draw().axes if ax.images]  # not the colour bar
        assert [ax.get_title() for ax in panels] == metrics
        for ax, metric in zip(panels, metrics):
            grid = np.array([[value[metric, t, a] for a in averagings] for t in tnorms])
            np.testing.assert_array_equal(ax.images[0].get_array().filled(np.nan), grid)  # the values, read back
            assert [t.get_text() for t in ax.texts] == ([f"{v:.3f}" for v in grid.ravel()] if written else [])


def test_the_dot_plot_draws_every_interval_as_one_whisker_through_its_dot():
    """tnorms' dot plot: per panel (metric x averaging), a dot per system and T-norm at its
    value, one LineCollection whose segments span each interval at the dot's height, in the
    system's colour (bootstrap intervals: the run's ci_low and ci_high, read back), and one of
    guide lines, a row per T-norm, named in the first column."""
    from matplotlib.collections import LineCollection
    from matplotlib.colors import to_hex

    results = config_run("tnorms")
    tnorms = yaml.safe_load((ROOT / "configs" / "tnorms.yaml").read_text())["tnorm"]
    (plot,) = [p for p in plots.gallery(results).plots if p.kind == "dots"]
    rows = [r for r in results.rows if r.averaging is not None and r.class_ is None]
    metrics, averagings = [*dict.fromkeys(r.metric for r in rows)], [*dict.fromkeys(r.averaging for r in rows)]
    with plots.style():
        panels = [ax for ax in plot.draw().axes if ax.get_visible()]
    assert len(panels) == len(metrics) * len(averagings)
    for ax, (metric, averaging) in zip(panels, [(m, a) for m in metrics for a in averagings]):
        whiskers, guides = ax.collections
        assert isinstance(whiskers, LineCollection) and isinstance(guides, LineCollection)
        assert [float(segment[0, 1]) for segment in guides.get_segments()] == list(range(len(tnorms)))
        names = [tick.get_text() for tick in ax.get_yticklabels()]
        assert names == (tnorms if ax in panels[::len(averagings)] else [])
        drawn = sorted((*map(float, segment.ravel()), to_hex(colour))
                       for segment, colour in zip(whiskers.get_segments(), whiskers.get_colors()))
        expected = []
        for system, dots in zip(SYSTEMS, ax.lines):
            shown = [r for r in rows if (r.system, r.metric, r.averaging) == (system, metric, averaging)]
            assert list(dots.get_xdata()) == [r.value for r in shown]
            expected += [(min(r.ci_low, r.value), y, max(r.ci_high, r.value), y, to_hex(dots.get_color()))
                         for r, y in zip(shown, dots.get_ydata())]
        assert drawn == sorted(expected) and len(drawn) == len(tnorms) * len(SYSTEMS)


# --- the same figures for less work ------------------------------------------------------------

def _drawn(fig):
    """``fig`` drawn as image() draws it: its layout placed, its pixels."""
    fig.set_dpi(plots.DPI)
    fig.canvas.draw()
    return bytes(fig.canvas.buffer_rgba())


def test_axes_with_nothing_to_measure_leave_the_layout_as_it_was():
    """The set bars' inner panels share their axes, whose tick labels and labels are hidden: left
    out of the constrained layout (plots._unmeasured), they leave every panel where it was and
    every pixel as it was (the same code on the same input: compared exactly)."""
    (plot,) = [p for p in plots.gallery(config_run("quickstart")).plots if p.name == "bars"]
    with plots.style():
        measured, lean = plot.draw(), plot.draw()
        plots._unmeasured(lean)
        pixels = _drawn(measured), _drawn(lean)
    panels = lean.axes[:8]  # 4 component combinations (rows) x 2 averagings (columns)
    assert [ax.xaxis.get_in_layout() for ax in panels] == [False] * 6 + [True] * 2  # labels on the bottom row only
    assert [ax.yaxis.get_in_layout() for ax in panels] == [True, False] * 4  # on the first column only
    assert [ax.get_position().bounds for ax in lean.axes] == [ax.get_position().bounds for ax in measured.axes]
    assert pixels[0] == pixels[1]


@pytest.mark.parametrize("horizontal", [False, True])
def test_bars_drawn_as_one_collection_are_the_pixels_and_limits_of_bar_and_barh(horizontal: bool):
    """plots._bars draws what ax.bar / ax.barh draw (a patch each): the same pixels and the same
    autoscaled limits, 0 at the edge, with missing (NaN), negative, zero and above-1 lengths."""
    at = np.concatenate([np.arange(3) + offset for offset in (-0.25, 0.0, 0.25)])
    lengths = [0.8, np.nan, 0.4, -0.3, 0.0, 1.2, 0.5, 0.7, 0.1]
    colours = [c for c in plots.PALETTE[:3] for _ in range(3)]
    with plots.style():
        figures = []
        for draw in ("bar", "collection"):
            fig = plots._figure(4.0, 3.0)
            ax = fig.subplots()
            if draw == "bar":
                (ax.barh if horizontal else ax.bar)(at, lengths, 0.25, color=colours, edgecolor="white", linewidth=0.4)
            else:
                plots._bars(ax, at, lengths, 0.25, colours, horizontal=horizontal)
            figures.append((_drawn(fig), ax.get_xlim(), ax.get_ylim()))
    assert figures[0] == figures[1]
    plain = []  # the data bars' look: no edges
    with plots.style():
        for draw in ("bar", "collection"):
            fig = plots._figure(4.0, 3.0)
            ax = fig.subplots()
            if draw == "bar":
                ax.bar(at[:3], lengths[:3], 0.7, color=colours[::3])
            else:
                plots._bars(ax, at[:3], lengths[:3], 0.7, colours[::3], edgecolor="none", linewidth=0)
            plain.append((_drawn(fig), ax.get_xlim(), ax.get_ylim()))
    assert plain[0] == plain[1]


def test_the_fixed_zero_to_one_ticks_are_those_matplotlib_chooses_and_writes():
    """The set bars' 0-1.04 axes get UNIT_TICKS and UNIT_LABELS fixed: matplotlib's default
    locator and formatter give the same on each drawn panel (its ticks computed otherwise: to
    1e-12). The data bars and per-class bars keep the locator, which gives the same where they
    are this wide (a narrow panel: the next test)."""
    from matplotlib.ticker import AutoLocator, ScalarFormatter

    quickstart = [p for p in plots.gallery(config_run("quickstart")).plots if p.kind == "bars"]
    per_class = plots.gallery(evalkit.run(ROOT / "configs" / "soft_keywords.yaml", write_reports=False)).plots[:1]
    checked: dict[str, int] = {}
    with plots.style():
        for plot in [*quickstart, *per_class]:
            fig = plot.draw()
            _drawn(fig)
            for ax in fig.axes:
                axis = ax.xaxis if plot.kind == "classes" else ax.yaxis
                if axis.get_view_interval().tolist() != [0, 1.04]:
                    continue
                locator, formatter = AutoLocator(), ScalarFormatter()
                locator.set_axis(axis)
                formatter.set_axis(axis)
                default = [t for t in locator() if 0 <= t <= 1.04]
                assert default == pytest.approx(plots.UNIT_TICKS, rel=1e-12, abs=1e-12)
                assert formatter.format_ticks(default) == plots.UNIT_LABELS
                shown = [t for t in axis.get_majorticklocs() if 0 <= t <= 1.04]
                assert axis.get_major_formatter().format_ticks(shown) == plots.UNIT_LABELS
                checked[plot.name] = checked.get(plot.name, 0) + 1
    # 4 component combinations x 2 averagings; kld's panel; precision, recall and f1 per class
    # (its card_* panels are sizes, not 0-1)
    assert checked == {"bars": 8, "bars-data-metrics": 1, "classes-exact_match-none": 3}


def test_set_bars_of_only_undefined_values_still_show_every_metric():
    """Panels with no value to draw (zero_division: nan on empty data) have no x data; the view
    must still hold each metric's place, or its label falls out of the panel (two metrics:
    the second one did, when the shared ticks were set before the bars)."""
    rows = [replace(r, value=math.nan, ci_low=None, ci_high=None) for r in config_run("quickstart").rows
            if r.metric in ("precision", "recall")]
    undefined = replace(config_run("quickstart"), rows=rows, ceilings=[])  # a ceiling's line would give x data
    (bars,) = [p for p in plots.gallery(undefined).plots if p.kind == "bars"]
    with plots.style():
        fig = bars.draw()
        _drawn(fig)
        for ax in fig.axes:
            low, high = ax.get_xlim()
            assert list(ax.get_xticks()) == [0, 1] and low <= 0 and 1 <= high, (low, high)
        assert [t.get_text() for t in fig.axes[-1].get_xticklabels()] == ["precision", "recall"]


def test_per_class_panels_beside_long_system_names_take_the_ticks_matplotlib_chooses():
    """Long system names widen the legend and narrow the per-class panels; their 0-1 axis then
    takes the ticks matplotlib's locator chooses for that width (fewer than the set bars' six
    fixed ones, which on a 1-inch panel ran together as "0.00.20.40.60.81.0")."""
    from matplotlib.ticker import AutoLocator

    results = evalkit.run(ROOT / "configs" / "soft_keywords.yaml", write_reports=False)
    results = replace(results, rows=[replace(r, system=name) for name in ("a" * 52, "b" * 37) for r in results.rows])
    plot = plots.gallery(results).plots[0]
    with plots.style():
        fig = plot.draw()
        _drawn(fig)
        panels = [ax for ax in fig.axes if ax.get_xlim() == (0, 1.04)]
        for ax in panels:
            locator = AutoLocator()
            locator.set_axis(ax.xaxis)
            chosen = [t for t in locator() if 0 <= t <= 1.04]
            assert [t for t in ax.get_xticks() if 0 <= t <= 1.04] == pytest.approx(chosen, abs=1e-12)
            assert len(chosen) < len(plots.UNIT_TICKS)  # the panel is narrow: the fixed six would not be its own
    assert len(panels) == 3  # precision, recall and f1 (the card_* panels are sizes)


# --- folding, contents and the glossary --------------------------------------------------------

def test_sections_and_long_tables_fold_under_their_headings_and_the_contents_link_them():
    page = render_html(config_run("tnorms"))
    sections = re.findall(r'<section id="([a-z]+)">\n<details( open)?>\n<summary><h2>', page)
    assert [sid for sid, _ in sections] == ["summary", "axes", "tables", "comparisons", "agreement", "figures",
                                            "glossary", "provenance"]  # the glossary: its twelve T-norms
    folded = {sid for sid, unfolded in sections if not unfolded}
    assert folded == {"provenance"}  # the 288 paired tests were asked for: open; provenance is for the record
    assert "<details open>\n<summary><h2>Paired comparisons (288)</h2>" in page
    nav = re.search(r"<nav .*?</nav>", page).group(0)
    assert re.findall(r'href="#([a-z]+)"', nav) == [sid for sid, _ in sections]
    assert "<summary><h3>Set metrics — representation: fuzzy</h3> <span class=\"count\">(108 rows)</span>" in page
    assert "<script" not in page and "http" not in re.sub(r'content="[^"]*"', "", page).split("<main>")[0]


def test_a_long_per_class_table_folds_and_the_averaged_one_beside_it_stays_open():
    results = evalkit.run({
        "name": "per class",
        "data": {"reference": str(DATA / "reference.csv"), "systems": {s: str(DATA / f"{s}.csv") for s in SYSTEMS}},
        "representation": ["fuzzy", "crisp"], "tnorm": ["minimum", "product", "lukasiewicz"],
        "averaging": ["micro", "none"], "metrics": ["precision", "recall", "f1", "jaccard"],
    }, write_reports=False)
    page = render_html(results)
    per_class = [r for r in results.rows if r.class_ is not None]
    n_rows = len({(r.system, r.representation, r.tnorm, r.metric) for r in per_class})
    assert n_rows > MAX_OPEN_ROWS  # 3 systems × (3 T-norms + crisp) × 4 metrics
    assert f'<details><summary><h3>Per class — averaging: none</h3> <span class="count">({n_rows} rows)</span>' in page
    assert re.search(r'<details open><summary><h3>Set metrics[^<]*</h3> <span class="count">', page)


def test_the_glossary_explains_the_unfamiliar_names_in_both_reports():
    results = evalkit.run(ROOT / "configs" / "taggers.yaml", write_reports=False)
    line = evalkit.plugin.glossary(["omap_lambda0"])["omap_lambda0"]
    assert line.startswith("OmAP at level λ = 0 alone")
    page, text = render_html(results), markdown(results)
    glossary = section(page, "glossary")
    assert f"<dt><code>omap_lambda0</code></dt><dd>{html.escape(line)}</dd>" in glossary
    assert f"- `omap_lambda0`: {line}" in text
    assert "<code>f1</code>" not in glossary  # a name every reader knows


def test_the_html_glossary_explains_every_t_norm_and_averaging_the_report_names():
    results = config_run("tnorms")  # twelve T-norms, several with parameters (hamacher(p=0.5) names hamacher)
    glossary = section(render_html(results), "glossary")
    entries = {(e.kind, e.name): e.summary for e in default_registry()}
    named = {(kind, re.sub(r"\(.*", "", getattr(r, kind))) for r in results.rows for kind in ("tnorm", "averaging")
             if getattr(r, kind) is not None}
    assert {kind for kind, _ in named} == {"tnorm", "averaging"} and len(named) > 12
    for key in named:
        assert f"<dt><code>{key[1]}</code></dt><dd>{html.escape(entries[key])}</dd>" in glossary
    assert "<code>minimum</code>" in glossary and "<code>micro</code>" in glossary  # well known, but compared here


# --- values outside [0, 1] --------------------------------------------------------------------

def test_soft_precision_above_one_is_marked_and_explained():
    results = soft_above_one()
    page, text = render_html(results), markdown(results)
    marked = re.findall(r'<td class="num out"[^>]*>([^<]*)</td>', page)
    assert marked == ["1.1667 †"]  # precision 7/6 unbounded; card_inter 7/6 is a size, bound=True gives 1
    note = section(page, "tables")
    assert "† 1 value of precision, recall, F or Jaccard lies outside [0, 1] (system · soft_cardinality" in note
    assert "P &gt; 1 exactly when card(G ⧺ P) &lt; card(G)" in note and "docs/faq.md" in note
    assert "| precision | 1.1667 † |" in text and "| card_inter | 1.1667 |" in text
    assert "P > 1 exactly when card(G ⧺ P) < card(G)" in text  # Markdown: as written, nothing to escape
    inside = Results([r for r in results.rows if r.value <= 1], "inside")
    assert "†" not in render_html(inside) and findings.unit_note(inside.rows) is None


# --- figures in worker processes --------------------------------------------------------------

def test_figures_drawn_by_worker_processes_are_byte_identical_to_those_drawn_here(monkeypatch):
    monkeypatch.setattr(plots, "_idle_core", lambda: True)  # drawn in workers whatever the machine's load
    found = plots.gallery(evalkit.run(ROOT / "configs" / "quickstart.yaml", write_reports=False)).plots
    assert len(found) >= plots.POOL_FIGURES  # so a report draws them in workers
    here = [plots.image(plot, "png") for plot in found]
    assert plots.images(found, "png") == here
    with monkeypatch.context() as patched:  # where each was drawn: in other processes
        patched.setattr(plots, "image", lambda plot, fmt: str(os.getpid()).encode())
        drawn_in = {int(pid) for pid in plots.images(found, "png")}
    assert drawn_in and os.getpid() not in drawn_in
    monkeypatch.setattr(plots, "image", lambda plot, fmt: str(os.getpid()).encode())
    monkeypatch.setattr(plots, "_idle_core", lambda: False)  # every core busy: drawn here
    assert {int(pid) for pid in plots.images(found, "png")} == {os.getpid()}
    monkeypatch.setattr(plots, "_idle_core", lambda: True)
    monkeypatch.setattr(plots, "POOL_FIGURES", len(found) + 1)  # fewer figures than that: drawn here
    assert {int(pid) for pid in plots.images(found, "png")} == {os.getpid()}


def test_a_core_is_idle_while_the_load_average_is_below_the_number_of_cores(monkeypatch):
    cores = plots._cores()
    for load, idle in ((0.0, True), (cores - 0.01, True), (cores, False), (cores + 5.0, False)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, 0.0, 0.0))
        assert plots._idle_core() is idle


def test_workers_started_before_the_figures_draw_them_all_whatever_their_number(monkeypatch):
    """start_pool() forks the workers ahead (`evalkit run` does it before scoring, through the
    writers' ``start``); the next images() takes them, even for one figure, and leaves none."""
    found = plots.gallery(evalkit.run(ROOT / "configs" / "quickstart.yaml", write_reports=False)).plots
    here = [plots.image(plot, "png") for plot in found]
    plots.start_pool()
    assert plots.images(found, "png") == here
    monkeypatch.setattr(plots, "image", lambda plot, fmt: str(os.getpid()).encode())
    plots.start_pool()
    assert int(plots.images(found[:1], "png")[0]) != os.getpid()  # one figure: drawn by a worker started before
    assert plots._ready is None
    assert {int(pid) for pid in plots.images(found[:1], "png")} == {os.getpid()}  # none started: drawn here


def test_figures_handed_to_the_workers_are_collected_by_every_writer_of_their_format(monkeypatch):
    """submit() hands a run's figures to the workers start_pool() started (`evalkit run` does it
    through the writers' ``results_ready`` once the results exist, so they draw while the tables print);
    drawn() collects them for every writer of that format (html and png both), the same bytes as
    drawn here; other results, or another format, are drawn when asked; stop_pool() leaves nothing."""
    results = evalkit.run(ROOT / "configs" / "quickstart.yaml", write_reports=False)
    found = plots.gallery(results).plots
    here = [plots.image(plot, "png") for plot in found]
    plots.start_pool()
    plots.submit(results, "png")
    try:
        assert plots._ready is None  # the workers are the handed figures' now
        assert plots.drawn(results, "png")[1] == here
        assert plots.drawn(results, "png")[1] == here  # a second writer of PNGs gets them too
    finally:
        plots.stop_pool()
    assert plots._ready is None and plots._handed is None
    monkeypatch.setattr(plots, "image", lambda plot, fmt: f"{os.getpid()} {fmt}".encode())  # where each was drawn
    monkeypatch.setattr(plots, "POOL_FIGURES", sys.maxsize)  # what is not handed is drawn here
    plots.start_pool()
    plots.submit(results, "png")
    try:
        handed = plots.drawn(results, "png")[1]
        drawn_by = {int(b.split()[0]) for b in handed}
        assert len(handed) == len(found) and len(drawn_by) == 1 and os.getpid() not in drawn_by  # one worker
        assert set(plots.drawn(results, "svg")[1]) == {f"{os.getpid()} svg".encode()}
        other = Results(results.rows, results.name)  # equal rows, but other results: not the handed figures
        assert set(plots.drawn(other, "png")[1]) == {f"{os.getpid()} png".encode()}
    finally:
        plots.stop_pool()


def test_stopping_the_worker_while_it_draws_ends_it_and_its_pool_without_waiting(tmp_path, monkeypatch):
    """A run that fails or is interrupted after handing its figures (a closed pipe while the
    tables print) stops the worker (the writers' ``stop``): nothing is drawn for nothing and the
    exit does not wait. The worker draws a format's figures as one task on a pool of its own,
    so it is ended (SIGTERM), and its pool dies with it; a format not taken yet is cancelled.
    Each figure here sleeps for ten minutes once it has said where it is drawn: a stop that
    waited for them would hang the test."""
    results = config_run("tnorms")

    def slow(plot, fmt):
        (tmp_path / f"{os.getpid()}.{fmt}").touch()
        time.sleep(600)

    monkeypatch.setattr(plots, "image", slow)
    monkeypatch.setattr(plots, "_idle_core", lambda: True)  # the worker's own pool, whatever the machine's load
    plots.start_pool()
    worker = plots._ready
    if worker is None:
        pytest.skip("figures are drawn in worker processes on Linux with 2 cores or more")
    plots.submit(results, "png")
    plots.submit(results, "svg")
    futures = plots._handed.futures if plots._handed else {}
    deadline = time.monotonic() + 300
    while len(drawing := {int(path.stem) for path in tmp_path.glob("*.png")}) < 2:  # the worker's own pool
        assert time.monotonic() < deadline, "the worker never drew the figures on a pool of its own"
        time.sleep(0.01)
    assert worker.process.pid not in drawing
    plots.stop_pool()
    assert plots._ready is None and plots._handed is None
    assert worker.process.exitcode == -signal.SIGTERM
    for future in futures.values():
        assert future.cancelled() or isinstance(future.exception(), BrokenProcessPool)
    while left := [pid for pid in drawing if alive(pid)]:  # they die with the worker (PR_SET_PDEATHSIG)
        assert time.monotonic() < deadline, f"the worker's pool {left} outlived it"
        time.sleep(0.01)
    assert not list(tmp_path.glob("*.svg"))


def test_a_run_interrupted_while_its_tables_print_stops_its_figure_workers(tmp_path, monkeypatch):
    """`evalkit run` stops what the writers started however it ends: written (the page holds the
    figures the workers drew, byte for byte as drawn here), or interrupted while the tables
    print, after the figures were handed over."""
    configs = shutil.copytree(ROOT / "configs", tmp_path / "configs")
    monkeypatch.chdir(configs)
    evalkit_cli("run", "quickstart.yaml", "-q", check=True)
    assert plots._ready is None and plots._handed is None
    page = (tmp_path / "results" / "quickstart.html").read_text(encoding="utf-8")
    embedded = [base64.b64decode(m) for m in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)]
    found = plots.gallery(evalkit.run(configs / "quickstart.yaml", write_reports=False)).plots
    assert embedded == [plots.image(plot, "png") for plot in found]

    handed = []

    def interrupted(results, fmt, width=None):
        handed.append(plots._handed is not None and plots._handed.results is results)
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_print", interrupted)
    done = evalkit_cli("run", "quickstart.yaml", "-q")
    assert (done.returncode, done.stderr) == (130, "interrupted\n")
    assert handed == [plots._forking()]  # handed over before the tables print (where workers draw them)
    assert plots._ready is None and plots._handed is None


@pytest.mark.slow
def test_evalkit_run_draws_its_figures_without_importing_matplotlib_itself(tmp_path):
    """The command starts the figures' workers while it scores; they import matplotlib (0.5 s of
    a cold run) and draw, and the command's own process never imports it. The page holds
    every figure the gallery calls for, byte for byte as drawn here."""
    configs = shutil.copytree(ROOT / "configs", tmp_path / "configs")
    probe = ("import atexit, sys; from evalkit.cli import main; "
             "atexit.register(lambda: print('matplotlib' in sys.modules, file=sys.stderr)); "
             "main(['run', 'quickstart.yaml', '-q'])")
    done = subprocess.run([sys.executable, "-c", probe], cwd=configs, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stderr.splitlines()[-1] == "False", done.stderr
    page = (tmp_path / "results" / "quickstart.html").read_text(encoding="utf-8")
    embedded = [base64.b64decode(m) for m in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)]
    found = plots.gallery(evalkit.run(configs / "quickstart.yaml", write_reports=False)).plots
    assert embedded == [plots.image(plot, "png") for plot in found]
