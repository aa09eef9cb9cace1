"""What libraries read from the code: the Python API, the hooks, the protocols and the author kit
from their signatures and Google-style docstrings (griffe, statically, as mkdocstrings does), and
the command line from click (mkdocs-click's Markdown generator). evalkit decides only which
objects a page lists; how each is declared is the library's reading."""

from __future__ import annotations

import functools
import inspect
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import griffe
from mkdocs_click._docs import make_command_docs  # the generator behind its `::: mkdocs-click`
from rst_text import first_paragraph, inline, prose

from evalkit_tables import KIND_USE, heading

ROOT = Path(__file__).resolve().parents[2]
WIDTH = 88


@functools.cache
def package() -> Any:
    """evalkit as griffe reads it from the source of this checkout."""
    # griffe warns about docstring style (e.g. "a, b: text" documenting two parameters at once,
    # which the Args lists below render as written); the reference is checked by its tests
    logging.getLogger("griffe").setLevel(logging.ERROR)
    return griffe.load(
        "evalkit", search_paths=[ROOT / "src"], resolve_aliases=True,
        docstring_parser="google", docstring_options={"returns_multiple_items": False},
    )


def obj(path: str) -> Any:
    """The griffe object of ``evalkit.<path>``, through re-exports."""
    found = package()[path]
    return found.final_target if found.is_alias else found


def signature(path: str, name: str) -> str:
    """griffe's signature, laid out by ruff's formatter (one parameter per line when it is longer
    than WIDTH), as mkdocstrings lays out its signatures."""
    stand_in = "_" * len(name)  # a dotted name is no Python name; one as long wraps the same
    source = f"def {obj(path).signature(name=stand_in)}: ...\n"
    done = subprocess.run(  # WIDTH without the "def " and ": ..." around the signature
        [sys.executable, "-m", "ruff", "format", "--isolated", f"--line-length={WIDTH + 9}",
         "--config", "format.quote-style='preserve'", "-"],
        input=source, capture_output=True, text=True,
    )
    if done.returncode:
        raise RuntimeError(f"ruff cannot lay out {source!r} (pip install -e '.[docs]'): {done.stderr.strip()}")
    return name + done.stdout.removeprefix(f"def {stand_in}").removesuffix(": ...\n")


def docstring(path: str, links: dict[str, str] | None = None) -> str:
    """The docstring of ``evalkit.<path>`` as Markdown, section by section as griffe parsed it."""
    doc = obj(path).docstring
    out = []
    for section in doc.parsed if doc else ():
        kind = section.kind.value
        if kind == "text":
            out.append(prose(section.value, links))
        elif kind in ("parameters", "raises", "returns", "yields", "attributes"):
            title = section.title or {"parameters": "Args"}.get(kind, kind.capitalize())
            out += [f"**{title}:**", ""]
            for item in section.value:
                text = inline(" ".join(item.description.split()), links)
                if kind in ("returns", "yields"):
                    out.append(f"- {text}")
                else:  # a parameter, attribute or exception by name ("a, b: ..." documents two)
                    names = str(item.annotation if kind == "raises" else item.name).split(", ")
                    out.append(f"- {', '.join(f'`{n}`' for n in names)}: {text}")
        elif kind == "examples":
            out += ["**Examples:**", ""]
            out += [f"```python\n{text}\n```" if str(k.value) == "examples" else prose(text, links) for k, text in section.value]
        elif kind == "admonition":
            out += [f"**{section.title}:** {prose(section.value.contents, links)}"]
        else:
            raise ValueError(f"{path}: a docstring section of kind {kind!r} has no rendering yet")
        out.append("")
    return "\n".join(out).strip()


def summary(path: str) -> str:
    doc = obj(path).docstring
    return first_paragraph(doc.value if doc else "")


def api_entry(path: str, name: str, anchor: str, title: str = "") -> list[str]:
    """A heading, the signature and the docstring of one function."""
    return [
        *heading(3, f"`{title or name}`", anchor),
        "```python",
        signature(path, name),
        "```",
        "",
        docstring(path),
        "",
    ]


def python_api() -> str:
    out = []
    for name in ("evaluate", "run"):
        out += api_entry(name, f"evalkit.{name}", f"api-{name}")
    return "\n".join(out)


def cli() -> str:
    """mkdocs-click's Markdown of the group's own options and of each command (at click's
    fixed help width, so the text does not depend on the terminal that writes it)."""
    from evalkit.cli import main

    before = click.formatting.FORCED_WIDTH
    click.formatting.FORCED_WIDTH = WIDTH
    try:
        group = list(make_command_docs("evalkit", main, depth=2))
        out = group[: next(i for i, line in enumerate(group) if line.startswith("#### "))]
        for name in sorted(main.commands):
            out += [f'<a id="cli-{name}"></a>', "", *make_command_docs(f"evalkit {name}", main.commands[name], depth=2)]
    finally:
        click.formatting.FORCED_WIDTH = before
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# Hooks, protocols, author kit
# ---------------------------------------------------------------------------------------------


def _protocols() -> list[type]:
    """The protocol classes evalkit.protocols offers, in source order (those that need nothing
    but arrays are defined in evalkit.components)."""
    from evalkit import components, protocols

    return [
        value for module in (components, protocols) for value in vars(module).values()
        if inspect.isclass(value) and value.__module__ == module.__name__ and getattr(value, "_is_protocol", False)
    ]


def _protocol_links() -> dict[str, str]:
    links = {f"evalkit.protocols.{p.__name__}": f"#protocol-{p.__name__.lower()}" for p in _protocols()}
    return {**links, "OPTIONAL": "plugins.md#optional-members"}


def _path(value: Any) -> str:
    """The griffe path (below ``evalkit.``) of a runtime class or function."""
    return f"{value.__module__.removeprefix('evalkit.')}.{value.__qualname__}"


def hookspecs() -> str:
    from evalkit import hookspecs as module
    from evalkit.discovery import make_plugin_manager
    from evalkit.protocols import KINDS

    kind_of = {hook: kind for kind, (_, hook) in KINDS.items()}
    pm, _ = make_plugin_manager()
    links = _protocol_links()
    out = [
        docstring("hookspecs", links),
        "",
        "The `register` callback that every registration hook receives:",
        "",
        "```python",
        signature("registry.Register.__call__", "register"),
        "```",
        "",
        "| hook | kind | protocol | built-in implementations |",
        "|---|---|---|---|",
    ]
    specs = [name for name, func in vars(module).items() if name.startswith("evalkit_") and hasattr(func, "evalkit_spec")]
    for name in specs:
        kind = kind_of.get(name)
        protocol_text = " or ".join(f"[`{p.__name__}`](#protocol-{p.__name__.lower()})" for p in _hook_protocols(kind)) or "—"
        out.append(f"| [`{name}`](#{name}) | `{kind or '—'}` | {protocol_text} | {_builtin_impls(pm, name)} |")
    out.append("")
    for name in specs:
        options = {k: v for k, v in getattr(module, name).evalkit_spec.items() if v not in (False, None)}
        out += [*heading(3, f"`{name}`", name), "```python", signature(f"hookspecs.{name}", name), "```", ""]
        if options:
            out += ["Hook options: " + ", ".join(f"`{k}={v!r}`" for k, v in options.items()) + ".", ""]
        out += [docstring(f"hookspecs.{name}", links), ""]
        if kind_of.get(name):
            out += [f"Registers components of kind `{kind_of[name]}`, selected by {KIND_USE.get(kind_of[name], 'name')}.", ""]
    return "\n".join(out)


def _hook_protocols(kind: str | None) -> list[type]:
    """The protocols a hook's components implement: a metric is a SetMetric or a DataMetric."""
    from evalkit import protocols as module

    if kind == "metric":
        return [getattr(module, n) for n in ("SetMetric", "DataMetric") if hasattr(module, n)]
    return [module.KINDS[kind][0]] if kind else []


def _builtin_impls(pm: Any, hook_name: str) -> str:
    impls = getattr(pm.hook, hook_name).get_hookimpls()
    names = sorted(  # not pluggy's call order, which follows the order of installation
        f"`{getattr(impl.plugin, '__name__', impl.plugin_name)}`"
        for impl in impls if impl.plugin_name.partition(":")[0] == "evalkit"
    )
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
    out = [docstring("protocols", links), ""]
    for protocol in _protocols():
        name = protocol.__name__
        out += heading(3, f"`{name}`", f"protocol-{name.lower()}")
        kinds = [k for k in kinds_of.get(protocol, []) if not (name == "Component" and k == "metric")]
        if kinds:
            out += ["For components of kind " + ", ".join(f"`{k}`" for k in kinds) + ".", ""]
        bases = ", ".join(str(b) for b in obj(_path(protocol)).bases if str(b) != "Generic")
        out += ["```python", f"class {name}({bases}):", *_members(protocol), "```", ""]
        out += [docstring(_path(protocol), links) or "Required of every component, whatever its kind.", ""]
    for helper in ("NoParams", "BaseComponent"):
        out += heading(3, f"`evalkit.plugin.{helper}`", f"helper-{helper.lower()}")
        out += [docstring(_path(getattr(module, helper)), links), ""]
    return "\n".join(out)


def _members(protocol: type) -> list[str]:
    """The attributes and methods a protocol requires, its own and inherited, as stub lines."""
    lines = []
    for klass in reversed(protocol.__mro__):
        if klass.__module__ not in ("evalkit.protocols", "evalkit.components"):
            continue
        note = f"  # from {klass.__name__}" if klass is not protocol else ""
        for name, member in obj(_path(klass)).members.items():
            if member.is_attribute and member.annotation is not None:
                kind = f"ClassVar[{member.annotation}]" if "class-attribute" in member.labels else member.annotation
                lines.append(f"    {name}: {kind}{note}")
            elif member.is_function and (not name.startswith("_") or name == "__call__"):
                text = member.signature(name=name).replace("(", "(self, ", 1).replace("(self, )", "(self)")
                lines.append(f"    def {text}: ...{note}")
    return lines or ["    ..."]


def author_kit() -> str:
    from evalkit import testing
    from evalkit.protocols import KINDS

    out = [docstring("testing"), ""]
    present = [k for k in KINDS if callable(getattr(testing, f"check_{k}", None))]
    missing = [k for k in KINDS if k not in present]
    out += ["Checks available: " + ", ".join(f"[`check_{k}`](#check_{k})" for k in present) + ".", ""]
    if missing:
        out += ["No check yet for the kinds " + ", ".join(f"`{k}`" for k in missing) + ".", ""]
    for kind in present:
        out += api_entry(f"testing.check_{kind}", f"evalkit.testing.check_{kind}", f"check_{kind}", f"check_{kind}")
        properties = getattr(testing, f"{kind.upper()}_CHECKS", None)
        if isinstance(properties, tuple) and properties:
            out += [f"The properties, in the order `check_{kind}` runs them (`evalkit.testing.{kind.upper()}_CHECKS`):", ""]
            out += [f"1. `{f.__name__}`: {inline(summary(_path(f)))}" for f in properties]
            out.append("")
    out += api_entry("testing.plugin_registry", "evalkit.testing.plugin_registry", "plugin_registry", "plugin_registry")
    return "\n".join(out)
