"""Phase 2 reads what the plan resolved, never the config (issue 24 item 3).

The modules that read and reduce the data take frozen settings and the plan's work: none
imports the config module or its types, none reads a plan's (or anything's) ``config``,
``loaded`` config or ``registry``, or the plan's ``where``; and the streamed and Dask engines
take only the work, not the plan (a Dask task's arguments are what a worker needs). Found by
parsing each module with ast, so an added use fails, naming the module, line and use.
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_layers import CORE

PHASE_TWO = ["execute", "streaming", "dask_engine", "engine", "reduction", "uncertainty"]
#: The pydantic config's types; phase 2 reads evalkit.settings instead.
CONFIG_TYPES = {"LoadedConfig", "RunConfig", "StatisticsConfig", "EngineConfig", "SweepConfig"}
#: What only the plan needs: the config, the registry; and the plan's namer of config places.
PLAN_ONLY = {"config", "loaded", "registry"}
#: Modules that take the work alone.
WORK_ONLY = {"streaming", "dask_engine"}


def uses(path: Path) -> list[str]:
    """Every use in a module of what phase 2 must not read, as ``file:line: what``, by line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        what = None
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            names = {f"{module}.{a.name}" if module else a.name for a in node.names}
            if module == "evalkit.config" or "evalkit.config" in names:
                what = "imports evalkit.config"
            elif path.stem in WORK_ONLY and "evalkit.plan.Plan" in names:
                what = "imports Plan (it takes the work)"
        elif isinstance(node, (ast.Name, ast.Attribute)):
            name = node.id if isinstance(node, ast.Name) else node.attr
            on_plan = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "plan"
            if name in CONFIG_TYPES:
                what = f"uses {ast.unparse(node)}"
            elif isinstance(node, ast.Attribute) and (name in PLAN_ONLY or name == "where" and on_plan):
                what = f"reads {ast.unparse(node)}"
        if what is not None:
            found.append((node.lineno, f"evalkit/{path.name}:{node.lineno}: {what}"))
    return [use for _, use in sorted(found)]


def test_phase_two_reads_no_config_registry_or_plan_namer():
    found = [use for module in PHASE_TWO for use in uses(CORE / f"{module}.py")]
    assert not found, "\n".join(found)


def test_each_kind_of_use_is_found(tmp_path: Path):
    """The finder on a synthetic module, as if it were the Dask engine: every forbidden use, and
    the uses that are allowed (a source's ``where``, the plan's work)."""
    module = tmp_path / "dask_engine.py"
    module.write_text(
        "from evalkit.config import RunConfig\nimport evalkit.config\nfrom evalkit import config\n"
        "from evalkit.plan import Plan, Work\n"
        "def f(plan, source, cfg: config.SweepConfig):\n"
        "    assert isinstance(cfg, RunConfig)\n"
        "    return plan.config.data, plan.loaded, plan.where('data'), x.registry, source.where, plan.work\n"
    )
    assert uses(module) == [
        "evalkit/dask_engine.py:1: imports evalkit.config", "evalkit/dask_engine.py:2: imports evalkit.config",
        "evalkit/dask_engine.py:3: imports evalkit.config", "evalkit/dask_engine.py:4: imports Plan (it takes the work)",
        "evalkit/dask_engine.py:5: uses config.SweepConfig", "evalkit/dask_engine.py:6: uses RunConfig",
        "evalkit/dask_engine.py:7: reads plan.config", "evalkit/dask_engine.py:7: reads plan.loaded",
        "evalkit/dask_engine.py:7: reads plan.where", "evalkit/dask_engine.py:7: reads x.registry",
    ]
