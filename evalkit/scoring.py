"""Scoring a whole config: load and align the data, then for each sweep value and each system
compute the values, with their intervals, the paired tests and the rank agreement asked for.

The engine (:mod:`evalkit.engine`) scores one system's data under one plan; this module decides
what is scored: every run of a system (aggregated across runs by the jackknife), every value of
a sweep, every resample of the statistics section. It also records which files were read.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.config import LoadedConfig, RunConfig, Runs, StatisticsConfig, SweepConfig, as_list
from evalkit.data import LabelMatrix, align
from evalkit.engine import Component, Plan, Progress, Values, resolve, score_system, value_rows
from evalkit.errors import ConfigError
from evalkit.items import ItemSets
from evalkit.registry import Registry, label_of
from evalkit.results import Agreement, Comparison, Row
from evalkit.sources import load_source
from evalkit.uncertainty import (
    bootstrap_bounds, jackknife_across_runs, paired_tests, rank_agreement, with_intervals,
)

#: config field -> (component kind, Plan attribute)
FIELDS = {
    "representation": ("representation", "representations"), "tnorm": ("tnorm", "tnorms"),
    "similarity": ("similarity", "similarities"), "averaging": ("averaging", "averagings"),
    "metrics": ("metric", "metrics"),
}


@dataclass
class Scored:
    """Everything a run computed, before it becomes :class:`evalkit.results.Results`."""

    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    agreement: list[Agreement] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)

    def note(self, text: str) -> None:
        """Add a note once (a sweep scores the same systems at every value)."""
        if text not in self.notes:
            self.notes.append(text)


def make_plan(config: RunConfig, registry: Registry, where, base: Path | None = None) -> Plan:
    def axis(kind: str, key: str, specs) -> list:
        listed = isinstance(specs, list)
        return resolve(registry, kind, as_list(specs), lambda i: where(key, i) if listed else where(key), base)

    components = {attribute: axis(kind, key, getattr(config, key)) for key, (kind, attribute) in FIELDS.items()}
    return Plan(**components, zero_division=config.zero_division)


def score(loaded: LoadedConfig, registry: Registry, where=None, progress: Progress | None = None) -> Scored:
    """Score every system of a config (every run, every sweep value) with the statistics asked for."""
    where = where or loaded.where
    cfg, data = loaded.config, loaded.config.data
    plan = make_plan(cfg, registry, where, loaded.base)
    kind = plan.data_kind
    out = Scored()

    def load(source: Any, role: str, system: str | None, *path: Any) -> Any:
        out.files += described_files(source, loaded.base, role, system)
        return load_source(
            source, base=loaded.base, where=where("data", *path), registry=registry,
            classes=data.classes, kind=kind, role=role,
        )

    reference = load(data.reference, "reference", None, "reference")
    if isinstance(reference, LabelMatrix):
        reference, _ = reference.check_memberships()
    systems: dict[str, list[Any]] = {}
    for system, source in data.systems.items():
        runs = source.runs if isinstance(source, Runs) else [source]
        paths = [("systems", system, "runs", i) for i in range(len(runs))] if isinstance(source, Runs) else [("systems", system)]
        systems[system] = []
        for run, path in zip(runs, paths):
            prediction = align(reference, load(run, "prediction", system, *path), data.missing)
            if isinstance(prediction, LabelMatrix) and plan.ranks_only:
                prediction = prediction.check_scores()
            elif isinstance(prediction, LabelMatrix):
                prediction, clipped = prediction.check_memberships(clip=data.clip)
                if clipped:
                    out.notes.append(f"{system}: {clipped} prediction value(s) outside [0, 1] were clipped (clip: true)")
            systems[system].append(prediction)

    statistics = cfg.statistics
    baseline = test_baseline(statistics, systems, where) if statistics and statistics.test else None
    sweep = cfg.sweep
    for value in sweep.value_list() if sweep else [None]:
        plan_v = sweep_plan(cfg, registry, where, loaded.base, plan, sweep, value) if sweep else plan
        predictions = {s: [offset(p, sweep, value, where) for p in runs] for s, runs in systems.items()} if sweep else systems
        _score_value(out, reference, predictions, plan_v, statistics, baseline, sweep and sweep.vary, value, progress)
    if statistics and statistics.agreement:
        if len(systems) < 3:
            out.notes.append(f"rank agreement needs at least 3 systems; this run has {len(systems)}")
        else:
            lower = {m.label for m in plan.data_metrics if getattr(m.obj, "lower_is_better", False)}
            out.agreement = rank_agreement(out.rows, lower)
    return out


def test_baseline(statistics: StatisticsConfig, systems: dict[str, list[Any]], where) -> str:
    """The system the others are tested against: named, or the first; it needs one run."""
    baseline = statistics.test.baseline or next(iter(systems))
    place = where("statistics", "test", "baseline")
    if baseline not in systems:
        close = difflib.get_close_matches(baseline, list(systems), 1)
        raise ConfigError(
            f"{place}: no system {baseline!r}" + (f"; did you mean {close[0]!r}?" if close else f"; systems: {', '.join(systems)}")
        )
    if len(systems[baseline]) > 1:
        raise ConfigError(f"{place}: {baseline!r} has several runs; paired tests need one run per system")
    return baseline


def _score_value(
    out: Scored, reference: Any, systems: dict[str, list[Any]], plan: Plan, statistics: Any,
    baseline: str | None, sweep: str | None, value: float | None, progress: Progress | None,
) -> None:
    """Rows (and tests) of every system at one sweep value (or the one run without a sweep)."""
    classes = reference.classes
    ref = _rows_of(reference)
    resampling = statistics is not None and (statistics.bootstrap is not None or statistics.test is not None)
    values: dict[str, Values] = {}
    tables: dict[str, dict] = {}
    rows: list[Row] = []
    for system, runs in systems.items():
        label = system if value is None else f"{system} ({sweep}={value:g})"
        if len(runs) > 1:
            per_run = [score_system(label, ref, _rows_of(p), plan, classes, progress) for p in runs]
            level = statistics.level if statistics else 0.95
            mean, low, high = jackknife_across_runs(per_run, level)
            rows += with_intervals(*(value_rows(system, v, classes) for v in (mean, low, high)))
            out.note(f"{system}: the mean of {len(runs)} runs, with its jackknife {level:.0%} interval across runs")
            continue
        keep = {} if resampling else None
        values[system] = score_system(label, ref, _rows_of(runs[0]), plan, classes, progress, keep)
        tables[system] = keep
        system_rows = value_rows(system, values[system], classes)
        if statistics is not None and statistics.bootstrap is not None:
            if progress:
                progress.start(f"{label}: bootstrap", statistics.bootstrap.resamples)
            low, high = bootstrap_bounds(values[system], plan, keep, ref, _rows_of(runs[0]), statistics, progress)
            system_rows = with_intervals(system_rows, value_rows(system, low, classes), value_rows(system, high, classes))
        rows += system_rows
    if sweep is not None:
        rows = [replace(r, sweep=sweep, sweep_value=value) for r in rows]
    out.rows += rows
    if baseline is not None:
        predictions = {s: _rows_of(systems[s][0]) for s in values}
        for system in values:
            if system == baseline:
                continue
            if progress:
                progress.start(f"{system} vs {baseline}: {statistics.test.method} test", 2 * statistics.test.resamples)
            out.comparisons += paired_tests(system, baseline, values, tables, ref, predictions, plan, statistics, value, progress)
        skipped = [s for s in systems if s not in values]
        if skipped:
            out.note(f"paired tests skip {', '.join(skipped)}: several runs per system")


def sweep_plan(
    cfg: RunConfig, registry: Registry, where, base: Path, plan: Plan, sweep: SweepConfig, value: float,
) -> Plan:
    """The plan with the swept parameter set to ``value`` on every component of the field that
    has it; labels are as written less that parameter (so a line of a sweep plot is one label)."""
    if sweep.vary == "offset":
        return plan
    field_name, parameter = sweep.vary.split(".")
    kind, attribute = FIELDS[field_name]
    specs = as_list(getattr(cfg, field_name))
    changed, accepting = [], 0
    for spec in specs:
        name = spec if isinstance(spec, str) else spec["name"]
        accepts = parameter in registry.entry(kind, name, where(field_name)).cls.Params.model_fields
        accepting += accepts
        changed.append({**({"name": spec} if isinstance(spec, str) else spec), parameter: value} if accepts else spec)
    if not accepting:
        names = ", ".join(s if isinstance(s, str) else s["name"] for s in specs) or "(none)"
        raise ConfigError(f"{where('sweep', 'vary')}: no {kind} of this config has a parameter {parameter!r} ({names})")
    components = resolve(registry, kind, changed, lambda i: where("sweep", "vary"), base)
    # Labels as written, less the swept parameter (its value is the row's sweep_value).
    labels = [label_of({k: v for k, v in spec.items() if k != parameter} if isinstance(spec, dict) else spec) for spec in specs]
    relabelled = [Component(label, c.obj) for label, c in zip(labels, components)]
    return replace(plan, **{attribute: relabelled})


def offset(data: Any, sweep: SweepConfig, value: float, where) -> Any:
    """Predictions plus ``value`` (clipped to [0, 1]) in the sweep's samples (default: all)."""
    if sweep.vary != "offset":
        return data
    if isinstance(data, ItemSets):
        raise ConfigError(f"{where('sweep', 'vary')}: offset adds to membership values; this run reads item lists")
    rows = np.ones(len(data), dtype=bool)
    if sweep.samples is not None:
        ids = list(data.ids or ())
        unknown = [s for s in sweep.samples if s not in ids]
        if unknown:
            hint = f"the data's ids: {', '.join(ids[:10])}" if ids else "the data has no ids; give them ({values, ids})"
            raise ConfigError(f"{where('sweep', 'samples')}: no sample {', '.join(map(repr, unknown))}; {hint}")
        rows = np.isin(np.array(ids, dtype=object), sweep.samples)
    values = data.values.copy()
    values[rows] = np.clip(values[rows] + value, 0.0, 1.0)
    return replace(data, values=values)


def _rows_of(data: LabelMatrix | ItemSets) -> np.ndarray | ItemSets:
    """What the engine slices into chunks: the values array of a matrix, item sets as they are."""
    return data.values if isinstance(data, LabelMatrix) else data


def described_files(source: Any, base: Path, role: str, system: str | None) -> list[dict[str, Any]]:
    """The files a data source reads, with their sha256 and size (none for inline data)."""
    path = source if isinstance(source, (str, Path)) else source.get("path") if isinstance(source, dict) else None
    if path is None:
        return []
    full = Path(path) if Path(path).is_absolute() else base / path
    if not full.exists():
        return []  # the loader reports it
    files = sorted(p for p in full.rglob("*") if p.is_file()) if full.is_dir() else [full]
    digest, size = hashlib.sha256(), 0
    for file in files:
        if full.is_dir():
            digest.update(str(file.relative_to(full)).encode() + b"\0")
        with file.open("rb") as handle:  # in blocks: data files may be large
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
                size += len(block)
    return [{"role": role, "system": system, "path": str(path), "sha256": digest.hexdigest(), "bytes": size}]
