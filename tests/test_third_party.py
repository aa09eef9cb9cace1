"""Third-party plugins the way a user meets them: separate packages installed with pip into a
fresh virtual environment, found through their entry points, used from YAML by name.

The environment sees this one's site-packages (through a .pth file) so that evalkit's
dependencies need no download; evalkit itself, the worked example (docs/examples/evalkit-gps), a
package written by ``evalkit new-plugin`` and a deliberately broken package are pip-installed
from local paths without network (``--no-index --no-build-isolation``).
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import fresh_venv
import pytest

ROOT = Path(__file__).resolve().parent.parent
GPS = ROOT / "docs" / "examples" / "evalkit-gps"


#: The distributions these tests install: only they load in the environment, whatever other
#: plugins the machine running the tests has (an editable one would be seen but not importable).
OWN = "evalkit-gps,evalkit-fresh-overlap,evalkit-broken"


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return fresh_venv.run(*args, plugins=OWN, cwd=cwd)


def broken_package(folder: Path) -> Path:
    """A plugin whose import fails, as when a dependency is missing."""
    (folder / "evalkit_broken").mkdir(parents=True)
    (folder / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "evalkit-broken"
        version = "0.1.0"

        [project.entry-points.evalkit]
        broken = "evalkit_broken"
        """))
    (folder / "evalkit_broken" / "__init__.py").write_text('raise ImportError("No module named \'shapely\'")\n')
    return folder


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> dict[str, Path]:
    """A fresh virtual environment with evalkit, the GPS example, a generated plugin and a
    broken one installed."""
    base = tmp_path_factory.mktemp("third_party")
    scripts = fresh_venv.fresh_venv(base / "venv")
    python, evalkit = scripts / "python", scripts / "evalkit"
    pip = (python, *fresh_venv.PIP)
    run(*pip, fresh_venv.source_copy(ROOT, base / "evalkit"))
    run(*pip, fresh_venv.source_copy(GPS, base / "evalkit-gps"))
    run(evalkit, "new-plugin", "fresh_overlap", "--kind", "metric", "--output", base)
    run(*pip, base / "evalkit-fresh-overlap")
    run(*pip, broken_package(base / "evalkit-broken"))
    return {"python": python, "evalkit": evalkit, "base": base}


@pytest.mark.slow
def test_plugins_lists_third_party_components_and_reports_the_broken_one(venv):
    listing = json.loads(run(venv["evalkit"], "plugins", "--format", "json").stdout)
    where = {(c["kind"], c["name"]): c["distribution"] for c in listing["components"]}
    assert where[("similarity", "route_grid")] == "evalkit-gps"
    assert where[("metric", "fresh_overlap")] == "evalkit-fresh-overlap"
    assert where[("tnorm", "minimum")] == where[("representation", "soft_cardinality")] == "evalkit"
    assert listing["problems"] == [
        "plugin evalkit-broken:broken failed to load (ImportError: No module named 'shapely')"
    ]
    table = run(venv["evalkit"], "plugins")
    assert "route_grid" in table.stdout and "evalkit-gps" in table.stdout
    assert "warning: plugin evalkit-broken:broken failed to load" in table.stderr
    schema = json.loads(run(venv["evalkit"], "schema").stdout)
    assert "route_grid" in schema["$defs"]["similarity"]["anyOf"][0]["enum"]
    assert "fresh_overlap" in schema["$defs"]["metric"]["anyOf"][0]["enum"]


@pytest.mark.slow
def test_the_gps_example_config_runs_and_prints_soft_precision_and_recall(venv):
    rows = json.loads(run(venv["evalkit"], "run", GPS / "routes.yaml", "--format", "json").stdout)["rows"]
    value = {(r["representation"].split("(")[0], r["metric"]): r["value"] for r in rows}
    assert value[("exact_match", "precision")] == value[("exact_match", "recall")] == 0
    assert value[("threshold_match", "precision")] == pytest.approx(5 / 6, abs=1e-12)
    assert 5 / 6 < value[("soft_cardinality", "precision")] <= 1
    assert 5 / 6 < value[("soft_cardinality", "recall")] <= 1
    table = run(venv["evalkit"], "run", GPS / "routes.yaml", "--quiet").stdout
    assert "soft_cardinality" in table and "precision" in table


@pytest.mark.slow
def test_the_plugins_own_test_suites_pass_where_installed(venv):
    run(venv["python"], "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=GPS)
    generated = venv["base"] / "evalkit-fresh-overlap"
    out = run(venv["python"], "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=generated).stdout
    assert "2 passed" in out  # the author-kit check and the entry point
