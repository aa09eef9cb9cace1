"""Plugin discovery and registration: built-ins through entry points, third parties alike."""

from __future__ import annotations

import importlib.metadata
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import tomllib
from in_process import evalkit_cli
from pydantic import BaseModel

import evalkit
from evalkit import hookspecs
from evalkit.discovery import build_registry, default_registry, make_plugin_manager
from evalkit.errors import ConfigError, PluginContractError
from evalkit.protocols import KINDS, NoParams


class Overlap:
    """A toy similarity: 1 when equal, else 0."""

    name = "toy_exact"
    Params = NoParams

    def __init__(self, params):
        self.params = params

    def matrix(self, xs, ys):
        return (np.asarray(xs)[:, None] == np.asarray(ys)[None, :]).astype(float)


class ThirdParty:
    __name__ = "third_party"

    @evalkit.hookimpl
    def evalkit_register_similarities(self, register):
        register(Overlap)

    @evalkit.hookimpl
    def evalkit_register_tnorms(self, register):
        from evalkit_tnorms import Minimum

        register(Minimum)  # clashes with the built-in name


def registry_with(**plugins):
    return build_registry(*make_plugin_manager(extra=plugins))


def test_entry_points_list_every_builtin_package(root: Path):
    table = tomllib.loads((root / "pyproject.toml").read_text())["project"]["entry-points"]["evalkit"]
    packages = {p.name for p in (root / "src").iterdir() if p.name.startswith("evalkit_")}
    assert set(table.values()) == packages


def test_builtins_come_from_the_evalkit_distribution(monkeypatch):
    """With no third-party plugin loaded (whatever else is installed), every component is
    evalkit's own and every kind has one."""
    from evalkit.discovery import build_registry, make_plugin_manager

    monkeypatch.setenv("EVALKIT_LOAD_PLUGINS", "")
    monkeypatch.delenv("EVALKIT_BLOCK_PLUGINS", raising=False)
    registry = build_registry(*make_plugin_manager())
    assert registry.failures == [] and registry.conflicts == []
    assert {e.distribution for e in registry} == {"evalkit"}
    for kind, (_, hook) in KINDS.items():
        if kind != "similarity":  # the first similarities arrive with soft cardinality
            assert registry.names(kind), f"no built-in registers through {hook}"


def test_builtin_parameter_models_are_built_when_first_used():
    """Every command imports every plugin and a run validates a handful of the built-ins' 40-odd
    parameter models, so each defers building its validator to its first use (defer_build: 36 ->
    14 ms of every start-up, docs/benchmarks.md, fourth pass)."""
    eager = sorted(
        f"{e.kind} {e.name}" for e in default_registry()
        if e.distribution == "evalkit" and not e.cls.Params.model_config.get("defer_build")
    )
    assert eager == []


def test_every_hookspec_is_a_documented_registration_hook():
    specs = [name for name in dir(hookspecs) if name.startswith("evalkit_")]
    assert sorted(specs) == sorted(hook for _, hook in KINDS.values())
    for name in specs:
        doc = getattr(hookspecs, name).__doc__
        assert "Example" in doc and "register(" in doc, name


def test_third_party_component_registers_and_duplicates_are_qualified():
    registry = registry_with(**{"evalkit-toy:toy": ThirdParty()})
    entry = registry.entry("similarity", "toy_exact")
    assert (entry.distribution, entry.plugin, entry.summary) == (
        "evalkit-toy", "evalkit-toy:toy", "A toy similarity: 1 when equal, else 0."
    )
    # The built-in keeps "minimum"; the newcomer is reachable by its qualified name.
    assert registry.entry("tnorm", "minimum").distribution == "evalkit"
    assert registry.entry("tnorm", "evalkit-toy:minimum").distribution == "evalkit-toy"
    assert registry.conflicts == [
        "tnorm 'minimum' is registered by evalkit and evalkit-toy; evalkit-toy's is available as "
        "'evalkit-toy:minimum'"
    ]


def test_a_plugin_that_raises_is_reported_and_the_others_still_load():
    class Broken:
        __name__ = "broken"

        @evalkit.hookimpl
        def evalkit_register_tnorms(self, register):
            raise RuntimeError("boom")

    registry = registry_with(**{"evalkit-bad:bad": Broken()})
    assert "minimum" in registry.names("tnorm")
    assert [str(f) for f in registry.failures] == [
        "plugin evalkit-bad:bad (distribution evalkit-bad) failed in evalkit_register_tnorms (RuntimeError: boom)"
    ]


class _Weights:
    """A plain class: pydantic cannot make a schema for a field of this type."""


@pytest.mark.parametrize("base", [NoParams, BaseModel], ids=["subclass of NoParams (deferred)", "own model"])
def test_a_third_party_params_model_that_cannot_be_built_fails_the_plugins_load(base):
    """Built-in parameter models defer their build to first use, and a subclass of ``NoParams``
    inherits that; a third party's model is still built when its plugin registers, so a model
    pydantic cannot build is the plugin's load failure (a warning; `evalkit schema` and every
    other component keep working), not "a bug in evalkit" at the first command that reads it."""
    from pydantic import ConfigDict, PydanticSchemaGenerationError

    namespace = {"__annotations__": {"scale": float, "weights": "_Weights | None"}, "scale": 1.0, "weights": None}
    if base is BaseModel:
        namespace["model_config"] = ConfigDict(extra="forbid", defer_build=True)
    Params = type("Params", (base,), {**namespace, "__module__": __name__})
    Scaled = type("Scaled", (), {"name": "scaled", "Params": Params, "__init__": lambda self, params: None,
                                 "__call__": lambda self, a, b: a * b})

    class Plugin:
        __name__ = "scaled"

        @evalkit.hookimpl
        def evalkit_register_tnorms(self, register):
            register(Scaled)

    registry = registry_with(**{"evalkit-scaled:scaled": Plugin()})
    assert "scaled" not in registry.names("tnorm") and "minimum" in registry.names("tnorm")
    (failure,) = registry.failures
    assert "registering tnorm Scaled: its `Params` model cannot be built: PydanticSchemaGenerationError" in str(failure)
    assert "\n" not in str(failure)  # pydantic's first line, its advice; not its page of text
    with pytest.raises(PydanticSchemaGenerationError):
        Params.model_rebuild()  # the model really is unbuildable, as the message says


def test_a_misspelled_hook_is_reported_by_name():
    class Typo:
        __name__ = "typo"

        @evalkit.hookimpl
        def evalkit_register_tnorm(self, register):  # missing "s"
            pass

    registry = registry_with(**{"evalkit-typo:typo": Typo()})
    (failure,) = registry.failures
    assert "evalkit-typo:typo" in str(failure) and "evalkit_register_tnorm" in str(failure)


@pytest.mark.parametrize(
    "attrs,problem",
    [
        ({"name": "Bad-Name", "Params": NoParams}, r"name 'Bad-Name' must match"),
        ({"name": "ok", "Params": type("P", (BaseModel,), {})}, r"extra='forbid'"),
        ({"name": "ok", "Params": NoParams}, r"missing __call__ required by the TNorm protocol"),
    ],
)
def test_component_contract_is_checked_at_registration(attrs, problem):
    register = default_registry().__class__().register_for("tnorm", "x:y", "x")
    with pytest.raises(PluginContractError, match=problem):
        register(type("Component", (), attrs))


@dataclass
class DummyDist:
    name: str


@dataclass
class DummyEntryPoint:
    name: str
    value: str
    dist: DummyDist
    group: str = "evalkit"

    def load(self):
        raise ImportError(f"No module named {self.value!r}")


def test_a_broken_entry_point_is_reported_while_builtins_load(monkeypatch):
    real = importlib.metadata.entry_points

    def entry_points(**kwargs):
        found = list(real(**kwargs))
        return found + [DummyEntryPoint("gps", "evalkit_gps", DummyDist("evalkit-gps"))]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    registry = build_registry(*make_plugin_manager())
    assert "fuzzy" in registry.names("representation")
    assert [str(f) for f in registry.failures] == [
        "plugin evalkit-gps:gps failed to load (ImportError: No module named 'evalkit_gps')"
    ]
    with pytest.raises(ConfigError, match="It may be provided by evalkit-gps, which failed to load: plugin evalkit-gps:gps"):
        registry.entry("similarity", "gps")


def test_cli_plugins_json_lists_components_with_distribution_and_params():
    done = evalkit_cli("plugins", "--format", "json", check=True)
    listing = json.loads(done.stdout)
    hamacher = next(c for c in listing["components"] if c["kind"] == "tnorm" and c["name"] == "hamacher")
    assert hamacher["distribution"] == "evalkit" and "p" in hamacher["params"] and hamacher["summary"]
    assert listing["problems"] == []


class BadRepresentation:
    """Returns whatever the test asks for as |G ∩ P|."""

    name = "bad_sets"
    uses = frozenset()
    data = "matrix"
    Params = NoParams
    inter = None

    def __init__(self, params):
        self.params = params

    def cardinalities(self, reference, prediction, *, tnorm, similarity):
        from evalkit.table import CardinalityTable

        return CardinalityTable(reference, prediction, type(self).inter(reference))


class BadPlugin:
    __name__ = "bad"

    @evalkit.hookimpl
    def evalkit_register_set_representations(self, register):
        register(BadRepresentation)


@pytest.mark.parametrize(
    "inter,problem",
    [
        (lambda r: r[:, :1], r"returned inter of shape \(2, 1\); expected \(2, 2\)"),
        (lambda r: r * np.nan, "returned inter with negative or NaN cardinalities"),
        (lambda r: r - 1, "returned inter with negative or NaN cardinalities"),
        (lambda r: r + np.inf, "returned infinite cardinalities"),
    ],
)
def test_representation_output_is_checked_and_blamed_on_its_plugin(monkeypatch, inter, problem):
    monkeypatch.setattr(BadRepresentation, "inter", staticmethod(inter))
    registry = registry_with(**{"evalkit-bad:bad": BadPlugin()})
    data = np.array([[0.5, 1.0], [0.2, 0.0]])
    with pytest.raises(
        PluginContractError, match="representation 'bad_sets' \\(from evalkit-bad, plugin evalkit-bad:bad\\) " + problem
    ):
        evalkit.evaluate(data, data, representation="bad_sets", registry=registry)
