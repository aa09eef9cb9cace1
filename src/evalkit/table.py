"""The cardinality table, the currency of evalkit, and its mergeable summary.

A representation fills, for each (sample, class) cell, ``|G|``, ``|P|`` and ``|G ∩ P|``. The
engine never keeps the whole table: each chunk is reduced at once to a :class:`Summary` (column
sums per class, and per-sample metric sums when an averaging needs them). Summaries merge by
``+``, exactly and associatively, so chunks can be streamed or computed anywhere.

Accuracy: every sum is taken in float64, whatever the input's precision: each chunk of at most
at most :data:`CHUNK_BYTES` of float64 (:func:`chunk_rows`) is cast (in cache) and summed by a BLAS product with a ones
vector. Summing float32 in float32 instead would be about 40% faster per sum but loses up to
~1e-6 relative accuracy (measured on 1000 x 7 uniform values), which we do not accept.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from evalkit.components import Array, SetMetric
from evalkit.errors import PluginContractError
from evalkit.optional import optional

#: Bytes of float64 values per chunk of rows: a chunk stays in cache whatever the number of
#: classes (chunks of 16,384 rows were 69 MB at 527 classes, and their sums 81% of an update).
CHUNK_BYTES = 4 << 20
#: Rows per chunk at least, however wide a row: per-chunk Python overhead stays negligible.
MIN_CHUNK_ROWS = 256
#: Rows per chunk at most, however narrow a row: what a chunk of item sets holds grows with
#: its samples' items (events, strings), not with the classes.
MAX_CHUNK_ROWS = 16_384


def chunk_rows(width: int) -> int:
    """Rows per chunk of ``width`` float64 values a row (classes; resamples, for their weights)."""
    return min(MAX_CHUNK_ROWS, max(MIN_CHUNK_ROWS, CHUNK_BYTES // (8 * max(width, 1))))


@dataclass(frozen=True)
class CardinalityTable:
    """``|G|``, ``|P|`` and ``|G ∩ P|`` for each (sample, class) cell, each of shape (n, C).

    A representation whose overlap is measured differently from each side (Ziółko's fuzzy
    precision and recall: the matched mass of the prediction is not that of the reference) also
    gives ``matched_pred`` (for precision) and ``matched_ref`` (for recall); then every metric
    is taken as the function of P and R it is (see :func:`metric_value`).
    """

    ref: Array
    pred: Array
    inter: Array
    matched_ref: Array | None = None
    matched_pred: Array | None = None
    #: per sample (n,), the mass both missed and falsely predicted in one unit of the sample
    #: (one segment of a file); error rates count it as substitutions. Default: min(FN, FP)
    #: over the sample's classes, the sample being the unit. It may be given as a function
    #: that computes it, called only when a metric of the run counts substitutions.
    substitutions: Array | Callable[[], Array] | None = None

    def columns(self) -> list[Array]:
        """``ref``, ``pred``, ``inter``, then ``matched_ref`` and ``matched_pred`` when the table
        has them (:meth:`check` refuses ``matched_ref`` without ``matched_pred``)."""
        if self.matched_ref is None:
            return [self.ref, self.pred, self.inter]
        assert self.matched_pred is not None, "a table with matched_ref needs matched_pred too"
        return [self.ref, self.pred, self.inter, self.matched_ref, self.matched_pred]

    def per_sample_substitutions(self, who: str = "a representation") -> Array | None:
        """The table's substitutions (computed now if given as a function, and kept: the summary
        and the per-sample values both read them), checked: one finite value >= 0 per sample."""
        given = self.substitutions() if callable(self.substitutions) else self.substitutions
        if given is None:
            return None
        object.__setattr__(self, "substitutions", given)  # frozen, but made once (an event pairing)
        n = (len(self.ref),)
        if not isinstance(given, np.ndarray) or given.shape != n or (given.size and not given.min() >= 0):
            raise PluginContractError(
                f"{who} returned substitutions of shape {getattr(given, 'shape', type(given).__name__)}; "
                f"expected one finite value >= 0 per sample, shape {n}"
            )
        return given

    def check(self, shape: tuple[int, int], who: str) -> None:
        """Cheap vectorized checks at the plugin boundary: shape and non-negative (a NaN makes
        ``min`` NaN). Infinities show in the sums, which :meth:`Summary.of` checks."""
        names = ["ref", "pred", "inter"] + ([] if self.matched_ref is None else ["matched_ref", "matched_pred"])
        if self.substitutions is not None and not callable(self.substitutions):
            self.per_sample_substitutions(who)
        for column in names:
            values = getattr(self, column)
            if not isinstance(values, np.ndarray) or values.shape != shape:
                got = getattr(values, "shape", type(values).__name__)
                raise PluginContractError(
                    f"{who} returned {column} of shape {got}; expected {shape} (samples x classes)"
                )
            if values.size and not values.min() >= 0:
                raise PluginContractError(
                    f"{who} returned {column} with negative or NaN cardinalities; "
                    "cardinalities must be finite and >= 0"
                )


def divide(num: Array, den: Array, zero_division: float) -> Array:
    """``num / den`` with ``zero_division`` wherever ``den == 0`` (scikit-learn's convention)."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, zero_division, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def metric_value(
    metric: SetMetric, ref: Array, pred: Array, inter: Array, zero_division: float,
    matched_ref: Array | None = None, matched_pred: Array | None = None, cells: Array | None = None,
    substitutions: Array | None = None,
) -> Array:
    """A set metric from (summed) cardinalities, with ``zero_division`` for 0/0.

    With per-side matched masses, precision is ``matched_pred / pred``, recall
    ``matched_ref / ref``, and any metric is evaluated at those P and R (:func:`metric_of_pr`),
    except metrics that report the cardinalities themselves (``reads_cardinalities = True``).
    A metric with ``reads_cells = True`` also gets ``cells``, the number of cells summed; with
    per-side matched masses its intersection is their mean, so that ``|G| + |P| − 2|G ∩ P|`` is
    the unmatched mass of both sides.
    """
    if optional(metric, "reads_cells"):
        assert cells is not None, "a metric that reads cells needs their count"
        if matched_ref is not None:
            assert matched_pred is not None, "matched_ref and matched_pred come together"
            inter = (matched_ref + matched_pred) / 2
        return divide(*metric.ratio(ref, pred, inter, cells), zero_division)  # type: ignore[call-arg]
    coefficient = optional(metric, "substitutions")
    if coefficient:  # an error rate: its numerator takes the substitutions (none per class)
        num, den = metric.ratio(ref, pred, inter)
        return divide(num + coefficient * (0.0 if substitutions is None else substitutions), den, zero_division)
    if matched_ref is None or optional(metric, "reads_cardinalities"):
        return divide(*metric.ratio(ref, pred, inter), zero_division)
    assert matched_pred is not None, "matched_ref and matched_pred come together"
    p, r = divide(matched_pred, pred, zero_division), divide(matched_ref, ref, zero_division)
    return metric_of_pr(p, r, metric, zero_division)


def metric_key(metric: SetMetric) -> str:
    """A metric as a key that is the same in every process: its name and parameters (a metric
    object is not, and cannot be pickled once guarded)."""
    params = getattr(metric, "params", None)
    dumped = params.model_dump(mode="json") if params is not None and hasattr(params, "model_dump") else {}
    return metric.name + (json.dumps(dumped, sort_keys=True) if dumped else "")


def metric_of_pr(p: Array, r: Array, metric: SetMetric, zero_division: float) -> Array:
    """The metric at precision p and recall r.

    Every set metric is a function of P and R alone: with |G ∩ P| = 1, |P| = 1/p, |G| = 1/r it
    gives P = p, R = r, F1 = 2pr/(p + r), Fβ and Jaccard likewise (p or r = 0 gives 0).
    """
    p, r = np.asarray(p, dtype=np.float64), np.asarray(r, dtype=np.float64)
    with np.errstate(divide="ignore"):
        ref, pred = 1 / r, 1 / p
    return divide(*metric.ratio(ref, pred, np.ones_like(ref)), zero_division)


def column_sums(values: Array) -> Array:
    """Per-class sums of an (n, C) array, in float64 (see the module note on accuracy): a block
    of rows at a time, cast into this thread's scratch block (:func:`_float64`)."""
    total = np.zeros(values.shape[1], dtype=np.float64)
    rows = chunk_rows(values.shape[1])
    for start in range(0, len(values), rows):
        block = values[start : start + rows]
        total += np.ones(len(block)) @ _float64(block)
    return total


_scratch = threading.local()


def _float64(block: Array) -> Array:
    """``block`` as float64: itself, or cast into a block kept for the thread's next casts. A
    new block of a few MB for every cast cost as much as the sum: glibc maps it anew, page fault
    by page fault, whenever it has trimmed its heap."""
    if block.dtype == np.float64:
        return block
    kept = getattr(_scratch, "block", None)
    if kept is None or kept.size < block.size:
        kept = _scratch.block = np.empty(max(block.size, CHUNK_BYTES // 8))
    cast = kept[: block.size].reshape(block.shape)
    np.copyto(cast, block)
    return cast


@dataclass
class Summary:
    """Sufficient statistics of a cardinality table for every averaging scheme.

    ``ref``, ``pred``, ``inter`` (and ``matched_ref``, ``matched_pred`` when the table has
    them): per-class sums (C,), or (B, C) for a batch of replicates (:meth:`of_terms`).
    ``n_samples``: how many samples were summed (their total weight when samples are weighted;
    one count per replicate in a batch). ``sample_sums`` (keyed by :func:`metric_key`; read
    them with :meth:`sample_sum`): the sum of a metric's per-sample values and how many were
    defined (NaN under ``zero_division=nan`` is excluded, as scikit-learn does).

    Every field is a sum over samples, so summaries of any split of the samples merge by ``+``
    into the summary of them all, in any order and grouping (floating-point sums in another
    order may differ in the last bits: about 1e-16 relative per addition).
    """

    ref: Array
    pred: Array
    inter: Array
    n_samples: int | float | NDArray[np.float64]
    sample_sums: dict[str, Array] = field(default_factory=dict)
    matched_ref: Array | None = None
    matched_pred: Array | None = None

    def value(
        self, metric: SetMetric, zero_division: float, reduce: Callable[[Array], Array] = lambda column: column,
    ) -> Array:
        """The metric of the per-class sums, after ``reduce`` (e.g. a total over classes)."""
        matched_ref, matched_pred = _pair([reduce(m) for m in self._matched()])
        return metric_value(
            metric, reduce(self.ref), reduce(self.pred), reduce(self.inter), zero_division,
            matched_ref, matched_pred, cells=reduce(self.cells()),
        )

    def sample_sum(self, metric: SetMetric) -> Array:
        """[sum of the metric's per-sample values, number of samples where it is defined] (with a
        leading replicate axis in a batch), for the metrics the averagings asked for."""
        return self.sample_sums[metric_key(metric)]

    def cells(self) -> Array:
        """The number of (sample, class) cells summed in each class: the (weighted) samples."""
        return np.multiply.outer(self.n_samples, np.ones(self.ref.shape[-1]))

    def _matched(self) -> list[Array]:
        """[``matched_ref``, ``matched_pred``], or none for a table without per-side masses."""
        if self.matched_ref is None:
            return []
        assert self.matched_pred is not None, "matched_ref and matched_pred come together"
        return [self.matched_ref, self.matched_pred]

    @classmethod
    def of(
        cls, table: CardinalityTable, sample_metrics: Iterable[SetMetric], zero_division: float,
        who: str = "a representation", weights: Array | None = None,
    ) -> Summary:
        """The summary of a table; with ``weights`` (one per sample), sample i counts
        ``weights[i]`` times, in every sum (scikit-learn's ``sample_weight``)."""
        if weights is not None:
            terms = cls.terms(table, sample_metrics, zero_division, weights)
            return cls.of_terms(column_sums(terms)[np.newaxis], table.ref.shape[1], sample_metrics, who).replicate(0)
        sample_sums: dict[str, Array] = {}
        if sample_metrics:
            per_sample = per_sample_ratios(table, sample_metrics, zero_division)
            sample_sums = {key: np.array([values.sum(), defined.sum()]) for key, (values, defined) in per_sample.items()}
        sums = [column_sums(c) for c in table.columns()]
        _check_finite(sums, who)
        ref_sums, pred_sums, inter_sums, *matched_sums = sums
        return cls(ref_sums, pred_sums, inter_sums, len(table.ref), sample_sums, *matched_sums)

    @staticmethod
    def terms(
        table: CardinalityTable, sample_metrics: Iterable[SetMetric], zero_division: float, weights: Array | None = None,
    ) -> Array:
        """The (samples, terms) float64 array whose sums over samples make the summary: a 1 per
        sample (its count), the table's columns, and each sample metric's value and whether it
        is defined; each row times its sample's weight when ``weights`` are given. Every sum is
        linear in the samples, so ``counts @ terms`` is a batch of reweighted copies of the
        samples (a bootstrap resample, a jackknife deletion, a permutation's choice of rows) in
        one product, read back by :meth:`of_terms`."""
        per_sample = per_sample_ratios(table, sample_metrics, zero_division)
        parts = [np.ones((len(table.ref), 1)), *table.columns(), *(np.column_stack(v) for v in per_sample.values())]
        terms = np.hstack(parts, dtype=np.float64)
        if weights is not None:
            terms *= np.asarray(weights, dtype=np.float64)[:, np.newaxis]
        return terms

    @classmethod
    def of_terms(
        cls, sums: Array, classes: int, sample_metrics: Iterable[SetMetric], who: str = "a representation",
    ) -> Summary:
        """The summaries of a batch of sums of :meth:`terms` (replicates, terms): every field
        gains a leading replicate axis. Averagings that declare ``batched = True`` reduce the
        batch in one call; for the others, :meth:`replicate` gives one replicate's summary."""
        keys = list(dict.fromkeys(metric_key(m) for m in sample_metrics))  # as :meth:`terms` holds them
        n_columns = (sums.shape[1] - 1 - 2 * len(keys)) // classes
        columns = [sums[:, 1 + j * classes : 1 + (j + 1) * classes] for j in range(n_columns)]
        _check_finite(columns, who)
        after = 1 + n_columns * classes
        sample_sums: dict[str, Array] = {key: sums[:, after + 2 * j : after + 2 * j + 2] for j, key in enumerate(keys)}
        ref_sums, pred_sums, inter_sums, *matched_sums = columns
        return cls(ref_sums, pred_sums, inter_sums, np.asarray(sums[:, 0], dtype=np.float64), sample_sums, *matched_sums)

    def replicate(self, b: int) -> Summary:
        """Replicate ``b`` of a batch made by :meth:`of_terms`, as an ordinary summary."""
        assert isinstance(self.n_samples, np.ndarray), "a batch has one count per replicate"
        return Summary(
            self.ref[b], self.pred[b], self.inter[b], self.n_samples[b].item(),
            {k: v[b] for k, v in self.sample_sums.items()}, *[m[b] for m in self._matched()],
        )

    def __add__(self, other: Summary) -> Summary:
        if self.sample_sums.keys() != other.sample_sums.keys() or len(self._matched()) != len(other._matched()):
            raise ValueError("these summaries are of different metrics or tables and cannot be merged")
        return Summary(
            self.ref + other.ref,
            self.pred + other.pred,
            self.inter + other.inter,
            self.n_samples + other.n_samples,
            {k: v + other.sample_sums[k] for k, v in self.sample_sums.items()},
            *[a + b for a, b in zip(self._matched(), other._matched(), strict=True)],
        )


def per_sample_ratios(
    table: CardinalityTable, sample_metrics: Iterable[SetMetric], zero_division: float,
) -> dict[str, tuple[Array, Array]]:
    """Each metric's value on every sample (its cells summed over classes), 0 where undefined,
    and whether it is defined, as floats: the terms of the per-sample sums."""
    metrics = list(sample_metrics)
    if not metrics:
        return {}
    ones = np.ones(table.ref.shape[1])
    ref, pred, inter, *matched = [c.astype(np.float64, copy=False) @ ones for c in table.columns()]
    matched_ref, matched_pred = _pair(matched)
    cells = np.full(len(ref), float(table.ref.shape[1]))
    substitutions = None
    if any(optional(m, "substitutions") for m in metrics):
        substitutions = table.per_sample_substitutions()
        if substitutions is None:
            substitutions = np.minimum(ref - inter, pred - inter)  # the sample is the unit
    out: dict[str, tuple[Array, Array]] = {}
    for metric in metrics:
        values = metric_value(
            metric, ref, pred, inter, zero_division, matched_ref, matched_pred, cells=cells, substitutions=substitutions,
        )
        defined = ~np.isnan(values)
        out[metric_key(metric)] = (np.where(defined, values, 0.0), defined.astype(np.float64))
    return out


def _pair(matched: Sequence[Array]) -> tuple[Array | None, Array | None]:
    """``matched_ref`` and ``matched_pred`` from a list of both or of none."""
    return (matched[0], matched[1]) if matched else (None, None)


def _check_finite(sums: Sequence[Array], who: str) -> None:
    if not all(np.isfinite(s).all() for s in sums):
        raise PluginContractError(f"{who} returned infinite cardinalities; they must be finite")
