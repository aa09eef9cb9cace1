"""Whole runs from YAML: loaders, alignment, comparison axes, reports, the CLI."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
from in_process import evalkit_cli

import evalkit
from evalkit.results import COLUMNS


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_quickstart_runs_and_compares_three_tnorms_by_two_averagings(root: Path, tmp_path: Path):
    config = (root / "configs" / "quickstart.yaml").read_text()
    config = config.replace("data/quickstart", str(root / "configs" / "data" / "quickstart"))
    config = config.replace("../results/quickstart", str(tmp_path / "qs"))
    results = evalkit.run(write(tmp_path / "quickstart.yaml", config), write_reports=True)
    fuzzy = [r for r in results.rows if r.representation == "fuzzy"]
    assert {r.system for r in fuzzy} == {"dwsnet", "baseline", "tiny"}
    assert {r.tnorm for r in fuzzy} == {"minimum", "product", "lukasiewicz"}
    assert {r.averaging for r in fuzzy} == {"micro", "macro"}
    # Crisp uses no T-norm: one set of rows per system, not one per T-norm.
    crisp = [r for r in results.rows if r.representation == "crisp"]
    assert len(crisp) == 3 * 2 * 3 and {r.tnorm for r in crisp} == {None}
    # The systems were made in decreasing quality; soft F1 and KLD must agree on that order.
    f1 = {r.system: r.value for r in fuzzy if (r.tnorm, r.averaging, r.metric) == ("minimum", "micro", "f1")}
    kld = {r.system: r.value for r in results.rows if r.metric == "kld"}
    assert f1["dwsnet"] > f1["baseline"] > f1["tiny"]
    assert kld["dwsnet"] < kld["baseline"] < kld["tiny"]
    for suffix in (".md", ".json", ".csv"):
        assert (tmp_path / f"qs{suffix}").stat().st_size > 0


def test_rows_equal_evaluate(tmp_path: Path):
    rng = np.random.default_rng(11)
    ref, pred = rng.random((30, 4)), rng.random((30, 4))
    np.savez(tmp_path / "ref.npz", values=ref, classes=np.array(list("abcd")))
    np.savez(tmp_path / "sys.npz", values=pred, classes=np.array(list("abcd")))
    config = write(tmp_path / "run.yaml", """
data: {reference: ref.npz, systems: {s: sys.npz}}
tnorm: [minimum, {name: hamacher, p: 0.5}]
averaging: [micro, none]
metrics: [f1]
""")
    rows = evalkit.run(config).rows
    labels = {r.tnorm for r in rows}
    assert labels == {"minimum", "hamacher(p=0.5)"}
    expected = evalkit.evaluate(ref, pred, tnorm={"name": "hamacher", "p": 0.5}, averaging="none", metrics=["f1"])
    per_class = [r.value for r in rows if r.tnorm == "hamacher(p=0.5)" and r.averaging == "none"]
    assert [r.class_ for r in rows if r.tnorm == "minimum" and r.averaging == "none"] == list("abcd")
    np.testing.assert_allclose(per_class, expected["f1"])


def test_ids_align_rows_and_columns_and_classes_select(tmp_path: Path):
    write(tmp_path / "ref.csv", "segment,a,b,c\ns1,1,0,0.5\ns2,0,1,0.5\n")
    # Rows and columns in another order: alignment must undo both.
    write(tmp_path / "sys.tsv", "segment\tc\tb\ta\ns2\t0.5\t1\t0\ns1\t0.5\t0\t1\n")
    config = write(
        tmp_path / "run.yaml", "data: {reference: ref.csv, systems: {s: sys.tsv}, classes: [a, b]}\naveraging: micro\n"
    )
    # 0, 1 and 0.5 add up exactly
    assert {r.metric: r.value for r in evalkit.run(config).rows} == {"precision": 1.0, "recall": 1.0, "f1": 1.0}


def test_inline_data_and_unnamed_columns(tmp_path: Path):
    config = write(tmp_path / "run.yaml", """
data:
  reference: [[1, 0], [0, 1]]
  systems:
    half: {values: [[0.5, 0], [0, 0.5]], classes: [x, y]}
  classes: [x, y]
averaging: none
metrics: [recall]
""")
    rows = evalkit.run(config).rows
    assert [(r.class_, r.value) for r in rows] == [("x", 0.5), ("y", 0.5)]


def test_npy_columns_named_by_classes(tmp_path: Path):
    np.save(tmp_path / "r.npy", np.eye(3, dtype=np.float32))
    config = write(
        tmp_path / "run.yaml",
        "data: {reference: r.npy, systems: {s: r.npy}, classes: [a, b, c]}\naveraging: none\nmetrics: [f1]\n",
    )
    assert [r.class_ for r in evalkit.run(config).rows] == ["a", "b", "c"]


def test_cli_json_and_csv_on_stdout(root: Path):
    config = root / "configs" / "quickstart.yaml"
    done = evalkit_cli("run", config, "--format", "json", "--no-report", check=True)
    document = json.loads(done.stdout)
    assert list(document["rows"][0]) == list(COLUMNS) == [
        "system", "representation", "similarity", "tnorm", "averaging", "metric", "class", "level",
        "sweep", "sweep_value", "value", "ci_low", "ci_high",
    ]
    assert document["name"] == "quickstart" and document["evalkit_version"] == evalkit.__version__
    done = evalkit_cli("run", config, "--format", "csv", "--no-report", check=True)
    rows = list(csv.DictReader(done.stdout.splitlines()))
    assert len(rows) == len(document["rows"])


def test_cli_table_shows_tnorms_by_averaging(root: Path):
    done = evalkit_cli("run", root / "configs" / "quickstart.yaml", "--quiet", "--no-report", check=True)
    header = next(line for line in done.stdout.splitlines() if "tnorm" in line)
    assert header.split("┃")[-3:-1] == ["  micro ", "  macro "]  # averagings side by side
    assert "lukasiewicz" in done.stdout and "│ f1 " in done.stdout
    assert max(map(len, done.stdout.splitlines())) <= 80
    assert "\x1b[" not in done.stdout  # plain text when not a terminal


# The processes themselves (the rest of the CLI's tests run it in this process, tests/in_process.py)


def test_the_console_script_validates(root: Path):
    script = Path(sysconfig.get_path("scripts")) / "evalkit"
    done = subprocess.run([script, "validate", root / "configs" / "quickstart.yaml"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith(f"{root / 'configs' / 'quickstart.yaml'}: ok (")


def test_a_closed_pipe_ends_the_run_quietly(root: Path):
    """`evalkit run ... | head -1`: the reader went away; no traceback, status 1 (click's)."""
    command = [sys.executable, "-m", "evalkit", "run", root / "configs" / "quickstart.yaml", "--format", "csv", "--no-report"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    process.stdout.close()  # before it prints its first row
    stderr = process.stderr.read()
    assert (process.wait(timeout=300), stderr) == (1, "")


def test_progress_reports_every_row_of_every_combination(tmp_path: Path):
    rng = np.random.default_rng(2)
    ref = rng.random((40_000, 3))
    events = []

    class Recorder:
        def start(self, label, total):
            events.append(("start", label, total))

        def advance(self, rows):
            events.append(("advance", rows))

    config = {
        "data": {"reference": ref, "systems": {"a": ref * 0.5, "b": ref}},
        "representation": ["fuzzy", "crisp"], "tnorm": ["minimum", "product"],
        "metrics": ["f1", "kld", {"name": "kld", "eps": 1e-3}],
    }
    evalkit.run(config, progress=Recorder())
    starts = [e for e in events if e[0] == "start"]
    # Per system: fuzzy x 2 T-norms + crisp = 3 table passes, plus one pass for both data metrics.
    assert starts == [("start", "evaluating", 2 * 4 * 40_000)]
    assert sum(e[1] for e in events if e[0] == "advance") == 2 * 4 * 40_000


def test_every_bundled_config_validates(root: Path):
    for config in sorted((root / "configs").glob("*.yaml")):
        done = evalkit_cli("validate", config)
        assert done.returncode == 0, (config.name, done.stderr)


def test_ontology_label_sets_count_near_misses(root: Path):
    rows = evalkit.run(root / "configs" / "ontology_labels.yaml", write_reports=False).rows
    f1 = {r.representation.split("(")[0]: r.value for r in rows if (r.averaging, r.metric) == ("micro", "f1")}
    # One exact tag in four per clip; Crisp* also takes one-hop neighbours (Laughter for Giggle).
    assert f1["exact_match"] == 0.25 and f1["threshold_match"] == 0.75  # counts: one division
    assert f1["exact_match"] < f1["soft_cardinality"] < 1
