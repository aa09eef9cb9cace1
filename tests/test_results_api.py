"""Results from Python (issue 13, part 5): DataFrames named as the reports are, a pivot that
keeps the rows a component does not apply to, a short repr, saved runs read back, and a run
that writes report files only when asked."""

from __future__ import annotations

import dataclasses
import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from in_process import evalkit_cli

import evalkit
from evalkit.discovery import default_registry
from evalkit.errors import ConfigError, DataError
from evalkit.results import COLUMNS, Results

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"
DATA = CONFIGS / "data" / "quickstart"
SYSTEMS = ("dwsnet", "baseline", "tiny")

_cache: dict[str, Results] = {}


def run(name: str) -> Results:
    """A bundled config's results, run once per session (from Python: no report file)."""
    if name not in _cache:
        _cache[name] = evalkit.run(CONFIGS / f"{name}.yaml")
    return _cache[name]


def statistics_run() -> Results:
    """Intervals, paired tests and rank agreement, with crisp rows (no T-norm) among them, and
    per-class rows (few resamples: the numbers are not the point)."""
    if "statistics" not in _cache:
        _cache["statistics"] = evalkit.run({
            "name": "statistics",
            "data": {"reference": str(DATA / "reference.csv"), "systems": {s: str(DATA / f"{s}.csv") for s in SYSTEMS}},
            "representation": ["fuzzy", "crisp"], "tnorm": ["minimum", "product"], "averaging": ["micro", "none"],
            "metrics": ["f1", "kld"],
            "statistics": {"bootstrap": {"resamples": 30, "seed": 1}, "test": {"resamples": 30, "seed": 1},
                           "agreement": True},
        })
    return _cache["statistics"]


def csv_report(results: Results) -> str:
    return default_registry().create("report_writer", "csv").render(results)


def json_report(results: Results) -> str:
    return default_registry().create("report_writer", "json").render(results)


# --- to_pandas --------------------------------------------------------------------------------


def test_to_pandas_has_the_columns_and_values_of_the_csv_report():
    results = run("quickstart")
    frame = results.to_pandas()
    assert list(frame.columns) == list(COLUMNS)
    assert "class" in frame.columns and "class_" not in frame.columns
    assert len(frame) == len(results.rows)
    # What pandas reads from the CSV report (which leaves the type of an empty column to guess).
    pd.testing.assert_frame_equal(frame, pd.read_csv(io.StringIO(csv_report(results))), check_dtype=False)
    # Crisp has no T-norm, KL divergence no averaging: NaN, which isna() finds, never None.
    crisp = frame[frame.representation == "crisp"]
    assert len(crisp) == 3 * 2 * 3 and crisp.tnorm.isna().all()
    kld = frame[frame.metric == "kld"]
    assert kld.averaging.isna().all() and kld.representation.isna().all()
    assert not any(v is None for column in frame.columns for v in frame[column])
    assert frame["value"].dtype == np.float64 and frame["level"].dtype == np.float64
    assert frame["ci_low"].isna().all()


def test_to_pandas_names_classes_and_levels_as_the_reports():
    per_class = statistics_run().to_pandas()
    classes = per_class.dropna(subset=["class"])
    assert len(classes) and set(classes.averaging) == {"none"}
    assert classes["class"].tolist() == [r.class_ for r in statistics_run().rows if r.class_ is not None]
    levels = run("taggers").to_pandas().dropna(subset=["level"])
    assert set(levels.metric) == {"omap_per_level"} and levels.level.tolist() == [
        float(r.level) for r in run("taggers").rows if r.level is not None
    ]


def test_to_pandas_of_comparisons_and_agreement():
    results = statistics_run()
    comparisons = results.to_pandas("comparisons")
    assert len(comparisons) == len(results.comparisons) > 0
    assert list(comparisons.columns) == list(results.comparisons[0].as_dict())
    assert set(comparisons.baseline) == {"dwsnet"} and comparisons.resamples.dtype == np.int64
    assert comparisons.tnorm.isna().any()  # the crisp comparisons
    agreement = results.to_pandas("agreement")
    assert list(agreement.columns) == ["measure_a", "measure_b", "tau", "p_value", "n_systems"]
    assert agreement.measure_a.tolist() == [a.measure_a.label() for a in results.agreement]
    assert (agreement.n_systems == 3).all()
    # A run without statistics has the columns and no lines.
    assert list(run("quickstart").to_pandas("comparisons").columns) == list(comparisons.columns)
    assert run("quickstart").to_pandas("agreement").empty
    with pytest.raises(ConfigError, match="'rows', 'comparisons', 'agreement'"):
        results.to_pandas("tests")


def test_a_dataframe_of_the_rows_themselves_keeps_the_attribute_names():
    """Row stays a plain dataclass: pandas names the columns after its fields (``class_``);
    to_pandas() is the frame named as the reports are (docs/index.md says so)."""
    assert "class_" in pd.DataFrame(run("quickstart").rows).columns


# --- pivot ------------------------------------------------------------------------------------


def test_pivot_keeps_the_rows_a_component_does_not_apply_to():
    results = run("quickstart")
    table = results.pivot()
    assert table.columns.name == "averaging" and table.columns.tolist() == ["micro", "macro", "—"]
    assert table.index.names == ["system", "representation", "tnorm", "metric"]
    # 3 systems x (fuzzy: 3 T-norms x 3 metrics + crisp: 3 metrics + kld)
    assert len(table) == 3 * (9 + 3 + 1)
    value = {(r.system, r.representation, r.averaging, r.metric): r.value for r in results.rows}
    assert table.loc[("dwsnet", "crisp", "—", "f1"), "micro"] == value[("dwsnet", "crisp", "micro", "f1")]
    assert table.loc[("tiny", "—", "—", "kld"), "—"] == value[("tiny", None, None, "kld")]
    assert table.notna().sum().sum() == len(results.rows)  # every row is a cell
    # What pandas' own pivot_table makes of the same rows: the crisp and kld rows are gone.
    dropped = results.to_pandas().pivot_table(index=["system", "representation", "tnorm", "metric"], columns="averaging",
                                              values="value")
    assert len(dropped) == 3 * 9


def test_pivot_columns_index_and_where():
    results = run("quickstart")
    f1 = results.pivot(columns="tnorm", where={"metric": "f1", "averaging": "micro"})
    assert f1.columns.tolist() == ["minimum", "product", "lukasiewicz", "—"]  # the config's order
    assert f1.index.names == ["system", "representation"]
    assert f1.loc[("dwsnet", "crisp"), "—"] > f1.loc[("dwsnet", "fuzzy"), "minimum"]
    assert math.isnan(f1.loc[("dwsnet", "crisp"), "minimum"])
    by_system = results.pivot(index="tnorm", columns="system",
                              where={"metric": "f1", "averaging": "macro", "tnorm": [None, "product"]})
    assert by_system.index.name == "tnorm" and by_system.index.tolist() == ["product", "—"]
    assert by_system.columns.tolist() == list(SYSTEMS)
    metrics = results.pivot(index=["system", "tnorm"], columns="metric", where={"representation": "fuzzy", "averaging": "micro"})
    assert metrics.columns.tolist() == ["precision", "recall", "f1"] and len(metrics) == 3 * 3


def test_pivot_of_interval_bounds():
    results = statistics_run()
    low = results.pivot(values="ci_low", where={"metric": "f1", "class": None})
    value = results.pivot(where={"metric": "f1", "class": None})
    # Averaging "none" gives per-class rows only: micro is left, for fuzzy x 2 T-norms and crisp.
    assert low.shape == value.shape == (3 * 3, 1) and low.columns.tolist() == ["micro"]
    assert low["micro"].notna().all() and (low["micro"] <= value["micro"]).all()


def test_pivot_keeps_numeric_labels_numeric():
    sweep = run("figure1").pivot(index="sweep_value", columns="tnorm")
    assert sweep.index.dtype == np.float64 and sweep.index[0] == pytest.approx(-0.2) and len(sweep) == 101
    assert sweep.columns.tolist() == ["minimum", "product", "lukasiewicz", "—"]
    assert sweep.loc[0.0, "minimum"] == pytest.approx(1.0)  # Harju & Mesaros's Figure 1 peaks at ε = 0
    levels = run("taggers").pivot(index=["system", "level"], columns="metric")
    assert levels.index.get_level_values("level").dtype == np.float64
    near = levels.xs("near_miss")
    assert math.isnan(near.index[0]) and near.index[1:].tolist() == list(map(float, range(len(near) - 1)))
    whole = near.iloc[0]  # the whole-data metrics, which have no level: kept, under NaN
    assert not math.isnan(whole["map"]) and math.isnan(whole["omap_per_level"])


def test_pivot_explains_what_it_cannot_do():
    results = run("quickstart")
    with pytest.raises(ConfigError, match=r"several rows in one cell \(system dwsnet, averaging micro, and more\): they "
                                          r"differ in 'representation', 'tnorm', 'metric'; add those to index"):
        results.pivot(index="system")
    with pytest.raises(ConfigError, match=r"index 'tnrom' is not a label; did you mean 'tnorm'\?"):
        results.pivot(index=["system", "tnrom"])
    with pytest.raises(ConfigError, match=r"no row has metric 'F1'; metric: precision, recall, f1, kld"):
        results.pivot(where={"metric": "F1"})
    with pytest.raises(ConfigError, match="values 'p_value' is not a value column"):
        results.pivot(values="p_value")
    with pytest.raises(ConfigError, match="not the columns'"):
        results.pivot(index=["system", "averaging"])
    assert results.pivot(index=["system", "class"], columns="metric", where={"metric": "kld"}).shape == (3, 1)


# --- repr -------------------------------------------------------------------------------------


def test_repr_is_a_few_lines():
    text = repr(run("quickstart"))
    assert text == (
        "Results 'quickstart': 75 rows\n"
        "  systems (3): dwsnet, baseline, tiny\n"
        "  metrics (4): precision, recall, f1, kld\n"
        "  notes: 0\n"
        "  reports: none"
    )
    assert "\n  statistics: 8 paired tests, rank agreement of 4 pairs of measures\n" in repr(statistics_run())
    tested_only = dataclasses.replace(statistics_run(), agreement=[])  # no rank agreement: not "of 0 pairs"
    assert "\n  statistics: 8 paired tests\n" in repr(tested_only) and "pairs" not in repr(tested_only)
    assert len(repr(run("figure1"))) < 300


def test_repr_and_html_show_names_harmlessly():
    results = evalkit.run({"name": "odd\x1b[2J", "data": {"reference": [[1.0, 0.0]], "systems": {"<b>x\x1b[31m": [[0.5, 0.5]]}},
                           "metrics": ["f1"]})
    assert "\x1b" not in repr(results)
    assert "\n  systems (1): '<b>x\\x1b[31m'\n" in repr(results)  # as a Python literal, escaped
    page = results._repr_html_()
    assert "<b>x" not in page and "&lt;b&gt;x" in page
    assert "\n  systems (1): &#x27;&lt;b&gt;x\\x1b[31m&#x27;\n" in page  # the repr, its lines kept


def test_html_shows_the_summary_and_the_pivoted_rows():
    results = run("quickstart")
    page = results._repr_html_()
    assert page.startswith("<pre>Results &#x27;quickstart&#x27;: 75 rows\n")
    assert page.count("<table") == 1 and ">lukasiewicz</th>" in page and ">—</th>" in page
    long = run("figure1")._repr_html_()  # 404 rows: as many as pandas shows of a DataFrame
    assert long.count("<tr") < 2 * pd.get_option("display.max_rows") and "..." in long


# --- from_json --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["quickstart", "taggers", "figure1", "statistics"])
def test_a_saved_run_reads_back_equal(name, tmp_path):
    results = statistics_run() if name == "statistics" else run(name)
    text = json_report(results)
    assert results.to_json() == text
    loaded = Results.from_json(text)
    assert loaded.rows == results.rows
    assert loaded.comparisons == results.comparisons and loaded.notes == results.notes
    assert loaded.agreement == results.agreement
    assert (loaded.name, loaded.config, loaded.provenance) == (results.name, results.config, results.provenance)
    assert loaded.reports == []
    assert loaded.to_json() == text  # everything the document holds, read back
    path = tmp_path / "run.json"
    path.write_text(text, encoding="utf-8")
    assert Results.from_json(path).rows == results.rows == Results.from_json(str(path)).rows
    if name == "statistics":
        assert loaded.comparisons and loaded.agreement and any(r.ci_low is not None for r in loaded.rows)
        assert {type(a.measure_a).__name__ for a in loaded.agreement} == {"Measure"}


def test_undefined_values_read_back_as_nan_and_absent_ones_as_none():
    results = evalkit.run({"data": {"reference": [[0.0, 0.0]], "systems": {"s": [[0.0, 0.0]]}},
                           "metrics": ["precision"], "zero_division": "nan", "averaging": ["micro", "none"]})
    assert math.isnan(results.rows[0].value)
    loaded = Results.from_json(results.to_json())
    assert math.isnan(loaded.rows[0].value) and loaded.rows[0].ci_low is None and loaded.rows[0].level is None
    assert [r.class_ for r in loaded.rows] == [r.class_ for r in results.rows] == [None, "0", "1"]
    assert loaded.to_json() == results.to_json()


def test_infinite_values_are_written_and_read_back_in_every_format(tmp_path):
    """sed_scores_eval's best threshold is -inf for a class best left all on (a, found only by
    its lowest score) and +inf for one best left off (b, never found): valid JSON (the text
    "-inf" / "inf" in the number's place, where Python would write -Infinity, which JSON readers
    refuse) that reads back, CSV that pandas reads back, the tables, and a plot that writes the
    value where no bar can show it (matplotlib warned and drew nothing before)."""
    import warnings

    from evalkit_reports import CsvWriter, MarkdownWriter
    from evalkit_reports.html import HtmlWriter

    (tmp_path / "scores").mkdir()
    (tmp_path / "scores" / "f0.tsv").write_text("onset\toffset\ta\tb\n0.0\t0.1\t0.3\t0.9\n0.1\t0.2\t0.3\t0.1\n")
    (tmp_path / "gt.tsv").write_text("filename\tonset\toffset\tevent_label\nf0.wav\t0.0\t0.2\ta\nf0.wav\t0.1\t0.2\tb\n")
    data = {"reference": str(tmp_path / "gt.tsv"), "systems": {"s": str(tmp_path / "scores")}}
    results = evalkit.run({"name": "inf", "data": data,
                           "metrics": [{"name": "collar_best_fscore", "onset_collar": 0.05, "offset_collar": 0.05}]})
    thresholds = {r.class_: r.value for r in results.rows if r.metric == "collar_best_fscore_threshold"}
    assert thresholds == {"a": -math.inf, "b": math.inf}

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    text = results.to_json()
    document = json.loads(text, parse_constant=refuse)  # what a strict reader (jq, JavaScript) accepts
    assert [r["value"] for r in document["rows"] if r["metric"] == "collar_best_fscore_threshold"] == ["-inf", "inf"]
    loaded = Results.from_json(text)
    assert loaded.rows == results.rows and loaded.to_json() == text
    table = pd.read_csv(io.StringIO(CsvWriter(CsvWriter.Params()).render(results)))
    assert table[table.metric == "collar_best_fscore_threshold"].value.tolist() == [-math.inf, math.inf]
    assert "| -inf | inf |" in MarkdownWriter(MarkdownWriter.Params()).render(results)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "invalid value encountered" on an infinite bar
        page = HtmlWriter(HtmlWriter.Params()).render(results)
    assert '<td class="num">-inf</td>' in page and '<td class="num">inf</td>' in page


def test_the_cli_json_output_reads_back(tmp_path):
    done = evalkit_cli("run", CONFIGS / "quickstart.yaml", "--format", "json", "--no-report", check=True)
    (tmp_path / "run.json").write_text(done.stdout, encoding="utf-8")
    assert Results.from_json(tmp_path / "run.json").rows == run("quickstart").rows


def test_a_document_written_before_the_format_was_numbered_reads():
    document = json.loads(run("quickstart").to_json())
    del document["evalkit_results"]
    assert Results.from_json(json.dumps(document)).rows == run("quickstart").rows


def _document(**changes) -> str:
    document = json.loads(statistics_run().to_json())
    # a fixed time: the document is in the test's id, which every pytest-xdist worker must collect alike
    document["provenance"]["created"] = "2026-01-01T00:00:00+00:00"
    for key, value in changes.items():
        if "." in key:
            outer, index, field = key.split(".")
            document[outer][int(index)][field] = value
        else:
            document[key] = value
    return json.dumps(document)


@pytest.mark.parametrize("content,message", [
    (b"evalkit results", r"not valid JSON \(Expecting value at column 1\)"),
    (b'{"rows": [', r"not valid JSON"),
    (b"\xff\xfe{}", r"not UTF-8"),
    (b"[1, 2]", r"not an evalkit results document"),
    (b'{"name": "x", "values": []}', r"not an evalkit results document"),
    (b'{"rows": [], "evalkit_version": "9.0.0", "evalkit_results": 2}',
     r"results format 2, written by evalkit 9\.0\.0; this evalkit \(.*\) reads format 1: upgrade evalkit"),
    (b'{"rows": [], "evalkit_results": "one"}', r"results format 'one'; this evalkit"),
    (_document(**{"rows.3.value": "0.5"}).encode(), r"rows\[3\]\.value: \"0\.5\" where a number or null belongs"),
    (_document(**{"rows.0.system": None}).encode(), r"rows\[0\]\.system: null where text belongs"),
    (_document(**{"rows.0.level": 1.5}).encode(), r"rows\[0\]\.level: 1\.5 where a whole number or null belongs"),
    (_document(**{"comparisons.1.resamples": True}).encode(), r"comparisons\[1\]\.resamples: true where a whole number"),
    (_document(**{"agreement.2.measure_b": "fuzzy · nothing"}).encode(),
     r"agreement\[2\]\.measure_b: 'fuzzy · nothing' is the measure of no row"),
    (_document(notes="none").encode(), r"`notes` is not a list"),
    (_document(rows=[{"system": "s"}]).encode(), r"rows\[0\]: no `representation`"),
])
def test_a_bad_document_is_a_data_error_naming_the_file(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}: .*{message}"):
        Results.from_json(path)


def test_a_missing_file_and_bad_text_are_data_errors(tmp_path):
    with pytest.raises(DataError, match=rf"^{re.escape(str(tmp_path / 'none.json'))}: cannot be read"):
        Results.from_json(tmp_path / "none.json")
    with pytest.raises(DataError, match=r"^results JSON text: not an evalkit results document"):
        Results.from_json('{"name": "not results"}')


# --- reports: written when asked --------------------------------------------------------------


def _reporting_config(tmp_path: Path) -> Path:
    config = tmp_path / "run.yaml"
    config.write_text(
        f"name: asked\ndata:\n  reference: {DATA / 'reference.csv'}\n  systems:\n    dwsnet: {DATA / 'dwsnet.csv'}\n"
        "averaging: [micro]\nmetrics: [f1]\nreport: {formats: [json, csv], out: out/asked}\n"
    )
    return config


def test_the_python_api_writes_reports_only_when_asked(tmp_path):
    config = _reporting_config(tmp_path)
    results = evalkit.run(config)
    assert results.reports == [] and not (tmp_path / "out").exists()  # not even its folder
    results = evalkit.run(config, write_reports=True)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["asked.csv", "asked.json"]
    assert len(results.reports) == 2
    assert Results.from_json(tmp_path / "out" / "asked.json").rows == results.rows


def test_the_cli_writes_reports_unless_told_not_to(tmp_path):
    config = _reporting_config(tmp_path)
    command = ("run", config, "--format", "csv", "-q")
    done = evalkit_cli(*command, "--no-report", check=True)
    assert done.stdout.startswith(",".join(COLUMNS)) and "wrote" not in done.stderr
    assert not (tmp_path / "out").exists()
    done = evalkit_cli(*command, check=True)
    assert "wrote" in done.stderr and (tmp_path / "out" / "asked.json").exists()
    help_text = evalkit_cli("run", "--help").stdout
    assert "--no-report" in help_text and "report files" in help_text
