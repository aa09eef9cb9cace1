"""The HTML report, its figures, and the png / svg writers.

Results come from real runs (quickstart, taggers, a small run with statistics) and from a
hand-built Results that has every kind of row: confidence intervals, two sweeps (offset, and
tnorm.p with a flat minimum beside it), per-level rows, paired comparisons, rank agreement and
provenance, so that every figure kind is drawn.
"""

from __future__ import annotations

import gc
import hashlib
import html
import os
import re
import shutil
import subprocess
import sys
import weakref
import xml.etree.ElementTree as ET
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from matplotlib.figure import Figure

import evalkit
from evalkit import __version__
from evalkit.discovery import default_registry
from evalkit.measures import Measure
from evalkit.reporting import write_reports
from evalkit.results import Agreement, Comparison, Results, Row
from evalkit_reports import plots
from evalkit_reports.html import AXES, render_html

ROOT = Path(__file__).resolve().parent.parent
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CREATED = re.compile(r'<time class="created" datetime="[^"]*">[^<]*</time>')
IMG = re.compile(r"<img\b[^>]*>")


# --- results ----------------------------------------------------------------------------------

_cache: dict[str, Results] = {}


def run(name: str) -> Results:
    if name not in _cache:
        _cache[name] = evalkit.run(ROOT / "configs" / f"{name}.yaml", write_reports=False)
    return _cache[name]


def rich() -> Results:
    """Every kind of row and statistic, built by hand around the quickstart rows."""
    if "rich" in _cache:
        return _cache["rich"]
    base = run("quickstart")
    rows = [replace(r, ci_low=max(r.value - 0.031, 0.0), ci_high=min(r.value + 0.024, 1.0)) for r in base.rows]
    for system, shift in (("dwsnet", 0.0), ("baseline", -0.08), ("tiny", -0.15)):
        for offset in (-0.2, -0.1, 0.0, 0.1, 0.2):
            for metric, slope in (("precision", -0.6), ("recall", 0.5), ("f1", 0.1)):
                for averaging in ("micro", "macro"):
                    v = min(max(0.8 + shift + slope * offset - 2 * offset**2, 0.0), 1.0)
                    rows.append(Row(system, "fuzzy", None, "minimum", averaging, metric, v, sweep="offset",
                                    sweep_value=offset, ci_low=max(v - 0.02, 0), ci_high=min(v + 0.02, 1)))
        for p in (0.0, 0.5, 1.0, 2.0, 4.0):  # as the engine labels a swept component: without the parameter
            for tnorm, value in (("hamacher", 0.7 + shift - 0.03 * p), ("minimum", 0.75 + shift)):
                rows.append(Row(system, "fuzzy", None, tnorm, "micro", "f1", value, sweep="tnorm.p", sweep_value=p))
    rows += [r for r in run("taggers").rows if r.level is not None]
    comparisons = [
        Comparison(system, "dwsnet", "fuzzy", None, tnorm, "micro", metric, diff, p, "permutation", 1000)
        for system, diff in (("baseline", -0.1336), ("tiny", -0.2072))
        for tnorm in ("minimum", "product")
        for metric, p in (("precision", 0.000999000999000999), ("f1", 0.0312))
    ]
    measures = [Measure("set", "f1", "fuzzy", None, "minimum", "micro"), Measure("set", "f1", "fuzzy", None, "product", "micro"),
                Measure("set", "f1", "crisp", averaging="micro"), Measure("data", "kld")]
    taus = iter([1.0, 0.3333, 1.0, 0.3333, -0.3333, 1.0])  # over 5 systems, enough for τ to say something
    agreement = [Agreement(a, b, next(taus), 0.33, 5) for i, a in enumerate(measures) for b in measures[i + 1:]]
    data_dir = ROOT / "configs" / "data" / "quickstart"
    data = [
        {"role": "reference" if name == "reference" else "prediction", "system": None if name == "reference" else name,
         "path": f"data/quickstart/{name}.csv", "sha256": hashlib.sha256((data_dir / f"{name}.csv").read_bytes()).hexdigest(),
         "bytes": (data_dir / f"{name}.csv").stat().st_size}
        for name in ("reference", "dwsnet", "baseline", "tiny")
    ]
    config_text = (ROOT / "configs" / "quickstart.yaml").read_text() + "# <rich> & hand-built\n"
    _cache["rich"] = Results(
        rows, "rich <report>", ["A note & an <angle>."], base.config, comparisons, agreement,
        {"evalkit_version": __version__, "created": "2026-01-02T03:04:05+00:00", "config_file": "configs/quickstart.yaml",
         "config_text": config_text, "data": data, "seed": 2023},
    )
    return _cache["rich"]


def statistics_run() -> Results:
    """A real run with bootstrap intervals, paired tests and rank agreement (few resamples)."""
    if "stats" not in _cache:
        data = ROOT / "configs" / "data" / "quickstart"
        _cache["stats"] = evalkit.run({
            "name": "stats",
            "data": {"reference": str(data / "reference.csv"),
                     "systems": {s: str(data / f"{s}.csv") for s in ("dwsnet", "baseline", "tiny")}},
            "representation": "fuzzy", "tnorm": ["minimum", "product"], "averaging": ["micro", "macro"],
            "metrics": ["precision", "f1"],
            "statistics": {"bootstrap": {"resamples": 50, "seed": 1}, "test": {"resamples": 50, "seed": 1},
                           "agreement": True},
        }, write_reports=False)
    return _cache["stats"]


def events_run() -> Results:
    """Event lists with per-sample values: each system's worst files, listed and drawn on timelines."""
    if "events" not in _cache:
        data = ROOT / "configs" / "data" / "events"
        _cache["events"] = evalkit.run({
            "name": "events",
            "data": {"reference": str(data / "reference.tsv"), "systems": {s: str(data / f"{s}.tsv") for s in ("good", "poor")}},
            "representation": {"name": "segments", "resolution": 1.0}, "averaging": "micro",
            "metrics": ["f1", "error_rate"], "per_sample": True,
        }, write_reports=False)
    return _cache["events"]


RESULTS = {"quickstart": lambda: run("quickstart"), "taggers": lambda: run("taggers"), "rich": rich,
           "statistics": statistics_run, "events": events_run}
_pages: dict[str, str] = {}


def page_of(which: str) -> str:
    """The rendered report (rendered once per test session)."""
    if which not in _pages:
        _pages[which] = render_html(RESULTS[which]())
    return _pages[which]


def axis_values(results: Results) -> list[str]:
    values = [str(getattr(r, attribute)) for r in results.rows for _, attribute in AXES
              if getattr(r, attribute) is not None]
    values += [f"{r.sweep_value:g}" for r in results.rows if r.sweep_value is not None]
    return list(dict.fromkeys(values))


class _Balance(HTMLParser):
    VOID = {"meta", "img", "br", "hr", "link", "input", "col", "wbr", "source"}

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, f"</{tag}> closes <{self.open[-1] if self.open else None}>"
        self.open.pop()


def assert_well_formed(page: str) -> None:
    """Every element is closed, in order (the browser test checks that it renders)."""
    parser = _Balance()
    parser.feed(page)
    parser.close()
    assert parser.open == []


# --- (a) content ------------------------------------------------------------------------------

@pytest.mark.parametrize("which", list(RESULTS))
def test_report_holds_config_version_checksums_axes_and_one_image_per_figure(which: str):
    results = RESULTS[which]()
    page = page_of(which)
    assert page.startswith("<!DOCTYPE html>")
    assert f"evalkit {__version__}" in page
    assert html.escape(results.name) in page
    config_text = results.provenance.get("config_text")
    if config_text:
        assert html.escape(config_text) in page
    else:
        assert f"name: {results.name}" in page
    for entry in results.provenance.get("data", []):
        assert entry["sha256"] in page
        assert f"{entry['bytes']:,}" in page
    for value in axis_values(results):
        assert f'<span class="chip">{html.escape(value)}</span>' in page, value
    for sweep in {r.sweep for r in results.rows if r.sweep is not None}:
        assert f"sweep values ({sweep})" in page
    found = plots.gallery(results).plots
    images = IMG.findall(page)
    assert len(images) == len(found) > 0
    for image, plot in zip(images, found):
        assert f'alt="{html.escape(plot.alt)}"' in image and len(plot.alt) > 40
        assert 'src="data:image/png;base64,' in image
    assert_well_formed(page)
    # self-contained: no scripts, no external resources, no links off the page
    assert "<script" not in page
    assert not re.search(r'(?:src|href)="(?!data:|#)', page)
    assert "<link" not in page


def test_rich_report_shows_intervals_sweeps_levels_comparisons_agreement_notes():
    results = rich()
    page = page_of("rich")
    first = results.rows[0]
    assert (first.value, first.ci_low, first.ci_high) == pytest.approx((0.8468, 0.8158, 0.8708), abs=1e-4)
    assert re.search(r"<td[^>]*>0\.8468 \[0\.8[12]\d*, 0\.87\d*\]</td>", page)  # the value with its interval
    assert "Values in brackets are confidence intervals" in page
    assert "Sweep over offset" in page and "Sweep over tnorm.p" in page
    assert "Per level" in page and "far_miss − near_miss" in page
    # paired comparisons: system, baseline, measure, difference, p-value, method, resamples
    assert "Paired comparisons" in page and "-0.1336" in page and "0.0010" in page and "permutation" in page
    assert "1,000" in page
    assert "Rank agreement" in page and "fuzzy · product · micro · f1" in page and "-0.333" in page
    assert "A note &amp; an &lt;angle&gt;." in page and "<angle>" not in page
    assert "rich &lt;report&gt;" in page
    assert "seed" in page and "2023" in page  # other provenance
    kinds = {plot.kind for plot in plots.gallery(results).plots}
    assert kinds == {"heatmap", "bars", "sweep", "levels", "agreement"}
    names = [name for name, _ in plots.figures(results)]
    assert {"sweep-offset", "sweep-tnorm.p", "levels-omap_per_level", "agreement", "bars", "bars-data-metrics",
            "heatmap-dwsnet-fuzzy"} <= set(names)


def test_figure_names_are_stable_unique_and_safe_in_file_names():
    for which in [*RESULTS, "events", "ontology_labels"]:
        results = RESULTS[which]() if which in RESULTS else run(which)
        names = [plot.name for plot in plots.gallery(results).plots]
        assert len(set(names)) == len(names)
        assert all(re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name) and len(name) <= 60 for name in names), names
        assert names == [plot.name for plot in plots.gallery(results).plots]
    figures = plots.figures(run("taggers"))
    assert [name for name, _ in figures] == ["bars-data-metrics", "levels-omap_per_level"]
    assert all(isinstance(fig, Figure) for _, fig in figures)
    for _, fig in figures:
        fig.clear()


def test_big_grids_are_capped_and_say_so(monkeypatch):
    rows = [Row(f"system{i}", rep, None, tnorm, averaging, metric, 0.5)
            for i in range(10) for rep in ("fuzzy", "fuzzy_b")
            for tnorm in ("minimum", "product", "lukasiewicz") for averaging in ("micro", "macro")
            for metric in ("precision", "recall")]
    measures = [Measure("data", f"m{i}") for i in range(40)]
    agreement = [Agreement(a, b, 0.5, 0.1, 10) for i, a in enumerate(measures) for b in measures[i + 1:]]
    results = Results(rows, "big", agreement=agreement)
    found = plots.gallery(results)
    kinds = [p.kind for p in found.plots]
    assert kinds.count("heatmap") == plots.MAX_HEATMAPS
    assert any("Heatmaps" in note and "20" in note for note in found.notes)
    assert any("Kendall" in note for note in found.notes)
    tiny_png = plots.image(found.plots[0], "png")
    monkeypatch.setattr(plots, "image", lambda plot, fmt: tiny_png)  # the layout of the page, not the drawing
    page = render_html(results)
    assert len(IMG.findall(page)) == len(found.plots)
    assert "the first 12 of 20 are drawn" in page
    assert "pairs that agree least" in page and "<details>" in page  # 780 pairs, folded away
    # a τ matrix of many "a · b · c" measures compares like with like: every T-norm at one averaging and metric
    measures = [Measure("set", m, "fuzzy", tnorm=f"t{i}", averaging=a) for i in range(12)
                for a in ("micro", "macro", "weighted", "samples") for m in ("precision", "recall", "f1")]
    agreement = [Agreement(a, b, 0.5, 0.1, 6) for i, a in enumerate(measures) for b in measures[i + 1:]]
    found = plots.gallery(Results([], "tnorms", agreement=agreement))
    assert found.notes == ["Kendall τ matrix: 12 of 144 measures are drawn (those with micro · precision); "
                           "the agreement table holds every pair."]


def test_figures_are_freed_after_rendering(monkeypatch):
    made: list[weakref.ref] = []
    original = plots._figure

    def tracked(width: float, height: float) -> Figure:
        fig = original(width, height)
        made.append(weakref.ref(fig))
        return fig

    monkeypatch.setattr(plots, "_figure", tracked)
    monkeypatch.setattr(plots, "POOL_FIGURES", sys.maxsize)  # drawn in this process, where they can be tracked
    render_html(run("taggers"))
    gc.collect()
    assert made and all(ref() is None for ref in made)


# --- (c) determinism --------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["quickstart", "rich"])
def test_two_renders_are_identical_but_for_the_timestamp(which: str):
    results = RESULTS[which]()
    first, second = page_of(which), render_html(results)
    assert len(CREATED.findall(first)) == 1
    assert CREATED.sub("", first) == CREATED.sub("", second)


@pytest.mark.slow
def test_a_render_in_another_process_is_identical_but_for_the_timestamp(tmp_path: Path):
    """Nothing depends on string hashing or process state (PYTHONHASHSEED differs)."""
    out = tmp_path / "taggers.html"
    script = ("import sys, evalkit; from evalkit_reports.html import render_html; "
              "results = evalkit.run(sys.argv[1], write_reports=False); "
              "open(sys.argv[2], 'w', encoding='utf-8').write(render_html(results))")
    subprocess.run([sys.executable, "-c", script, str(ROOT / "configs" / "taggers.yaml"), str(out)], check=True,
                   env={**os.environ, "PYTHONHASHSEED": "12345"}, timeout=300)
    assert CREATED.sub("", out.read_text(encoding="utf-8")) == CREATED.sub("", page_of("taggers"))


def test_without_a_recorded_creation_time_the_rendering_time_is_the_only_difference():
    results = run("taggers")
    undated = replace(results, provenance={k: v for k, v in results.provenance.items() if k != "created"})
    first, second = render_html(undated), render_html(undated)
    assert 'rendered <time class="created"' in first
    assert CREATED.sub("", first) == CREATED.sub("", second)
    assert CREATED.sub("", first).replace("rendered", "created") == CREATED.sub("", page_of("taggers"))


def test_image_files_are_byte_identical_across_renders():
    found = plots.gallery(rich()).plots
    one_of_each = list({plot.kind: plot for plot in found}.values())
    for plot in one_of_each:  # (the HTML determinism test covers every PNG)
        assert plots.image(plot, "svg") == plots.image(plot, "svg"), plot.name


def test_style_ignores_the_users_matplotlib_settings():
    import matplotlib

    plot = plots.gallery(run("quickstart")).plots[0]
    before = plots.image(plot, "png")
    with matplotlib.rc_context({"font.size": 20, "axes.prop_cycle": matplotlib.cycler(color=["red"]),
                                "svg.hashsalt": None, "figure.dpi": 33}):
        assert plots.image(plot, "png") == before


# --- (d) png and svg writers ------------------------------------------------------------------

@pytest.mark.slow
def test_png_and_svg_writers_write_one_valid_file_per_figure(tmp_path: Path):
    results = rich()
    names = [plot.name for plot in plots.gallery(results).plots]
    out = tmp_path / "reports" / "rich"
    registry = default_registry()
    written = write_reports(results, {f: registry.create("report_writer", f) for f in ("png", "svg")}, out).paths
    expected = [tmp_path / "reports" / f"rich-{name}{suffix}" for suffix in (".png", ".svg") for name in names]
    assert written == expected
    for path in expected[: len(names)]:
        assert path.read_bytes()[:8] == PNG_SIGNATURE
    for path in expected[len(names):]:
        root = ET.parse(path).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert b"<dc:date>" not in path.read_bytes()  # no timestamp in the file


def test_image_writers_render_an_index_of_their_figures():
    registry = default_registry()
    writer = registry.create("report_writer", "svg")
    index = writer.render(run("taggers"))
    assert "levels-omap_per_level.svg: omap_per_level at each level" in index


def test_a_config_asks_for_the_html_report(tmp_path: Path):
    data = ROOT / "configs" / "data" / "quickstart"
    config = tmp_path / "run.yaml"
    config.write_text(
        f"name: asked\ndata:\n  reference: {data / 'reference.csv'}\n  systems:\n    dwsnet: {data / 'dwsnet.csv'}\n"
        "averaging: [micro]\nmetrics: [f1]\nreport: {formats: [html, png], out: out/asked}\n"
    )
    evalkit.run(config, write_reports=True)
    page = (tmp_path / "out" / "asked.html").read_text(encoding="utf-8")
    assert "<h1>asked</h1>" in page
    assert (tmp_path / "out" / "asked-bars.png").read_bytes()[:8] == PNG_SIGNATURE


# --- (b) a browser renders it -----------------------------------------------------------------

CHECK = """<script>
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images);
  var loaded = images.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  var out = document.createElement("div");
  out.id = "evalkit-image-check";
  out.textContent = loaded + "/" + images.length + "/" + document.querySelectorAll("table").length;
  document.body.appendChild(out);
});
</script>"""


def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail("chromium is not on PATH; the HTML report is checked in a headless browser: as root, "
                    "apt-get install -y chromium (Debian's package); without root, put a chromium binary on PATH")
    return found


def test_the_worst_files_are_listed_worst_first_and_drawn_on_a_timeline_per_system():
    results, page = events_run(), page_of("events")
    section = page[page.index('<section id="worst">'):]
    section = section[: section.index("</section>")]
    timelines = {p.name: p for p in plots.gallery(results).plots if p.kind == "timeline"}
    assert sorted(timelines) == ["timeline-good", "timeline-poor"]
    for system, (block, worst) in results.worst_samples().items():
        assert block.metric == "f1" and len(worst) == 5
        table = section[section.index(f"<h3>{system}</h3>"):]
        places = [table.index(f"<td>{html.escape(sample)}</td>") for sample, _ in worst]
        assert places == sorted(places)  # worst first
        files = [t.sample for t in results.timelines if t.system == system]
        assert files == [sample for sample, _ in worst]  # every worst file has its events
        alt = timelines[f"timeline-{system}"].alt
        assert [alt.index(f"{sample} (f1 ") for sample in files] == sorted(alt.index(f"{s} (f1 ") for s in files)
        assert f'alt="{html.escape(alt)}"' in page  # the figure, with its alt text, as every figure of the report


@pytest.mark.slow
@pytest.mark.parametrize("which", ["rich", "taggers", "events"])
def test_headless_chromium_loads_every_image_and_table(which: str, tmp_path: Path):
    browser = chromium()
    results = RESULTS[which]()
    page = page_of(which)
    report = tmp_path / "report.html"
    report.write_text(page, encoding="utf-8")
    check = tmp_path / "check.html"  # the probe goes into a copy only
    check.write_text(page.replace("</body>", CHECK + "\n</body>"), encoding="utf-8")
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}"]
    done = subprocess.run([*common, "--virtual-time-budget=10000", "--dump-dom", check.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    probe = re.search(r'id="evalkit-image-check">(\d+)/(\d+)/(\d+)<', done.stdout)
    assert probe, done.stdout[-2000:]
    loaded, total, table_count = map(int, probe.groups())
    assert total == len(plots.gallery(results).plots) > 0
    assert loaded == total
    assert table_count == page.count("<table>") + page.count('<table class="axes">') > 0
    assert "Set metrics" in done.stdout or "Data metrics" in done.stdout
    shot = tmp_path / "report.png"
    done = subprocess.run([*common, f"--screenshot={shot}", "--window-size=1280,2000", report.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == PNG_SIGNATURE  # looked at by a person, not compared by pixel


def test_odd_results_render_without_error():
    nan = float("nan")
    odd = [
        Results([], "empty"),
        run("soft_keywords"),  # per-class values only: tables, no figures
        Results([Row("only", "fuzzy", None, "minimum", "micro", "f1", nan)], "one undefined value"),
        Results([Row(s, "fuzzy", None, t, a, "f1", v)
                 for s in ("a", "b") for t in ("minimum", "product") for a in ("micro", "macro")
                 for v in (nan if t == "product" else 0.5,)], "undefined cells"),
        Results([Row("a", None, None, None, None, "log_loss", v) for v in (-2.5,)]
                + [Row("b", None, None, None, None, "log_loss", 130.0)], "outside [0, 1]"),
        Results(
            [Row("a", None, None, None, None, "omap_per_level", 0.5 + i / 50, level=i) for i in range(5)], "one system's levels"
        ),
        Results([Row("a", "fuzzy", None, "minimum", "micro", "f1", 0.5, sweep="offset", sweep_value=0.0)],
                "a sweep of one value", agreement=[Agreement(Measure("data", "x"), Measure("data", "y"), nan, nan, 1)]),
    ]
    for results in odd:
        page = render_html(results)
        assert page.endswith("</html>\n")
        assert len(IMG.findall(page)) == len(plots.gallery(results).plots)
