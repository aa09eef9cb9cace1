"""The parquet report (issue 27, item 7): the tidy rows, paired tests, rank agreement, curves and
per-sample values as typed Parquet tables, read back by ``Results.from_parquet`` equal to the
JSON round trip; and the per-sample files of the csv report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

import evalkit
from evalkit.api import plan
from evalkit.errors import ConfigError, DataError
from evalkit.results import SAMPLE_COLUMNS, Results

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def written(results: Results, folder: Path) -> Path:
    for part, data in results.to_parquet().items():
        (folder / f"run{part}.parquet").write_bytes(data)
    return folder / "run.parquet"


@pytest.mark.parametrize("config", sorted(p.name for p in CONFIGS.glob("*.yaml")))
def test_every_bundled_configs_results_read_back_from_parquet_as_from_json(config, tmp_path):
    results = evalkit.run(CONFIGS / config)
    from_json = Results.from_json(results.to_json())
    from_parquet = Results.from_parquet(written(results, tmp_path))
    assert from_parquet.to_json() == from_json.to_json()  # every field, NaN and null as JSON writes them
    assert from_parquet.rows == from_json.rows and from_parquet.comparisons == from_json.comparisons


def statistics_run(**extra) -> Results:
    """Intervals, tests, agreement, per-class rows, crisp rows without a T-norm, undefined values."""
    data = CONFIGS / "data" / "quickstart"
    return evalkit.run({
        "name": "statistics",
        "data": {"reference": str(data / "reference.csv"),
                 "systems": {s: str(data / f"{s}.csv") for s in ("dwsnet", "baseline", "tiny")}},
        "representation": ["fuzzy", "crisp"], "tnorm": ["minimum", "product"], "averaging": ["micro", "none", "samples"],
        "metrics": ["f1", "error_rate", "kld"], "zero_division": "nan",
        "statistics": {"bootstrap": {"resamples": 20, "seed": 1}, "test": {"resamples": 20, "seed": 1}, "agreement": True},
        **extra,
    })


def test_every_table_reads_back_with_typed_columns(tmp_path):
    results = statistics_run(per_sample=True)
    assert results.comparisons and results.agreement and results.sample_values
    back = Results.from_parquet(written(results, tmp_path))
    assert back.to_json() == Results.from_json(results.to_json()).to_json()
    assert back.per_sample().equals(results.per_sample())
    types = {name: {f.name: str(f.type) for f in pq.read_schema(tmp_path / f"run{name}.parquet")}
             for name in ("", "-comparisons", "-agreement", "-curves", "-per_sample")}
    assert types[""] == {**dict.fromkeys(("system", "representation", "similarity", "tnorm", "averaging", "metric",
                                          "class", "sweep"), "string"),
                         "level": "int64", **dict.fromkeys(("sweep_value", "value", "ci_low", "ci_high"), "double")}
    assert types["-comparisons"]["resamples"] == "int64" and types["-comparisons"]["p_value"] == "double"
    assert types["-agreement"]["n_systems"] == "int64" and types["-curves"]["x"] == "list<element: double>"
    assert list(types["-per_sample"]) == list(SAMPLE_COLUMNS) and types["-per_sample"]["value"] == "double"
    # pandas reads the per-sample file as the per_sample() table (typed alike: text, float64).
    read = pd.read_parquet(tmp_path / "run-per_sample.parquet")
    pd.testing.assert_frame_equal(read, results.per_sample(), check_dtype=False)


def test_a_run_writes_the_parquet_and_csv_reports_with_their_per_sample_files(tmp_path):
    data = CONFIGS / "data" / "quickstart"
    config = {
        "name": "files", "data": {"reference": str(data / "reference.csv"), "systems": {"b": str(data / "baseline.csv")}},
        "averaging": "samples", "metrics": ["f1"], "per_sample": True,
        "report": {"formats": ["parquet", "csv", "json"], "out": str(tmp_path / "out" / "files")},
    }
    results = evalkit.run(config, write_reports=True)
    names = sorted(Path(p).name for p in results.reports)
    assert names == ["files-agreement.parquet", "files-comparisons.parquet", "files-curves.parquet",
                     "files-per_sample.csv", "files-per_sample.parquet", "files.csv", "files.json", "files.parquet"]
    out = tmp_path / "out"
    assert Results.from_parquet(out / "files.parquet").to_json() == Results.from_json(out / "files.json").to_json()
    read = pd.read_csv(out / "files-per_sample.csv", keep_default_na=False, na_values=[""])
    expected = results.per_sample()
    assert list(read.columns) == list(SAMPLE_COLUMNS) and len(read) == len(expected) == 300 * 6  # counts and f1
    assert read["value"].to_numpy().tolist() == expected["value"].to_numpy().tolist()  # repr: the float read back exact
    # Without per_sample the csv report is its one file, as before.
    del config["per_sample"]
    config["report"]["out"] = str(tmp_path / "plain" / "files")
    plain = [Path(p).name for p in evalkit.run(config, write_reports=True).reports]
    assert plain == ["files.parquet", "files-comparisons.parquet", "files-agreement.parquet", "files-curves.parquet",
                     "files-per_sample.parquet", "files.csv", "files.json"]


def test_a_companion_or_a_missing_one_is_named(tmp_path):
    path = written(statistics_run(), tmp_path)
    with pytest.raises(DataError, match=r"run-curves.parquet: not an evalkit parquet report .*NAME.parquet"):
        Results.from_parquet(tmp_path / "run-curves.parquet")
    (tmp_path / "run-agreement.parquet").unlink()
    with pytest.raises(DataError, match=r"run.parquet: its companion .*run-agreement.parquet is missing"):
        Results.from_parquet(path)
    (tmp_path / "plain.parquet").write_bytes((tmp_path / "run-curves.parquet").read_bytes())
    with pytest.raises(DataError, match=r"plain.parquet: not an evalkit parquet report"):
        Results.from_parquet(tmp_path / "plain.parquet")


def test_an_out_that_would_replace_an_input_parquet_file_is_refused(tmp_path):
    values = {"id": ["a", "b"], "x": [1.0, 0.0]}
    pd.DataFrame(values).to_parquet(tmp_path / "run.parquet")
    pd.DataFrame(values).to_parquet(tmp_path / "system.parquet")
    config = {"data": {"reference": "run.parquet", "systems": {"s": "system.parquet"}},
              "report": {"formats": ["parquet"], "out": "run"}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"the parquet report would replace the input .*run.parquet"):
        plan(tmp_path / "c.yaml")
