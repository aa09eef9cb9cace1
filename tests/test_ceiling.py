"""The ceiling of each T-norm: the reference scored against itself, the most a perfect system can
reach on it. Computed in the run's reduction (:attr:`evalkit.axes.Axes.ceiling`), kept in the
results (``Results.ceilings``, the json report), shown in the HTML report. Real runs."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

import evalkit
from evalkit import table
from evalkit.results import Results
from evalkit_reports import plots
from evalkit_reports.html import render_html

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "configs" / "data" / "quickstart"
SYSTEMS = ("dwsnet", "baseline", "tiny")
TNORMS = {"minimum": "minimum", "product": "product", "lukasiewicz": "lukasiewicz", "drastic": "drastic",
          "hamacher(p=0.5)": {"name": "hamacher", "p": 0.5}}  # row label -> spec
AVERAGINGS = ["micro", "macro", "weighted", "samples", "none"]
METRICS = ["precision", "recall", "f1", "jaccard"]
_cache: dict[str, Results] = {}


def config(folder: Path = DATA, **data) -> dict:
    return {
        "name": "ceilings",
        "data": {"reference": str(folder / "reference.csv"), "systems": {s: str(folder / f"{s}.csv") for s in SYSTEMS},
                 **data},
        "representation": ["fuzzy", "crisp"], "tnorm": list(TNORMS.values()), "averaging": AVERAGINGS,
        "metrics": [*METRICS, "kld"],
    }


def compared() -> Results:
    if "whole" not in _cache:
        _cache["whole"] = evalkit.run(config(), write_reports=False)
    return _cache["whole"]


def reference() -> pd.DataFrame:
    return pd.read_csv(DATA / "reference.csv", index_col=0)


def test_the_ceiling_is_the_reference_evaluated_against_itself_for_every_t_norm_and_averaging():
    results, ref = compared(), reference()
    seen = set()
    for row in results.ceilings:
        assert (row.system, row.representation, row.similarity) == ("reference", "fuzzy", None)  # crisp uses no T-norm
        averaging = row.averaging if row.class_ is None else "none"
        expected = evalkit.evaluate(ref, ref, tnorm=TNORMS[row.tnorm], averaging=averaging, metrics=[row.metric])
        value = expected[row.metric] if row.class_ is None else expected[row.metric][row.class_]
        # the same reduction, chunked alike or not: equal up to the order of a sum's terms
        assert row.value == pytest.approx(value, rel=1e-12)
        seen.add((row.tnorm, averaging, row.metric))
    assert seen == {(t, a, m) for t in TNORMS for a in AVERAGINGS for m in METRICS}  # kld is no set ratio: no ceiling


def test_the_minimums_ceiling_is_1_and_the_products_micro_precision_is_the_sum_of_squares_over_the_sum():
    results, ref = compared(), reference()
    minimum = [r for r in results.ceilings if r.tnorm == "minimum"]
    assert minimum and all(r.value == 1 for r in minimum if not math.isnan(r.value))  # T(μ, μ) = μ: I = |G| exactly
    product = next(r for r in results.ceilings if (r.tnorm, r.averaging, r.metric) == ("product", "micro", "precision"))
    mu = ref.to_numpy()
    assert product.value == pytest.approx((mu ** 2).sum() / mu.sum(), rel=1e-12)  # a sum of 400 terms, reordered
    order = {t: next(r.value for r in results.ceilings if (r.tnorm, r.averaging, r.metric) == (t, "micro", "f1"))
             for t in ("minimum", "product", "lukasiewicz", "drastic")}
    assert order["minimum"] > order["product"] > order["lukasiewicz"] > order["drastic"]  # the T-norms' order


def test_a_streamed_run_has_the_same_ceilings_and_the_json_report_keeps_them(tmp_path, monkeypatch):
    for name in ("reference", *SYSTEMS):  # a streamed run reads files sorted by id
        pd.read_csv(DATA / f"{name}.csv", index_col=0).sort_index().to_csv(tmp_path / f"{name}.csv")
    whole = compared()
    monkeypatch.setattr(table, "MIN_CHUNK_ROWS", 7)
    monkeypatch.setattr(table, "CHUNK_BYTES", 7 * 10 * 8)  # chunks of 7 samples of the 10 classes' float64 values
    streamed = evalkit.run(config(tmp_path, stream=True), write_reports=False)
    read = next(re.search(r"([\d,]+) samples read ([\d,]+) rows at a time", n) for n in streamed.notes if "at a time" in n)
    samples, rows = (int(read[i].replace(",", "")) for i in (1, 2))
    assert rows == 7 < samples  # several chunks, their tallies added
    assert [(r.tnorm, r.averaging, r.metric, r.class_) for r in streamed.ceilings] == \
        [(r.tnorm, r.averaging, r.metric, r.class_) for r in whole.ceilings]
    for a, b in zip(whole.ceilings, streamed.ceilings):  # summed in chunks, of sorted rows: another order of the sums
        assert b.value == pytest.approx(a.value, rel=1e-12, nan_ok=True)
    back = Results.from_json(whole.to_json())
    assert [(r.measure, r.value) for r in back.ceilings if not math.isnan(r.value)] == \
        [(r.measure, r.value) for r in whole.ceilings if not math.isnan(r.value)]  # read back from the file: exact


def test_the_html_report_states_each_t_norms_ceiling_beside_the_results():
    results = compared()
    page = render_html(results)
    assert "Ceiling per T-norm: Set metrics — system: reference, representation: fuzzy" in page
    row = next(r for r in results.ceilings if (r.tnorm, r.averaging, r.metric) == ("product", "micro", "precision"))
    assert f'<td>product</td><td>precision</td><td class="num">{row.value:.4f}</td>' in page
    crisp_only = evalkit.run({"data": {"reference": str(DATA / "reference.csv"), "systems": {"tiny": str(DATA / "tiny.csv")}},
                              "representation": "crisp", "metrics": ["f1"]})
    assert crisp_only.ceilings == [] and "Ceiling" not in render_html(crisp_only)  # no T-norm, no ceiling to state


def test_the_figures_comparing_t_norms_mark_each_ones_ceiling():
    results = compared()  # 5 T-norms and crisp: a dot plot, a row per combination
    with plots.style():
        dots = dict(plots.figures(results))["dots"]
    fuzzy = [r for r in results.ceilings if r.class_ is None]
    first = dots.axes[0]
    assert [t.get_text() for t in first.get_yticklabels()][:len(TNORMS)] == [f"fuzzy · {t}" for t in TNORMS]
    marks = [line for line in first.get_lines() if line.get_label() == "ceiling"]
    metric, averaging = first.get_ylabel(), first.get_title()
    assert list(marks[0].get_xdata()) == [r.value for r in fuzzy if (r.metric, r.averaging) == (metric, averaging)]
    assert list(marks[0].get_ydata()) == list(range(len(TNORMS)))  # fuzzy's rows; crisp's has none
    plot = next(p for p in plots.gallery(results).plots if p.name == "dots")
    assert "ceiling" in plot.caption


def test_the_bar_chart_draws_each_t_norms_ceiling_over_its_bars():
    results = evalkit.run(ROOT / "configs" / "quickstart.yaml", write_reports=False)
    with plots.style():
        bars = dict(plots.figures(results))["bars"]
    expected = {(r.tnorm, r.averaging, r.metric): r.value for r in results.ceilings}
    drawn = []
    for ax in bars.axes:
        for lines in ax.collections:
            if lines.get_label() == "ceiling":
                drawn += [segment[0][1] for segment in lines.get_segments()]
    # 3 T-norms × 2 averagings × 3 metrics, each drawn at its value (handed to matplotlib as it is: exact)
    assert sorted(drawn) == sorted(expected.values()) and len(drawn) == 18


def test_the_ceiling_axes_are_made_once_per_axes():
    axes = evalkit.api.plan(config()).axes
    assert axes.ceiling is axes.ceiling  # shared by every chunk of a streamed run, not made anew for each
    assert [r.label for r in axes.ceiling.representations] == ["fuzzy"]  # crisp uses no T-norm
    assert [m.label for m in axes.ceiling.metrics] == METRICS  # the set metrics: kld is none
