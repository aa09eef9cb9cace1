"""Plugins cannot take the CLI down: a plugin that exits or raises while it is imported or
registers is reported like any other broken plugin, `run` and `validate` say so, and asking for a
component it would have provided names it.

The broken plugins are real distributions: a module and a ``.dist-info`` folder with its
``evalkit`` entry point, as pip installs them, in a folder on ``sys.path`` where
``importlib.metadata`` finds them. No virtual environment is needed for that, nor another
process, so these tests stay fast; tests/test_third_party.py installs plugins with pip for the rest.
"""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from in_process import evalkit_cli

import evalkit
from evalkit.discovery import build_registry, default_registry, make_plugin_manager
from evalkit.errors import UnknownComponentError
from evalkit.registry import LoadFailure, Registry

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "configs" / "data" / "quickstart"
EXIT = "plugin evalkit-exit:exit failed to load (SystemExit: 3)"
GPS = "plugin evalkit-gps:gps failed to load (ImportError: No module named 'shapely')"


def distribution(site: Path, name: str, module: str, code: str) -> None:
    """An installed distribution ``name`` whose entry point imports ``module`` (``code``)."""
    (site / f"{module}.py").write_text(code)
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[evalkit]\n{name.split('-')[1]} = {module}\n")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A folder with two broken plugins: one exits at import, one misses a dependency."""
    site = tmp_path_factory.mktemp("site")
    distribution(site, "evalkit-exit", "evalkit_exit", "import sys\n\nsys.exit(3)\n")
    distribution(site, "evalkit-gps", "evalkit_gps", 'raise ImportError("No module named \'shapely\'")\n')
    return site


@pytest.fixture
def installed(site: Path, monkeypatch) -> Iterator[None]:
    """The broken plugins installed, for this process's plugin loading (and CLI) from now on."""
    monkeypatch.syspath_prepend(str(site))
    for module in ("evalkit_exit", "evalkit_gps"):  # the GPS example, as another test imported it
        monkeypatch.delitem(sys.modules, module, raising=False)
    default_registry.cache_clear()
    yield
    default_registry.cache_clear()


def config(tmp_path: Path, **changes: object) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({
        "data": {"reference": str(QUICKSTART / "reference.csv"), "systems": {"dwsnet": str(QUICKSTART / "dwsnet.csv")}},
        "averaging": "micro", "metrics": ["f1"], **changes,
    }))
    return path


def test_a_plugin_that_exits_at_import_is_reported_and_every_command_still_works(installed, tmp_path: Path):
    listing = evalkit_cli("plugins")
    assert listing.returncode == 0, listing.stderr
    assert "hamacher" in listing.stdout
    assert f"warning: {EXIT}\n" in listing.stderr and f"warning: {GPS}\n" in listing.stderr
    for command in (("validate",), ("run", "--quiet")):
        done = evalkit_cli(*command, config(tmp_path))
        assert done.returncode == 0, done.stderr
        # one line per plugin that failed, before anything else
        assert done.stderr.startswith(f"warning: {EXIT}\nwarning: {GPS}\n") or done.stderr.startswith(
            f"warning: {GPS}\nwarning: {EXIT}\n"), done.stderr
    assert "0.88" in done.stdout  # run printed its table
    # the guide's table of broken plugins shows the message verbatim
    assert f"`{EXIT}`" in (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")


def test_an_unknown_component_names_the_distribution_that_failed_to_load(installed, tmp_path: Path):
    done = evalkit_cli("validate", config(tmp_path, representation="soft_cardinality",
                                          similarity={"name": "route_grid", "routes": "routes.geojson"}))
    assert done.returncode == 1
    error = done.stderr.splitlines()[-1]
    assert error.startswith("error: ") and "unknown similarity 'route_grid'. It may be provided by " in error
    assert "evalkit-exit or evalkit-gps" in error or "evalkit-gps or evalkit-exit" in error
    assert f", which failed to load: {EXIT}; {GPS}" in error or f", which failed to load: {GPS}; {EXIT}" in error


def test_the_hint_names_each_failed_distribution_once_and_only_failures_without_one_as_they_are():
    registry = Registry(failures=[LoadFailure("plugin evalkit-a:x failed", "evalkit-a"),
                                  LoadFailure("plugin evalkit-a:y failed", "evalkit-a")])
    with pytest.raises(UnknownComponentError, match=(
        r"unknown tnorm 'mine'\. It may be provided by evalkit-a, which failed to load: "
        r"plugin evalkit-a:x failed; plugin evalkit-a:y failed Registered tnorms: \(none\)"
    )):
        registry.entry("tnorm", "mine")
    registry = Registry(failures=[LoadFailure("no evalkit plugins are installed")])
    with pytest.raises(UnknownComponentError, match=r"unknown tnorm 'mine'\. no evalkit plugins are installed Registered"):
        registry.entry("tnorm", "mine")


class Exits:
    """A plugin whose registration hook exits."""

    __name__ = "exits"

    @evalkit.hookimpl
    def evalkit_register_tnorms(self, register):
        sys.exit("no tnorms today")


class Closes:
    """A plugin that raises GeneratorExit when its hooks are looked for."""

    __name__ = "closes"

    def __dir__(self):
        raise GeneratorExit


def test_exits_while_registering_are_load_failures():
    registry = build_registry(*make_plugin_manager(extra={"evalkit-exits:exits": Exits(), "evalkit-closes:closes": Closes()}))
    assert "minimum" in registry.names("tnorm")
    assert [(str(f), f.distribution) for f in registry.failures] == [
        ("plugin evalkit-closes:closes (distribution evalkit-closes) failed to register (GeneratorExit: )", "evalkit-closes"),
        ("plugin evalkit-exits:exits (distribution evalkit-exits) failed in evalkit_register_tnorms "
         "(SystemExit: no tnorms today)", "evalkit-exits"),
    ]


def test_a_keyboard_interrupt_at_import_stops_evalkit(monkeypatch):
    """Ctrl-C while plugins load must stop evalkit; a plugin raising it looks the same."""

    class Interrupted:
        name, value, group = "stop", "evalkit_stop", "evalkit"
        dist = type("Dist", (), {"name": "evalkit-stop"})()

        def load(self):
            raise KeyboardInterrupt

    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **kw: [*real(**kw), Interrupted()])
    with pytest.raises(KeyboardInterrupt):
        make_plugin_manager()
