"""The shape of the core: an acyclic import graph, and a cheap ``import evalkit``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_layers import core_graph

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
HEAVY = ("scipy", "matplotlib", "networkx", "gensim", "rich", "sklearn")


def graph() -> dict[str, set[str]]:
    """Each module's evalkit imports anywhere: top level, under TYPE_CHECKING, in functions."""
    return {name: {i.module for i in found} - {name} for name, found in core_graph().items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph (depth-first search), or []."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[node] = 2
        path.pop()
        return []

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return []


def test_the_core_import_graph_has_no_cycle():
    cycle = find_cycle(graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_evalkit_and_the_cli_load_nothing_heavy():
    assert loaded_after("import evalkit") == []
    assert loaded_after("import evalkit.cli") == []


def test_the_version_command_loads_nothing_heavy():
    code = "import sys\nfrom evalkit.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass"
    assert loaded_after(code) == []


@pytest.mark.parametrize("config", ["quickstart.yaml", "tnorms.yaml"])
def test_a_run_on_small_csv_files_imports_no_pandas(config):
    """pandas' import (0.2-0.3 s) is most of a small run's start-up; the CSV loader reads small
    files without it (evalkit_loaders.PLAIN_BYTES), and keyed draws hash the sample ids without
    it (evalkit.siphash), so quickstart and tnorms (intervals, paired tests) score without it."""
    code = f"import evalkit\nevalkit.run({str(CONFIGS / config)!r})"
    probe = f"{code}\nimport sys\nprint('pandas' in sys.modules, 'pyarrow' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_a_run_given_a_mapping_imports_no_yaml():
    """PyYAML reads config files (its import is 14-20 ms of a start-up, docs/benchmarks.md, fourth
    pass); a config given from Python, as a streamed run's or the Evaluator's, needs none of it."""
    code = "import evalkit\nevalkit.run({'data': {'reference': [[1, 0]], 'systems': {'s': [[0.5, 0.2]]}}})"
    probe = f"{code}\nimport sys\nprint('yaml' in sys.modules, 'evalkit.config' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
