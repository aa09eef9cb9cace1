"""What only evalkit knows, as Markdown tables: the components of the registry with their
parameters, the run config keys (from the pydantic models), the optional members of each kind,
the bundled configs, and pivots of a page's own config's result rows."""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml
from rst_text import first_paragraph, inline

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```ya?ml[^\n]*\n(?P<body>.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def heading(level: int, title: str, anchor: str) -> list[str]:
    """A heading with an anchor of its own that both MkDocs and a code host's Markdown keep
    (``{#id}`` attribute lists show as text on the code host)."""
    return [f'<a id="{anchor}"></a>', "", f"{'#' * level} {title}", ""]


#: Section titles of the component kinds (a kind added later falls back to its name).
KIND_TITLES = {
    "representation": "Set representations",
    "similarity": "Similarities",
    "tnorm": "T-norms",
    "averaging": "Averaging schemes",
    "metric": "Metrics",
    "loader": "Data loaders",
    "report_writer": "Report writers",
}
#: Where a user selects a component of each kind.
KIND_USE = {
    "representation": "`representation:` in a config",
    "similarity": "`similarity:` in a config",
    "tnorm": "`tnorm:` in a config",
    "averaging": "`averaging:` in a config",
    "metric": "`metrics:` in a config",
    "loader": "file suffix, or by name in a data source: `{path: FILE, loader: NAME}`",
    "report_writer": "`report: {formats: [...]}` in a config and by `evalkit run --format`",
}


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def schema_type(schema: dict[str, Any], defs: dict[str, Any], untyped: str = "any") -> str:
    """A JSON schema (of one pydantic field) in words: ``number (≥ 0)``, ``list of string``."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        target = defs.get(name, {})
        return schema_type(target, defs, untyped) if "enum" in target else name
    if "anyOf" in schema:
        parts = list(dict.fromkeys(schema_type(s, defs, untyped) for s in schema["anyOf"]))
        text = " or ".join(parts)
    elif "enum" in schema:
        text = " or ".join(f"`{_yaml(v)}`" for v in schema["enum"])
    elif "const" in schema:
        text = f"`{_yaml(schema['const'])}`"
    else:
        kind = schema.get("type")
        if kind == "array":
            if "prefixItems" in schema:
                text = "[" + ", ".join(schema_type(s, defs, untyped) for s in schema["prefixItems"]) + "]"
            elif schema.get("items"):
                text = f"list of {schema_type(schema['items'], defs, untyped)}"
            else:
                text = "list"
        elif kind == "object":
            extra = schema.get("additionalProperties")
            text = f"mapping to {schema_type(extra, defs, untyped)}" if isinstance(extra, dict) else "mapping"
        elif kind == "string" and schema.get("format") == "path":
            text = "path"
        elif isinstance(kind, str):
            text = kind
        else:
            text = untyped
    bounds = [
        f"{symbol} {_num(schema[key])}"
        for key, symbol in (
            ("minimum", "≥"), ("ge", "≥"), ("exclusiveMinimum", ">"), ("gt", ">"),
            ("maximum", "≤"), ("le", "≤"), ("exclusiveMaximum", "<"), ("lt", "<"),
        )
        if key in schema
    ]
    if "minItems" in schema and "prefixItems" not in schema:
        bounds.append(f"at least {schema['minItems']} item{'s' * (schema['minItems'] != 1)}")
    if "minProperties" in schema:
        bounds.append(f"at least {schema['minProperties']} entr{'ies' if schema['minProperties'] != 1 else 'y'}")
    return f"{text} ({', '.join(bounds)})" if bounds else text


def _yaml(value: Any) -> str:
    """A value as it is written in YAML (flow style)."""
    if hasattr(value, "value") and not isinstance(value, (str, int, float)):  # an Enum
        value = value.value
    if hasattr(value, "model_dump"):  # a section's defaults
        value = value.model_dump(mode="json")
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, float) and math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if isinstance(value, float) and math.isnan(value):
        return ".nan"
    try:
        text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10**6, sort_keys=False)
    except yaml.YAMLError:
        return repr(value)
    return text.strip().removesuffix("...").strip()


def _field_rows(
    model: type, untyped: str, type_of: Callable[[Any], str | None], models: dict[str, str] | None = None,
) -> list[str]:
    """Table rows (key, type, default, description) of a pydantic model's fields."""
    schema = _json_schema(model)
    props, defs = schema.get("properties", {}), schema.get("$defs", {})
    rows = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        prop = props.get(key, {})
        kind = type_of(field) or (schema_type(prop, defs, untyped) if prop or schema else _annotation(field.annotation))
        for model_name, text in (models or {}).items():
            kind = re.sub(rf"\b{model_name}\b", text, kind)
        if field.is_required():
            default = "required"
        else:
            default = f"`{_yaml(field.get_default(call_default_factory=True))}`"
        description = field.description or prop.get("description")
        text = inline(description, table=True) if description else "—"
        rows.append(f"| `{key}` | {kind.replace('|', chr(92) + '|')} | {default} | {text} |")
    return rows


def _json_schema(model: type) -> dict[str, Any]:
    try:
        return model.model_json_schema()
    except Exception:  # a type pydantic cannot express: fall back to annotations
        return {}


def _annotation(annotation: Any) -> str:
    if isinstance(annotation, str):
        return annotation
    return inspect.formatannotation(annotation).replace("typing.", "")


# ---------------------------------------------------------------------------------------------
# The run config and the components
# ---------------------------------------------------------------------------------------------


def config_keys() -> str:
    from evalkit.config import (
        BootstrapConfig,
        DataConfig,
        EngineConfig,
        RangeConfig,
        ReportConfig,
        RunConfig,
        Runs,
        Spec,
        Specs,
        StatisticsConfig,
        SweepConfig,
        TestConfig,
    )

    spec_types = {
        Specs: "[spec](#component-specs) or list of specs",
        Specs | None: "[spec](#component-specs), list of specs, or null",
        list[Spec]: "list of [specs](#component-specs)",
        Spec: "[spec](#component-specs)",
    }

    def type_of(field: Any) -> str | None:
        for annotation, text in spec_types.items():
            with contextlib.suppress(TypeError):
                if field.annotation == annotation:
                    return text
        return None

    sections = (
        (RunConfig, "Top level", "top-level"),
        (DataConfig, "`data`", "data"),
        (Runs, "`data.systems.NAME: {runs: [...]}`", "runs"),
        (StatisticsConfig, "`statistics`", "statistics"),
        (BootstrapConfig, "`statistics.bootstrap`", "bootstrap"),
        (TestConfig, "`statistics.test`", "test"),
        (SweepConfig, "`sweep`", "sweep"),
        (RangeConfig, "`sweep.values: {start, stop, step}`", "range"),
        (ReportConfig, "`report`", "report"),
        (EngineConfig, "`engine`", "engine"),
    )
    links = {model.__name__: f"[mapping](#{anchor})" for model, _, anchor in sections[1:]}
    out = []
    for model, title, anchor in sections:
        out += [
            *heading(3, title, anchor),
            f"`{model.__module__}.{model.__name__}`. Unknown keys are an error.",
            "",
            "| key | type | default | description |",
            "|---|---|---|---|",
            *_field_rows(
                model, "[data source](#data-sources)", type_of, links,
            ),
            "",
        ]
    return "\n".join(out)


def builtin_entries() -> list[Any]:
    """The registry entries of the evalkit distribution (third-party plugins installed in the
    environment that builds the docs are left out, so the site does not depend on it)."""
    from evalkit.discovery import default_registry

    registry = default_registry()
    entries = [e for e in registry if e.distribution == "evalkit"]
    if not entries:
        raise RuntimeError("no built-in components are registered: run `pip install -e .` first")
    return entries


def components() -> str:
    from evalkit.protocols import KINDS

    entries = builtin_entries()
    out = []
    for kind in KINDS:
        mine = [e for e in entries if e.kind == kind]
        if not mine:
            continue
        primary: dict[type, Any] = {}
        aliases: dict[type, list[str]] = {}
        for e in mine:
            if e.cls in primary and e.name != getattr(e.cls, "name", e.name):
                aliases.setdefault(e.cls, []).append(e.name)
            elif e.cls in primary:
                aliases.setdefault(e.cls, []).append(primary[e.cls].name)
                primary[e.cls] = e
            else:
                primary[e.cls] = e
        title = KIND_TITLES.get(kind, kind.replace("_", " ").capitalize() + "s")
        out += [
            *heading(3, title, f"kind-{kind}"),
            f"Kind `{kind}`, selected by {KIND_USE.get(kind, 'its name')}.",
            "",
            "| name | summary |",
            "|---|---|",
        ]
        out += [
            f"| [`{e.name}`](#{kind}-{e.name}) | {inline(first_paragraph(e.cls.__doc__), table=True)} |"
            for e in primary.values()
        ]
        out.append("")
        for cls, e in primary.items():
            out += heading(4, f"`{e.name}`", f"{kind}-{e.name}")
            out.append(f"{inline(first_paragraph(cls.__doc__)) or '(no docstring)'}")
            out.append("")
            facts = _facts(cls)
            if facts:
                out += [facts, ""]
            where = f"`{cls.__module__}.{cls.__qualname__}`, distribution `{e.distribution}`"
            if cls in aliases:
                where += "; also registered as " + ", ".join(f"`{a}`" for a in sorted(aliases[cls]))
            out += [where + ".", ""]
            if cls.Params.model_fields:
                out += [
                    "| parameter | type | default | description |",
                    "|---|---|---|---|",
                    *_field_rows(cls.Params, "any", lambda field: None),
                    "",
                ]
            else:
                out += ["No parameters.", ""]
    return "\n".join(out)


def _facts(cls: type) -> str:
    """What a component's class attributes declare, in words."""
    from evalkit.protocols import optional

    facts = []
    if hasattr(cls, "cardinalities"):
        uses = sorted(getattr(cls, "uses", ()))
        using = f"; uses the configured {' and '.join(uses)}" if uses else "; uses no T-norm or similarity"
        facts.append(f"Reads `{cls.data}` data{using}")
    if isinstance(getattr(cls, "suffixes", None), tuple):
        suffixes = ", ".join("folders" if s == "/" else f"`{s}`" for s in cls.suffixes)
        facts.append(f"Loads `{getattr(cls, 'kind', '?')}` data from {suffixes}")
    if isinstance(getattr(cls, "suffix", None), str):
        facts.append(f"Writes `{cls.suffix}` files")
    if hasattr(cls, "ratio"):
        facts.append("A set metric (a ratio of the cardinalities): every representation and averaging applies")
    elif hasattr(cls, "update") and hasattr(cls, "compute"):
        facts.append("A data metric: reads the data, not the cardinality table; no representation or averaging")
        if optional(cls, "data") != "matrix":
            facts.append(f"Reads `{optional(cls, 'data')}` data")
    if optional(cls, "ranks"):
        facts.append("Only ranks the predictions: a run whose metrics all rank accepts any finite scores")
    if hasattr(cls, "matrix"):
        extras = [m for m in ("pairs", "check") if optional(cls, m) is not None]
        sym = "symmetric" if optional(cls, "symmetric") else "not declared symmetric"
        facts.append(f"Similarity: {sym}" + (f"; offers {', '.join(f'`{m}`' for m in extras)}" if extras else ""))
    return ". ".join(facts) + "." if facts else ""


def bundled_configs() -> str:
    """A table of configs/*.yaml, each described by the first sentence of its leading comment,
    so that the list cannot drift from the folder."""
    rows = ["| config | what it shows |", "|---|---|"]
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        comment = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("#"):
                break
            comment.append(line.lstrip("#").strip())
        text = " ".join(comment)
        if not text:
            raise ValueError(f"{path.name} has no leading comment to describe it")
        sentence = re.split(r"(?<!eq\.)(?<!al\.)(?<=\.)\s+", text, maxsplit=1)[0]  # not after "eq." or "et al."
        rows.append(f"| `{path.name}` | {inline(sentence, table=True)} |")
    return "\n".join(rows)


def optional_members() -> str:
    """The table of every kind's optional members, from their declarations."""
    from evalkit.protocols import OPTIONAL

    out = ["| kind | member | default | what offering it means |", "|---|---|---|---|"]
    for kind, members in OPTIONAL.items():
        for member in members:
            default = "absent" if member.args is not None else f"`{member.default!r}`"
            out.append(f"| `{kind}` | `{member.signature}` | {default} | {inline(member.meaning, table=True)} |")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Results of a page's own config
# ---------------------------------------------------------------------------------------------


def yaml_configs(markdown: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, mapping) of every ```yaml block of a page that is a full config (has a
    top-level ``data:`` key)."""
    for match in FENCE.finditer(markdown):
        data = yaml.safe_load(match["body"])
        if isinstance(data, dict) and "data" in data:
            yield markdown.count("\n", 0, match.start()) + 1, data


@contextlib.contextmanager
def _working_directory(path: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


_RUNS: dict[str, Any] = {}


def run_config(config: dict[str, Any]) -> Any:
    """Run a documentation config from configs/, as the tests do (no report files)."""
    import evalkit

    key = yaml.safe_dump(config, sort_keys=True)
    if key not in _RUNS:
        with _working_directory(ROOT / "configs"):
            _RUNS[key] = evalkit.run(config, write_reports=False)
    return _RUNS[key]


def results(page_markdown: str, config: str, rows: str, columns: str, where: str = "", digits: str = "4") -> str:
    """A pivot table of the result rows of the page's config named ``config``: ``rows`` is one
    field or several (comma-separated), ``columns`` one field, ``where`` keeps rows by
    ``field:value`` and drops them by ``field!value``, comma-separated (a component that does
    not apply is ``—``)."""
    found = [c for _, c in yaml_configs(page_markdown) if c.get("name") == config]
    if len(found) != 1:
        raise ValueError(f"the page has {len(found)} YAML configs named {config!r}, expected 1")
    filters, excluded = {}, {}
    for item in filter(None, where.split(",")):
        field, op, wanted = re.split(r"([:!])", item, maxsplit=1)
        (filters if op == ":" else excluded)[field] = wanted
    index = rows.split(",")
    table: dict[tuple[str, ...], dict[str, float]] = {}
    column_names: dict[str, None] = {}

    def label(row: Any, field: str) -> str:
        value = getattr(row, "class_" if field == "class" else field)
        return "—" if value is None else str(value)

    for row in run_config(found[0]).rows:
        if any(label(row, k) != v for k, v in filters.items()) or any(
            label(row, k) == v for k, v in excluded.items()
        ):
            continue
        r, c = tuple(label(row, f) for f in index), label(row, columns)
        if c in table.setdefault(r, {}):
            raise ValueError(f"several values for ({', '.join(r)}; {c}): narrow `where`")
        table[r][c] = row.value
        column_names[c] = None
    if not table:
        raise ValueError(f"no result rows match where={where!r}")
    out = [
        "| " + " | ".join(index) + " | " + " | ".join(column_names) + " |",
        "|" + "---|" * len(index) + "---:|" * len(column_names),
    ]
    for r, values in table.items():
        cells = [f"{values[c]:.{int(digits)}f}" if c in values else "" for c in column_names]
        out.append("| " + " | ".join(r) + " | " + " | ".join(cells) + " |")
    return "\n".join(out)
