"""MkDocs hook: generate evalkit's reference sections at build time, from the code itself.

A page asks for a generated section with a marker, an HTML comment on a line of its own (so
the page still reads cleanly on GitHub, without the section)::

    <!-- evalkit:config-keys -->    the run config keys: RunConfig and its sections
    <!-- evalkit:components -->     every built-in component of every kind, with its parameters
    <!-- evalkit:cli -->            the command line: click's help of every command
    <!-- evalkit:python-api -->     evalkit.evaluate and evalkit.run
    <!-- evalkit:hookspecs -->      the hook specifications of evalkit/hookspecs.py
    <!-- evalkit:protocols -->      the component protocols of evalkit/protocols.py
    <!-- evalkit:optional-members -->  the optional members of each kind (protocols.OPTIONAL)
    <!-- evalkit:author-kit -->     the check_<kind> functions of evalkit.testing
    <!-- evalkit:bundled-configs --> every config in configs/, with the first sentence of its comment
    <!-- evalkit:results config=NAME rows=FIELD,... columns=FIELD where=FIELD:VALUE,FIELD!VALUE -->
                                    a pivot of the result rows of the YAML config named NAME on
                                    the same page, run at build time from configs/

Nothing here is written by hand about the code: types, defaults, descriptions, signatures and
docstrings are read with pydantic and ``inspect``, so the reference cannot drift from the code.
An unknown marker, or a section that cannot be generated, stops the build.

The functions are plain (Markdown in, Markdown out) so that tests can call them without MkDocs.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import os
import re
import shlex
import textwrap
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!--\s*evalkit:(?P<name>[a-z-]+)(?P<args>[^>]*?)\s*-->\s*$", re.MULTILINE)
FENCE = re.compile(r"^```ya?ml[^\n]*\n(?P<body>.*?)^```\s*$", re.MULTILINE | re.DOTALL)

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


# ---------------------------------------------------------------------------------------------
# MkDocs events
# ---------------------------------------------------------------------------------------------


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace every marker of the page by its generated Markdown."""
    from mkdocs.exceptions import PluginError

    def replace(match: re.Match[str]) -> str:
        name, args = match["name"], _parse_args(match["args"])
        try:
            return generate(name, args, markdown)
        except Exception as exc:  # any failure: reported with the page and marker
            raise PluginError(
                f"{page.file.src_uri}: cannot generate <!-- evalkit:{name} -->: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    markdown = MARKER.sub(replace, markdown)
    leftover = re.search(r"^<!--\s*evalkit\b.*$", markdown, re.MULTILINE)
    if leftover:
        raise PluginError(f"{page.file.src_uri}: malformed marker {leftover[0]!r}")
    return markdown


def generate(name: str, args: dict[str, str], page_markdown: str = "") -> str:
    """The Markdown of one marker."""
    generators: dict[str, Callable[[], str]] = {
        "config-keys": config_keys,
        "components": components,
        "cli": cli,
        "python-api": python_api,
        "hookspecs": hookspecs,
        "protocols": protocols,
        "optional-members": optional_members,
        "author-kit": author_kit,
        "bundled-configs": bundled_configs,
        "results": lambda: results(page_markdown, **args),
    }
    if name not in generators:
        raise ValueError(f"unknown marker; known: {', '.join(generators)}")
    if args and name != "results":
        raise ValueError(f"takes no arguments, got {args}")
    return generators[name]().strip() + "\n"


def _parse_args(text: str) -> dict[str, str]:
    args = {}
    for word in shlex.split(text):
        key, sep, value = word.partition("=")
        if not sep:
            raise ValueError(f"marker arguments are key=value, got {word!r}")
        args[key] = value
    return args


# ---------------------------------------------------------------------------------------------
# Docstrings and types as Markdown
# ---------------------------------------------------------------------------------------------

SECTION = re.compile(r"^(Args|Arguments|Attributes|Returns|Raises|Yields|Example|Examples|Note|Notes):\s*$")
LIST_ITEM = re.compile(r"^([-*+]|\d+\.)\s")
TOKEN = re.compile(r"(:[a-z]+:`~?[^`]+`|``.+?``|`[^`]+`)")


def inline(text: str, links: dict[str, str] | None = None, table: bool = False) -> str:
    """reST-flavoured docstring text as Markdown: ``code`` and :role:`x` become code spans (or
    links, for names in ``links``); Markdown specials outside code are escaped."""
    links = links or {}
    out = []
    for i, part in enumerate(TOKEN.split(text)):
        if not i % 2:  # prose
            out.append(re.sub(r"([\\*_\[\]])", r"\\\1", part).replace("<", "&lt;"))
        elif part.startswith(":"):  # :role:`target` or :role:`~target`
            target = part.split("`")[1]
            short, target = (target[1:].rsplit(".", 1)[-1], target[1:]) if target.startswith("~") else (target, target)
            out.append(f"[`{short}`]({links[target]})" if target in links else f"`{short}`")
        else:  # ``code`` or `code`
            code = part[2:-2] if part.startswith("``") else part[1:-1]
            out.append(f"`{code}`" if "`" not in code else f"`` {code} ``")
    result = "".join(out)
    return result.replace("|", "\\|") if table else result


def first_paragraph(doc: str | None) -> str:
    text = inspect.cleandoc(doc or "")
    return " ".join(text.split("\n\n", 1)[0].split())


def docstring(doc: str | None, links: dict[str, str] | None = None) -> str:
    """A whole docstring as Markdown: paragraphs joined, lists kept, ``::`` literal blocks and
    Google-style sections (Args, Returns, Raises, ...) rendered."""
    lines = inspect.cleandoc(doc or "").splitlines()
    out: list[str] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            out.append(inline(" ".join(s.strip() for s in para), links))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            flush()
            out.append("")
            i += 1
        elif SECTION.match(line):
            flush()
            title = SECTION.match(line)[1]
            block, i = _indented(lines, i + 1)
            out += ["", f"**{title}:**", ""]
            if title.startswith("Example"):
                out += ["```python", *textwrap.dedent("\n".join(block)).splitlines(), "```"]
            else:
                out += _section_items(block, title, links)
            out.append("")
        elif line.rstrip().endswith("::"):
            para.append(line.rstrip()[:-1])
            flush()
            block, i = _indented(lines, i + 1)
            out += ["", "```python", *textwrap.dedent("\n".join(block)).strip("\n").splitlines(), "```", ""]
        elif LIST_ITEM.match(line.lstrip()) and not line.startswith("    "):
            flush()
            para.append(line)
            i += 1
            while i < len(lines) and lines[i].strip() and not LIST_ITEM.match(lines[i].lstrip()):
                para.append(lines[i])
                i += 1
            marker, _, rest = para[0].strip().partition(" ")
            para[0] = rest
            text = " ".join(s.strip() for s in para)
            para.clear()
            if out and out[-1].strip() and not LIST_ITEM.match(out[-1]):
                out.append("")  # Markdown starts a list only after a blank line
            out.append(f"{marker} {inline(text, links)}")
            if i < len(lines) and lines[i].strip() and LIST_ITEM.match(lines[i].lstrip()):
                continue
        elif line.startswith("    ") and not para:
            block, i = _indented(lines, i)
            out += ["```python", *textwrap.dedent("\n".join(block)).strip("\n").splitlines(), "```"]
        else:
            para.append(line)
            i += 1
    flush()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _indented(lines: list[str], i: int) -> tuple[list[str], int]:
    """The indented block starting at ``lines[i]`` (blank lines inside it included)."""
    block = []
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
        if not lines[i].strip() and (i + 1 >= len(lines) or not lines[i + 1].startswith(" ")):
            break
        block.append(lines[i])
        i += 1
    while block and not block[0].strip():
        block.pop(0)
    return block, i


def _section_items(block: list[str], title: str, links: dict[str, str] | None) -> list[str]:
    items: list[list[str]] = []
    base = min((len(s) - len(s.lstrip()) for s in block if s.strip()), default=0)
    for line in block:
        if not line.strip():
            continue
        if len(line) - len(line.lstrip()) == base or not items:
            items.append([line.strip()])
        else:
            items[-1].append(line.strip())
    out = []
    for item in items:
        text = " ".join(item)
        head, sep, rest = text.partition(": ")
        if sep and title != "Returns" and re.fullmatch(r"[\w.*]+(, [\w.*]+)*( \([^)]*\))?", head):
            names, _, kind = head.partition(" (")
            names = ", ".join(f"`{n}`" for n in names.split(", "))
            out.append(f"- {names}{' (' + kind if kind else ''}: {inline(rest, links)}")
        else:
            out.append(f"- {inline(text, links)}")
    return out


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
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, float) and math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if isinstance(value, float) and math.isnan(value):
        return ".nan"
    try:
        text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=10**6)
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


def signature(func: Callable[..., Any], name: str | None = None, width: int = 88) -> str:
    """``name(params) -> return`` with annotations as written in the source (they are strings
    under ``from __future__ import annotations``), wrapped one parameter per line if long."""
    sig = inspect.signature(func)
    parts, star = [], False
    for p in sig.parameters.values():
        if p.name == "self":
            continue
        text = p.name
        if p.kind is p.VAR_POSITIONAL:
            text, star = "*" + text, True
        elif p.kind is p.VAR_KEYWORD:
            text = "**" + text
        elif p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.annotation is not p.empty:
            text += f": {_annotation(p.annotation)}"
        if p.default is not p.empty:
            text += f" = {p.default!r}" if p.annotation is not p.empty else f"={p.default!r}"
        parts.append(text)
    ret = "" if sig.return_annotation is sig.empty else f" -> {_annotation(sig.return_annotation)}"
    name = name or func.__name__
    one_line = f"{name}({', '.join(parts)}){ret}"
    if len(one_line) <= width:
        return one_line
    return f"{name}(\n" + "".join(f"    {p},\n" for p in parts) + f"){ret}"


# ---------------------------------------------------------------------------------------------
# The run config and the components
# ---------------------------------------------------------------------------------------------


def config_keys() -> str:
    from evalkit.config import (
        BootstrapConfig,
        DataConfig,
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
    )
    links = {model.__name__: f"[mapping](#{anchor})" for model, _, anchor in sections[1:]}
    out = []
    for model, title, anchor in sections:
        out += [
            f"### {title} {{#{anchor}}}",
            "",
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
            f"### {title} {{#kind-{kind}}}",
            "",
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
            out += [f"#### `{e.name}` {{#{kind}-{e.name}}}", ""]
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


def cli() -> str:
    import click

    from evalkit.cli import main

    root = click.Context(main, info_name="evalkit", terminal_width=88, max_content_width=88)
    out = []
    for name, command in main.commands.items():
        ctx = click.Context(command, info_name=name, parent=root, terminal_width=88, max_content_width=88)
        out += [
            f"### `evalkit {name}` {{#cli-{name}}}",
            "",
            "```text",
            command.get_help(ctx),
            "```",
            "",
        ]
    return "\n".join(out)


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


def python_api() -> str:
    import evalkit

    out = []
    for name in ("evaluate", "run"):
        func = getattr(evalkit, name)
        out += [
            f"### `evalkit.{name}` {{#api-{name}}}",
            "",
            "```python",
            signature(func, f"evalkit.{name}"),
            "```",
            "",
            docstring(func.__doc__),
            "",
        ]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Hooks, protocols, author kit
# ---------------------------------------------------------------------------------------------


def _protocols() -> list[type]:
    """The protocol classes evalkit.protocols offers, in source order (those that need nothing
    but arrays are defined in evalkit.components)."""
    from evalkit import components, protocols

    return [
        obj for module in (components, protocols) for obj in vars(module).values()
        if inspect.isclass(obj) and obj.__module__ == module.__name__ and getattr(obj, "_is_protocol", False)
    ]


def _protocol_links() -> dict[str, str]:
    links = {f"evalkit.protocols.{p.__name__}": f"#protocol-{p.__name__.lower()}" for p in _protocols()}
    return {**links, "OPTIONAL": "plugins.md#optional-members"}


def hookspecs() -> str:
    from evalkit import hookspecs as module
    from evalkit.discovery import make_plugin_manager
    from evalkit.protocols import KINDS
    from evalkit.registry import Registry

    kind_of = {hook: kind for kind, (_, hook) in KINDS.items()}
    protocol_of = {hook: protocol for _, (protocol, hook) in KINDS.items()}
    pm, _ = make_plugin_manager()
    register = Registry().register_for("tnorm", "plugin", "distribution")
    links = _protocol_links()
    out = [
        docstring(module.__doc__, links),
        "",
        "The `register` callback that every registration hook receives:",
        "",
        "```python",
        signature(register, "register"),
        "```",
        "",
        "| hook | kind | protocol | built-in implementations |",
        "|---|---|---|---|",
    ]
    specs = [
        (name, func) for name, func in vars(module).items()
        if name.startswith("evalkit_") and hasattr(func, "evalkit_spec")
    ]
    for name, _func in specs:
        protocols_ = _hook_protocols(kind_of.get(name), protocol_of.get(name))
        protocol_text = " or ".join(f"[`{p.__name__}`](#protocol-{p.__name__.lower()})" for p in protocols_) or "—"
        out.append(f"| [`{name}`](#{name}) | `{kind_of.get(name, '—')}` | {protocol_text} | {_builtin_impls(pm, name)} |")
    out.append("")
    for name, func in specs:
        options = {k: v for k, v in func.evalkit_spec.items() if v not in (False, None)}
        out += [f"### `{name}` {{#{name}}}", "", "```python", signature(func), "```", ""]
        if options:
            out += ["Hook options: " + ", ".join(f"`{k}={v!r}`" for k, v in options.items()) + ".", ""]
        out += [docstring(func.__doc__, links), ""]
        if name in kind_of:
            out += [f"Registers components of kind `{kind_of[name]}`, selected by {KIND_USE.get(kind_of[name], 'name')}.", ""]
    return "\n".join(out)


def _hook_protocols(kind: str | None, protocol: type | None) -> list[type]:
    """The protocols a hook's components implement: a metric is a SetMetric or a DataMetric."""
    from evalkit import protocols as module

    if kind == "metric":
        return [getattr(module, n) for n in ("SetMetric", "DataMetric") if hasattr(module, n)]
    return [protocol] if protocol else []


def _builtin_impls(pm: Any, hook_name: str) -> str:
    impls = getattr(pm.hook, hook_name).get_hookimpls()
    names = [
        f"`{getattr(impl.plugin, '__name__', impl.plugin_name)}`"
        for impl in impls if impl.plugin_name.partition(":")[0] == "evalkit"
    ]
    return ", ".join(names) or "—"


def protocols() -> str:
    from evalkit import protocols as module
    from evalkit.protocols import KINDS

    kinds_of: dict[type, list[str]] = {}
    for kind, (protocol, _) in KINDS.items():
        kinds_of.setdefault(protocol, []).append(kind)
    for name in ("SetMetric", "DataMetric"):  # a metric keeps either protocol
        if hasattr(module, name):
            kinds_of.setdefault(getattr(module, name), []).append("metric")
    links = _protocol_links()
    out = [docstring(module.__doc__, links), ""]
    for protocol in _protocols():
        bases = ", ".join(b.__name__ for b in protocol.__bases__ if b is not typing.Generic)
        out += [f"### `{protocol.__name__}` {{#protocol-{protocol.__name__.lower()}}}", ""]
        kinds = [k for k in kinds_of.get(protocol, []) if not (protocol.__name__ == "Component" and k == "metric")]
        if kinds:
            out += ["For components of kind " + ", ".join(f"`{k}`" for k in kinds) + ".", ""]
        out += ["```python", f"class {protocol.__name__}({bases}):", *_members(protocol), "```", ""]
        out += [docstring(protocol.__doc__, links) or "Required of every component, whatever its kind.", ""]
    for helper in ("NoParams", "BaseComponent"):
        obj = getattr(module, helper)
        out += [f"### `evalkit.plugin.{helper}` {{#helper-{helper.lower()}}}", "", docstring(obj.__doc__, links), ""]
    return "\n".join(out)


def optional_members() -> str:
    """The table of every kind's optional members, from their declarations."""
    from evalkit.protocols import OPTIONAL

    out = ["| kind | member | default | what offering it means |", "|---|---|---|---|"]
    for kind, members in OPTIONAL.items():
        for member in members:
            default = "absent" if member.args is not None else f"`{member.default!r}`"
            out.append(f"| `{kind}` | `{member.signature}` | {default} | {inline(member.meaning, table=True)} |")
    return "\n".join(out)


def _members(protocol: type) -> list[str]:
    """The attributes and methods a protocol requires, its own and inherited, as stub lines."""
    lines = []
    for klass in reversed(protocol.__mro__):
        if klass is object or klass.__name__ in ("Protocol", "Generic"):
            continue
        note = f"  # from {klass.__name__}" if klass is not protocol else ""
        for attr, annotation in inspect.get_annotations(klass).items():
            lines.append(f"    {attr}: {_annotation(annotation)}{note}")
        for attr, value in vars(klass).items():
            if callable(value) and (not attr.startswith("_") or attr == "__call__"):
                method = signature(value, attr, width=200).replace(attr + "(", attr + "(self, ", 1).replace("(self, )", "(self)")
                lines.append(f"    def {method}: ...{note}")
    return lines or ["    ..."]


def author_kit() -> str:
    from evalkit import testing
    from evalkit.protocols import KINDS

    out = [docstring(testing.__doc__), ""]
    present = [k for k in KINDS if callable(getattr(testing, f"check_{k}", None))]
    missing = [k for k in KINDS if k not in present]
    out += [
        "Checks available: " + ", ".join(f"[`check_{k}`](#check_{k})" for k in present) + ".",
        "",
    ]
    if missing:
        out += ["No check yet for the kinds " + ", ".join(f"`{k}`" for k in missing) + ".", ""]
    for kind in present:
        func = getattr(testing, f"check_{kind}")
        out += [
            f"### `check_{kind}` {{#check_{kind}}}",
            "",
            "```python",
            signature(func, f"evalkit.testing.check_{kind}"),
            "```",
            "",
            docstring(func.__doc__),
            "",
        ]
        properties = getattr(testing, f"{kind.upper()}_CHECKS", None)
        if isinstance(properties, tuple) and properties:
            out += [f"The properties, in the order `check_{kind}` runs them (`evalkit.testing.{kind.upper()}_CHECKS`):", ""]
            out += [f"1. `{f.__name__}`: {inline(first_paragraph(f.__doc__))}" for f in properties]
            out.append("")
    out += [
        "### `plugin_registry` {#plugin_registry}",
        "",
        "```python",
        signature(testing.plugin_registry, "evalkit.testing.plugin_registry"),
        "```",
        "",
        docstring(testing.plugin_registry.__doc__),
    ]
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
