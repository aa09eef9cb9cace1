"""Executing a plan: read and align the data, then score every system at every sweep value,
with the intervals, paired tests and rank agreement the statistics section asks for.

Everything config-level was checked by the plan (:mod:`evalkit.plan`); what can fail here is
the data itself (a value out of range, a missing id) or a plugin.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from evalkit import budget
from evalkit.data import LabelMatrix, align, empty_reference_note, named_as_reference, only_in_systems, with_empty_samples
from evalkit.engine import Scores, score_system
from evalkit.items import ItemSets
from evalkit.plan import Plan, Source, Step
from evalkit.progress import Progress
from evalkit.protocols import optional
from evalkit.provenance import described_file
from evalkit.results import Agreement, Comparison, CurveRow, Row
from evalkit.sources import load_source, source_path
from evalkit.streaming import stream_rows
from evalkit.sweeps import offset
from evalkit.table import CHUNK_ROWS
from evalkit.time_units import time_unit_note
from evalkit.uncertainty import (
    Sample,
    bootstrap_bounds,
    jackknife_across_runs,
    paired_tests,
    rank_agreement,
    rows_of,
)
from evalkit.weights import aligned_weights


@dataclass
class Scored:
    """Everything a run computed, before it becomes :class:`evalkit.results.Results`."""

    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    agreement: list[Agreement] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    curves: list[CurveRow] = field(default_factory=list)

    def note(self, text: str) -> None:
        """Add a note once (a sweep scores the same systems at every value)."""
        if text not in self.notes:
            self.notes.append(text)


def execute(plan: Plan, progress: Progress | None = None) -> Scored:
    """Score every system of a plan (every run, every sweep value) with its statistics."""
    out = Scored()
    dask = plan.config.engine.name == "dask"
    if plan.config.data.stream or dask:
        sources = [plan.reference, *(runs[0] for runs in plan.systems.values())]
        # The files' hashes are taken on another thread while the run reads them (hashlib and
        # file reads release the GIL): on two cores hashing costs no time.
        with ThreadPoolExecutor(max_workers=1) as hashing:
            described = [hashing.submit(_described, source) for source in sources]
            with budget.building(*_partitioned(plan, dask)):
                if dask:
                    from evalkit.dask_engine import dask_rows  # Dask is imported only for a Dask run

                    out.rows, out.notes = dask_rows(plan, progress)
                else:
                    out.rows, out.notes = stream_rows(plan, progress)
            out.files = [d for future in described if (d := future.result()) is not None]
        return out
    reference = _load(plan, plan.reference, out)
    if isinstance(reference, LabelMatrix):
        reference, _ = reference.check_memberships()
    loaded = {
        name: [named_as_reference(reference, _load(plan, source, out)) for source in runs] for name, runs in plan.systems.items()
    }
    if plan.config.data.missing == "empty" and reference.ids is not None:
        extra = only_in_systems(reference, [data for runs in loaded.values() for data in runs])
        reference = with_empty_samples(reference, extra)
        if extra:
            out.note(empty_reference_note(len(extra)))
    systems = {
        name: [_prediction(plan, reference, source, data, out) for source, data in zip(runs, loaded[name])]
        for name, runs in plan.systems.items()
    }
    weights = None
    if plan.weights is not None:
        weights = aligned_weights(_load(plan, plan.weights, out), reference)
        given = source_path(plan.weights.value, plan.weights.where)[0] or "data.weights"
        out.note(f"samples weighted by {given}: {weights.sum():g} in all for {len(weights)} samples")
    for step in plan.steps:
        _score_step(plan, step, reference, systems, weights, out, progress)
    statistics = plan.config.statistics
    if statistics and statistics.agreement:
        if len(systems) < 3:
            out.notes.append(f"rank agreement needs at least 3 systems; this run has {len(systems)}")
        else:
            lower = {m.label for m in plan.axes.metrics if optional(m.obj, "lower_is_better")}
            out.agreement = rank_agreement(out.rows, lower)
    return out


def _partitioned(plan: Plan, dask: bool) -> tuple[str, str]:
    """What a streamed or Dask run builds, for :func:`budget.building`: every system's sums, a
    chunk (a block) of rows at a time, with a replicate of them per Poisson resample; and what
    grows them, to lower when the memory runs out."""
    engine = plan.config.engine
    rows = f"blocks of {engine.partition_rows:,} rows on the Dask cluster" if dask else f"{CHUNK_ROWS:,} rows at a time"
    what = f"the sums of {', '.join(plan.systems)} ({rows}"
    lower = "the classes or the components compared" + (", or `engine.partition_rows`" if dask else "")
    statistics = plan.config.statistics
    if statistics is not None and statistics.bootstrap is not None:
        what += f", {budget.amount(statistics.bootstrap.resamples)} Poisson bootstrap resamples"
        lower = f"`statistics.bootstrap.resamples`, {lower}"
    return f"{what})", lower


def _described(source: Source) -> dict[str, Any] | None:
    """The source's file as the results' provenance records it (its size and hash)."""
    if source.full is None:
        return None
    return described_file(source.full, str(source_path(source.value, source.where)[0]), source.role, source.system)


def _load(plan: Plan, source: Source, out: Scored) -> Any:
    described = _described(source)
    if described is not None:
        out.files.append(described)
    with budget.building(f"the data of {source.where}", "the size of that data"):
        return load_source(
            source.value, where=source.where, kind=plan.kind, role=source.role, classes=plan.config.data.classes,
            loader=source.loader, full=source.full,
        )


def _prediction(plan: Plan, reference: Any, source: Source, loaded: Any, out: Scored) -> Any:
    """A system's data aligned with the reference, checked as memberships or scores. Rows
    matched by position because neither file has ids are announced: a reordered file would
    silently pair the wrong samples (inline data in a config is positional by nature)."""
    prediction = align(reference, loaded, plan.config.data.missing)
    if reference.ids is None and (source.full is not None or plan.reference.full is not None):
        out.note(f"{source.system}: rows aligned with the reference by position: neither file has sample ids")
    if not isinstance(prediction, LabelMatrix):
        unit = time_unit_note(reference, prediction, source.system or "prediction")
        if unit:
            out.note(unit)
        return prediction
    if plan.axes.ranks_only:
        return prediction.check_scores()
    prediction, clipped = prediction.check_memberships(clip=plan.config.data.clip)
    if clipped:
        out.notes.append(f"{source.system}: {clipped} prediction value(s) outside [0, 1] were clipped (clip: true)")
    return prediction


def engine_rows(data: LabelMatrix | ItemSets) -> Any:
    """What the engine slices into chunks: the values array of a matrix, item sets as they are."""
    return data.values if isinstance(data, LabelMatrix) else data


def _score_step(
    plan: Plan, step: Step, reference: Any, systems: dict[str, list[Any]], weights: Any, out: Scored,
    progress: Progress | None,
) -> None:
    """Rows (and tests) of every system at one sweep value (or the one run without a sweep)."""
    statistics, sweep = plan.config.statistics, plan.config.sweep
    classes = reference.classes
    resampling = statistics is not None and (statistics.bootstrap is not None or statistics.test is not None)
    scores: dict[str, Scores] = {}
    samples: dict[str, Sample] = {}
    rows: list[Row] = []
    for system, runs in systems.items():
        label = system
        if sweep is not None:
            assert step.value is not None, "every step of a sweep has its value"
            label = f"{system} ({sweep.vary}={step.value:g})"
            runs = [offset(p, sweep, step.value, plan.where("sweep", "samples")) for p in runs]
        ref = engine_rows(reference)
        if len(runs) > 1:
            per_run = [
                score_system(label, ref, engine_rows(p), step.axes, classes, progress, weights=weights).values
                for p in runs
            ]
            level = statistics.level if statistics else 0.95
            rows += rows_of(system, *jackknife_across_runs(per_run, level))
            out.note(f"{system}: the mean of {len(runs)} runs, with its jackknife {level:.0%} interval across runs")
            continue
        samples[system] = Sample(ref, engine_rows(runs[0]), classes, weights, reference.ids)
        with budget.building(f"the scores of {label}", "the size of the data, or the components compared"):
            scores[system] = score_system(
                label, ref, samples[system].prediction, step.axes, classes, progress, resampling, weights,
            )
        bounds: tuple[Any, Any] = (None, None)
        if statistics is not None and statistics.bootstrap is not None:
            if progress:
                progress.start(f"{label}: bootstrap", statistics.bootstrap.resamples)
            with budget.building(f"the bootstrap intervals of {label} ({budget.amount(statistics.bootstrap.resamples)} "
                                 f"resamples x {len(reference):,} samples)", "`statistics.bootstrap.resamples`"):
                bounds = bootstrap_bounds(scores[system], step.axes, samples[system], statistics, progress)
        rows += rows_of(system, scores[system].values, *bounds)
        out.curves += [
            CurveRow(system, name, curve, class_, step.value) for (name, class_), curve in scores[system].curves.items()
        ]
    if sweep is not None:
        rows = [replace(r, sweep=sweep.vary, sweep_value=step.value) for r in rows]
    out.rows += rows
    if plan.baseline is not None and statistics is not None and statistics.test is not None:
        test = statistics.test
        for system in scores:
            if system == plan.baseline:
                continue
            if progress:
                passes = 4 if test.method == "permutation" else 2  # permutations, then the difference's bootstrap
                progress.start(f"{system} vs {plan.baseline}: {test.method} test", passes * test.resamples)
            with budget.building(f"the paired {test.method} test of {system} against {plan.baseline} "
                                 f"({budget.amount(test.resamples)} resamples x {len(reference):,} samples)",
                                 "`statistics.test.resamples`"):
                compared = paired_tests(system, plan.baseline, scores, samples, step.axes, statistics, progress)
            out.comparisons += [replace(c, sweep_value=step.value) for c in compared]
        skipped = [s for s in systems if s not in scores]
        if skipped:
            out.note(f"paired tests skip {', '.join(skipped)}: several runs per system")
