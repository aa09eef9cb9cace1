"""One reduction, four drivers: a partition of aligned rows becomes a :class:`Tally`, tallies
add up by ``+``, and :func:`scored` turns the tally of all the data into every number a run
reports.

A partition is whatever a driver hands over: the whole data (in memory), a chunk (a streamed
run), a group of ids (Dask), a batch (the Evaluator). :func:`prepare` checks and aligns it, the
same for every driver; :func:`reduce_partition` reduces it, at every sweep value, for every
system and run, with the replicates the statistics need. Draws keyed by sample id (the default:
Poisson bootstrap counts, jackknife groups, a test's swaps) are the same in any partition, so
their replicates add up like every other sum; with ``keyed: false`` the multinomial bootstrap,
its strided jackknife and the permutations draw over all the samples at once, so only a
partition that is the whole data takes them (the settings refuse it for a streamed or Dask run).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from evalkit import stats
from evalkit.data import LabelMatrix, align, empty_reference_note, named_as_reference, only_in_systems, with_empty_samples
from evalkit.engine import Complement, Counts, Draw, Replicates, Sums, check_items, prepared, reduce
from evalkit.errors import DataError
from evalkit.items import ItemSets
from evalkit.measures import Curve
from evalkit.per_sample import Collector, Label, Part, sample_blocks, timelines, worst_timelines
from evalkit.plan import Job, Step
from evalkit.progress import Progress
from evalkit.results import Agreement, Comparison, CurveRow, Row, SampleValues, Timeline
from evalkit.sweeps import offset
from evalkit.time_units import latest_time, time_unit_note
from evalkit.uncertainty import compared, interval_bounds, jackknife_across_runs, rank_agreement, rows_of
from evalkit.weights import MAX_TOTAL, matched_weights, none_counts

Data = LabelMatrix | ItemSets
#: The system of the ceiling rows (:attr:`evalkit.axes.Axes.ceiling`): the reference, scored against itself.
CEILING = "reference"


@dataclass
class Partition:
    """Aligned, checked rows: the reference, each system's runs in its sample order, and the
    samples' weights; ``first_row``: the place of its first sample in the data (samples without
    ids are keyed by it); ``whole``: the partition is all the data."""

    reference: Data
    systems: dict[str, list[Any]]
    weights: np.ndarray | None = None
    first_row: int = 0
    whole: bool = False


Key = tuple[int, str, int]  # (sweep step, system, run)
Pair = tuple[int, str]  # (sweep step, system tested against the baseline)


@dataclass
class Tally:
    """Everything the partitions seen add up to: each (step, system, run)'s sums, the replicates
    of intervals and tests, and what the notes count. Merged by ``+`` in any grouping."""

    sums: dict[Key, Sums] = field(default_factory=dict)
    intervals: dict[Key, Replicates] = field(default_factory=dict)
    jackknife: dict[Key, Replicates] = field(default_factory=dict)
    tests: dict[Key, Replicates] = field(default_factory=dict)
    as_baseline: dict[Pair, Replicates] = field(default_factory=dict)
    as_system: dict[Pair, Replicates] = field(default_factory=dict)
    samples: int = 0
    classes: tuple[str, ...] = ()
    weight: float = 0.0
    clipped: dict[str, int] = field(default_factory=dict)
    added: int = 0
    notes: tuple[str, ...] = ()
    swept: frozenset[str] = frozenset()  # the sweep's samples seen (an offset sweep naming samples)
    latest: dict[str, float] = field(default_factory=dict)  # the latest event end of the reference ("") and each system
    groups: np.ndarray | None = None  # the samples in each group of a keyed jackknife (BCa), to leave out empty ones
    per_sample: list[Part] = field(default_factory=list)  # with `per_sample: true`, in the partitions' order
    ceilings: dict[int, Sums] = field(default_factory=dict)  # each sweep step's reference scored against itself
    timelines: list[Timeline] = field(default_factory=list)  # the events of each partition's worst samples

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            _merged(self.sums, other.sums), _merged(self.intervals, other.intervals),
            _merged(self.jackknife, other.jackknife), _merged(self.tests, other.tests),
            _merged(self.as_baseline, other.as_baseline), _merged(self.as_system, other.as_system),
            self.samples + other.samples, self.classes or other.classes, self.weight + other.weight,
            _counted(self.clipped, other.clipped), self.added + other.added, _union(self.notes, other.notes),
            self.swept | other.swept,
            {key: max(self.latest.get(key, value), value) for key, value in {**self.latest, **other.latest}.items()},
            other.groups if self.groups is None else self.groups if other.groups is None else self.groups + other.groups,
            self.per_sample + other.per_sample, _merged(self.ceilings, other.ceilings), self.timelines + other.timelines,
        )


    def __iadd__(self, other: Tally) -> Tally:
        """``self + other``, the replicates' states added into ``self``'s in place (see
        :meth:`Replicates.__iadd__`): how a run folds its chunks' tallies."""
        for name in _REPLICATED:
            kept = getattr(self, name)
            for key, value in getattr(other, name).items():
                if key in kept:
                    kept[key] += value
                else:  # a copy, so that adding more into it leaves ``other`` as it was
                    kept[key] = Replicates(dict(value.batches), list(value.data))
        return self + replace(other, intervals={}, jackknife={}, tests={}, as_baseline={}, as_system={})


#: The tally's fields of replicates, which :meth:`Tally.__iadd__` adds in place.
_REPLICATED = ("intervals", "jackknife", "tests", "as_baseline", "as_system")


def _merged(a: dict[Any, Any], b: dict[Any, Any]) -> dict[Any, Any]:
    merged = dict(a)
    for key, value in b.items():
        merged[key] = value if key not in merged else merged[key] + value
    return merged


def _counted(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {key: a.get(key, 0) + b.get(key, 0) for key in {**a, **b}}


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(a + b))


# ---------------------------------------------------------------------------------------- prepare


def prepare(
    job: Job, reference: Data, systems: Mapping[str, Sequence[Data]], weights: LabelMatrix | None = None,
    files: bool = True, python: bool = False, whole_samples: bool = True, ids_checked: bool = False,
    past_the_reference: bool = False,
) -> tuple[Partition, Tally]:
    """The one data preparation of every driver: the reference checked, every system's runs
    aligned with it by id (by position where neither side has ids) and checked as memberships
    (or scores, for ranking metrics alone), the weights matched to its samples; and what the
    notes count, in an otherwise empty :class:`Tally`.

    ``files``: the data comes from files (rows matched by position are then announced; inline
    data is positional by nature). ``python``: messages name keyword arguments, not config keys.
    ``whole_samples``: every row of the partition's ids on every side is in it (the whole data,
    a streamed chunk, a Dask group), so under ``missing: empty`` an id that only a system lists
    is a sample the reference lacks (a user's batch promises no such thing: such an id is an
    error there). ``ids_checked``: every side's ids are known to be unique (a streamed chunk's,
    checked sorted as they came). ``past_the_reference``: the rows other files list after the
    reference's last (a stream's end): the reference part is empty by design."""
    settings, axes = job.settings, job.axes
    counted = Tally()
    for data in (reference, *(run for runs in systems.values() for run in runs)):
        counted.notes += data.notes if isinstance(data, ItemSets) else ()
    if isinstance(reference, LabelMatrix) and not past_the_reference:
        reference = reference.check_memberships()[0]
    systems = {name: [named_as_reference(reference, run) for run in runs]  # type: ignore[type-var]
               for name, runs in systems.items()}
    if settings.missing == "empty" and reference.ids is not None and whole_samples:
        extra = only_in_systems(reference, [run for runs in systems.values() for run in runs])
        reference = with_empty_samples(reference, extra)  # type: ignore[type-var]
        counted.added = len(extra)
    aligned: dict[str, list[Data]] = {}
    for system, runs in systems.items():
        aligned[system] = []
        for run in runs:
            prediction: Data = align(reference, run, settings.missing, python, ids_checked)  # type: ignore[type-var]
            if reference.ids is None and files:
                counted.notes += (f"{system}: rows aligned with the reference by position: neither file has sample ids",)
            if isinstance(prediction, LabelMatrix) and past_the_reference and not len(prediction):
                pass  # no sample at all in this part past the reference's end (only another file's rows)
            elif isinstance(prediction, LabelMatrix):
                if axes.ranks_only:
                    prediction = prediction.check_scores()
                else:
                    prediction, clipped = prediction.check_memberships(clip=settings.clip, python=python)
                    if clipped:
                        counted.clipped[system] = counted.clipped.get(system, 0) + clipped
            else:
                assert isinstance(reference, ItemSets), "item sets are aligned with item sets"
                latest = latest_time(prediction)
                if latest is not None:
                    counted.latest[system] = max(counted.latest.get(system, latest), latest)
                for step in job.steps:
                    check_items(step.axes, reference, prediction, system)
            aligned[system].append(prediction)
    if isinstance(reference, ItemSets) and (latest := latest_time(reference)) is not None:
        counted.latest[""] = latest
    matched = None if weights is None else matched_weights(weights, reference)
    counted.classes = reference.classes
    return Partition(reference, aligned, matched), counted


# ----------------------------------------------------------------------------------------- reduce


def reduce_partition(job: Job, partition: Partition, progress: Progress | None = None) -> Tally:
    """A partition's tally: at every sweep value, each system's runs reduced (in one pass over
    the rows, with every replicate the statistics need)."""
    reference = partition.reference
    n = len(reference)
    tally = Tally(samples=n, classes=reference.classes)
    sweep = job.settings.sweep
    if sweep is not None and sweep.samples is not None and reference.ids is not None:
        tally.swept = frozenset(sweep.samples) & frozenset(reference.ids)
    if partition.weights is not None:
        tally.weight = float(partition.weights.sum())
    if job.checks_only:  # what a component checks once it knows the classes, checked too
        for step in job.steps:
            prepared(step.axes, reference.classes)
    if not n or job.checks_only:
        return tally
    draws = _Draws(job, partition)
    ref_rows = engine_rows(reference)
    runs = [(system, run) for system, given in partition.systems.items() for run in range(len(given))]
    planned = _planned(job, runs, draws)  # the same draws at every sweep value
    per_sample: dict[Label, np.ndarray] = {}
    for index, step in enumerate(job.steps):
        predictions = [engine_rows(_offset(job, partition.systems[s][r], step)) for s, r in runs]
        collector = Collector(step.axes) if job.settings.per_sample else None
        sums, replicates = reduce(step.axes, ref_rows, predictions, partition.weights, [d for *_, d in planned], progress,
                                  collector)
        for (system, run), total in zip(runs, sums):
            tally.sums[index, system, run] = total
        for (field_name, key, _), reduced in zip(planned, replicates):
            getattr(tally, field_name)[(index,) + key] = reduced
        ceiling = step.axes.ceiling
        if ceiling is not None:
            tally.ceilings[index] = reduce(ceiling, ref_rows, [ref_rows], partition.weights)[0][0]
        if collector is not None:
            per_sample.update(collector.values([s for s, _ in runs], None if sweep is None else sweep.vary, step.value))
    if per_sample:
        names = reference.ids if reference.ids is not None else map(str, range(partition.first_row, partition.first_row + n))
        tally.per_sample = [Part(tuple(names), reference.ids is not None, per_sample)]
        tally.timelines = timelines(tally.per_sample, job.settings.partitioned, job.axes.lower_is_better, reference,
                                    partition.systems, partition.first_row)
    if any(field_name == "jackknife" for field_name, *_ in planned) and isinstance(draws.jackknife, _Grouped):
        tally.groups = draws.jackknife.sizes()
    return tally


def _planned(job: Job, runs: list[tuple[str, int]], draws: _Draws) -> list[tuple[str, tuple[Any, ...], Draw]]:
    """The replicates the statistics need, as (the tally's field, key less the sweep step, draw):
    the interval's (and BCa's jackknife) and the test's resamples of each single-run system, and
    for a permutation test the swapped sums of each system paired with the baseline."""
    statistics = job.settings.statistics
    single = [i for i, (system, _) in enumerate(runs) if job.runs[system] == 1]
    planned: list[tuple[str, tuple[Any, ...], Draw]] = []
    if statistics is not None and statistics.bootstrap is not None:
        for i in single:
            planned.append(("intervals", runs[i], Draw(((i, draws.interval),))))
            if statistics.bootstrap.method == "bca":
                planned.append(("jackknife", runs[i], Draw(((i, draws.jackknife),))))
    if statistics is not None and statistics.test is not None:
        planned += [("tests", runs[i], Draw(((i, draws.test),))) for i in single]
        base = next((i for i in single if runs[i][0] == statistics.test.baseline), None)
        if statistics.test.method == "permutation" and base is not None:
            for i in single:
                if i != base:
                    swaps, kept = draws.masks
                    planned.append(("as_baseline", (runs[i][0],), Draw(((base, kept), (i, swaps)))))
                    planned.append(("as_system", (runs[i][0],), Draw(((base, swaps), (i, kept)))))
    return planned


class _Drawn:
    """Counts drawn over all the samples at once (a multinomial bootstrap, a jackknife, unkeyed
    permutations): held whole, as only a partition that is the whole data draws them."""

    def __init__(self, counts: np.ndarray) -> None:
        self.counts = counts

    @property
    def n_replicates(self) -> int:
        return len(self.counts)

    def block(self, part: slice) -> np.ndarray:
        return self.counts[:, part]

    def row(self, b: int) -> np.ndarray:
        return self.counts[b]


class _Keys:
    """Each sample's key, made for the samples asked for: a hash of its id, or its place in the
    data without ids. Never held for the whole partition unless a replicate's row asks (a data
    metric's), so keyed draws cost no memory per sample."""

    def __init__(self, ids: Any, first: int, n: int) -> None:
        self.ids, self.first, self.n = ids, first, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, part: slice) -> np.ndarray:
        start, stop, _ = part.indices(self.n)
        if self.ids is None:
            return np.arange(self.first + start, self.first + stop, dtype=np.uint64)
        return stats.sample_keys(self.ids[start:stop], stop - start)

    @functools.cached_property
    def all(self) -> np.ndarray:
        """Every key, kept once made (a data metric's replicates ask for them replicate by
        replicate, and hold the rows anyway)."""
        return self[0 : self.n]

    def blocks(self, size: int = 1 << 16) -> Iterator[np.ndarray]:
        """The keys ``size`` samples at a time."""
        for start in range(0, self.n, size):
            yield self[start : start + size]


class _Keyed:
    """Counts keyed by sample (Poisson counts, or permutation swaps): made for a block of
    samples, or for one replicate, when asked, from the samples' keys and the seed alone, so no
    replicates x samples matrix is ever held."""

    def __init__(self, keys: _Keys, resamples: int, seed: int, swaps: bool = False) -> None:
        self.keys, self.n_replicates, self.seed, self.swaps = keys, resamples, seed, swaps

    def _made(self, keys: np.ndarray, resamples: int, first: int = 0) -> np.ndarray:
        if self.swaps:
            return stats.keyed_masks(keys, resamples, self.seed, first)
        return stats.poisson_weights(keys, resamples, self.seed, first)

    def block(self, part: slice) -> np.ndarray:
        return self._made(self.keys[part], self.n_replicates)

    def row(self, b: int) -> np.ndarray:
        return self._made(self.keys.all, 1, b)[0]


class _Grouped:
    """A delete-a-group jackknife keyed by sample: sample i is in group ``keys[i] % groups`` (a
    hash of its id, or without ids its position's residue: then the strided groups of
    :func:`evalkit.stats.jackknife_groups`), and replicate j counts every sample outside group j
    once. Groups no sample fell in are left out when the acceleration is computed."""

    def __init__(self, keys: _Keys, groups: int = stats.JACKKNIFE_GROUPS) -> None:
        self.keys, self.n_replicates = keys, groups

    def _group(self, keys: np.ndarray) -> np.ndarray:
        return (keys % np.uint64(self.n_replicates)).astype(np.intp)

    def block(self, part: slice) -> np.ndarray:
        return self._group(self.keys[part]) != np.arange(self.n_replicates)[:, None]

    def row(self, b: int) -> np.ndarray:
        return self._group(self.keys.all) != b

    def sizes(self) -> np.ndarray:
        """How many samples each group holds."""
        return sum((np.bincount(self._group(keys), minlength=self.n_replicates) for keys in self.keys.blocks()),
                   np.zeros(self.n_replicates, dtype=np.int64))


class _Draws:
    """A partition's counts of every replicate the statistics draw, made when first asked for:
    keyed by sample (any partition), or over the whole data (a partition that is the whole)."""

    def __init__(self, job: Job, partition: Partition) -> None:
        self.statistics, self.partition, self.whole = job.settings.statistics, partition, partition.whole
        self._made: dict[tuple[int, int, bool], _Keyed] = {}

    @functools.cached_property
    def keys(self) -> _Keys:
        """Each sample's key, made as the draws ask for it."""
        reference = self.partition.reference
        return _Keys(reference.ids, self.partition.first_row, len(reference))

    @functools.cached_property
    def interval(self) -> Counts:
        boot = self.statistics.bootstrap if self.statistics else None
        assert boot is not None, "intervals are drawn when the statistics ask for them"
        if boot.keyed:
            return self._keyed(boot.resamples, boot.seed)
        self._check_whole("bootstrap intervals with `keyed: false`")
        return _Drawn(stats.bootstrap_weights(len(self.keys), boot.resamples, np.random.default_rng(boot.seed)))

    @functools.cached_property
    def jackknife(self) -> Counts:
        boot = self.statistics.bootstrap if self.statistics else None
        assert boot is not None, "a jackknife is drawn for BCa intervals"
        if boot.keyed:
            return _Grouped(self.keys)
        self._check_whole("BCa intervals of multinomial resamples")
        return _Drawn(stats.jackknife_weights(len(self.keys)))

    @property
    def test(self) -> Counts:
        return self._tests[0]

    @property
    def masks(self) -> tuple[Counts, Counts]:
        masks = self._tests[1]
        assert masks is not None, "masks are drawn for a permutation test"
        return masks

    @functools.cached_property
    def _tests(self) -> tuple[Counts, tuple[Counts, Counts] | None]:
        """The test's bootstrap counts and, for a permutation test, its swaps and their
        complement (as counts 1 and 0): keyed by sample, or from one generator in the order an
        in-memory run has always drawn them (the swaps first)."""
        test = self.statistics.test if self.statistics else None
        assert test is not None, "tests are drawn when the statistics ask for them"
        permutation = test.method == "permutation"
        if test.keyed:
            swaps = self._keyed(test.resamples, test.seed, swaps=True)
            return self._keyed(test.resamples, test.seed), (swaps, Complement(swaps)) if permutation else None
        self._check_whole("paired tests with `keyed: false`")
        rng = np.random.default_rng(test.seed)
        masks = stats.permutation_masks(len(self.keys), test.resamples, rng) if permutation else None
        counts = _Drawn(stats.bootstrap_weights(len(self.keys), test.resamples, rng))
        if masks is None:
            return counts, None
        swapped = _Drawn(masks)  # bool: a byte a draw
        return counts, (swapped, Complement(swapped))

    def _keyed(self, resamples: int, seed: int, swaps: bool = False) -> _Keyed:
        """Keyed counts, one object for equal settings: an interval and a test of the same seed
        and resamples draw the same counts, made (and reduced) once."""
        if (resamples, seed, swaps) not in self._made:
            self._made[resamples, seed, swaps] = _Keyed(self.keys, resamples, seed, swaps)
        return self._made[resamples, seed, swaps]

    def _check_whole(self, what: str) -> None:
        assert self.whole, f"{what} draw over all the samples; the settings key a partitioned run's draws"


def engine_rows(data: Data) -> Any:
    """What the engine slices into chunks: the values array of a matrix, item sets as they are."""
    return data.values if isinstance(data, LabelMatrix) else data


def _offset(job: Job, data: Data, step: Step) -> Data:
    sweep = job.settings.sweep
    if sweep is None or step.value is None:
        return data
    return offset(data, sweep.vary, sweep.samples, step.value)


# ----------------------------------------------------------------------------------------- scored


@dataclass
class Scored:
    """Everything a run computed, before it becomes :class:`evalkit.results.Results`."""

    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    agreement: list[Agreement] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    curves: list[CurveRow] = field(default_factory=list)
    sample_values: list[SampleValues] = field(default_factory=list)
    timelines: list[Timeline] = field(default_factory=list)
    ceilings: list[Row] = field(default_factory=list)

    def note(self, text: str) -> None:
        """Add a note once."""
        if text not in self.notes:
            self.notes.append(text)


def scored(job: Job, tally: Tally, reference_where: str) -> Scored:
    """Every number of a run from the tally of all its data, with its notes."""
    out = checked(job, tally, reference_where)
    out.sample_values = sample_blocks(tally.per_sample, job.settings.partitioned)
    out.timelines = worst_timelines(tally.timelines, out.sample_values, job.axes.lower_is_better)
    settings = job.settings
    sweep, statistics = settings.sweep, settings.statistics
    classes = tally.classes
    level = statistics.level if statistics else 0.95
    for index, step in enumerate(job.steps):
        rows: list[Row] = []
        values = {}
        for system, runs in job.runs.items():
            if runs > 1:
                per_run = [tally.sums[index, system, r].values(step.axes, classes) for r in range(runs)]
                rows += rows_of(system, *jackknife_across_runs(per_run, level))
                out.note(f"{system}: the mean of {runs} runs, with its jackknife {level:.0%} interval across runs")
                continue
            key = (index, system, 0)
            curves: dict[tuple[str, str | None], Curve] = {}
            values[system] = tally.sums[key].values(step.axes, classes, curves)
            bounds: tuple[Any, Any] = (None, None)
            if statistics is not None and statistics.bootstrap is not None:
                jackknife = None
                if key in tally.jackknife:
                    jackknife = tally.jackknife[key].values(step.axes, classes)
                    if tally.groups is not None:
                        jackknife = {m: v[tally.groups > 0] for m, v in jackknife.items()}
                bounds = interval_bounds(values[system], tally.intervals[key].values(step.axes, classes), jackknife, level)
            rows += rows_of(system, values[system], *bounds)
            out.curves += [CurveRow(system, name, curve, class_, step.value) for (name, class_), curve in curves.items()]
        ceiling = step.axes.ceiling
        ceilings = [] if ceiling is None else rows_of(CEILING, tally.ceilings[index].values(ceiling, classes))
        if sweep is not None:
            rows = [replace(r, sweep=sweep.vary, sweep_value=step.value) for r in rows]
            ceilings = [replace(r, sweep=sweep.vary, sweep_value=step.value) for r in ceilings]
        out.rows += rows
        out.ceilings += ceilings
        test = statistics.test if statistics else None
        if test is not None and job.baseline is not None:
            base = job.baseline
            for system in values:
                if system == base:
                    continue
                swapped = None
                if (index, system) in tally.as_baseline:
                    swapped = (tally.as_baseline[index, system].values(step.axes, classes),
                               tally.as_system[index, system].values(step.axes, classes))
                found = compared(
                    system, base, values[base], values[system], tally.tests[index, base, 0].values(step.axes, classes),
                    tally.tests[index, system, 0].values(step.axes, classes), swapped, test, level,
                )
                out.comparisons += [replace(c, sweep_value=step.value) for c in found]
            skipped = [s for s, runs in job.runs.items() if runs > 1]
            if skipped:
                out.note(f"paired tests skip {', '.join(skipped)}: several runs per system")
    if statistics is not None and statistics.agreement:
        if len(job.runs) < 3:
            out.notes.append(f"rank agreement needs at least 3 systems; this run has {len(job.runs)}")
        else:
            out.agreement = rank_agreement(out.rows, set(job.axes.lower_is_better))
    return out





def checked(job: Job, tally: Tally, reference_where: str) -> Scored:
    """What the whole data must be, beyond each partition's checks (samples to score, the
    sweep's samples present, weights that count), and the notes on it: no number yet."""
    out = Scored()
    if not tally.samples:
        raise DataError(f"{reference_where}: there are no samples to score; the reference is empty")
    sweep = job.settings.sweep
    if sweep is not None and sweep.samples is not None:
        unseen = [s for s in sweep.samples if s not in tally.swept]
        if unseen:
            raise DataError(
                f"{sweep.where}: no sample {', '.join(map(repr, unseen))} in the data; the sweep's samples are sample ids "
                "of the reference (data without ids has none: give the files an id column)"
            )
    if tally.added:
        out.note(empty_reference_note(tally.added))
    for note in tally.notes:
        out.note(note)
    for system, count in tally.clipped.items():
        out.note(f"{system}: {count} prediction value(s) outside [0, 1] were clipped (clip: true)")
    for system in job.runs:
        unit = time_unit_note(tally.latest.get(""), tally.latest.get(system), system)
        if unit:
            out.note(unit)
    if job.weights_where is not None:
        if not tally.weight:
            raise none_counts(job.weights_where)
        if tally.weight > MAX_TOTAL:
            raise DataError(
                f"{job.weights_where}: the weights add up to {tally.weight:.3g}, more than evalkit's sums can hold "
                f"({MAX_TOTAL:.3g}); scale them down (only their ratios matter)"
            )
        out.note(f"samples weighted by {job.weights_where}: {tally.weight:g} in all for {tally.samples} samples")
    return out
