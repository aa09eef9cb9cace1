"""What a Dask worker receives of a plan: its :class:`~evalkit.plan.Work` (issue 24 item 3).

The work pickles without the registry, the loaded config or any callable; its components (the
axes' at every sweep value, and the sources' loaders) travel as their specs and are made again
in the process that unpickles it, from that process's registry, giving the same components and
the same numbers. A component that process's plugins do not provide is one error naming the
component and the process (on Dask: the worker)."""

from __future__ import annotations

import io
import math
import os
import pickle
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml
from distributed import LocalCluster
from engine_cases import reference_rows
from pydantic import BaseModel

import evalkit
from evalkit.api import plan
from evalkit.axes import Component, rebuilt
from evalkit.config import LoadedConfig
from evalkit.contracts import Guarded, unwrap
from evalkit.discovery import build_registry, make_plugin_manager
from evalkit.errors import EngineError
from evalkit.plan import Plan, Work
from evalkit.plugin import BaseComponent, hookimpl
from evalkit.reduction import prepare, reduce_partition, scored
from evalkit.registry import Registry
from evalkit.results import Row
from evalkit.streaming import chunks_of, joined

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def bundled(name: str) -> dict:
    config = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text(encoding="utf-8"))
    config.pop("report", None)
    return config


def swept() -> dict:
    """Quickstart with a sweep of a component parameter: each value's T-norm is made from the
    spec with that value, under the label written without it."""
    return {**bundled("quickstart"), "tnorm": ["minimum", {"name": "hamacher", "p": 0.5}],
            "sweep": {"vary": "tnorm.p", "values": [0.0, 1.0, 2.5]}}


#: quickstart (files, a loader), figure1 (an offset sweep, inline data), a parameter sweep, and
#: an ontology similarity whose file is named relative to the config's folder.
RUNS = {"quickstart": lambda: bundled("quickstart"), "figure1": lambda: bundled("figure1"), "swept": swept,
        "ontology_labels": lambda: bundled("ontology_labels")}


def planned(name: str, monkeypatch: pytest.MonkeyPatch) -> Plan:
    monkeypatch.chdir(CONFIGS)  # the configs' data paths are relative to it
    return plan(RUNS[name](), writes=False)


def components(work: Work) -> list[Component]:
    """Every component of a work: each sweep value's axes, then the sources' loaders."""
    axes = [step.axes for step in work.job.steps]
    found = [c for a in axes for c in (*a.representations, *a.tnorms, *a.similarities, *a.averagings, *a.metrics)]
    return found + [s.reader for s in [*work.sources(), work.weights] if s is not None and s.reader is not None]


def made(component: Component) -> tuple:
    """How a component was made, and what was made: its recipe, the plugin's class and parameters."""
    target = unwrap(component.obj)
    return (component.kind, component.label, component.spec, component.base, type(target).__qualname__,
            target.params.model_dump() if isinstance(target.params, BaseModel) else None)


def reduced(work: Work) -> list[Row]:
    """The rows of a work's data read through its loaders, whole, and reduced as one partition."""
    def read(source):
        return joined(list(chunks_of(work, source)))

    systems = {name: [read(source) for source in runs] for name, runs in work.systems.items()}
    partition, notes = prepare(work.job, read(work.reference), systems, None if work.weights is None else read(work.weights))
    return scored(work.job, notes + reduce_partition(work.job, partition), work.reference.where).rows


class Refusing(pickle.Pickler):
    """A pickler that fails on what must not travel, and counts the components it sends as recipes."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.recipes = 0

    def persistent_id(self, obj: object) -> None:
        if isinstance(obj, (Registry, LoadedConfig, Plan, Guarded, BaseModel)):
            raise AssertionError(f"a {type(obj).__name__} would travel: {obj!r:.200}")
        if obj is rebuilt:
            self.recipes += 1
        elif isinstance(obj, (types.FunctionType, types.MethodType)):
            raise AssertionError(f"a callable would travel: {obj!r}")
        return None


@pytest.mark.parametrize("name", RUNS)
def test_the_work_travels_without_registry_config_or_callable(monkeypatch, name):
    work = planned(name, monkeypatch).work
    pickler = Refusing(io.BytesIO())
    pickler.dump(work)
    # Each distinct component is sent once as a recipe (pickle sends a repeated object by reference).
    assert pickler.recipes == len({id(c) for c in components(work)})
    assert pickler.recipes > 0


@pytest.mark.parametrize("name", RUNS)
def test_unpickled_components_are_made_again_as_the_plan_made_them(monkeypatch, name):
    work = planned(name, monkeypatch).work
    again = pickle.loads(pickle.dumps(work))
    assert [made(c) for c in components(again)] == [made(c) for c in components(work)]
    assert components(again) == components(work)
    assert all(a.obj is not b.obj for a, b in zip(components(again), components(work)))


def test_a_swept_component_travels_with_its_sweep_value(monkeypatch):
    """Each sweep value's hamacher is made from the spec with that value; its label is as written."""
    work = pickle.loads(pickle.dumps(planned("swept", monkeypatch).work))
    hamachers = [step.axes.tnorms[1] for step in work.job.steps]
    assert [unwrap(h.obj).params.p for h in hamachers] == [step.value for step in work.job.steps] == [0.0, 1.0, 2.5]
    assert {h.label for h in hamachers} == {"hamacher"}


def test_a_component_that_cannot_be_made_where_it_lands_is_one_error_naming_it(monkeypatch, tmp_path):
    """The ontology file is gone where the work is unpickled (a worker without the shared folder)."""
    ontology = tmp_path / "data" / "audioset" / "ontology.json"
    ontology.parent.mkdir(parents=True)
    ontology.write_bytes((CONFIGS / "data" / "audioset" / "ontology.json").read_bytes())
    monkeypatch.chdir(tmp_path)
    shipped = pickle.dumps(plan(bundled("ontology_labels"), writes=False).work)
    ontology.unlink()
    with pytest.raises(EngineError, match=(
        r"^similarity 'ontology\(ontology=data/audioset/ontology.json, function=exponential, scale=1.0\)' \(from evalkit, "
        rf"plugin evalkit:ontology\) cannot be made again on process {os.getpid()} \(host .+\) "
        rf"\(.*{re.escape(str(ontology))}.*\); "
        "install the same version of its distribution there, with the files it reads, as where the run was planned$"
    )):
        pickle.loads(shipped)


#: Run in a fresh interpreter: the work pickled on stdin, unpickled there (every component made
#: again by that process's registry), reduced; its rows and components' making back on stdout.
FRESH = """
import pickle, sys
sys.path.insert(0, sys.argv[1])
from test_shipped_work import components, made, reduced
work = pickle.load(sys.stdin.buffer)
pickle.dump(([made(c) for c in components(work)], reduced(work)), sys.stdout.buffer)
"""


def fresh(work: Work, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", FRESH, str(Path(__file__).parent)], input=pickle.dumps(work),
                          capture_output=True, cwd=cwd, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("name", RUNS)
def test_a_fresh_process_makes_the_same_components_and_numbers(monkeypatch, tmp_path, name):
    work = planned(name, monkeypatch).work
    done = fresh(work, tmp_path)  # another working folder: relative paths resolve against the recipe's base
    assert done.returncode == 0, done.stderr.decode()
    making, rows = pickle.loads(done.stdout)
    assert making == [made(c) for c in components(work)]
    expected = reduced(work)
    assert [(r.system, r.measure, r.sweep_value) for r in rows] == [(r.system, r.measure, r.sweep_value) for r in expected]
    for got, want in zip(rows, expected):
        # The same code on the same data, but in another process: its BLAS may block a matrix
        # product for another thread count, so the last bits may differ.
        assert got.value == pytest.approx(want.value, rel=1e-12, abs=1e-15) or (math.isnan(got.value) and math.isnan(want.value))


class Gentle(BaseComponent):
    """The product T-norm under a name no installed plugin has: only this test's registry has it."""

    name = "gentle"

    def __call__(self, a, b):
        return a * b


class GentlePlugin:
    @hookimpl
    def evalkit_register_tnorms(self, register):
        register(Gentle)


def with_gentle(monkeypatch: pytest.MonkeyPatch, **engine) -> Plan:
    monkeypatch.chdir(CONFIGS)
    registry = build_registry(*make_plugin_manager(extra={"evalkit-gentle:gentle": GentlePlugin()}))
    config = {**bundled("quickstart"), "tnorm": ["minimum", "gentle"], **({"engine": engine} if engine else {})}
    return plan(config, registry=registry, writes=False)


GENTLE = "tnorm 'gentle' (from evalkit-gentle, plugin evalkit-gentle:gentle) is not installed on "


@pytest.mark.slow
def test_a_component_the_process_has_no_plugin_for_is_one_error_naming_it(monkeypatch, tmp_path):
    done = fresh(with_gentle(monkeypatch).work, tmp_path)
    message = done.stderr.decode().strip().splitlines()[-1]
    assert message.startswith(f"evalkit.errors.EngineError: {GENTLE}process ")
    assert message.endswith("install the distribution that provides it there, as where the run was planned")


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0") as local:
        yield local.scheduler_address


@pytest.mark.slow
def test_a_worker_without_the_plugin_is_one_error_naming_the_component_and_the_worker(cluster, monkeypatch):
    """The LocalCluster's workers load the installed plugins only; the scheduler (in this process,
    which has no gentle either) never makes a component: it would fail otherwise, not name a worker."""
    with pytest.raises(EngineError, match=f"^{GENTLE}".replace("(", r"\(").replace(")", r"\)")
                       + r"the Dask worker tcp://127\.0\.0\.1:\d+ \(host .+\): install the distribution"):
        evalkit.api.results_of(with_gentle(monkeypatch, name="dask", address=cluster))


def numbers(results: evalkit.Results) -> dict:
    return {(r.system, r.measure, r.sweep_value): (r.value, r.ci_low, r.ci_high) for r in results.rows}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["quickstart", "figure1"])
def test_a_dask_run_with_the_shipped_work_gives_the_in_memory_numbers(cluster, monkeypatch, name, capsys):
    monkeypatch.chdir(CONFIGS)
    config = bundled(name)
    shipped = len(pickle.dumps(plan(config, writes=False).work, pickle.HIGHEST_PROTOCOL))
    with capsys.disabled():
        print(f"\n{name}: the work shipped to the workers pickles to {shipped:,} bytes")
    assert shipped < 20_000
    local = numbers(evalkit.run(config))
    engine = {"name": "dask", "address": cluster, "partition_rows": max(1, reference_rows(config) // 3)}  # 3 blocks
    dask = numbers(evalkit.run({**config, "engine": engine}))
    assert dask.keys() == local.keys()
    for key, want in local.items():
        # The groups add up in a tree, in another order than the whole sum in memory.
        for got, expected in zip(dask[key], want):
            assert (got is None and expected is None) or got == pytest.approx(expected, rel=1e-12, abs=1e-15), key


def test_a_copy_in_this_process_keeps_components_of_a_registry_of_its_own():
    """An Evaluator built with a registry of its own (a plugin registered in the process, not
    installed) is deep-copied as it is (torch's clone, a checkpoint): its components are not
    made again from the installed plugins, which do not have them."""
    import copy

    import numpy as np

    from evalkit.discovery import build_registry, make_plugin_manager

    class HalfMinimum(evalkit.plugin.BaseComponent):
        """Half the minimum: a T-norm no installed plugin provides."""

        name = "half_minimum"

        def __call__(self, a, b):
            return np.minimum(a, b) / 2

    class Plugin:
        @staticmethod
        @evalkit.plugin.hookimpl
        def evalkit_register_tnorms(register):
            register(HalfMinimum)

    registry = build_registry(*make_plugin_manager(extra={"evalkit-half:half": Plugin()}))
    evaluator = evalkit.Evaluator(tnorm="half_minimum", registry=registry)
    reference, prediction = np.array([[1.0, 0.5]]), np.array([[1.0, 1.0]])
    evaluator.update(reference, prediction)
    copied = copy.deepcopy(evaluator)
    copied.update(reference, prediction)
    assert copied.values() == evaluator.update(reference, prediction).values()
