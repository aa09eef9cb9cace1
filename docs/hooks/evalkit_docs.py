"""evalkit's generated reference, written into docs/*.md between marker lines.

A page asks for a generated section with a pair of HTML comments, each on a line of its own;
what lies between them is generated, so the page reads the same in the repository and on the
site::

    <!-- evalkit:config-keys -->
    (generated: edit the code, not this)
    <!-- /evalkit:config-keys -->

    config-keys       the run config keys: RunConfig and its sections (pydantic)
    components        every built-in component of every kind, with its parameters (registry)
    optional-members  the optional members of each kind (protocols.OPTIONAL)
    bundled-configs   every config in configs/, with the first sentence of its comment
    results config=NAME rows=FIELD,... columns=FIELD where=FIELD:VALUE,FIELD!VALUE
                      a pivot of the result rows of the YAML config named NAME on the same page
    cli               the command line (mkdocs-click)
    python-api        evalkit.evaluate and evalkit.run (griffe)
    hookspecs         the hook specifications of evalkit/hookspecs.py (griffe)
    protocols         the component protocols of evalkit/protocols.py (griffe)
    author-kit        the check_<kind> functions of evalkit.testing (griffe)

``python docs/hooks/evalkit_docs.py --write`` regenerates every section in place, ``--check``
names the stale ones (and exits 1). As a MkDocs hook (mkdocs.yml) it regenerates them at build
time, so ``mkdocs serve`` follows the code. An unknown or unclosed marker, or a section that
cannot be generated, is an error naming the page.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import library_reference as libraries

import evalkit_tables as tables

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
COMMAND = "python docs/hooks/evalkit_docs.py --write"
SECTION = re.compile(
    r"^(?P<open><!--\s*evalkit:(?P<name>[a-z-]+)(?P<args>[^>]*?)\s*-->)[ \t]*\n"
    r"(?P<body>.*?)^(?P<close><!--\s*/evalkit:(?P=name)\s*-->)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
STRAY = re.compile(r"^<!--\s*/?evalkit\b.*$", re.MULTILINE)


def generate(name: str, args: dict[str, str], page_markdown: str = "") -> str:
    """The Markdown of one section."""
    generators: dict[str, Callable[[], str]] = {
        "config-keys": tables.config_keys,
        "components": tables.components,
        "optional-members": tables.optional_members,
        "bundled-configs": tables.bundled_configs,
        "results": lambda: tables.results(page_markdown, **args),
        "cli": libraries.cli,
        "python-api": libraries.python_api,
        "hookspecs": libraries.hookspecs,
        "protocols": libraries.protocols,
        "author-kit": libraries.author_kit,
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


def fill(markdown: str, page: str) -> str:
    """``markdown`` with every generated section regenerated (blank lines around it, so that
    it is a block of its own)."""

    def replace(match: re.Match[str]) -> str:
        try:
            body = generate(match["name"], _parse_args(match["args"]), markdown)
        except Exception as exc:  # any failure: reported with the page and marker
            raise ValueError(f"{page}: cannot generate {match['open']}: {type(exc).__name__}: {exc}") from exc
        return f"{match['open']}\n\n{body}\n{match['close']}"

    stray = STRAY.search(SECTION.sub("", markdown))
    if stray:
        line = markdown.count("\n", 0, markdown.index(stray[0])) + 1
        raise ValueError(
            f"{page}:{line}: {stray[0]!r} is not one of a pair: a section starts with "
            "<!-- evalkit:NAME --> and ends with <!-- /evalkit:NAME --> on a line of its own"
        )
    return SECTION.sub(replace, markdown)


def pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def stale_pages() -> dict[Path, str]:
    """The pages whose generated sections differ from the code, with their regenerated text."""
    found = {}
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = fill(text, page.name)
        if new != text:
            found[page] = new
    return found


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """MkDocs: the page with its sections regenerated, without their marker lines."""
    from mkdocs.exceptions import PluginError

    try:
        return SECTION.sub(lambda match: match["body"], fill(markdown, page.file.src_uri))
    except ValueError as exc:
        raise PluginError(str(exc)) from exc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the reference sections of docs/*.md from the code.")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="rewrite the stale sections in place")
    action.add_argument("--check", action="store_true", help="list the pages with stale sections; exit 1 if any")
    args = parser.parse_args(argv)
    try:
        stale = stale_pages()
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for page, text in stale.items():
        if args.write:
            page.write_text(text, encoding="utf-8")
        print(f"{'rewrote' if args.write else 'stale'}: {page.relative_to(DOCS.parent)}")
    if stale and args.check:
        print(f"regenerate them with `{COMMAND}`", file=sys.stderr)
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
