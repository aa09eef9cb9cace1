"""Choosing plugins as llm and pytest do: ``EVALKIT_LOAD_PLUGINS`` names the only third-party
distributions that load (set and empty: none), ``EVALKIT_BLOCK_PLUGINS`` and ``evalkit -p no:NAME``
those that do not; built-ins always load; a name no installed distribution has is reported;
``evalkit plugins`` shows each distribution's version.

The third-party plugins are real distributions (a module and a ``.dist-info`` folder with the
``evalkit`` entry point, as pip installs them) on ``sys.path``, found by ``importlib.metadata``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalkit.cli import main
from evalkit.discovery import build_registry, default_registry, make_plugin_manager

PLUGIN = '''
import numpy as np
import evalkit
import evalkit.plugin


class {cls}(evalkit.plugin.BaseComponent):
    name = "{tnorm}"

    def __call__(self, a, b):
        return np.minimum(a, b)


@evalkit.hookimpl
def evalkit_register_tnorms(register):
    register({cls})
'''


def distribution(site: Path, name: str, version: str, tnorm: str) -> None:
    module = name.lower().replace("-", "_")
    (site / f"{module}.py").write_text(PLUGIN.format(cls=tnorm.title().replace("_", ""), tnorm=tnorm))
    info = site / f"{module}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[evalkit]\nplugin = {module}\n")


@pytest.fixture
def site(tmp_path, monkeypatch) -> Path:
    """Two working third-party distributions on sys.path, and no selection set."""
    distribution(tmp_path, "evalkit-extra", "1.2.3", "extra_min")
    distribution(tmp_path, "Evalkit_Other", "0.4.0", "other_min")
    monkeypatch.syspath_prepend(str(tmp_path))
    for variable in ("EVALKIT_LOAD_PLUGINS", "EVALKIT_BLOCK_PLUGINS"):
        monkeypatch.delenv(variable, raising=False)
    yield tmp_path
    default_registry.cache_clear()  # the next test builds the registry of this environment again


def tnorms_and_problems() -> tuple[set[str], list[str]]:
    registry = build_registry(*make_plugin_manager())
    return {n for n in registry.names("tnorm") if n.endswith("_min")}, [str(f) for f in registry.failures]


@pytest.mark.parametrize(("load", "block", "loaded"), [
    (None, None, {"extra_min", "other_min"}),
    ("", None, set()),  # set and empty: no third-party plugin (llm's LLM_LOAD_PLUGINS='')
    ("evalkit-extra", None, {"extra_min"}),
    ("EVALKIT_OTHER", None, {"other_min"}),  # names as pip compares them
    ("evalkit-extra, evalkit-other", "evalkit-other", {"extra_min"}),
    (None, "evalkit-extra", {"other_min"}),
    (None, "evalkit-extra,evalkit-other", set()),
])
def test_load_and_block_choose_the_third_party_distributions(site, monkeypatch, load, block, loaded):
    if load is not None:
        monkeypatch.setenv("EVALKIT_LOAD_PLUGINS", load)
    if block is not None:
        monkeypatch.setenv("EVALKIT_BLOCK_PLUGINS", block)
    got, problems = tnorms_and_problems()
    assert got == loaded and problems == []


def test_built_ins_always_load(site, monkeypatch):
    monkeypatch.setenv("EVALKIT_LOAD_PLUGINS", "")
    monkeypatch.setenv("EVALKIT_BLOCK_PLUGINS", "evalkit")
    registry = build_registry(*make_plugin_manager())
    assert "minimum" in registry.names("tnorm")
    assert [str(f) for f in registry.failures] == ["EVALKIT_BLOCK_PLUGINS names 'evalkit': the built-in plugins always load"]


@pytest.mark.parametrize("variable", ["EVALKIT_LOAD_PLUGINS", "EVALKIT_BLOCK_PLUGINS"])
def test_a_name_no_distribution_has_is_reported_with_the_closest(site, monkeypatch, variable):
    monkeypatch.setenv(variable, "evalkit-extr")
    _, problems = tnorms_and_problems()
    assert problems == [
        f"{variable} names 'evalkit-extr', which no installed distribution with evalkit plugins is "
        "(did you mean 'evalkit-extra'?)"
    ]


def test_the_cli_blocks_with_p_no_and_lists_versions(site, monkeypatch):
    monkeypatch.setenv("EVALKIT_LOAD_PLUGINS", "evalkit-extra,evalkit-other")  # whatever else is installed
    monkeypatch.setenv("EVALKIT_BLOCK_PLUGINS", "")  # restored after the test: -p writes it
    default_registry.cache_clear()
    listed = json.loads(CliRunner().invoke(main, ["plugins", "--format", "json"]).output)
    assert listed["distributions"] == {"evalkit": listed["evalkit_version"], "evalkit-extra": "1.2.3", "Evalkit_Other": "0.4.0"}
    assert {e["name"]: e["version"] for e in listed["components"] if e["kind"] == "tnorm"}["extra_min"] == "1.2.3"
    result = CliRunner().invoke(main, ["-p", "no:evalkit-extra", "-p", "no:Evalkit_Other", "plugins", "--format", "json"])
    assert result.exit_code == 0, result.output
    listed = json.loads(result.output)
    assert listed["distributions"] == {"evalkit": listed["evalkit_version"]}
    table = CliRunner().invoke(main, ["plugins"]).output
    assert f"plugins from: evalkit {listed['evalkit_version']}\n" in table


def test_p_takes_only_no_name(site):
    result = CliRunner().invoke(main, ["-p", "evalkit-extra", "plugins"])
    assert result.exit_code == 2
    assert "write -p no:NAME to keep the distribution NAME's plugins from loading" in result.output
