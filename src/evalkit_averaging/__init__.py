"""Averaging schemes: scikit-learn's micro, macro, weighted, samples and none, and the
"metric of averaged P and R" variants (macro_pr, samples_pr).

Each reduces a :class:`evalkit.table.Summary`. Undefined ratios take ``zero_division``; a NaN
(``zero_division=nan``) is left out of a mean, as scikit-learn's ``_nanaverage`` does. All of
them reduce over the last axis only (``batched = True``), so a batch of bootstrap or
permutation replicates (summaries with a leading replicate axis) is reduced in one call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import (
    Array,
    BaseComponent,
    NoParams,
    SetMetric,
    Summary,
    hookimpl,
    metric_of_pr,
    metric_value,
    optional,
)

P = TypeVar("P", bound=BaseModel)


@hookimpl
def evalkit_register_averagings(register):
    for cls in (Micro, Macro, Weighted, Samples, PerClass, MacroPR, SamplesPR):
        register(cls)


def per_class(summary: Summary, metric: SetMetric, zero_division: float) -> Array:
    return summary.value(metric, zero_division)


def nan_average(values: Array, weights: Array | None = None) -> Array:
    """Mean of the defined values over the last axis; weights that sum to zero fall back to the
    plain mean; NaN where no value is defined."""
    defined = ~np.isnan(values)
    filled = np.where(defined, values, 0.0)
    plain = np.ones_like(filled) * defined
    chosen = plain
    if weights is not None:
        weighted = np.broadcast_to(weights, filled.shape) * defined
        usable = weighted.sum(axis=-1, keepdims=True) > 0
        chosen = np.where(usable, weighted, plain)
    total = chosen.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (filled * chosen).sum(axis=-1) / np.where(total > 0, total, 1), np.nan)


class _ClassAveraging(BaseComponent[P]):
    batched = True

    def sample_metrics(self, metrics: Sequence[SetMetric]) -> Sequence[SetMetric]:
        return ()


def undefined_per_class(metric: SetMetric) -> str | None:
    """Why an averaging that takes each class alone gives ``metric`` no value: a substitution is
    a miss of one class and a false alarm of another in one unit (a segment, a file), so a class
    alone has none, and a rate of substitutions (``substitutions`` > 0) is undefined there, as
    sed_eval's class-wise error rates have no substitution rate. (ER, D and I are defined per
    class: their substitutions are 0 there.)"""
    if optional(metric, "substitutions") > 0:
        return (
            "a class alone has no substitutions (a substitution is a miss of one class and a false alarm of "
            "another in one segment or file; sed_eval's class-wise error rates have no substitution rate)"
        )
    return None


class _PerClassAveraging(_ClassAveraging[P]):
    """An averaging that reduces each class alone, then (perhaps) over classes: a metric it does
    not define (:func:`undefined_per_class`) is an empty per-class array, which gives no row."""

    def undefined_for(self, metric: SetMetric) -> str | None:
        return undefined_per_class(metric)

    def reduce(self, summary: Summary, metric: SetMetric, zero_division: float) -> Array:
        if self.undefined_for(metric):
            return np.empty(np.shape(summary.ref)[:-1] + (0,))
        return self._reduce(summary, metric, zero_division)

    def _reduce(self, summary: Summary, metric: SetMetric, zero_division: float) -> Array:
        raise NotImplementedError


class Micro(_ClassAveraging):
    """Sum |G|, |P| and |G ∩ P| over every cell, then take the ratio. An error rate's
    substitutions are summed over the samples (each sample's, across its classes)."""

    name = "micro"

    def sample_metrics(self, metrics: Sequence[SetMetric]) -> Sequence[SetMetric]:
        return (SUBSTITUTIONS,) if any(optional(m, "substitutions") for m in metrics) else ()

    def reduce(self, summary: Summary, metric: SetMetric, zero_division: float) -> Array:
        def total(column: Array) -> Array:
            return column.sum(axis=-1)

        if not optional(metric, "substitutions"):
            return summary.value(metric, zero_division, reduce=total)
        substituted = summary.sample_sum(SUBSTITUTIONS)[..., 0]
        return metric_value(
            metric, total(summary.ref), total(summary.pred), total(summary.inter), zero_division,
            substitutions=substituted,
        )


class MacroParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    undefined: Literal["zero_division", "skip"] = Field(
        "zero_division",
        description="a class where the metric is undefined: takes `zero_division` (0 by default: the DCASE "
        "task 4B baseline's undefined-as-zero), or is left out of the mean (skip: sed_eval's class-wise "
        "average; a metric of P and R is undefined where its P or R is, with no prediction or no reference)",
    )


class Macro(_PerClassAveraging[MacroParams]):
    """The ratio per class (summed over samples), then the unweighted mean over classes."""

    name = "macro"
    Params = MacroParams

    def _reduce(self, summary: Summary, metric: SetMetric, zero_division: float) -> Array:
        if self.params.undefined == "skip":
            return nan_average(defined_per_class(summary, metric))
        return nan_average(per_class(summary, metric, zero_division))


def defined_per_class(summary: Summary, metric: SetMetric) -> Array:
    """Per class, the metric, NaN where it is undefined as sed_eval defines it: a metric of P
    and R is taken of them, undefined where a P (no predicted mass) or R (no reference mass) it
    needs is; another metric where its own ratio is 0/0."""
    if not of_pr(metric):
        return per_class(summary, metric, math.nan)
    p, r = (per_class(summary, m, math.nan) for m in (PRECISION, RECALL))
    return metric_of_pr(p, r, metric, math.nan)


class Weighted(_PerClassAveraging):
    """Like macro, weighted by each class's reference cardinality (its support)."""

    name = "weighted"

    def _reduce(self, summary: Summary, metric: SetMetric, zero_division: float) -> Array:
        return nan_average(per_class(summary, metric, zero_division), weights=summary.ref)


class PerClass(_PerClassAveraging):
    """No averaging: one value per class, in class order."""

    name = "none"

    def _reduce(self, summary: Summary, metric: SetMetric, zero_division: float) -> Array:
        return per_class(summary, metric, zero_division)


class Samples(_ClassAveraging):
    """The ratio per sample (summed over classes), then the mean over samples."""

    name = "samples"

    def sample_metrics(self, metrics: Sequence[SetMetric]) -> Sequence[SetMetric]:
        return metrics

    def reduce(self, summary: Summary, metric: SetMetric, zero_division: float) -> Array:
        return sample_mean(summary, metric)


def sample_mean(summary: Summary, metric: SetMetric) -> Array:
    """Mean of the defined per-sample values (NaN if none is defined)."""
    sums = summary.sample_sum(metric)
    total, defined = sums[..., 0], sums[..., 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(defined > 0, total / np.where(defined > 0, defined, 1), np.nan)


class _Precision(BaseComponent[NoParams]):
    """A bare precision, so these averagings need no other plugin."""

    name: ClassVar[str] = "precision"  # a class variable, as SetMetric requires

    def ratio(self, ref: Array, pred: Array, inter: Array) -> tuple[Array, Array]:
        return inter, pred


class _Recall(BaseComponent[NoParams]):
    """A bare recall, so these averagings need no other plugin."""

    name: ClassVar[str] = "recall"

    def ratio(self, ref: Array, pred: Array, inter: Array) -> tuple[Array, Array]:
        return inter, ref


class _Substitutions(BaseComponent[NoParams]):
    """A sample's substitutions themselves (a ratio over 1), summed over samples for micro."""

    name: ClassVar[str] = "substitutions"
    substitutions = 1
    reads_cardinalities = True

    def ratio(self, ref: Array, pred: Array, inter: Array) -> tuple[Array, Array]:
        return np.zeros_like(ref), np.ones_like(ref)


PRECISION = _Precision(NoParams())
RECALL = _Recall(NoParams())
SUBSTITUTIONS = _Substitutions(NoParams())


def of_pr(metric: SetMetric) -> bool:
    """Whether ``metric`` is a function of precision and recall alone. A rate per cell (the
    Hamming loss) or a cardinality is not: the *_pr averagings average it as macro and samples
    do, since there is no P and R to take it of."""
    return not (optional(metric, "reads_cells") or optional(metric, "reads_cardinalities"))


class MacroPR(_PerClassAveraging):
    """The metric of macro-averaged P and R (F = harmonic mean of macro-P and macro-R); a metric
    that is no function of P and R (the Hamming loss, a cardinality) is macro-averaged itself."""

    name = "macro_pr"

    def _reduce(self, summary: Summary, metric: SetMetric, zero_division: float) -> Array:
        if not of_pr(metric):
            return nan_average(per_class(summary, metric, zero_division))
        p, r = (nan_average(per_class(summary, m, zero_division)) for m in (PRECISION, RECALL))
        return metric_of_pr(p, r, metric, zero_division)


class SamplesPR(_ClassAveraging):
    """The metric of samples-averaged P and R (F = harmonic mean of samples-P and samples-R); a
    metric that is no function of P and R is samples-averaged itself."""

    name = "samples_pr"

    def sample_metrics(self, metrics: Sequence[SetMetric]) -> Sequence[SetMetric]:
        return (PRECISION, RECALL, *(m for m in metrics if not of_pr(m)))

    def reduce(self, summary: Summary, metric: SetMetric, zero_division: float) -> Array:
        if not of_pr(metric):
            return sample_mean(summary, metric)
        p, r = (sample_mean(summary, m) for m in (PRECISION, RECALL))
        return metric_of_pr(p, r, metric, zero_division)
