"""The plan of a run: everything that can be checked without reading a data value.

``evalkit validate`` builds the plan; ``evalkit run`` builds it, then executes it
(:mod:`evalkit.execute`). So every config-level mistake — an unknown component, a parameter a
component rejects, a representation without the T-norm or similarity it uses, a data file that
does not exist or that no loader reads (under ``runs:`` too), a test baseline that is no system,
a sweep over a parameter no component has or a value it rejects (or over too many values), a
report format nobody writes, a report folder that cannot be written, statistics or a sweep that
would not fit in memory — is reported by both, with the same message, before any work is done.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evalkit import budget
from evalkit.axes import Axes, Component, resolve, unweighted
from evalkit.config import LoadedConfig, RunConfig, Runs, as_list
from evalkit.data import match_classes
from evalkit.errors import ConfigError, DataError, shortened
from evalkit.protocols import optional, report_file, report_pattern
from evalkit.registry import Registry
from evalkit.results import sample_quantities
from evalkit.settings import Settings, settings_of
from evalkit.sources import check_inline, declared_classes, find_loader, source_path
from evalkit.sweeps import FIELDS, field_specs, sweep_axes, sweep_values

Where = Callable[..., str]


@dataclass(frozen=True)
class Source:
    """One data source: its config value, where it is written, and (for a file) its loader (a
    component: it travels as its name)."""

    value: Any
    role: str  # "reference", "prediction" or "weights"
    system: str | None
    where: str
    reader: Component | None = None
    full: Path | None = None

    @property
    def loader(self) -> Any:
        return None if self.reader is None else self.reader.obj


@dataclass(frozen=True)
class Step:
    """One value of a sweep (``value`` None without a sweep) and the axes to score it with."""

    value: float | None
    axes: Axes


@dataclass(frozen=True)
class Job:
    """What reducing a run's partitions needs, and nothing else: the axes at each sweep value,
    the settings, the systems with their number of runs, the test's baseline, and where the
    weights come from (for messages)."""

    steps: tuple[Step, ...]
    settings: Settings
    runs: dict[str, int]
    baseline: str | None = None
    weights_where: str | None = None
    #: the data is read and prepared (every check of a run) but not reduced: `validate --data`
    checks_only: bool = False

    @property
    def axes(self) -> Axes:
        return self.steps[0].axes


@dataclass(frozen=True)
class Work:
    """What reading and reducing a run's data needs, and all that a Dask task receives: the job,
    what kind of data the representations read, and the sources. No registry, config or callable:
    its components (axes, loaders) travel as specs and are made again where it lands."""

    job: Job
    kind: str  # "matrix" or "items"
    reference: Source
    systems: dict[str, list[Source]]
    weights: Source | None = None

    def sources(self) -> list[Source]:
        """The reference, then every run of every system."""
        return [self.reference, *(source for runs in self.systems.values() for source in runs)]

    @property
    def from_files(self) -> bool:
        """Whether some data comes from a file (rows matched by position are then announced)."""
        return any(source.full is not None for source in self.sources())


@dataclass
class ReportPlan:
    """The report writers, by format, and the report path without suffix."""

    writers: dict[str, Any]
    out: Path


@dataclass
class Plan:
    """A checked run: the config it came from, its axes, its work (the axes per sweep value,
    the settings, the sources) and its reports."""

    loaded: LoadedConfig
    registry: Registry
    where: Where
    axes: Axes
    work: Work
    report: ReportPlan | None = None
    needs: list[budget.Need] = field(default_factory=list)

    @property
    def config(self) -> RunConfig:
        return self.loaded.config

    @property
    def job(self) -> Job:
        return self.work.job

    @property
    def kind(self) -> str:
        return self.work.kind

    @property
    def reference(self) -> Source:
        return self.work.reference

    @property
    def systems(self) -> dict[str, list[Source]]:
        return self.work.systems

    @property
    def weights(self) -> Source | None:
        return self.work.weights

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.job.steps

    @property
    def baseline(self) -> str | None:
        return self.job.baseline

    def sources(self) -> list[Source]:
        return self.work.sources()


def build_plan(loaded: LoadedConfig, registry: Registry, where: Where | None = None, writes: bool = True) -> Plan:
    """Resolve and check everything of a config that does not need the data values. Without
    ``writes`` (a run that writes no report), the report folder is checked but not made."""
    where = where or loaded.where
    cfg, base = loaded.config, loaded.base

    def axis(key: str, kind: str) -> list[Any]:
        specs = getattr(cfg, key)
        listed = isinstance(specs, list)
        return resolve(registry, kind, as_list(specs), lambda i: where(key, i) if listed else where(key), base)

    zero_division = cfg.zero_division
    assert isinstance(zero_division, float), "RunConfig's validator makes 'nan' a float"
    axes = Axes(**{attribute: axis(key, kind) for key, (kind, attribute) in FIELDS.items()}, zero_division=zero_division)
    for key in ("representation", "averaging"):
        if not as_list(getattr(cfg, key)):
            raise ConfigError(f"{where(key)}: `{key}:` lists no component; name at least one")
    kind = axes.check()
    reference = plan_source(cfg.data.reference, "reference", None, where("data", "reference"), base, registry, kind)
    systems = {}
    for system, given in cfg.data.systems.items():
        if isinstance(given, Runs):
            places = [where("data", "systems", system, "runs", i) for i in range(len(given.runs))]
            systems[system] = [
                plan_source(run, "prediction", system, p, base, registry, kind) for run, p in zip(given.runs, places)
            ]
        else:
            systems[system] = [plan_source(given, "prediction", system, where("data", "systems", system), base, registry, kind)]
    statistics = cfg.statistics
    baseline = None
    if statistics is not None and statistics.test is not None:
        baseline = _baseline(statistics.test.baseline, systems, where)
    weights_where = None
    if cfg.data.weights is not None:
        weights_where = str(source_path(cfg.data.weights, where("data", "weights"))[0] or "data.weights")
    job = Job(
        tuple(_steps(loaded, registry, where, axes, kind)), settings_of(cfg, baseline, where),
        {name: len(runs) for name, runs in systems.items()}, baseline, weights_where,
    )
    plan = Plan(loaded, registry, where, axes, Work(job, kind, reference, systems))
    if kind == "matrix":
        _check_item_folders(plan)
        _check_classes(plan)
    _check_reference(plan)
    if cfg.engine.name == "dask":
        _check_dask(where)
    if job.settings.partitioned:
        _check_bounded(axes, "a streamed run" if cfg.data.stream else "a Dask run", where)
    if cfg.per_sample and not axes.set_metrics:
        raise ConfigError(
            f"{where('per_sample')}: per-sample values are those of set metrics (precision, f1, error_rate, ...) with the "
            f"samples' counts, and this run has none ({', '.join(m.label for m in axes.metrics)} read the data as a whole); "
            "add one to metrics:, or leave out `per_sample: true`"
        )
    if cfg.data.weights is not None:
        weights = plan_source(cfg.data.weights, "weights", None, where("data", "weights"), base, registry, "matrix")
        plan.work = replace(plan.work, weights=weights)
        refused = unweighted(axes.data_metrics)
        if refused:
            raise ConfigError(f"{where('data', 'weights')}: {refused}")
    resampled = statistics is not None and (statistics.bootstrap is not None or statistics.test is not None)
    if resampled or cfg.sweep is not None or _folders(plan) or cfg.per_sample:  # before the report folder is made
        plan.needs = _needs(plan, resampled)
        _check_memory(plan.needs, where)
    if cfg.report is not None:
        plan.report = _report(cfg.report, base, registry, where, plan, writes)
    return plan


def _check_item_folders(plan: Plan) -> None:
    """A folder that an item loader recognises (score files) in a run that reads membership
    matrices is refused now, naming the data metrics that read item data: read as a matrix, it
    or its event-list reference failed only when read, on a column that is not a number."""
    registry = plan.registry
    for source in _folders(plan):
        assert source.full is not None
        for name in registry.names("loader"):
            loader = registry.create("loader", name)
            sniff = optional(loader, "sniff")
            if loader.kind == "items" and "/" in loader.suffixes and sniff is not None and sniff(source.full):
                axes = plan.axes
                readers = [m.label for m in axes.data_metrics if optional(m.obj, "data") == "matrix"]
                readers += [rep.label for rep in axes.representations] if axes.set_metrics else []
                metrics = [n for n in registry.names("metric") if optional(registry.entry("metric", n).cls, "data") == "items"]
                verb = "reads" if len(readers) == 1 else "read"
                raise ConfigError(
                    f"{source.where}: {source.full} is item data for the {name} loader (a folder of score files), but "
                    f"{', '.join(readers)} {verb} membership matrices; score files against an event list are read by "
                    f"the data metrics {', '.join(metrics)} (`evalkit plugins` lists their parameters)"
                )


def _check_reference(plan: Plan) -> None:
    """Components that read more of the reference file than its data (``check_reference``: a
    column of clip durations) look at it now, so `validate` refuses what `run` would."""
    for component in (*plan.axes.representations, *plan.axes.data_metrics):
        check = optional(component.obj, "check_reference")
        if check is not None:
            check(plan.reference.full)


def _check_classes(plan: Plan) -> None:
    """Systems whose files declare other classes than the reference's (in their headers) are
    refused now, with the message aligning them would give: reading a large file's values
    first took minutes."""
    selected = plan.config.data.classes
    reference = declared_classes(plan.reference.loader, plan.reference.full, "reference", selected)
    for source in (source for runs in plan.systems.values() for source in runs):
        declared = declared_classes(source.loader, source.full, "prediction", selected)
        if reference is not None and declared is not None:
            match_classes(reference, declared)


def _check_bounded(axes: Axes, run: str, where: Where) -> None:
    """A partitioned run holds bounded sums: a metric whose state keeps its data (an exact
    ranking's scores) is refused at its key, with what to use instead."""
    for index, metric in enumerate(axes.metrics):
        instead = optional(metric.obj, "keeps_data")
        if instead:
            raise ConfigError(
                f"{where('metrics', index)}: {metric.label} keeps every score it is given (an exact ranking needs them "
                f"all), so its memory grows with the data, while {run} holds bounded sums: {instead}"
            )


def _check_dask(where: Where) -> None:
    """A Dask run needs Dask's distributed scheduler."""
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        raise ConfigError(f"{where('engine')}: the Dask engine needs Dask's distributed scheduler: pip install 'evalkit[dask]'")


def plan_source(value: Any, role: str, system: str | None, where: str, base: Path, registry: Registry, kind: str) -> Source:
    """A data source with the loader of its file (a file that does not exist, or that no loader
    reads, is an error now)."""
    path, name = source_path(value, where)
    if path is None:
        check_inline(value, where, kind)
        return Source(value, role, system, where)
    try:
        loader, full, registered = find_loader(path, base, where, registry, kind, name)
    except OSError as exc:  # a path the system will not look up: a name over 255 bytes, a loop
        raise DataError(
            f"{where}: cannot use the data path {shortened(str(path), 200)!r} ({exc.strerror or exc}); check the path"
        ) from None
    return Source(value, role, system, where, Component(registered, loader, registered, "loader"), full)


def _steps(loaded: LoadedConfig, registry: Registry, where: Where, axes: Axes, kind: str) -> list[Step]:
    sweep = loaded.config.sweep
    if sweep is None:
        return [Step(None, axes)]
    if sweep.vary == "offset" and kind != "matrix":
        raise ConfigError(f"{where('sweep', 'vary')}: offset adds to membership values; this run reads item lists")
    specs = field_specs(loaded.config, sweep)
    return [
        Step(value, sweep_axes(specs, registry, where, loaded.base, axes, sweep, value))
        for value in sweep_values(sweep, where)
    ]


def _baseline(named: str | None, systems: dict[str, list[Source]], where: Where) -> str:
    """The system the others are tested against: named, or the first; it needs one run."""
    baseline = named or next(iter(systems))
    place = where("statistics", "test", "baseline")
    if baseline not in systems:
        close = difflib.get_close_matches(baseline, list(systems), 1)
        raise ConfigError(
            f"{place}: no system {baseline!r}"
            + (f"; did you mean {close[0]!r}?" if close else f"; systems: {', '.join(systems)}")
        )
    if len(systems[baseline]) > 1:
        raise ConfigError(f"{place}: {baseline!r} has several runs; paired tests need one run per system")
    return baseline


def _report(report: Any, base: Path, registry: Registry, where: Where, plan: Plan, writes: bool) -> ReportPlan:
    """The writers of every format, and an ``out:`` whose folder exists and can be written
    (checked by creating it and a probe file, when the run ``writes``) and whose files replace
    no input. ``out`` is the
    report path without suffix, ``~`` is the home folder; a folder (``""``, ``.``, ``/``, ``~``,
    ``results/``, an existing folder) gets the reports named after the run."""
    writers = {
        name: registry.create("report_writer", name, where("report", "formats", i))
        for i, name in enumerate(report.formats)
    }
    place = where("report", "out")
    raw = report.out.strip()
    folder: Path | str = raw  # what a message names: the folder, once it is known
    try:
        out = base / Path(raw or ".").expanduser()
        if raw in ("", ".") or raw.endswith(("/", "\\")) or out.is_dir():  # a folder: the reports go in it
            # The run's name as one file name: its slashes make no folders, ".." leaves none.
            out = out / (re.sub(r"[/\\\x00-\x1f]", "_", plan.loaded.config.name).strip(". ") or "report")
        out = out.resolve()
        folder = out.parent
        if writes:
            out.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=out.parent, prefix=".evalkit-probe-"):
                pass
    except (OSError, ValueError, RuntimeError) as exc:  # ValueError: a NUL; RuntimeError: an unknown ~user
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(
            f"{place}: cannot write report files in {folder} ({reason}); choose an `out:` in a folder you can write to"
        ) from None
    for source in _inputs(plan):
        if out.parent.is_relative_to(source):
            raise ConfigError(
                f"{place}: the reports would be written inside the input folder {source}; choose an `out:` outside it"
            )
        for name, writer in writers.items():
            if source.parent == out.parent and (source.name == report_file(out, writer).name  # csv, parquet: and NAME-*
                                                or fnmatch.fnmatchcase(source.name, report_pattern(out, writer))):
                raise ConfigError(
                    f"{place}: the {name} report would replace the input {source}; choose another `out:`"
                )
    return ReportPlan(writers, out)


def _inputs(plan: Plan) -> list[Path]:
    """Every file or folder the run reads, resolved: the config, the data, component files."""
    sources = [plan.reference, *(source for runs in plan.systems.values() for source in runs)]
    sources += [plan.weights] if plan.weights is not None else []
    paths = [source.full for source in sources if source.full is not None]
    if plan.loaded.document is not None:
        paths.append(Path(plan.loaded.document.file))
    for step in plan.steps:
        axes = step.axes
        for component in [*axes.representations, *axes.tnorms, *axes.similarities, *axes.averagings, *axes.metrics]:
            params = getattr(component.obj, "params", None)
            if isinstance(params, BaseModel):
                paths += [value for _, value in params if isinstance(value, Path)]
    return list(dict.fromkeys(path.resolve() for path in paths))


def _needs(plan: Plan, resampled: bool) -> list[budget.Need]:
    """The memory of a sweep's result rows (values x systems x measures) and, when the
    statistics resample, of their draws and replicate sums."""
    classes = plan.job.settings.classes
    size = budget.size_of(plan.reference.value, plan.reference.full)
    size = budget.Size(size.samples, len(classes) if classes else size.classes)
    combinations = max(len(step.axes.set_combinations()) for step in plan.steps)
    per_class = size.classes if any(a.label == "none" for a in plan.axes.averagings) else 1
    measures = combinations * len(plan.axes.averagings) * len(plan.axes.set_metrics) * per_class + len(plan.axes.data_metrics)
    measures = max(measures, 1)
    statistics = plan.job.settings.statistics
    test = statistics.test if statistics is not None else None
    boot = statistics.bootstrap if statistics is not None else None
    needs = [budget.rows_need(len(plan.steps), len(plan.systems), measures, test is not None)] if plan.job.settings.sweep else []
    needs += _folder_needs(plan)
    if plan.config.per_sample:
        metrics = plan.axes.set_metrics
        quantities = sample_quantities([m.label for m in metrics], any(optional(m.obj, "substitutions") for m in metrics))
        needs.append(budget.per_sample_need(size.samples, len(plan.systems), len(plan.steps), combinations, len(quantities)))
    if not resampled:
        return needs
    return needs + budget.statistics_needs(
        size, len(plan.systems), measures, combinations, boot.resamples if boot else None,
        test.resamples if test else None, test.method if test else "permutation",
        (boot is not None and boot.keyed, test is not None and test.keyed), boot is not None and boot.method == "bca",
    )


def _folders(plan: Plan) -> list[Source]:
    """The sources that are folders of data files (score files: one per sample)."""
    return [source for source in plan.sources() if source.full is not None and source.full.is_dir()]


def _chunkable(work: Work, source: Source) -> bool:
    """A system's folder in an in-memory run of item data, whose loader lists its samples and
    reads part of them (``sample_ids``, ``stream``): it can be read a chunk of files at a time."""
    return (not work.job.settings.partitioned and work.kind == "items" and source.role == "prediction"
            and source.full is not None and source.full.is_dir()
            and all(optional(source.loader, member) is not None for member in ("sample_ids", "stream")))


def folders_whole(work: Work) -> str:
    """Why an in-memory run reads its systems' data folders whole, all at once, where it could
    read them a chunk of files at a time (:mod:`evalkit.folders`); "" when it does not: draws
    over all the samples at once (``keyed: false``) take every sample's data together."""
    if not any(_chunkable(work, source) for source in work.sources()):
        return ""
    statistics = work.job.settings.statistics
    sections = [] if statistics is None else [("bootstrap", statistics.bootstrap), ("test", statistics.test)]
    unkeyed = [key for key, section in sections if section is not None and not section.keyed]
    return f"`statistics.{unkeyed[0]}.keyed: false` draws over all the samples at once" if unkeyed else ""


def read_in_chunks(work: Work, source: Source) -> bool:
    """Whether an in-memory run reads this folder a chunk of files at a time."""
    return _chunkable(work, source) and not folders_whole(work)


def _folder_needs(plan: Plan) -> list[budget.Need]:
    """The memory of the data folders: a chunk (a block) of files at a time by a streamed (a
    Dask) run, and by an in-memory run whose folders' loaders can read part of them (a chunk's
    largest files at :data:`~evalkit.budget.CHUNK_BYTES`); read whole otherwise (every system's at
    once), saying why where the run asks for it (:func:`folders_whole`)."""
    engine = plan.job.settings.engine
    dask = engine.name == "dask"
    streamed = budget.FOLDER_ROWS if plan.config.data.stream else None
    kept = max(sum(optional(m.obj, "kept_per_byte") for m in step.axes.data_metrics) for step in plan.steps)
    needs = []
    for source in _folders(plan):
        chunk = engine.partition_rows if dask else budget.FOLDER_ROWS if read_in_chunks(plan.work, source) \
            else streamed
        if dask:
            key: tuple[str, ...] = ("engine", "partition_rows")
        elif source.system is None:
            key = ("data", "reference")
        else:
            key = ("data", "systems", source.system)
        assert source.full is not None
        whole = folders_whole(plan.work) if _chunkable(plan.work, source) else ""
        needs.append(budget.folder_need(source.full, key, chunk, kept, whole))
    return needs


def _check_memory(needs: list[budget.Need], where: Where) -> None:
    """Refuse a run whose needs exceed the available memory, at the config key of the largest."""
    total = sum(n.bytes for n in needs)
    available = budget.available_memory()
    if available is None or total <= available:
        return
    largest = max(needs, key=lambda n: n.bytes)
    parts = "; ".join(f"{n.what}: {budget.human(n.bytes)}" for n in sorted(needs, key=lambda n: -n.bytes) if n.bytes)
    raise ConfigError(
        f"{where(*largest.key)}: this run would need about {budget.human(total)} of memory ({parts}), but "
        f"{budget.human(available)} is available{budget.limited_by()}; lower {largest.lower}"
    )
