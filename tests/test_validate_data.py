"""`evalkit validate --data` (issue 28, item 3): plain `validate` stays cheap and says what it
did not read; `--data` reads every file and checks its values as `run` does, with `run`'s own
messages and notes, on every engine, without scoring."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from in_process import evalkit_cli

import evalkit
from evalkit.reduction import prepare, reduce_partition
from evalkit.sources import load_source

REFERENCE = "id,speech,music\na,1,0\nb,0,1\nc,1,1\n"
GOOD = "id,speech,music\na,0.9,0.1\nb,0.2,0.8\nc,0.7,0.6\n"
#: data mistakes `validate` alone cannot see (no value is read), each as the system's file
MISTAKES = {
    "a missing id": "id,speech,music\na,0.9,0.1\nb,0.2,0.8\n",
    "a misnamed column": "id,speech,musik\na,0.9,0.1\nb,0.2,0.8\nc,0.7,0.6\n",
    "a membership above 1": "id,speech,music\na,0.9,0.1\nb,1.2,0.8\nc,0.7,0.6\n",
    "a repeated id": "id,speech,music\na,0.9,0.1\na,0.2,0.8\nc,0.7,0.6\n",
    "a value that is no number": "id,speech,music\na,0.9,0.1\nb,high,0.8\nc,0.7,0.6\n",
}


def config(tmp_path: Path, system: str, extra: str = "", weights: str | None = None) -> Path:
    (tmp_path / "ref.csv").write_text(REFERENCE)
    (tmp_path / "sys.csv").write_text(system)
    data_extra = ""
    if weights is not None:
        (tmp_path / "weights.csv").write_text(weights)
        data_extra = "  weights: weights.csv\n"
    path = tmp_path / "run.yaml"
    path.write_text("data:\n  reference: ref.csv\n  systems:\n    s: sys.csv\n" + data_extra + extra
                    + "representation: fuzzy\naveraging: micro\nmetrics: [f1]\n")
    return path


def test_validate_says_what_it_did_not_read(tmp_path):
    path = config(tmp_path, MISTAKES["a missing id"])
    done = evalkit_cli("validate", path)
    assert (done.returncode, done.stdout) == (
        0, f"{path}: ok (the config and its files; the data's values were not read: --data reads them)\n")


@pytest.mark.parametrize("engine", ["memory", "stream"])
@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_data_reads_what_run_reads_and_says_what_run_says(tmp_path, mistake, engine):
    path = config(tmp_path, MISTAKES[mistake], "  stream: true\n" if engine == "stream" else "")
    ran = evalkit_cli("run", "--quiet", path)
    checked = evalkit_cli("validate", "--data", "--quiet", path)
    assert ran.returncode == checked.returncode == 1
    assert checked.stderr == ran.stderr and checked.stderr.startswith("error: ")
    assert checked.stdout == ""


def test_weights_are_checked_too(tmp_path):
    path = config(tmp_path, GOOD, weights="id,weight\na,1\nb,-2\nc,1\n")
    ran, checked = evalkit_cli("run", "--quiet", path), evalkit_cli("validate", "--data", path)
    assert ran.returncode == checked.returncode == 1 and checked.stderr == ran.stderr


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_good_data_is_ok_with_its_sample_count_and_the_notes_run_gives(tmp_path, engine):
    path = config(tmp_path, GOOD, "  stream: true\n" if engine == "stream" else "", weights="id,weight\na,1\nb,2\nc,1\n")
    checked = evalkit_cli("validate", "--data", "--quiet", path)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout == (f"{path}: ok (the config, its files and their data: 3 samples and 1 system read and "
                              "checked; nothing scored)\n")
    results = evalkit.run(path)
    assert results.notes and checked.stderr == "".join(f"note: {note}\n" for note in results.notes)


def test_an_event_list_is_read_and_checked(tmp_path):
    (tmp_path / "ref.tsv").write_text("filename\tonset\toffset\tevent_label\na.wav\t0.0\t1.0\tdog\n")
    (tmp_path / "sys.tsv").write_text("filename\tonset\toffset\tevent_label\na.wav\t2.0\t1.0\tdog\n")
    path = tmp_path / "run.yaml"
    path.write_text("data:\n  reference: ref.tsv\n  systems:\n    s: sys.tsv\nrepresentation: segments\n"
                    "averaging: micro\nmetrics: [f1]\n")
    assert evalkit_cli("validate", path).returncode == 0
    checked = evalkit_cli("validate", "--data", path)
    assert checked.returncode == 1 and checked.stderr == evalkit_cli("run", "--quiet", path).stderr
    assert "offset 1.0 is before onset 2.0" in checked.stderr


def test_checking_prepares_a_partition_and_reduces_none_of_it(tmp_path):
    """What `--data` does at each partition, on every engine: the same preparation, no sums."""
    path = config(tmp_path, GOOD, "statistics:\n  bootstrap: {resamples: 1000}\n")
    plan = evalkit.api.plan(path)
    reference, system = (load_source(pd.read_csv(tmp_path / name, index_col="id"), where=name)
                         for name in ("ref.csv", "sys.csv"))
    partition, _ = prepare(plan.job, reference, {"s": [system]})
    scored = reduce_partition(plan.job, partition)
    checked = reduce_partition(replace(plan.job, checks_only=True), partition)
    assert scored.sums and scored.intervals
    assert (checked.sums, checked.intervals, checked.jackknife, checked.samples) == ({}, {}, {}, scored.samples)


@pytest.mark.slow
def test_data_on_a_dask_cluster_says_what_run_says(tmp_path):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0") as cluster:
        engine = f"dask={cluster.scheduler_address}"
        for name, system in (("good", GOOD), ("bad", MISTAKES["a membership above 1"])):
            folder = tmp_path / name
            folder.mkdir()
            path = config(folder, system)
            ran = evalkit_cli("run", "--quiet", "--engine", engine, path)
            checked = evalkit_cli("validate", "--data", "--quiet", "--engine", engine, path)
            assert checked.returncode == ran.returncode == (0 if name == "good" else 1), checked.stderr
            if name == "bad":
                assert checked.stderr == ran.stderr
            else:
                assert "3 samples and 1 system read and checked" in checked.stdout
                assert checked.stderr.splitlines()[-1].startswith("note: Dask: 3 samples")


@pytest.mark.parametrize("metric", [
    "{name: segment_based, threshold: {Speech: 0.5}}",
    "{name: intersection_based, dtc_threshold: 0.7, gtc_threshold: 0.7, threshold: {Nope: 0.5}}",
    "{name: collar_fscore, onset_collar: 0.2, offset_collar: 0.2, threshold: {Nope: 0.5}}",
])
def test_a_threshold_per_class_is_checked_against_the_classes_the_data_has(tmp_path, metric):
    """What a metric checks once it knows the classes (its `prepare`) is checked by --data too."""
    desed = Path(__file__).resolve().parent.parent / "configs" / "data" / "desed"
    path = tmp_path / "run.yaml"
    path.write_text(f"data:\n  reference: {desed / 'reference.tsv'}\n  systems: {{b: {desed / 'baseline'}}}\n"
                    f"metrics:\n  - {metric}\n")
    assert evalkit_cli("validate", path).returncode == 0  # the config alone cannot know the classes
    ran, checked = evalkit_cli("run", "--quiet", path), evalkit_cli("validate", "--data", "--quiet", path)
    assert ran.returncode == checked.returncode == 1
    assert checked.stderr == ran.stderr and "threshold" in checked.stderr
