"""The command line: ``evalkit run``, ``evalkit validate``, ``evalkit plugins``.

Every :class:`~evalkit.errors.EvalkitError` becomes one readable message and exit status 1 (so
does stdout that cannot be written: a full disk); any other exception is a bug, and becomes one
line that says so (the traceback with ``--debug``); usage errors are click's, exit status 2.
Ctrl-C ends in ``interrupted`` (130), SIGTERM in ``terminated`` (143), both after the cleanup
an exception runs (no temporary report file is left); a closed pipe ends quietly.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from evalkit import scaffold
from evalkit.errors import ConfigError, EvalkitError, ReportError, shortened
from evalkit.version import __version__

if TYPE_CHECKING:
    from rich.progress import Progress
    from rich.text import Text

    from evalkit.results import Results

FORMATS = ("table", "json", "csv", "markdown")
#: Python's exit collects every object of every module a command imported (numpy, pandas,
#: matplotlib, pydantic): 0.3-0.8 s of a cold run, for memory the OS takes back at once. Frozen,
#: the collector leaves them; the atexit functions registered later (files, pools, temporary
#: folders) still run first, and the standard streams are flushed as before.
atexit.register(gc.freeze)
#: Characters of an error message that are printed; a hostile input could make one of megabytes.
MESSAGE_LIMIT = 2_000


class _Guarded(click.Group):
    """The command group, and the CLI's last line of defence: whatever a command raises ends
    in one message on stderr, never a traceback unless ``--debug`` asks for it."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with _terminable():
                return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # usage errors (exit status 2), --help and --version: click's own
        except EvalkitError as exc:
            _fail(f"error: {_message(exc)}", 1)
        except _Terminated:
            _fail("terminated", 128 + signal.SIGTERM)
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        except BrokenPipeError:
            raise  # stdout closed by a pager or `head`: click ends quietly
        except MemoryError as exc:  # where no part of evalkit said what it was building
            if ctx.params.get("debug"):
                raise
            from evalkit.budget import out_of_memory

            _fail(f"error: {_message(out_of_memory(f'in {_innermost(exc)}', 'the data or the settings it grows with'))}", 1)
        except Exception as exc:
            if ctx.params.get("debug"):
                raise
            _fail(
                f"internal error: {type(exc).__name__}: {_message(exc)} — this is a bug in evalkit; please report it "
                "with the command you ran (run again with --debug or EVALKIT_DEBUG=1 for the traceback)", 1,
            )


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is: what Ctrl-C undoes (temporary report files), a
    SIGTERM undoes too, instead of ending the process where it stands."""


def _terminate(signum: int, frame: object) -> NoReturn:
    raise _Terminated


@contextlib.contextmanager
def _terminable() -> Iterator[None]:
    """SIGTERM raises :class:`_Terminated` while a command runs (in the main thread; signal
    handlers can be set nowhere else), then the handler before it is back."""
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL or threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _innermost(exc: BaseException) -> str:
    """The innermost function of evalkit or a plugin that ``exc`` passed through, as
    ``module.function``: what was being built when no part of evalkit said."""
    trace, found = exc.__traceback__, "this run"
    while trace is not None:
        module = trace.tb_frame.f_globals.get("__name__", "")
        if module.partition(".")[0].startswith("evalkit"):
            found = f"{module}.{trace.tb_frame.f_code.co_name}"
        trace = trace.tb_next
    return found


def _message(exc: BaseException) -> str:
    """An exception's message as printed: control characters visible, at most MESSAGE_LIMIT."""
    from evalkit.control_chars import visible

    return visible(shortened(str(exc), MESSAGE_LIMIT), lines=True)


def _fail(line: str, status: int) -> NoReturn:
    click.echo(line, err=True)
    sys.exit(status)


ENGINE = click.option(
    "--engine", metavar="local|dask[=ADDRESS]",
    help="Where to score, instead of the config's `engine:`: this process, or a Dask cluster (a LocalCluster "
         "on this machine, or the scheduler at ADDRESS, e.g. dask=tcp://10.0.0.5:8786).",
)


def _block(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """``-p no:NAME``: keep distribution NAME's plugins from loading (EVALKIT_BLOCK_PLUGINS)."""
    names = []
    for value in values:
        if not value.startswith("no:") or not value[3:].strip():
            raise click.BadParameter(f"{value!r}; write -p no:NAME to keep the distribution NAME's plugins from loading")
        names.append(value[3:].strip())
    if names:
        from evalkit.discovery import default_registry

        given = os.environ.get("EVALKIT_BLOCK_PLUGINS", "")
        os.environ["EVALKIT_BLOCK_PLUGINS"] = ",".join(n for n in [given, *names] if n)
        default_registry.cache_clear()  # built again with the block list
    return values


@click.group(cls=_Guarded)
@click.version_option(__version__, prog_name="evalkit")
@click.option("--debug", is_flag=True, envvar="EVALKIT_DEBUG",
              help="Show the traceback of an internal error (also EVALKIT_DEBUG=1).")
@click.option("-p", "blocked", multiple=True, metavar="no:NAME", callback=_block, expose_value=False, is_eager=True,
              help="Do not load the plugins of distribution NAME (repeatable; also EVALKIT_BLOCK_PLUGINS=NAME,...).")
def main(debug: bool) -> None:
    """Precision, recall and F-score beyond exact matching."""
    _buffer_stdout()


def _buffer_stdout() -> None:
    """With PYTHONUNBUFFERED=1 (or ``python -u``) stdout's text layer writes straight to the
    file and ignores how much a write took: on a full disk the rest of the results is lost
    without an error (4,096 bytes of a JSON document, exit status 0). A buffer under it writes
    everything or raises; line buffering keeps the output as prompt as unbuffered."""
    if isinstance(getattr(sys.stdout, "buffer", None), io.RawIOBase):
        sys.stdout = io.TextIOWrapper(
            io.BufferedWriter(sys.stdout.buffer), encoding=sys.stdout.encoding, errors=sys.stdout.errors,
            line_buffering=True,
        )


@contextlib.contextmanager
def _printing(results: Results | None, what: str = "the results") -> Iterator[None]:
    """Printing ``what`` on stdout, flushed at the end: a write that fails (a full disk, a quota,
    a file size limit) is a :class:`ReportError` saying so, not a bug; a closed pipe (``| head``)
    is left to click, which ends quietly."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        _discard_stdout()
        reason = exc.strerror or str(exc)
        raise ReportError(f"could not write {what} to standard output: {reason}", results) from None


def _discard_stdout() -> None:
    """Point stdout's file at /dev/null, as Python's documentation advises for a closed pipe:
    Python flushes stdout again at exit, and the text it still holds would fail again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return  # not a file (click's test runner)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


@main.command()
@click.argument("config", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", help="What to print on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--no-report", "no_report", is_flag=True,
              help="Write none of the report files the config asks for (its `report:` section is still "
                   "checked); only print the results, e.g. `--format json > run.json`.")
@click.option("--width", type=click.IntRange(min=0), metavar="N",
              help="Fold the tables to lines of at most N characters (0: never fold). Default: COLUMNS, "
                   "else the terminal's width; output into a file or a pipe is not folded.")
@ENGINE
def run(config: Path, fmt: str, quiet: bool, no_report: bool, width: int | None, engine: str | None) -> None:
    """Run CONFIG (YAML), print the results side by side and write the reports it asks for."""
    from evalkit import api

    _warn_failed_plugins()
    plan = api.plan(config, writes=not no_report, engine=engine)
    from evalkit.reporting import prepare_reports, start_reports, stop_reports

    writers = plan.report.writers if plan.report is not None and not no_report else {}
    start_reports(writers)  # the figure worker starts while the run is scored
    try:
        with _progress(quiet) as bar:
            results = api.results_of(plan, progress=bar)
        prepare_reports(writers, results)  # and draws while the tables print
        failures = []
        try:
            with _printing(results):
                _print(results, fmt, _table_width(width))
        except ReportError as exc:  # the reports are still written: they may be on another disk
            failures.append(str(exc))
        if not no_report:
            with _progress(quiet) as bar:
                failures += api.write_plan_reports(plan, results, progress=bar)
    finally:  # written, failed or interrupted: no figure is drawn for nothing, no worker waited for
        stop_reports(writers)
    if results.reports:
        from evalkit.control_chars import visible

        click.echo(visible(f"wrote {', '.join(results.reports)}"), err=True)  # an `out:` may hold any character
    if failures:
        raise ReportError("\n".join(failures), results)


@contextlib.contextmanager
def _progress(quiet: bool) -> Iterator[_Bar | None]:
    """A progress bar on stderr when it is a terminal (and not ``--quiet``); else None."""
    from rich.console import Console

    stderr = Console(stderr=True)
    if quiet or not stderr.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=stderr, transient=True,
    ) as bar:
        yield _Bar(bar)


def _table_width(option: int | None) -> int | None:
    """The width tables fold to: ``--width`` (0: none), else COLUMNS, else the terminal's
    when stdout is one; None when nothing limits it (a file or a pipe)."""
    if option is not None:
        return option or None
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        import shutil

        return shutil.get_terminal_size().columns
    return None


def _print(results: Results, fmt: str, width: int | None = None) -> None:
    """The results on stdout: side-by-side tables, or a report format's text; the notes on
    stderr, where a reader sees them whatever stdout is piped into (control characters made
    visible, as everything evalkit prints)."""
    from evalkit.control_chars import visible

    if fmt != "table":
        from evalkit.discovery import default_registry

        click.echo(visible(default_registry().create("report_writer", fmt).render(results), lines=True), nl=False)
    else:
        _print_tables(results, width)
    for note in results.notes:
        _note(note)


def _note(note: str) -> None:
    """A note on stderr, control characters made visible."""
    from rich.console import Console

    Console(stderr=True, soft_wrap=True).print(_text(f"note: {note}"))


def _print_tables(results: Results, width: int | None) -> None:
    """The side-by-side tables folded to ``width`` (:mod:`evalkit.folding`), each followed by the
    full text of the labels it abbreviates and a glossary of the measures it names that are
    not well known (each explained once, under the first table that names it); the paired
    tests by what their ``≤`` means; then the summary the reports open with, last, where a
    terminal leaves it in view."""
    from rich.console import Console

    # the reports' sentences, so that the terminal says what they say (a built-in plugin of
    # this distribution, imported only here)
    from evalkit.findings import floor_note, opening_lines
    from evalkit.folding import block_width, fold_to_width
    from evalkit.glossary import glossary
    from evalkit.pivot import comparison_tables, tables

    console = Console()
    explained: set[str] = set()
    compared = comparison_tables(results)
    for table in [*tables(results), *compared]:
        folded = fold_to_width(table, width)
        for block, rendered in zip(folded.blocks, folded.rich_tables()):
            # Unfolded, a table keeps its natural width (labels would vanish): a wide one runs
            # past a narrow terminal instead.
            natural = block_width(block)
            Console(width=width or max(console.width, natural), force_terminal=console.is_terminal).print(rendered)
        labels = [table.title, *table.header, *(cell for row in table.rows for cell in row[: table.n_index])]
        lines = glossary(labels)
        notes = [f"{short} = {full}" for short, full in folded.legend.items()]
        notes += [f"{name}: {line}" for name, line in lines.items() if name not in explained]
        notes += [note for note in [floor_note(results)] if compared and table is compared[-1] and note]
        explained.update(lines)
        _print_notes(notes, width, console.is_terminal)
    summary = opening_lines(results)
    if summary:
        click.echo(click.style("Summary", italic=True) if console.is_terminal else "Summary")
        _print_notes([f"- {line}" for line in summary], width, False, indent="  ")


def _print_notes(lines: list[str], width: int | None, terminal: bool, indent: str = "    ") -> None:
    """Lines under a table (dim on a terminal), each wrapped to ``width`` with its continuation indented."""
    import textwrap

    from evalkit.control_chars import visible

    for line in map(visible, lines):
        wrapped = textwrap.fill(line, width, subsequent_indent=indent, break_on_hyphens=False) if width else line
        click.echo(click.style(wrapped, dim=True) if terminal else wrapped)


def _text(value: str, style: str = "") -> Text:
    """A string from a config, a data file or a plugin, for rich: shown as written, never read
    as markup (``[/]`` or ``[bold]`` in a name) or emoji codes, nor passed on as control
    characters."""
    from rich.text import Text

    from evalkit.control_chars import visible

    return Text(visible(value), style=style)


def _warn(message: str) -> None:
    """A ``warning:`` line on stderr."""
    from evalkit.control_chars import visible

    click.echo(f"warning: {visible(message)}", err=True)


def _warn_failed_plugins() -> None:
    """One warning per plugin that failed to load: what a config asks for may be missing."""
    from evalkit.discovery import default_registry

    for failure in default_registry().failures:
        _warn(str(failure))


class _Bar:
    """evalkit's progress (rows per system) on a rich progress bar."""

    def __init__(self, bar: Progress) -> None:
        self.bar = bar
        self.task: Any = None

    def start(self, label: str, total: int) -> None:
        from rich.markup import escape

        from evalkit.control_chars import visible

        self.task = self.bar.add_task(escape(visible(label)), total=total)  # labels hold system names

    def advance(self, rows: int) -> None:
        self.bar.advance(self.task, rows)


@main.command()
@click.argument("config", type=click.Path(path_type=Path))
@ENGINE
@click.option("--data", "read_data", is_flag=True,
              help="Also read every data file and check its values as `run` would, without scoring.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar (with --data).")
def validate(config: Path, engine: str | None, read_data: bool, quiet: bool) -> None:
    """Check CONFIG without running it: everything `run` checks before it reads a data value
    (components, parameters, data files and their loaders, sweeps, statistics, reports); with
    --data, also every file's values (ids, classes, alignment, memberships, weights, event
    lists) with the messages `run` gives, without scoring."""
    from evalkit import api
    from evalkit.budget import human

    _warn_failed_plugins()
    plan = api.plan(config, engine=engine)
    sized = [f"{config}: per_sample: {need.what}, about {human(need.bytes)} of memory while the reports are written"
             for need in plan.needs if need.key == ("per_sample",)]  # what a user asked for, sized
    if not read_data:
        with _printing(None, "the result"):
            click.echo(f"{config}: ok (the config and its files; the data's values were not read: --data reads them)")
            click.echo("".join(f"{line}\n" for line in sized), nl=False)
        return
    from evalkit.execute import check_data

    with _progress(quiet) as bar:
        samples, notes = check_data(plan, progress=bar)
    with _printing(None, "the result"):
        click.echo(f"{config}: ok (the config, its files and their data: {samples:,} sample{'' if samples == 1 else 's'} "
                   f"and {len(plan.systems)} system{'' if len(plan.systems) == 1 else 's'} read and checked; nothing scored)")
        click.echo("".join(f"{line}\n" for line in sized), nl=False)
    for note in notes:
        _note(note)


@main.command("new-plugin")
@click.argument("name")
@click.option("--kind", type=click.Choice(list(scaffold.BODIES)), default="similarity", show_default=True,
              help="What the plugin provides.")
@click.option("--output", type=click.Path(path_type=Path, file_okay=False), default=Path("."), show_default=True,
              help="The folder to create the package evalkit-NAME in.")
def new_plugin(name: str, kind: str, output: Path) -> None:
    """Write the skeleton of a plugin package providing a KIND called NAME.

    It installs and passes evalkit's author-kit checks as written; replace its placeholder
    computation with your own.
    """
    from evalkit.discovery import default_registry

    if (scaffold.registered(kind), name) in {(e.kind, e.name) for e in default_registry()}:
        raise ConfigError(f"a {kind.replace('_', ' ')} called {name!r} is registered already (see `evalkit plugins`); "
                          "choose another name")
    folder = scaffold.write(name, kind, output)
    click.echo(
        f"wrote {folder}\n"
        f"next: {scaffold.next_step(folder)}\n"
        f"then use it in a config as `{scaffold.usage(name, kind)}`"
    )


@main.command()
def schema() -> None:
    """Print the JSON Schema of a run config, with the installed components as choices.

    Save it beside your configs (`evalkit schema > evalkit.schema.json`) and start a config with
    `# yaml-language-server: $schema=evalkit.schema.json`: VS Code (the YAML extension),
    JetBrains and Neovim then complete and check the config as you type."""
    from evalkit import schema as config_schema
    from evalkit.discovery import default_registry

    with _printing(None, "the schema"):
        click.echo(config_schema.text(default_registry()), nl=False)


def _version(distribution: str) -> str | None:
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:  # an in-process plugin, not installed
        return None


@main.command()
@click.argument("name", required=False)
@click.option("--kind", help="only components of this kind (tnorm, similarity, metric, ...)")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
def plugins(name: str | None, kind: str | None, fmt: str) -> None:
    """List the registered components, one line each; NAME shows one in full (its parameters)."""
    with _printing(None, "the listing"):
        _list_plugins(name, kind, fmt)


def _list_plugins(name: str | None, kind: str | None, fmt: str) -> None:
    import shutil

    from evalkit import listing
    from evalkit.discovery import default_registry
    from evalkit.hookspecs import CONTRACT_VERSION

    registry = default_registry()
    wanted = listing.kind_of(registry, kind) if kind is not None else None
    of_kind = [e for e in registry if wanted is None or e.kind == wanted]
    chosen = listing.details_of(of_kind, name, wanted) if name is not None else of_kind
    versions = {d: _version(d) for d in dict.fromkeys(e.distribution for e in registry)}
    problems = [str(f) for f in registry.failures] + registry.conflicts
    if fmt == "json":
        entries = [{"kind": e.kind, "name": e.name, "distribution": e.distribution, "version": versions[e.distribution],
                    "plugin": e.plugin, "summary": e.summary, "params": e.params} for e in chosen]
        listed = {"evalkit_version": __version__, "contract_version": CONTRACT_VERSION, "distributions": versions,
                  "components": entries, "problems": problems}
        click.echo(json.dumps(listed, indent=2))
    else:
        width = shutil.get_terminal_size().columns
        if name is not None:
            click.echo("\n".join(listing.details(chosen, width)))
        else:
            click.echo(f"evalkit {__version__}, plugin contract {CONTRACT_VERSION}")
            click.echo("plugins from: " + ", ".join(f"{d} {v}" for d, v in versions.items()))
            click.echo("\n".join(listing.overview(chosen, width)))
            click.echo("\n`evalkit plugins NAME`: one component with its parameters")
    for problem in problems:
        _warn(problem)
