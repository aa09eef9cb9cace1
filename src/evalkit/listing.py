"""What ``evalkit plugins`` prints: every registered component at a glance (one line each,
grouped by kind, cut to the terminal's width), or one component in full (its parameters with
their types, defaults and descriptions, and how a config names it)."""

from __future__ import annotations

import difflib
import textwrap
from collections.abc import Iterable
from typing import Any

from evalkit.control_chars import visible
from evalkit.errors import ConfigError, plural
from evalkit.registry import Entry, Registry

#: How a config names a component of each kind.
USAGE = {
    "representation": "representation: {name}", "similarity": "similarity: {name}", "tnorm": "tnorm: {name}",
    "averaging": "averaging: {name}", "metric": "metrics: [{name}]", "loader": "{{path: FILE, loader: {name}}}",
    "report_writer": "report: {{formats: [{name}]}}",
}


def kind_of(registry: Registry, written: str) -> str:
    """The kind ``--kind`` names, singular or plural (``tnorms``, ``report writer``)."""
    kinds = list(dict.fromkeys(e.kind for e in registry))
    wanted = written.strip().lower().replace(" ", "_").replace("-", "_")
    for kind in kinds:
        if wanted in (kind, plural(kind)):
            return kind
    close = difflib.get_close_matches(wanted, kinds, 1)
    raise ConfigError(f"--kind {written!r} is no kind of component" + (f"; did you mean {close[0]!r}?" if close else ".")
                      + f" The kinds: {', '.join(kinds)}")


def overview(entries: Iterable[Entry], width: int) -> list[str]:
    """One line per component, under a heading per kind: name, distribution and summary (its
    docstring's first sentence), cut to ``width`` with an ellipsis."""
    entries = list(entries)
    lines: list[str] = []
    for kind in dict.fromkeys(e.kind for e in entries):
        of_kind = [e for e in entries if e.kind == kind]
        names = max(len(visible(e.name)) for e in of_kind)
        sources = max(len(visible(e.distribution)) for e in of_kind)
        lines += ["", f"{plural(kind).replace('_', ' ')} ({len(of_kind)})"]
        for e in of_kind:
            line = f"  {visible(e.name):<{names}}  {visible(e.distribution):<{sources}}  {visible(e.summary)}"
            lines.append(cut(line.rstrip(), width))
    return lines


def details_of(entries: Iterable[Entry], name: str, kind: str | None = None) -> list[Entry]:
    """The components called ``name`` (one per kind at most); none is an error with the names
    closest to it."""
    entries = list(entries)
    found = [e for e in entries if e.name == name]
    if not found:
        close = difflib.get_close_matches(name, list(dict.fromkeys(e.name for e in entries)), 3)
        what = kind.replace("_", " ") if kind is not None else "component"
        raise ConfigError(f"no {what} is called {name!r}" + (f"; did you mean {', '.join(map(repr, close))}?"
                                                            if close else "") + " (see `evalkit plugins`)")
    return found


def details(found: Iterable[Entry], width: int) -> list[str]:
    """Components in full: summary, how a config names them, each parameter."""
    lines: list[str] = []
    for e in found:
        lines += [f"{visible(e.name)}: a {e.kind.replace('_', ' ')} from {visible(e.distribution)} "
                  f"(plugin {visible(e.plugin)})"]
        lines += wrapped(visible(e.summary), width, "  ")
        lines += ["", "  in a config: " + USAGE.get(e.kind, "{name}").format(name=visible(e.name))]
        lines += ["", "  parameters:" if e.params else "  parameters: none"]
        for key, schema in e.params.items():
            lines += wrapped(f"{visible(key)} ({_described(schema)}): {visible(schema.get('description', ''))}",
                             width, "    ", "      ")
        lines.append("")
    return lines[:-1]


def _described(schema: dict[str, Any]) -> str:
    """A parameter's type, default and bounds, as a reader of a config needs them."""
    kind = schema.get("type") or " or ".join(
        str(option.get("type", "?")) for option in schema.get("anyOf", ()) if option.get("type") != "null") or "any"
    if "enum" in schema:
        kind = "one of " + ", ".join(map(str, schema["enum"]))
    parts = [kind, f"default {schema['default']!r}" if "default" in schema else "required"]
    bounds = (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<"))
    parts += [f"{sign} {schema[key]}" for key, sign in bounds if key in schema]
    return ", ".join(parts)


def cut(line: str, width: int) -> str:
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"


def wrapped(text: str, width: int, indent: str, subsequent: str | None = None) -> list[str]:
    return textwrap.wrap(text, max(width, 40), initial_indent=indent, subsequent_indent=subsequent or indent,
                         break_long_words=False, break_on_hyphens=False) or [indent.rstrip()]
