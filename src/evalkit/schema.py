"""``evalkit schema``: the JSON Schema of a run config, with every registered component's name
and parameters as the choices of its field, so that an editor's YAML language server (VS Code,
JetBrains, Neovim) completes and checks a config as it is typed.

pydantic describes the config's structure; a component field (``tnorm: hamacher``,
``metrics: [{name: fbeta, beta: 2}]``) is only "a name or a mapping" there, so each is replaced
by the registry's components of its kind: a name among those registered, or a mapping with
``name`` and that component's own parameters (from its ``Params`` model). What the schema
cannot say (a data file that exists, a parameter valid only with another) is left to
``evalkit validate``.
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.config import RunConfig
from evalkit.registry import Entry, Registry

DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: The config fields that name components, and the kind of each.
COMPONENT_FIELDS = {
    "representation": "representation", "tnorm": "tnorm", "similarity": "similarity", "averaging": "averaging",
    "metrics": "metric",
}
#: A name qualified by its distribution, which picks one of two components of one name.
QUALIFIED = {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*:[a-z][a-z0-9_]*$",
             "description": "a component named with its distribution, DISTRIBUTION:NAME (when two share a name)"}


def config_schema(registry: Registry) -> dict[str, Any]:
    """The schema of a run config with ``registry``'s components as choices."""
    schema = RunConfig.model_json_schema()
    entries = list(registry)
    defs = schema["$defs"]
    for field, kind in COMPONENT_FIELDS.items():
        defs[kind] = _component([e for e in entries if e.kind == kind], kind, defs)
        one = {"$ref": f"#/$defs/{kind}"}
        written = schema["properties"][field]
        kept = {key: written[key] for key in ("title", "description", "default") if key in written}
        if field == "metrics":
            schema["properties"][field] = {**kept, "type": "array", "items": one, "minItems": 1}
        else:
            choices = [one, {"type": "array", "items": one, "minItems": 1}]
            schema["properties"][field] = {**kept, "anyOf": choices + ([{"type": "null"}] if field == "similarity" else [])}
    # a validator of RunConfig narrows its float to these three values
    schema["properties"]["zero_division"]["anyOf"] = [{"enum": [0, 1]}, {"const": "nan"}]
    writers = sorted(e.name for e in entries if e.kind == "report_writer")
    defs["ReportConfig"]["properties"]["formats"]["items"] = {"enum": writers}
    return {"$schema": DIALECT, **schema, "title": "evalkit run config"}


def _component(entries: list[Entry], kind: str, defs: dict[str, Any]) -> dict[str, Any]:
    """A component of ``kind``: a registered name, or a mapping of a name and its parameters."""
    mappings = [_mapping(e, defs) for e in entries]
    return {
        "description": f"a {kind.replace('_', ' ')}: a name, or {{name: NAME, PARAMETER: VALUE}}",
        "anyOf": [
            {"type": "string", "enum": [e.name for e in entries], "enumDescriptions": [e.summary for e in entries]},
            QUALIFIED,
            *mappings,
            {"type": "object", "properties": {"name": QUALIFIED}, "required": ["name"]},
        ],
    }


def _mapping(entry: Entry, defs: dict[str, Any]) -> dict[str, Any]:
    """``{name: NAME, ...}`` with exactly the component's parameters; the definitions its
    ``Params`` schema refers to join ``defs`` under a name of the component's own."""
    prefix = f"{entry.kind}.{entry.name}."
    params = _renamed(entry.cls.Params.model_json_schema(), prefix)
    defs.update({prefix + key: value for key, value in params.pop("$defs", {}).items()})
    return {
        "type": "object", "title": entry.name, "description": entry.summary,
        "properties": {"name": {"const": entry.name}, **params.get("properties", {})},
        "required": ["name", *params.get("required", [])], "additionalProperties": False,
    }


def _renamed(node: Any, prefix: str) -> Any:
    """``node`` with every ``#/$defs/X`` reference made ``#/$defs/{prefix}X``."""
    if isinstance(node, dict):
        return {key: f"#/$defs/{prefix}{value.removeprefix('#/$defs/')}"
                if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/") else _renamed(value, prefix)
                for key, value in node.items()}
    if isinstance(node, list):
        return [_renamed(value, prefix) for value in node]
    return node


def text(registry: Registry) -> str:
    return json.dumps(config_schema(registry), indent=2, ensure_ascii=False) + "\n"
