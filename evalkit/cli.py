"""The command line: ``evalkit run``, ``evalkit validate``, ``evalkit plugins``.

Every :class:`~evalkit.errors.EvalkitError` becomes one readable message and exit status 1.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import click
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table as RichTable

from evalkit import __version__, scaffold
from evalkit.api import make_plan, run as run_config
from evalkit.config import load_config
from evalkit.errors import ConfigError, EvalkitError, plural
from evalkit.pivot import comparison_table, tables
from evalkit.plugins import default_registry
from evalkit.sources import find_loader

FORMATS = ("table", "json", "csv", "markdown")


def friendly(command):
    """Turn evalkit's errors into ``error: <message>`` on stderr and exit status 1."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except EvalkitError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)

    return wrapper


@click.group()
@click.version_option(__version__, prog_name="evalkit")
def main() -> None:
    """Precision, recall and F-score beyond exact matching."""


@main.command()
@click.argument("config", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", help="What to print on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@friendly
def run(config: Path, fmt: str, quiet: bool) -> None:
    """Run CONFIG (YAML) and print the results side by side."""
    console = Console()
    stderr = Console(stderr=True)
    if not quiet and stderr.is_terminal:
        with Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            console=stderr, transient=True,
        ) as bar:
            results = run_config(config, progress=_Bar(bar))
    else:
        results = run_config(config)
    if fmt == "table":
        for table in [*tables(results), comparison_table(results)]:
            if table is None:
                continue
            rendered = _rich(table)
            # Never squeeze a table below its natural width (labels would vanish): a wide one
            # runs past a narrow terminal instead.
            natural = console.measure(rendered, options=console.options.update(max_width=10_000)).maximum
            width = max(console.width, natural)
            Console(width=width, force_terminal=console.is_terminal).print(rendered)
        for note in results.notes:
            console.print(f"note: {note}")
    else:
        writer = default_registry().create("report_writer", fmt)
        click.echo(writer.render(results), nl=False)
    if results.reports:
        click.echo(f"wrote {', '.join(results.reports)}", err=True)


class _Bar:
    """evalkit's progress (rows per system) on a rich progress bar."""

    def __init__(self, bar: Progress) -> None:
        self.bar, self.task = bar, None

    def start(self, label: str, total: int) -> None:
        self.task = self.bar.add_task(label, total=total)

    def advance(self, rows: int) -> None:
        self.bar.advance(self.task, rows)


def _rich(table) -> RichTable:
    out = RichTable(title=table.title, title_justify="left")
    for i, name in enumerate(table.header):
        numeric = i >= table.n_index
        # Labels keep at least a readable width when wide numbers (with intervals) crowd them.
        out.add_column(name, justify="right" if numeric else "left", no_wrap=True)
    by_system = table.header[0] == "system"
    for row, following in zip(table.rows, table.rows[1:] + [None]):
        # A rule between systems.
        out.add_row(*row, end_section=by_system and following is not None and following[0] != row[0])
    return out


@main.command()
@click.argument("config", type=click.Path(path_type=Path))
@friendly
def validate(config: Path) -> None:
    """Check CONFIG without running it: structure, components, parameters, data files."""
    loaded = load_config(config)
    registry = default_registry()
    plan = make_plan(loaded.config, registry, loaded.where, loaded.base)
    data = loaded.config.data
    sources = {("data", "reference"): data.reference}
    sources.update({("data", "systems", name): source for name, source in data.systems.items()})
    for path, source in sources.items():
        if isinstance(source, str):
            find_loader(source, loaded.base, loaded.where(*path), registry, plan.data_kind)
        elif isinstance(source, dict) and "path" in source:
            find_loader(source["path"], loaded.base, loaded.where(*path), registry, plan.data_kind, source.get("loader"))
    click.echo(f"{config}: ok")


@main.command("new-plugin")
@click.argument("name")
@click.option("--kind", type=click.Choice(list(scaffold.BODIES)), default="similarity", show_default=True,
              help="What the plugin provides.")
@click.option("--output", type=click.Path(path_type=Path, file_okay=False), default=Path("."), show_default=True,
              help="The folder to create the package evalkit-NAME in.")
@friendly
def new_plugin(name: str, kind: str, output: Path) -> None:
    """Write the skeleton of a plugin package providing a KIND called NAME.

    It installs and passes evalkit's author-kit checks as written; replace its placeholder
    computation with your own.
    """
    if (kind, name) in {(e.kind, e.name) for e in default_registry()}:
        raise ConfigError(f"a {kind} called {name!r} is registered already (see `evalkit plugins`); choose another name")
    folder = scaffold.write(name, kind, output)
    click.echo(
        f"wrote {folder}\n"
        f"next: pip install -e '{folder}[test]' && python -m pytest {folder / 'tests'}\n"
        f"then use it in a config as `{scaffold.usage(name, kind)}`"
    )


@main.command()
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
def plugins(fmt: str) -> None:
    """List every registered component with its distribution, summary and parameters."""
    registry = default_registry()
    entries = [
        {
            "kind": e.kind, "name": e.name, "distribution": e.distribution, "plugin": e.plugin,
            "summary": e.summary, "params": e.params,
        }
        for e in registry
    ]
    problems = [str(f) for f in registry.failures] + registry.conflicts
    if fmt == "json":
        click.echo(json.dumps({"components": entries, "problems": problems}, indent=2))
        return
    console = Console()
    for kind in dict.fromkeys(e["kind"] for e in entries):
        table = RichTable(title=plural(kind), title_justify="left", box=box.SIMPLE_HEAD)
        rows = [e for e in entries if e["kind"] == kind]
        table.add_column("name", no_wrap=True, min_width=max(len(e["name"]) for e in rows))
        table.add_column("distribution", no_wrap=True)
        table.add_column("parameters", ratio=1)
        table.add_column("summary", ratio=2)
        for e in rows:
            params = ", ".join(f"{k}={v.get('default', '?')}" for k, v in e["params"].items())
            table.add_row(e["name"], e["distribution"], params, e["summary"])
        console.print(table)
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
