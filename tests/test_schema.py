"""`evalkit schema` (issue 27, item 4): the JSON Schema of a run config with the registered
components as choices, checked by the `jsonschema` package as an editor's YAML language server
would check a config: every bundled config passes, the usual mistakes do not."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from in_process import evalkit_cli

from evalkit import schema as config_schema
from evalkit.discovery import build_registry, default_registry, make_plugin_manager
from evalkit.scaffold import write

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))
LINE = "# yaml-language-server: $schema=evalkit.schema.json"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(evalkit_cli("schema", check=True).stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(validator: jsonschema.Draft202012Validator, config: dict) -> list[str]:
    return [error.message for error in validator.iter_errors(config)]


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_bundled_config_names_the_schema_and_passes_it(validator, path):
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[0] == LINE
    assert problems(validator, yaml.safe_load(text)) == []


def test_the_bundled_schema_file_is_what_evalkit_schema_prints_for_the_built_ins(monkeypatch):
    monkeypatch.setenv("EVALKIT_LOAD_PLUGINS", "")  # the built-ins only, whatever else is installed
    default_registry.cache_clear()
    try:
        printed = evalkit_cli("schema", check=True).stdout
    finally:
        default_registry.cache_clear()
    written = (ROOT / "configs" / "evalkit.schema.json").read_text(encoding="utf-8")
    assert written == printed, (
        "configs/evalkit.schema.json is stale: EVALKIT_LOAD_PLUGINS= evalkit schema > configs/evalkit.schema.json")


QUICKSTART = yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("change", [
    {"tnorm": "minimun"},  # a misspelt component
    {"tnorm": ["minimum", "prodcut"]},
    {"metrics": ["f1", "presicion"]},
    {"tnorm": {"name": "hamacher", "q": 0.5}},  # an unknown parameter
    {"tnorm": {"name": "hamacher", "p": "half"}},  # a wrong type
    {"tnorm": {"name": "hamacher", "p": -1}},  # out of its bounds
    {"metrics": [{"name": "fbeta", "beta": 0}]},
    {"tnrom": "minimum"},  # a misspelt key
    {"statistics": {"bootstrap": {"resamples": "many"}}},
    {"zero_division": 2},
    {"report": {"formats": ["htlm"], "out": "x"}},
    {"similarity": {"name": "word2vec"}},  # a required parameter missing
])
def test_the_usual_mistakes_fail_the_schema(validator, change):
    config = {**copy.deepcopy(QUICKSTART), **change}
    assert problems(validator, config)


@pytest.mark.parametrize("change", [
    {"tnorm": {"name": "hamacher", "p": 0.5}},
    {"tnorm": ["minimum", {"name": "hamacher", "p": 0.5}]},
    {"metrics": ["f1", {"name": "fbeta", "beta": 2}]},
    {"tnorm": "evalkit:minimum"},  # a name qualified by its distribution
    {"similarity": None},
])
def test_what_a_config_may_write_passes(validator, change):
    assert problems(validator, {**copy.deepcopy(QUICKSTART), **change}) == []


def test_every_component_passes_by_name_and_as_a_mapping_of_its_defaults(validator):
    kinds = {kind: field for field, kind in config_schema.COMPONENT_FIELDS.items()}
    for entry in default_registry():
        if entry.kind not in kinds:
            continue
        defaults = {k: v["default"] for k, v in entry.params.items() if "default" in v}
        if entry.cls.Params.model_json_schema().get("required"):
            continue  # needs a file (an ontology, a model): by name alone it is rightly refused
        field = kinds[entry.kind]
        for spec in (entry.name, {"name": entry.name, **defaults}):
            config = {**copy.deepcopy(QUICKSTART), field: [spec] if field == "metrics" else spec}
            assert problems(validator, config) == [], (entry.kind, spec)


def test_a_third_party_component_appears_once_registered(tmp_path):
    """A plugin written by `evalkit new-plugin` and registered as its entry point would be."""
    folder = write("mayor", "tnorm", tmp_path)
    spec = importlib.util.spec_from_file_location("evalkit_mayor", folder / "evalkit_mayor" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    registry = build_registry(*make_plugin_manager())
    module.evalkit_register_tnorms(register=registry.register_for("tnorm", "evalkit-mayor:mayor", "evalkit-mayor"))
    checked = jsonschema.Draft202012Validator(config_schema.config_schema(registry))
    config = {**copy.deepcopy(QUICKSTART), "tnorm": {"name": "mayor", "p": 1.0}}
    assert problems(checked, config) == []
    assert problems(checked, {**config, "tnorm": {"name": "mayor", "r": 1.0}})
    without = jsonschema.Draft202012Validator(config_schema.config_schema(build_registry(*make_plugin_manager())))
    assert problems(without, config)


def test_the_scaffolds_readme_says_how_to_get_completion(tmp_path):
    readme = (write("mayor", "tnorm", tmp_path) / "README.md").read_text(encoding="utf-8")
    assert "evalkit schema > evalkit.schema.json" in readme and LINE.removeprefix("# ") in readme
