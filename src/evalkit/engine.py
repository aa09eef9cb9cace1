"""The engine: the one reduction of aligned rows to sums, and the values read from them.

:func:`reduce` walks the rows a chunk at a time; for every combination of the comparison axes
the representation fills the chunk's cardinality table for each system, and the table is at
once reduced to that system's :class:`~evalkit.table.Summary` and to every statistic's
replicates (:class:`Draw`: bootstrap resamples, jackknife deletions, paired permutations), then
dropped. Data metrics reduce the same rows to their own states. Sums of any split of the rows
add up by ``+``; averagings and metrics read the merged sums. Every value is keyed by the
:class:`~evalkit.measures.Measure` it is, one number each (a per-class result is one value per
class).
"""

from __future__ import annotations

import functools
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from evalkit.axes import Axes, Combination, unweighted
from evalkit.blas import one_thread
from evalkit.errors import DataError, PluginContractError
from evalkit.items import ItemSets
from evalkit.measures import Curve, CurvePerClass, Measure, PerClass, PerLevel
from evalkit.progress import Progress
from evalkit.protocols import optional
from evalkit.table import CardinalityTable, Summary, chunk_rows

#: Threads that reduce chunks to their replicates, each calling BLAS on one thread (two BLAS
#: threads on one small product wait on each other; two products side by side do not). Their
#: results are added in the chunks' order, so the numbers do not depend on it.
REPLICATE_THREADS = min(2, os.cpu_count() or 1)

#: Measure -> its value: a number, or (for a batch of replicates) an array with one per replicate.
Values = dict[Measure, Any]


@dataclass
class Sums:
    """One system's sums over the samples reduced so far: a summary per combination of the axes
    (by its place among them, the same in every process) and each data metric's state. Sums of
    any split of the samples add up, by ``+``, to the sums of them all."""

    summaries: dict[int, Summary] = field(default_factory=dict)
    data: list[Any] = field(default_factory=list)

    def __add__(self, other: Sums) -> Sums:
        return Sums(_added(self.summaries, other.summaries), _listed_sum(self.data, other.data))

    def values(
        self, axes: Axes, classes: Sequence[str], curves: dict[tuple[str, str | None], Curve] | None = None,
    ) -> Values:
        """Every value of the axes; the data metrics' curves go to ``curves``."""
        combinations = axes.set_combinations()
        values: Values = {}
        for key, summary in self.summaries.items():
            values.update(set_values(combinations[key], summary, axes, classes))
        prepared(axes, classes)
        for metric, state in zip(axes.data_metrics, self.data):
            tag = axes.data_tags[metric.label]
            values.update(named_values(metric.label, metric.who, metric.obj.compute(state), classes, tag, curves))
        return values


@dataclass
class Replicates:
    """B reweighted copies of one system's sums (bootstrap resamples, jackknife deletions,
    permutations): a batch of summaries per combination, and per replicate each data metric's
    state. They add up by ``+`` as :class:`Sums` do, when their draws are keyed by sample."""

    batches: dict[int, Summary] = field(default_factory=dict)
    data: list[list[Any]] = field(default_factory=list)

    def __add__(self, other: Replicates) -> Replicates:
        data = [_listed_sum(a, b) for a, b in zip(self.data, other.data)] if self.data and other.data else \
            self.data or other.data
        return Replicates(_added(self.batches, other.batches), data)

    def __iadd__(self, other: Replicates) -> Replicates:
        """``self + other`` kept in ``self``, each replicate's data-metric states replaced as they
        are added: a fold over chunks then holds the running states and one merged replicate, not
        the old and the new states of every replicate at once (with PSDS and 200 replicates, the
        chunked read's peak was 1.7x the whole read's). The same sums, in the same order."""
        self.batches = _added(self.batches, other.batches)
        if self.data and other.data:
            for b, part in enumerate(other.data):
                self.data[b] = _listed_sum(self.data[b], part)
        else:
            self.data = self.data or list(other.data)
        return self

    def values(self, axes: Axes, classes: Sequence[str]) -> Values:
        """Every value of every replicate, stacked along a first axis: set metrics in one call
        per combination for averagings that declare ``batched = True`` (all built-ins),
        replicate by replicate otherwise."""
        combinations = axes.set_combinations()
        values: Values = {}
        for key, batch in self.batches.items():
            if all(optional(avg.obj, "batched") for avg in axes.averagings):
                values.update(set_values(combinations[key], batch, axes, classes, batch=True))
            else:
                values.update(stack([set_values(combinations[key], batch.replicate(b), axes, classes)
                                     for b in range(np.size(batch.n_samples))]))
        if self.data:
            prepared(axes, classes)
            values.update(stack([Sums({}, states).values(axes, classes) for states in self.data]))
        return values


class Counts(Protocol):
    """How often each sample of a partition counts in each replicate, (replicates, samples):
    made a block of samples, or a replicate, at a time as the reduction asks, so a keyed draw
    never holds a replicates x samples matrix."""

    @property
    def n_replicates(self) -> int: ...

    def block(self, part: slice) -> np.ndarray:
        """The counts of the samples in ``part``, (replicates, samples in part): whole numbers
        (a bool is 0 or 1)."""

    def row(self, b: int) -> np.ndarray:
        """Replicate ``b``'s count of every sample."""


class Complement:
    """0/1 counts' complement (where a permutation keeps each system's own output): a reduction
    takes its block from the counts it complements, drawing nothing more."""

    def __init__(self, of: Counts) -> None:
        self.of, self.n_replicates = of, of.n_replicates

    def block(self, part: slice) -> np.ndarray:
        return ~self.of.block(part).astype(bool)

    def row(self, b: int) -> np.ndarray:
        return ~self.of.row(b).astype(bool)


@dataclass(frozen=True)
class Draw:
    """One set of replicates to reduce: ``parts`` of (prediction index, counts) whose
    reweighted sums add up, replicate by replicate. One part is a system resampled (a bootstrap,
    a jackknife); two are a paired permutation, each sample taken from one system or the other."""

    parts: tuple[tuple[int, Counts], ...]

    @property
    def n_replicates(self) -> int:
        return self.parts[0][1].n_replicates


def stack(replicates: Sequence[Values]) -> Values:
    """Replicate values stacked along a new first axis, measure by measure."""
    return {m: np.array([values[m] for values in replicates], dtype=np.float64) for m in replicates[0]}


def reduce(
    axes: Axes, reference: Any, predictions: Sequence[Any], weights: np.ndarray | None = None,
    draws: Sequence[Draw] = (), progress: Progress | None = None, tables_to: TablesTo | None = None,
) -> tuple[list[Sums], list[Replicates]]:
    """The one reduction: aligned rows (``reference`` and each of ``predictions``: membership
    arrays or item sets) to each prediction's :class:`Sums` and each draw's
    :class:`Replicates`. With ``weights`` (one per sample), sample i counts ``weights[i]``
    times. The cardinality table is filled a chunk of rows at a time and reduced at once, to
    the summaries and every draw's replicates; it is never kept whole. No rows give empty sums
    (a partition may hold none). ``tables_to`` is handed each chunk's checked table, in the
    chunks' order, with its combination's place and its prediction's (per-sample values read
    them: :mod:`evalkit.per_sample`)."""
    refused = unweighted(axes.data_metrics) if weights is not None else None
    if refused:
        raise DataError(refused)
    with one_thread():
        return _reduced(axes, reference, predictions, weights, draws, progress, tables_to)


#: What :func:`reduce` hands each chunk's table to: (combination's place, prediction's place, table).
TablesTo = Callable[[int, int, CardinalityTable], None]


def _reduced(
    axes: Axes, reference: Any, predictions: Sequence[Any], weights: np.ndarray | None, draws: Sequence[Draw],
    progress: Progress | None, tables_to: TablesTo | None,
) -> tuple[list[Sums], list[Replicates]]:
    sums = [Sums({}, []) for _ in predictions]
    replicates = [Replicates() for _ in draws]
    n_classes = row_width(reference)
    combinations = axes.set_combinations()
    rows = chunk_rows(n_classes)
    with _InOrder(REPLICATE_THREADS if draws and combinations else 0) as pending:
        for start in chunks(len(reference), rows, progress, len(predictions) * len(combinations)):
            part = slice(start, start + rows)
            ref, chunk_weights = reference[part], _rows(weights, part)
            made: dict[int, np.ndarray] = {}  # each set of counts of the chunk, made once for every combination
            for draw in draws if combinations else ():
                for _, counts in draw.parts:
                    _block_of(counts, part, made)
            for key, (rep, tnorm, similarity) in enumerate(combinations):
                who = rep.who + (f" with {tnorm.who}" if tnorm else "")
                tables = []
                for index, prediction in enumerate(predictions):
                    table = rep.obj.cardinalities(
                        ref, prediction[part], tnorm=tnorm and tnorm.obj, similarity=similarity and similarity.obj,
                    )
                    table.check((len(ref), n_classes), who)
                    tables.append(table)
                    if tables_to is not None:
                        tables_to(key, index, table)
                    _merge(sums[index].summaries, key, Summary.of(table, axes.sample_metrics, axes.zero_division, who,
                                                                  chunk_weights))
                if draws:
                    pending.submit(functools.partial(_merge_batches, replicates, key),
                                   _replicate_batches, draws, made, tables, axes, chunk_weights, who)
    if axes.data_metrics:
        for total, prediction in zip(sums, predictions):
            total.data = data_states(axes.data_metrics, reference, prediction, weights, progress)
        for draw, into in zip(draws, replicates):
            into.data = [_replicate_states(axes, reference, predictions, weights, draw, b) for b in range(draw.n_replicates)]
    return sums, replicates


def _merge_batches(replicates: Sequence[Replicates], key: int, batches: Sequence[Summary]) -> None:
    for into, batch in zip(replicates, batches):
        _merge(into.batches, key, batch)


class _InOrder:
    """Work done on ``threads`` threads (in the calling one if fewer than 2), each result handed
    to its ``then`` in this thread in the order the work was given: so sums of floats add up in
    the same order whatever the threads. At most ``threads`` pieces are given and not handed on
    (with the one the caller is making, ``threads + 1`` chunks' counts and tables are held); the
    next waits for the oldest."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="evalkit-replicates") if threads > 1 else None
        self.pending: deque[tuple[Future[Any], Callable[[Any], None]]] = deque()

    def submit(self, then: Callable[[Any], None], work: Callable[..., Any], *args: Any) -> None:
        if self.pool is None:
            then(work(*args))
            return
        while len(self.pending) >= self.threads:
            self._hand_on()
        self.pending.append((self.pool.submit(work, *args), then))

    def _hand_on(self) -> None:
        future, then = self.pending.popleft()
        then(future.result())

    def __enter__(self) -> _InOrder:
        return self

    def __exit__(self, failed: type[BaseException] | None, *_: Any) -> None:
        try:
            while self.pending and failed is None:
                self._hand_on()
        finally:
            if self.pool is not None:
                self.pool.shutdown(cancel_futures=True)


def _block_of(counts: Counts, part: slice, made: dict[int, np.ndarray]) -> None:
    """The counts' block of the chunk, made once; a complement's is the block it complements
    (:func:`_replicate_batches` reads it negated)."""
    drawn = counts.of if isinstance(counts, Complement) else counts
    if id(drawn) not in made:
        made[id(drawn)] = drawn.block(part)


#: Where a draw with a complement sums to at most this share of the mass it is taken from, the
#: totals less a product may have lost digits (or left rounding where the sum is exactly 0), so
#: those sums are taken again directly. Elsewhere that difference is within ``16 x`` the product's
#: own rounding of the sum.
_RESUMMED = 1 / 16

#: A signed sum of tables' terms, as (table index, coefficient) pairs.
Signed = tuple[tuple[int, int], ...]


def _replicate_batches(
    draws: Sequence[Draw], made: dict[int, np.ndarray], tables: Sequence[CardinalityTable], axes: Axes,
    weights: np.ndarray | None, who: str,
) -> list[Summary]:
    """Every draw's replicate summaries of a chunk's tables, with one product per set of counts.

    A draw's sums are linear in the tables' terms: each part adds ``counts @ terms``, and a
    complement's part (a permutation's kept side) the table's totals less ``counts @ terms``.
    So a draw is its complements' totals plus, for each set of counts, one product with the
    signed sum of the terms it reweights (a permutation's swaps: the pair's difference, whose
    columns common to both tables are 0). Each set of counts is multiplied once, with every
    such sum it takes (one of each up to its sign), each distinct column once. Where totals less
    a product leave little of the totals, the sums are taken again directly (:func:`_resummed`),
    so a side that keeps no mass sums to exactly 0, as ``zero_division`` needs."""
    terms = {index: Summary.terms(tables[index], axes.sample_metrics, axes.zero_division, weights)
             for index in dict.fromkeys(index for draw in draws for index, _ in draw.parts)}
    width = next(iter(terms.values())).shape[1]
    known: dict[int, list[Signed]] = {}  # id(counts) -> the sums of terms it multiplies
    planned = []  # each draw's complemented tables and its products, with their signs
    for draw in draws:
        coefficients: dict[int, dict[int, int]] = {}
        for index, counts in draw.parts:
            of, sign = (counts.of, -1) if isinstance(counts, Complement) else (counts, 1)
            signed = coefficients.setdefault(id(of), {})
            signed[index] = signed.get(index, 0) + sign
        products = []
        for counted, signed in coefficients.items():
            combination = tuple(sorted((index, c) for index, c in signed.items() if c))
            negated = tuple((index, -c) for index, c in combination)
            taken = known.setdefault(counted, [])
            if negated in taken:
                products.append((counted, negated, -1))
            elif combination:
                taken += [] if combination in taken else [combination]
                products.append((counted, combination, 1))
        planned.append(([index for index, counts in draw.parts if isinstance(counts, Complement)], products))
    product_of: dict[tuple[int, Signed], np.ndarray] = {}
    distinct: dict[tuple[Signed, ...], tuple[np.ndarray, np.ndarray]] = {}  # a bootstrap's and its jackknife's: once
    for counted, combinations in known.items():
        block = made[counted]
        if tuple(combinations) not in distinct:
            distinct[tuple(combinations)] = _distinct_columns([_signed_sum(terms, c) for c in combinations])
        distinct_columns, place_of = distinct[tuple(combinations)]
        product = np.zeros((len(block), distinct_columns.shape[1]))
        rows = chunk_rows(len(block))  # the float64 counts of a part, (replicates, rows), stay in cache
        for start in range(0, len(distinct_columns), rows):
            part = slice(start, start + rows)
            product += block[:, part].astype(np.float64) @ distinct_columns[part]
        product = product[:, place_of]
        for place, combination in enumerate(combinations):
            product_of[counted, combination] = product[:, place * width : (place + 1) * width]
    classes = tables[0].ref.shape[1]
    batches = []
    for draw, (kept, products) in zip(draws, planned):
        total = np.zeros((draw.n_replicates, width))
        total += sum((terms[index].sum(axis=0) for index in kept), np.zeros(width))
        for counted, combination, sign in products:
            total += sign * product_of[counted, combination]
        if kept:
            _resummed(total, draw, made, terms)
        batches.append(Summary.of_terms(total, classes, axes.sample_metrics, who))
    return batches


def _signed_sum(terms: dict[int, np.ndarray], combination: Signed) -> np.ndarray:
    """The tables' terms times their coefficients, added (one table's alone is not copied)."""
    if len(combination) == 1 and combination[0][1] == 1:
        return terms[combination[0][0]]
    return sum(coefficient * terms[index] for index, coefficient in combination)  # type: ignore[return-value]


def _resummed(total: np.ndarray, draw: Draw, made: dict[int, np.ndarray], terms: dict[int, np.ndarray]) -> None:
    """A draw's sums taken again directly, each part's counts times its terms, where they are at
    most :data:`_RESUMMED` of the mass they come from (in place; over the rows that hold any)."""
    mass = sum(np.abs(terms[index]).sum(axis=0) for index, _ in draw.parts)
    small = (np.abs(total) <= _RESUMMED * mass) & (mass > 0)
    for column in np.flatnonzero(small.any(axis=0)):
        replicates = np.flatnonzero(small[:, column])
        rows = np.flatnonzero(np.any([terms[index][:, column] != 0 for index, _ in draw.parts], axis=0))
        total[replicates, column] = sum(
            _counted(counts, made, np.ix_(replicates, rows)) @ terms[index][rows, column] for index, counts in draw.parts
        )


def _counted(counts: Counts, made: dict[int, np.ndarray], cells: Any) -> np.ndarray:
    """These cells of the chunk's counts (made by :func:`_block_of`; a complement's, from the
    0/1 counts it complements), as float64."""
    if isinstance(counts, Complement):
        return (~made[id(counts.of)][cells].astype(bool)).astype(np.float64)
    return made[id(counts)][cells].astype(np.float64)


def _distinct_columns(parts: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of ``parts`` side by side and where each column is among them: the
    systems' tables repeat the reference's terms and the count, and a pair's difference has
    zero columns, so the product multiplies each column once. Columns are told apart by a
    sample of their values, then compared whole; each part is transposed once (so a column is
    contiguous), and the distinct ones are returned as the transpose of their rows."""
    columns = [row for part in parts for row in np.ascontiguousarray(part.T)]
    step = max(1, len(columns[0]) // 64)
    seen: dict[bytes, list[int]] = {}
    place_of = np.empty(len(columns), dtype=np.intp)
    kept: list[np.ndarray] = []
    for place, column in enumerate(columns):
        alike = seen.setdefault(column[::step].tobytes(), [])
        same = next((k for k in alike if np.array_equal(kept[k], column)), None)
        if same is None:
            same = len(kept)
            alike.append(same)
            kept.append(column)
        place_of[place] = same
    return np.stack(kept).T, place_of


def _replicate_states(
    axes: Axes, reference: Any, predictions: Sequence[Any], weights: np.ndarray | None, draw: Draw, b: int,
) -> list[Any]:
    """The data metrics' states on replicate ``b`` of a draw: each part's rows repeated as often
    as the replicate counts them (so metrics that take no weights resample too)."""
    refs, preds, taken = [], [], []
    for index, counts in draw.parts:
        rows = np.repeat(np.arange(len(reference)), counts.row(b).astype(np.int64))  # counts are whole numbers
        refs.append(take(reference, rows))
        preds.append(take(predictions[index], rows))
        taken.append(rows)
    rows = np.concatenate(taken)
    return data_states(
        axes.data_metrics, joined_rows(refs), joined_rows(preds), None if weights is None else weights[rows],
    )


def take(data: Any, rows: np.ndarray) -> Any:
    """These rows of a membership array or of item sets (with their ids, a sample drawn twice
    listed twice: a metric may look a sample's file up by its id, as PSDS its duration)."""
    if isinstance(data, np.ndarray):
        return data[rows]
    return replace(data.take(rows), ids=None if data.ids is None else tuple(data.ids[r] for r in rows))


def joined_rows(parts: Sequence[Any]) -> Any:
    """Membership arrays, or item sets, one after the other."""
    if len(parts) == 1:
        return parts[0]
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts)
    samples = parts[0].samples
    for part in parts[1:]:
        samples = samples + part.samples  # score series and event columns stay columns
    ids = None if any(part.ids is None for part in parts) else tuple(i for part in parts for i in part.ids)
    return replace(parts[0], samples=samples, ids=ids)


def prepared(axes: Axes, classes: Sequence[str]) -> None:
    """Tell the data metrics that want them the classes (``prepare``), before they update or
    compute."""
    for metric in axes.data_metrics:
        prepare = optional(metric.obj, "prepare")
        if prepare is not None:
            prepare(classes)


def _rows(weights: np.ndarray | None, part: slice) -> np.ndarray | None:
    return None if weights is None else weights[part]


def _merge(totals: dict[int, Summary], key: int, part: Summary) -> None:
    totals[key] = part if key not in totals else totals[key] + part


def _added(totals: dict[int, Summary], parts: dict[int, Summary]) -> dict[int, Summary]:
    merged = dict(totals)
    for key, part in parts.items():
        _merge(merged, key, part)
    return merged


def _listed_sum(totals: list[Any], parts: list[Any]) -> list[Any]:
    """States of the same metrics added pairwise; an empty list, or a None state (a metric
    given no rows: a replicate that drew none of a partition's samples), is nothing yet."""
    if not totals or not parts:
        return totals or parts
    return [part if total is None else total if part is None else total + part for total, part in zip(totals, parts)]


def check_items(axes: Axes, reference: ItemSets, prediction: ItemSets, label: str) -> None:
    """Let similarities that check their items (words missing from a vector model) see every
    sample of both sides, a side at a time, before anything is computed."""
    checks = [c for c in (optional(s.obj, "check") for s in axes.similarities) if c is not None]
    for side in (reference.by_sample("reference"), prediction.by_sample(label)) if checks else ():
        for check in checks:
            check(side)


def set_measure(combination: Combination, averaging: str, metric: str) -> Measure:
    rep, tnorm, similarity = combination
    return Measure(
        "set", metric, representation=rep.label, similarity=similarity.label if similarity else None,
        tnorm=tnorm.label if tnorm else None, averaging=averaging,
    )


def set_values(combination: Combination, summary: Summary, axes: Axes, classes: Sequence[str], batch: bool = False) -> Values:
    """Every averaging of every set metric from one combination's summary. With ``batch``, the
    summary is a batch of replicates and every value gains a leading replicate axis."""
    values: Values = {}
    for avg in axes.averagings:
        for metric in axes.set_metrics:
            value = avg.obj.reduce(summary, metric.obj, axes.zero_division)
            measure = set_measure(combination, avg.label, metric.label)
            if np.ndim(value) > batch:  # one value per class
                values.update({measure.at(class_=c): _number(v) for c, v in zip(classes, np.moveaxis(value, -1, 0))})
            else:
                values[measure] = _number(value)
    return values


def data_states(
    metrics: Sequence[Any], reference: Any, prediction: Any, weights: np.ndarray | None = None,
    progress: Progress | None = None,
) -> list[Any]:
    """The state of each data metric over the data, chunk by chunk (chunk states merge by
    ``+``); ``weights`` (one per sample) go to metrics that take them (``weighted``)."""
    refused = unweighted(metrics) if weights is not None else None
    if refused:
        raise DataError(refused)
    states: list[Any] = [None] * len(metrics)
    rows = chunk_rows(row_width(reference))
    for s in chunks(len(reference), rows, progress):
        ref, pred = reference[s : s + rows], prediction[s : s + rows]
        parts = [
            m.obj.update(ref, pred) if weights is None else m.obj.update(ref, pred, weights[s : s + rows])
            for m in metrics
        ]
        states = [part if state is None else state + part for state, part in zip(states, parts)]
    return states


def named_values(
    label: str, who: str, result: Any, classes: Sequence[str], tag: str = "",
    curves: dict[tuple[str, str | None], Curve] | None = None,
) -> Values:
    """A data metric's result as measures: one number, or named numbers, per-class values
    (:class:`PerClass`) and per-level values (:class:`PerLevel`); a named number's name is
    followed by ``tag`` (:attr:`evalkit.axes.Axes.data_tags`). Its curves (:class:`Curve`,
    :class:`CurvePerClass`) go to ``curves`` by name and class (resampled and streamed values
    have none)."""
    named = {f"{name}{tag}": value for name, value in result.items()} if isinstance(result, dict) else {label: result}
    values: Values = {}
    for name, value in named.items():
        measure = Measure("data", name)
        if isinstance(value, Curve):
            if curves is not None:
                curves[name, None] = value
        elif isinstance(value, CurvePerClass):
            if len(value.curves) != len(classes):
                raise PluginContractError(f"{who}: {name} has {len(value.curves)} per-class curves for {len(classes)} classes")
            if curves is not None:
                curves.update({(name, c): curve for c, curve in zip(classes, value.curves)})
        elif isinstance(value, PerClass):
            if len(value.values) != len(classes):
                raise PluginContractError(f"{who}: {name} has {len(value.values)} per-class values for {len(classes)} classes")
            values.update({measure.at(class_=c): float(v) for c, v in zip(classes, value.values)})
        elif isinstance(value, PerLevel):
            values.update({measure.at(level=i): float(v) for i, v in enumerate(value.values)})
        elif np.ndim(value) == 0:
            values[measure] = float(value)
        else:
            raise PluginContractError(
                f"{who}: compute() returned an array for {name!r}; wrap it as PerClass(values) or "
                "PerLevel(values) (from evalkit.plugin) to say what its values are"
            )
    return values


def _number(value: Any) -> Any:
    """A float, or a float64 array of replicates."""
    return float(value) if np.ndim(value) == 0 else np.asarray(value, dtype=np.float64)


def chunks(n_rows: int, rows: int, progress: Progress | None, times: int = 1) -> Iterator[int]:
    """The first row of each chunk of ``rows`` rows, advancing ``progress`` as each is done
    (``times`` over)."""
    for start in range(0, n_rows, rows):
        yield start
        if progress:
            progress.advance(min(rows, n_rows - start) * times)


def row_width(reference: Any) -> int:
    """Classes of a membership array or of item sets: the width of a chunk's rows."""
    return reference.shape[1] if isinstance(reference, np.ndarray) else len(reference.classes)
