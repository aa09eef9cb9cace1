"""The plan: ``validate`` and ``run`` check a config the same way, before any data is read.

Every config-level mistake the run path can raise is made here once, and ``evalkit validate``
must fail with exactly the message ``evalkit run`` fails with. A structural test keeps it so:
the modules that run after the plan raise no ConfigError at all.
"""

from __future__ import annotations

import ast
import json
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from allocation import allocation_peak
from click.testing import CliRunner

import evalkit
import evalkit.api
import evalkit.plugin
from evalkit import budget
from evalkit.cli import main
from evalkit.discovery import build_registry, make_plugin_manager
from evalkit.errors import ConfigError, DataError, EngineError, ReportError
from evalkit.testing import plugin_registry

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "configs" / "data" / "quickstart"
EVENTS = ROOT / "configs" / "data" / "events"


def base_config() -> dict:
    return {
        "name": "plan",
        "data": {
            "reference": str(QUICKSTART / "reference.csv"),
            "systems": {"dwsnet": str(QUICKSTART / "dwsnet.csv"), "tiny": str(QUICKSTART / "tiny.csv")},
        },
        "tnorm": ["minimum", {"name": "hamacher", "p": 0.5}],
        "averaging": ["micro"],
        "metrics": ["f1"],
    }


def with_(changes: dict) -> dict:
    config = base_config()
    for dotted, value in changes.items():
        *parents, key = dotted.split(".")
        node = config
        for part in parents:
            node = node.setdefault(part, {})
        node[key] = value
    return config


def items_config(**changes: object) -> dict:
    config = {
        "data": {"reference": str(EVENTS / "reference.tsv"), "systems": {"a": str(EVENTS / "good.tsv")}},
        "representation": "soft_cardinality", "similarity": "segment_overlap",
        "averaging": "micro", "metrics": ["f1"],
    }
    config.update(changes)
    return config


#: name -> (config, a part of the message both commands must give)
MISTAKES = {
    "misspelt baseline": (with_({"statistics": {"test": {"baseline": "dwsnt", "resamples": 10}}}), "did you mean 'dwsnet'"),
    "sweep over a missing parameter": (with_({"sweep": {"vary": "tnorm.q", "values": [1]}}), "parameter 'q'"),
    "sweep value a component rejects": (with_({"sweep": {"vary": "tnorm.p", "values": [0.5, -3]}}), "p=-3"),
    "sweep with no values": (with_({"sweep": {"vary": "tnorm.p", "values": []}}), "no values"),
    "offset sweep on item lists": (items_config(sweep={"vary": "offset", "values": [0.1]}), "offset adds to membership values"),
    "representation without its similarity": (items_config(similarity=None), "needs a similarity"),
    "representation without its T-norm": (with_({"tnorm": []}), "needs a T-norm"),
    "no representation": (with_({"representation": []}), "lists no component"),
    "representations of different data": (
        with_({"representation": ["fuzzy", "soft_cardinality"], "similarity": "levenshtein"}), "different kinds of data"
    ),
    "data metric on item lists": (items_config(metrics=["f1", "kld"]), "kld reads matrix"),
    "missing file under runs": (
        with_({"data.systems": {"x": {"runs": [str(QUICKSTART / "tiny.csv"), "nowhere.csv"]}}}), "no such data file 'nowhere.csv'"
    ),
    "missing reference": (with_({"data.reference": "missing.csv"}), "no such data file 'missing.csv'"),
    "no loader for the suffix": (with_({"data.reference": str(ROOT / "README.md")}), "no loader reads '.md' files"),
    "baseline with several runs": (
        with_({"data.systems": {"x": {"runs": [str(QUICKSTART / "tiny.csv")] * 2}, "y": str(QUICKSTART / "tiny.csv")},
               "statistics": {"test": {"baseline": "x", "resamples": 10}}}),
        "several runs",
    ),
    "unknown report format": (
        with_({"report": {"formats": ["markdown", "pdf"], "out": "results/x"}}), "unknown report_writer 'pdf'"
    ),
    "unknown component": (with_({"tnorm": "hamacker"}), "Did you mean 'hamacher'"),
    "parameter a component rejects": (with_({"tnorm": {"name": "hamacher", "q": 1}}), "unknown parameter 'q'"),
    "component listed twice": (with_({"averaging": ["micro", "micro"]}), "listed twice"),
    "inline data a number": (with_({"data.reference": 3}), "inline data is a list of rows; got the number 3"),
    "inline values a text": (
        with_({"data.reference": {"values": "ab"}}), "inline `values` is a list of rows; got 'ab'",
    ),
    "inline ids a number": (with_({"data.reference": {"values": [[1, 0]], "ids": 1}}), "inline `ids` is a list of names"),
    "inline ids infinite": (with_({"data.reference": {"values": [[1, 0]], "ids": float("inf")}}), "got inf"),
    "inline classes a number": (
        with_({"data.systems": {"s": {"values": [[1, 0]], "classes": 3}}}), "inline `classes` is a list of names",
    ),
    "inline item ids a number": (
        items_config(data={"reference": {"items": [["a"]], "ids": 1}, "systems": {"s": [["a"]]}}),
        "inline `ids` is a list of names",
    ),
    "no classes": (items_config(representation="threshold_match", similarity="levenshtein",
                                data={"reference": [["a"]], "systems": {"s": [["a"]]}, "classes": []}),
                   "`classes: []` selects no class"),
    "statistics beyond memory": (
        with_({"statistics": {"bootstrap": {"resamples": 10**9}}}), "lower `statistics.bootstrap.resamples`",
    ),
}


AVAILABLE = re.compile(r"[0-9.]+ [KMGT]iB is available")


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_validate_rejects_what_run_rejects_with_the_same_message(name, tmp_path):
    config, expected = MISTAKES[name]
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    checked, ran = invoke("validate", str(path)), invoke("run", str(path), "-q")
    assert checked.exit_code == 1 and ran.exit_code == 1, (checked.output, ran.output)
    assert expected in checked.output, checked.output
    # the machine's available memory moves between the two calls; everything else is identical
    assert AVAILABLE.sub("", checked.output) == AVAILABLE.sub("", ran.output)
    assert not list(tmp_path.glob("results*")), "nothing is written for a config that cannot run"


def test_the_memory_message_gives_both_figures(tmp_path):
    with pytest.raises(ConfigError) as caught:
        evalkit.api.plan(with_({"statistics": {"bootstrap": {"resamples": 10**9}}}))
    message = str(caught.value)
    assert "would need about" in message and "TiB" in message and "is available" in message
    assert "1,000,000,000 resamples x 30" in message  # samples counted from the lines (an upper bound)


@pytest.mark.parametrize("out", [".", "", "reports/", "existing"])
def test_a_report_folder_gets_the_reports_named_after_the_run(tmp_path, out):
    (tmp_path / "existing").mkdir()
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(with_({"report": {"formats": ["markdown"], "out": out}})))
    assert invoke("run", str(path), "-q").exit_code == 0
    assert (tmp_path / out / "plan.md").is_file()


def test_an_unwritable_report_folder_fails_in_validate(tmp_path):
    (tmp_path / "taken").write_text("a file where a folder should be")
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(with_({"report": {"formats": ["markdown"], "out": "taken/sub/report"}})))
    done = invoke("validate", str(path))
    assert done.exit_code == 1
    assert "cannot write report files in" in done.output and "taken" in done.output


#: The modules that run after the plan: a config-level error there would be one `validate` misses.
AFTER_THE_PLAN = ("execute.py", "engine.py", "uncertainty.py", "reporting.py", "provenance.py", "data.py", "table.py")


@pytest.mark.parametrize("module", AFTER_THE_PLAN)
def test_nothing_after_the_plan_raises_a_config_error(module):
    tree = ast.parse((ROOT / "src" / "evalkit" / module).read_text(encoding="utf-8"))
    raised = [
        node.lineno for node in ast.walk(tree)
        if isinstance(node, ast.Raise) and node.exc is not None and "ConfigError" in ast.unparse(node.exc)
    ]
    assert not raised, f"evalkit/{module} raises ConfigError at lines {raised}: check it in evalkit/plan.py"


# --------------------------------------------------------------------------- results are never lost


class Exploding(evalkit.BaseComponent):
    """A report writer that fails half-way."""

    name = "exploding"
    suffix = ".txt"

    def render(self, results):
        raise RuntimeError("the disk caught fire")


class ExplodingPlugin:
    @evalkit.hookimpl
    def evalkit_register_report_writers(self, register):
        register(Exploding)


@pytest.fixture
def exploding(monkeypatch):
    registry = build_registry(*make_plugin_manager(extra={"evalkit-exploding:x": ExplodingPlugin()}))
    monkeypatch.setattr(evalkit.api, "default_registry", lambda: registry)
    monkeypatch.setattr("evalkit.discovery.default_registry", lambda: registry)
    return registry


def test_a_failing_writer_keeps_the_table_and_the_other_reports(tmp_path, exploding):
    out = tmp_path / "results" / "run"
    out.parent.mkdir()
    (tmp_path / "results" / "run.txt").write_text("the previous good report")
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(with_({"report": {"formats": ["exploding", "markdown"], "out": str(out)}})))
    done = invoke("run", str(path), "-q")
    assert done.exit_code == 1
    assert "Set metrics" in done.stdout and "0.8" in done.stdout  # the table was printed
    assert "report writer 'exploding'" in done.output and "run.txt" in done.output and "the disk caught fire" in done.output
    assert (tmp_path / "results" / "run.md").exists(), "the other writers still write"
    assert (tmp_path / "results" / "run.txt").read_text() == "the previous good report"
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["run.md", "run.txt"], "no partial file is left"


def test_the_python_api_keeps_the_results_of_a_failing_writer(tmp_path, exploding):
    config = with_({"report": {"formats": ["exploding"], "out": str(tmp_path / "run")}})
    with pytest.raises(ReportError) as caught:
        evalkit.run(config, registry=exploding, write_reports=True)
    assert caught.value.results.rows and "exploding" in str(caught.value)


def test_a_report_replaces_the_old_one_whole(tmp_path):
    out = tmp_path / "run"
    config = with_({"report": {"formats": ["markdown", "csv"], "out": str(out)}})
    evalkit.run(config, write_reports=True)
    first = (tmp_path / "run.md").read_text()
    (tmp_path / "run.md").write_text("old")
    evalkit.run(config, write_reports=True)
    assert (tmp_path / "run.md").read_text().split("\n")[0] == first.split("\n")[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv", "run.md"]


def test_validate_checks_the_bundled_configs_without_reading_data(tmp_path):
    """A copy of the quickstart whose data files are empty still validates: nothing is read."""
    shutil.copytree(QUICKSTART, tmp_path / "data" / "quickstart")
    for file in (tmp_path / "data" / "quickstart").glob("*.csv"):
        file.write_text("")
    config = yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text())
    config["report"]["out"] = str(tmp_path / "results" / "quickstart")
    path = tmp_path / "quickstart.yaml"
    path.write_text(yaml.safe_dump(config))
    assert invoke("validate", str(path)).exit_code == 0
    assert invoke("run", str(path), "-q").exit_code == 1


def test_reports_get_the_usual_file_mode(tmp_path):
    """Written through a temporary file, a report still gets 0666 less the umask, not 0600."""
    import os
    import stat

    from evalkit.reporting import atomic_write

    mask = os.umask(0o022)
    try:
        path = atomic_write(tmp_path / "report.md", "text")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


# --- memory limits (issue 23) ----------------------------------------------------------------------

GiB = 2**30


def cgroup_tree(root: Path, groups: dict[str, tuple[str, int, int]], version: int = 2) -> Path:
    """A cgroup tree in the kernel's layout: for each group path, (limit, usage, inactive file
    cache), and the /proc/self/cgroup file that places this process in the deepest group."""
    names = ("memory.max", "memory.current", "inactive_file") if version == 2 else (
        "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")
    top = root if version == 2 else root / "memory"
    for group, (limit, usage, cache) in groups.items():
        folder = top / group
        folder.mkdir(parents=True, exist_ok=True)
        (folder / names[0]).write_text(f"{limit}\n", encoding="ascii")
        (folder / names[1]).write_text(f"{usage}\n", encoding="ascii")
        (folder / "memory.stat").write_text(f"anon 1\n{names[2]} {cache}\nfile 9\n", encoding="ascii")
    deepest = max(groups, key=len)
    membership = root / "cgroup"
    line = f"0::/{deepest}" if version == 2 else f"4:memory:/{deepest}\n0::/"
    membership.write_text(f"{line}\n", encoding="ascii")
    return membership


def test_the_cgroup_room_is_the_least_left_under_the_group_and_its_parents(tmp_path):
    """Left = limit - (usage - inactive file cache), the kernel reclaiming that cache first; a
    group above with less left limits the run, and `max` is no limit."""
    membership = cgroup_tree(tmp_path, {"a": (str(8 * GiB), 3 * GiB, GiB), "a/b": ("max", 2 * GiB, 0)})
    assert budget.cgroup_room(tmp_path, membership) == 8 * GiB - (3 * GiB - GiB)
    membership = cgroup_tree(tmp_path, {"a": (str(8 * GiB), 3 * GiB, GiB), "a/b": (str(4 * GiB), 3 * GiB, GiB // 2)})
    assert budget.cgroup_room(tmp_path, membership) == 4 * GiB - (3 * GiB - GiB // 2)
    assert budget.memory_limits(tmp_path, membership)["the cgroup's memory limit"] == 4 * GiB - (3 * GiB - GiB // 2)
    membership = cgroup_tree(tmp_path, {"a": ("max", 3 * GiB, 0), "a/b": ("max", 2 * GiB, 0)})
    assert budget.cgroup_room(tmp_path, membership) is None
    assert "the cgroup's memory limit" not in budget.memory_limits(tmp_path, membership)


def test_a_container_sees_its_own_limit_at_the_root_and_over_usage_leaves_nothing(tmp_path):
    """In a container, /proc/self/cgroup says `0::/` and the mount's root is the container's group."""
    membership = cgroup_tree(tmp_path, {"": (str(2 * GiB), GiB, 0)})
    assert membership.read_text(encoding="ascii") == "0::/\n"
    assert budget.cgroup_room(tmp_path, membership) == GiB
    membership = cgroup_tree(tmp_path, {"": (str(2 * GiB), 3 * GiB, 0)})
    assert budget.cgroup_room(tmp_path, membership) == 0


def test_cgroup_v1_is_read_too_and_its_huge_limit_is_none(tmp_path):
    membership = cgroup_tree(tmp_path, {"job": (str(6 * GiB), 2 * GiB, GiB)}, version=1)
    assert budget.cgroup_room(tmp_path, membership) == 6 * GiB - (2 * GiB - GiB)
    membership = cgroup_tree(tmp_path, {"job": ("9223372036854771712", 2 * GiB, 0)}, version=1)  # v1's "no limit"
    assert budget.cgroup_room(tmp_path, membership) is None
    assert budget.cgroup_room(tmp_path, tmp_path / "no such file") is None


def under_address_limit(limit: int, *args: str | Path) -> subprocess.CompletedProcess:
    """`python ARGS` (`-m evalkit run ...`, `-c CODE`) in a real process whose address space is
    limited (`ulimit -v`)."""
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          preexec_fn=limited, timeout=300)


@pytest.mark.slow
def test_the_budget_takes_the_process_limit(tmp_path):
    """A child under RLIMIT_AS sees at most the limit less its address space in use."""
    code = "from evalkit import budget; print(budget.memory_limits()['the process limit RLIMIT_AS, ulimit -v'])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (3 * GiB, 3 * GiB)))
    assert 0 < int(done.stdout) < 3 * GiB


def big_parquet(path: Path) -> Path:
    """25 row groups of 1,000,000 x 10 zeros: a few hundred KB that inflate to 1.86 GiB."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({f"c{i}": np.zeros(1_000_000) for i in range(10)})
    with pq.ParquetWriter(path, table.schema, compression="zstd") as writer:
        for _ in range(25):
            writer.write_table(table)
    return path


def big_ontology(path: Path) -> Path:
    """A binary tree of 20,000 nodes (AudioSet's JSON): its distances take 3 GiB."""
    n = 20_000
    nodes = [{"id": f"n{i}", "name": f"node {i}", "child_ids": [f"n{j}" for j in (2 * i + 1, 2 * i + 2) if j < n]}
             for i in range(n)]
    path.write_text(json.dumps(nodes), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize(("case", "expected"), [
    ("permutations", "paired permutation tests (10,000,000 resamples x"),
    ("parquet", "its columns, decompressed, and their float64 matrix, would take"),
    ("ontology", "the distances between its 20,000 nodes (20,000 x 20,000 float64) would take"),
])
def test_under_a_process_limit_a_run_that_cannot_fit_is_one_clear_line(tmp_path, case, expected):
    """Under `ulimit -v` these failed as "not a readable Parquet file (malloc failed)",
    "internal error: MemoryError" and a plugin bug after 80 s: the budget read MemAvailable only."""
    config = base_config()
    if case == "permutations":
        config["statistics"] = {"test": {"resamples": 10_000_000}}
    elif case == "parquet":
        config["data"] = {"reference": str(big_parquet(tmp_path / "big.parquet")),
                          "systems": {"s": str(tmp_path / "big.parquet")}}
    else:
        config = {"data": {"reference": [["n1", "n2"], ["n3"]], "systems": {"t": [["n1", "n4"], ["n5"]]}},
                  "representation": "soft_cardinality", "averaging": "micro", "metrics": ["f1"],
                  "similarity": {"name": "ontology", "ontology": str(big_ontology(tmp_path / "tree.json"))}}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    done = under_address_limit(3 * GiB, "-m", "evalkit", "run", path, "-q")
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert expected in lines[0] and "(under the process limit RLIMIT_AS, ulimit -v)" in lines[0], lines[0]


#: `evalkit.run(config)` from Python, printing the type and message of what it raises.
RUN_FROM_PYTHON = """
import json, sys
import evalkit
try:
    evalkit.run(json.loads(sys.argv[1]))
except Exception as exc:
    print(f"{type(exc).__name__}: {exc}")
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["in memory", "streamed", "dask"])
def test_replicate_sums_past_the_memory_are_refused_by_the_plan(tmp_path, how):
    """3 samples x 1,000 classes with 100,000 Poisson resamples: the replicates of each class's
    sums take 100,000 x 1,000 float64 per column (763 MiB each), past a 2 GiB address space.
    Once a bare MemoryError (streamed, on Dask) and then an EngineError after the work had
    begun, the plan now counts the replicate sums of every engine and refuses the run before
    any work, at the key to lower, in memory, streamed and on Dask alike."""
    classes = [f"c{i}" for i in range(1000)]
    values = np.random.default_rng(0).random((3, len(classes))).round(2)
    reference = tmp_path / "ref.csv"
    reference.write_text("id," + ",".join(classes) + "\n" + "".join(
        f"s{i}," + ",".join(map(str, row)) + "\n" for i, row in enumerate(values)), encoding="utf-8")
    config = {"data": {"reference": str(reference), "systems": {"s": str(reference)}, "stream": how == "streamed"},
              "tnorm": "minimum", "averaging": "micro", "metrics": ["f1"],
              "statistics": {"bootstrap": {"resamples": 100_000, "method": "poisson"}}}
    if how == "dask":
        config["engine"] = {"name": "dask", "workers": 1}
    done = under_address_limit(2 * GiB, "-c", RUN_FROM_PYTHON, json.dumps(config))
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(
        r"ConfigError: statistics\.bootstrap\.resamples: this run would need about [0-9.]+ GiB of memory \(bootstrap "
        r"\(100,000 resamples x 4 samples at a time\): [0-9.]+ GiB\), but [0-9.]+ [KMGT]iB is available \(under the "
        r"process limit RLIMIT_AS, ulimit -v\); lower `statistics\.bootstrap\.resamples`\n", done.stdout,
    ), done.stdout + done.stderr


class _Huge(evalkit.plugin.BaseComponent):
    """A similarity whose matrix asks numpy for 7.28 TiB: a real MemoryError, on any machine."""

    name = "huge"

    def matrix(self, xs, ys):
        return np.ones((1_000_000, 1_000_000))


class _HugePlugin:
    @staticmethod
    @evalkit.plugin.hookimpl
    def evalkit_register_similarities(register):
        register(_Huge)


def test_a_memory_error_is_one_error_naming_what_was_built(tmp_path):
    """Anywhere a run runs out of memory, the error names the component, the call and the memory
    there is (here inside a plugin, so the plugin's call is named, not "a bug in the plugin")."""
    registry = plugin_registry({"evalkit-huge:huge": _HugePlugin})
    config = items_config(similarity="huge", data={"reference": [["a"]], "systems": {"s": [["b"]]}})
    with pytest.raises(EngineError, match=r"^ran out of memory in matrix\(\) of similarity 'huge' .*; [0-9.]+ [KMGT]iB is "
                                          r"available.*: lower the data it is given, or its parameters, or raise the limit$"):
        evalkit.run(config, registry=registry)


def test_the_permutation_tests_estimate_bounds_what_they_allocate():
    """The estimate counts the permutation masks: the traced peak a paired permutation test
    adds to a run lies between the stacked float64 masks alone (resamples x 2 systems' samples)
    and the estimate (an upper bound: the samples are counted from the file's lines)."""
    resamples, samples = 4000, 300  # quickstart's reference: 300 rows (and its header)
    config = base_config()
    plain, tested = config, {**config, "statistics": {"test": {"resamples": resamples}}}
    estimate = sum(need.bytes for need in evalkit.api.plan(tested).needs)
    evalkit.run(tested)  # imports and caches first
    with allocation_peak() as without:
        evalkit.run(plain)
    with allocation_peak() as with_test:
        evalkit.run(tested)
    added = with_test.bytes - without.bytes
    assert resamples * 2 * samples * 8 < added < estimate, (added, estimate)


def test_inline_names_from_python_may_be_an_array_or_an_index_but_not_one_value():
    """From Python, `ids` and `classes` may be any list of names (an array, a pandas Index): the
    numbers are those of plain lists. One value, even as a 0-d array, is refused in the plan."""
    import pandas as pd

    def config(ids, classes):
        side = {"values": [[1, 0], [0, 1], [1, 1]], "ids": ids, "classes": classes}
        system = {"values": [[1, 0], [1, 1], [0, 1]], "ids": ["a", "b", "c"], "classes": ["x", "y"]}
        return {"data": {"reference": side, "systems": {"s": system}}, "averaging": "micro", "metrics": ["f1"]}

    plain = evalkit.run(config(["a", "b", "c"], ["x", "y"])).rows[0].value
    assert evalkit.run(config(pd.Index(["a", "b", "c"]), np.array(["x", "y"]))).rows[0].value == plain
    with pytest.raises(DataError, match=r"inline `ids` is a list of names, one per sample \(`ids: \[a, b\]`\); got "
                                        r"array\(5\)"):
        evalkit.api.plan(config(np.array(5), ["x", "y"]))
