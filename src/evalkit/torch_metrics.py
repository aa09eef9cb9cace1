"""torchmetrics ``Metric`` classes over evalkit's evaluation state (``pip install 'evalkit[torch]'``).

Every number of an :class:`~evalkit.state.State` for set metrics is a sum over samples, so the
state becomes a fixed set of float64 tensors registered with ``dist_reduce_fx="sum"``:
torchmetrics then accumulates, resets, merges (``merge_state``) and synchronises them across
processes as it does its own, and ``compute()`` hands the summed state back to an
:class:`~evalkit.evaluator.Evaluator`, so the values are the Evaluator's on all the samples seen.

    f1 = FuzzyF1Score(classes=17, averaging="macro")
    for x, soft_labels in loader:
        f1.update(model(x).sigmoid(), soft_labels)     # torchmetrics' order: preds, then target
    f1.compute()                                       # tensor(0.83..., dtype=torch.float64)

Unlike :meth:`Evaluator.update(reference, prediction) <evalkit.evaluator.Evaluator.update>`,
``update`` takes torchmetrics' order, **preds first**. Each batch is copied to the host as
float64 (detached: evaluation needs no gradient) and scored there; only the sums, a few numbers
per class, are added to the metric's tensors on its device.

This module is the only one of evalkit that imports torch; ``import evalkit`` does not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import fields, replace
from typing import Any, ClassVar

import numpy as np
import torch
from torchmetrics import Metric

from evalkit.arrays import host_array
from evalkit.config import Spec
from evalkit.data import listed
from evalkit.errors import ConfigError, DataError
from evalkit.evaluator import Evaluator
from evalkit.state import State

__all__ = [
    "EvalkitMetric",
    "FuzzyExactMatch",
    "FuzzyF1Score",
    "FuzzyFBetaScore",
    "FuzzyHammingDistance",
    "FuzzyHammingLoss",
    "FuzzyJaccardIndex",
    "FuzzyPrecision",
    "FuzzyRecall",
]

#: An evalkit state as named numbers: (path, value) where the path says where the value sits,
#: e.g. ("summary", 0, "sample_sums", "f1") or ("data", "kld").
Path = tuple[Any, ...]


def _numbers(state: State) -> dict[Path, Any]:
    """Every number of ``state`` by its path: the state's sample count, each summary's fields
    (``None`` fields are absent; dict fields give one entry per key) and each data metric's
    state. Values are as the state holds them; :func:`_with_numbers` is the inverse."""
    out: dict[Path, Any] = {("n_samples",): state.n_samples}
    for i, summary in enumerate(state.summaries.values()):
        for f in fields(summary):
            value = getattr(summary, f.name)
            if isinstance(value, dict):
                out.update({("summary", i, f.name, k): v for k, v in value.items()})
            elif value is not None:
                out[("summary", i, f.name)] = value
    out.update({("data", label): value for label, value in state.data.items()})
    return out


def _with_numbers(template: State, numbers: dict[Path, np.ndarray]) -> State:
    """``template`` (a state of the same layout) holding ``numbers`` instead of its own."""

    def like(old: Any, new: np.ndarray) -> Any:
        return new if isinstance(old, np.ndarray) else float(new)  # a plain number stays one

    summaries = {}
    for i, (key, summary) in enumerate(template.summaries.items()):
        changes: dict[str, Any] = {}
        for f in fields(summary):
            old = getattr(summary, f.name)
            if isinstance(old, dict):
                changes[f.name] = {k: like(v, numbers[("summary", i, f.name, k)]) for k, v in old.items()}
            elif old is not None:
                changes[f.name] = like(old, numbers[("summary", i, f.name)])
        summaries[key] = replace(summary, **changes)
    data = {label: like(old, numbers[("data", label)]) for label, old in template.data.items()}
    return replace(template, summaries=summaries, data=data, n_samples=float(numbers[("n_samples",)]))


def _is_sum(value: Any) -> bool:
    """A number or an array of numbers: what merges by ``+`` as a sum (a list would concatenate)."""
    return isinstance(value, (int, float, np.number)) or (isinstance(value, np.ndarray) and value.dtype.kind in "biuf")


def _host64(value: Any, where: str) -> Any:
    """A batch on the host: a tensor (any device, gradients or not, any numeric dtype) or an
    array as a float64 NumPy array, so every sum is exact to float64 rounding; anything else
    (lists of rows, DataFrames) as it is, for the Evaluator to read. Complex tensors stay
    complex, for the Evaluator to refuse (a cast would keep the real part with a warning)."""
    if isinstance(value, torch.Tensor) and not value.is_complex():
        return value.detach().to(device="cpu", dtype=torch.float64).numpy()
    value = host_array(value, where)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return value.astype(np.float64, copy=False)
    return value


class EvalkitMetric(Metric):
    """evalkit's metrics of one combination of components as a torchmetrics ``Metric``.

    ``classes`` (the class names, or how many there are) fixes the columns, so that every state
    has its shape from the start, as torchmetrics requires. The other keywords are
    :class:`~evalkit.evaluator.Evaluator`'s, one component each (a name or
    ``{"name": ..., **params}``; make one metric per combination to compare several), except
    ``metrics``, which may list several. Keywords of torchmetrics' ``Metric``
    (``sync_on_compute``, ``dist_sync_fn``, ...) pass on to it.

    ``update(preds, target)`` takes **predictions first**, as torchmetrics does: the other way
    round from ``Evaluator.update(reference, prediction)``. ``compute()`` gives
    {metric label: float64 tensor}, a scalar or, under ``averaging="none"``, one value per class.

    The states are the sums of the Evaluator's :class:`~evalkit.state.State`, as float64 tensors
    reduced by summing (``metric.metric_state`` shows them by name). Metrics whose state is not a
    sum of fixed size (mAP and OmAP keep every score) are refused: use the Evaluator for them.
    """

    is_differentiable = False
    higher_is_better: bool | None = None
    full_state_update = False

    def __init__(
        self, *, classes: int | Sequence[str], representation: Spec = "fuzzy", tnorm: Spec = "minimum",
        similarity: Spec | None = None, averaging: Spec = "micro",
        metrics: Spec | Sequence[Spec] = ("precision", "recall", "f1"), zero_division: float | str = 0.0,
        clip: bool = False, **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        who = type(self).__name__
        for key, value in (
            ("representation", representation), ("tnorm", tnorm), ("similarity", similarity), ("averaging", averaging),
        ):
            if isinstance(value, (list, tuple)):
                raise ConfigError(
                    f"{who}(): {key} takes one component, not a list ({value!r}); make one metric per combination "
                    "(or compare them with evalkit.Evaluator)"
                )
        self._settings: dict[str, Any] = {
            "representation": representation, "tnorm": tnorm, "similarity": similarity, "averaging": averaging,
            "metrics": metrics, "classes": _class_names(classes, who), "zero_division": zero_division, "clip": clip,
        }
        self._evaluator: Evaluator | None = None
        evaluator = self._batch_evaluator()  # checks every component, as Evaluator() does
        if evaluator.kind != "matrix":
            raise ConfigError(
                f"{who}(): representation {evaluator.axes.representations[0].label!r} reads {evaluator.kind}, not "
                "membership matrices; torchmetrics classes take (samples x classes) tensors"
            )
        # The layout of the state, from zero-membership samples: one sample, then two. A number
        # whose shape depends on the samples (or that is not a number) cannot be a summed state.
        states = []
        for rows in (1, 2):
            zeros = np.zeros((rows, len(self._settings["classes"])))
            states.append(evaluator.update(zeros, zeros).state())
            evaluator.reset()
        assert len(states[0].summaries) <= 1, "one combination of components: one summary at most"
        self._template = states[0]  # the layout that compute() fills with the summed tensors
        one, two = map(_numbers, states)
        for path, value in one.items():
            if not (_is_sum(value) and _is_sum(two[path]) and np.shape(value) == np.shape(two[path])):
                raise ConfigError(
                    f"{who}(): metric {path[1]!r} keeps more than sums of a fixed size ({type(value).__name__}), so it "
                    "cannot be a torchmetrics state that synchronises by summing; evaluate it with evalkit.Evaluator"
                    if path[0] == "data" else
                    f"{who}(): the state's {'.'.join(map(str, path))} is not a sum of a fixed size; "
                    "evaluate this combination with evalkit.Evaluator"
                )
        #: state attribute -> (path in the evalkit state, shape)
        self._layout: dict[str, tuple[Path, tuple[int, ...]]] = {}
        for path, value in one.items():
            name = _state_name(path, self._layout, self)
            self._layout[name] = (path, np.shape(value))
            self.add_state(name, default=torch.zeros(np.shape(value), dtype=torch.float64), dist_reduce_fx="sum")

    def update(self, preds: Any, target: Any, sample_weight: Any = None) -> None:
        """Add a batch. **Predictions first**, as in torchmetrics (``Evaluator.update`` takes the
        reference first): ``preds`` and ``target`` are (samples x classes) memberships in [0, 1]
        (tensors on any device, gradients or not; arrays; lists of rows), ``sample_weight`` one
        weight per sample. The batch is copied to the host as float64 and scored there."""
        evaluator = self._batch_evaluator()
        weights = None if sample_weight is None else _host64(sample_weight, "sample_weight")
        try:
            evaluator.update(_host64(target, "target"), _host64(preds, "preds"), sample_weight=weights)
            numbers = _numbers(evaluator.state())
        finally:
            evaluator.reset()
        flat = np.concatenate([np.ravel(numbers[path]) for path, _ in self._layout.values()]).astype(np.float64)
        added = torch.from_numpy(flat).to(self.device)  # one copy to the metric's device
        start = 0
        for name, (_, shape) in self._layout.items():
            size = int(np.prod(shape))
            total = getattr(self, name)
            total += added[start : start + size].reshape(shape)
            start += size

    def compute(self) -> Any:
        """{metric label: float64 tensor} of every sample seen (in every process, when synced)."""
        numbers = {path: getattr(self, name).detach().cpu().numpy() for name, (path, _) in self._layout.items()}
        evaluator = self._batch_evaluator()
        try:
            values = evaluator.merge(_with_numbers(self._template, numbers)).values()
        finally:
            evaluator.reset()
        grouped: dict[str, list[float]] = {}
        for measure, value in values.items():
            grouped.setdefault(measure.metric, []).append(value)
        return {
            label: torch.tensor(v[0] if len(v) == 1 else v, dtype=torch.float64, device=self.device)
            for label, v in grouped.items()
        }

    def plot(self, val: Any = None, ax: Any = None) -> Any:
        """``(fig, ax)``: a value of ``compute()`` or ``forward()`` (default: ``compute()`` now), or
        a sequence of them as steps, drawn by torchmetrics' own helper as its metrics draw theirs;
        per-class values are one point (or, over steps, one line) per class, named by class."""
        fig, ax = self._plot(val, ax)
        legend = ax.get_legend()
        classes = self._template.classes
        if legend is not None and [t.get_text() for t in legend.get_texts()] == [str(i) for i in range(len(classes))]:
            for text, name in zip(legend.get_texts(), classes):
                text.set_text(name)
        return fig, ax

    def merge_state(self, incoming_state: dict[str, Any] | Metric) -> None:
        """Add another metric's states (or a dict of them, torchmetrics' ``metric_state``), once
        they are known to be sums of the same thing: a metric of other components, settings or
        classes is refused as :meth:`Evaluator.merge <evalkit.evaluator.Evaluator.merge>` refuses
        its state, with the same message; a dict, which says neither, must have this metric's
        states and shapes."""
        if isinstance(incoming_state, EvalkitMetric):
            other = incoming_state._template
            self._template.check_join(other.spec, other.classes)
        elif isinstance(incoming_state, dict):
            for name, (_, shape) in self._layout.items():
                got = incoming_state.get(name)
                if not isinstance(got, torch.Tensor) or tuple(got.shape) != shape:
                    raise DataError(
                        f"{type(self).__name__}.merge_state(): the state {name!r} is "
                        + (f"of shape {tuple(got.shape)}" if isinstance(got, torch.Tensor) else f"{type(got).__name__}")
                        + f", where this metric's is a tensor of shape {shape} ({listed(self._template.classes)}); "
                        "merge the metric itself, whose classes and settings are then checked"
                    )
        super().merge_state(incoming_state)

    def _fresh_evaluator(self) -> Evaluator:
        return Evaluator(**self._settings)

    def _batch_evaluator(self) -> Evaluator:
        """An Evaluator kept between calls (and reset after each); not pickled."""
        if self._evaluator is None:
            self._evaluator = self._fresh_evaluator()
        return self._evaluator

    def __getstate__(self) -> dict[str, Any]:
        # The Evaluator holds the plugin registry, which need not pickle; it is made again on use.
        return {**super().__getstate__(), "_evaluator": None}


def _class_names(classes: Any, who: str) -> list[str]:
    if isinstance(classes, int) and not isinstance(classes, bool):
        if classes < 1:
            raise ConfigError(f"{who}(): classes={classes}: give at least one class")
        return [f"class {i}" for i in range(classes)]
    if isinstance(classes, (str, bytes)) or not isinstance(classes, Sequence) or not classes:
        raise ConfigError(f"{who}(): classes takes the class names (a list) or how many classes there are (an int)")
    return [str(c) for c in classes]


def _state_name(path: Path, taken: dict[str, Any], metric: Metric) -> str:
    """An attribute name for a state: ``sum_`` and its path, e.g. ``sum_n_samples``,
    ``sum_summary_inter``, ``sum_summary_sample_sums_f1``, ``sum_data_kld``."""
    parts = [str(p) for p in path if not isinstance(p, int)]  # the one summary's index
    base = "sum_" + re.sub(r"\W+", "_", "_".join(parts)).strip("_")
    name, i = base, 1
    while name in taken or hasattr(metric, name):
        i += 1
        name = f"{base}_{i}"
    return name


class _OneMetric(EvalkitMetric):
    """One metric, whose ``compute()`` is its tensor (a scalar, or one value per class)."""

    metric: ClassVar[Spec]
    higher_is_better = True
    plot_lower_bound = 0.0  # every one is a share
    plot_upper_bound = 1.0

    def __init__(self, *, classes: int | Sequence[str], _spec: Spec | None = None, **kwargs: Any) -> None:
        if "metrics" in kwargs:
            raise ConfigError(f"{type(self).__name__}() computes {self.metric!r}; for other metrics use EvalkitMetric")
        super().__init__(classes=classes, metrics=[_spec or self.metric], **kwargs)

    def compute(self) -> Any:
        (value,) = super().compute().values()
        return value


class FuzzyPrecision(_OneMetric):
    """|G ∩ P| / |P|: fuzzy precision of soft labels (``update(preds, target)``, preds first)."""

    metric = "precision"


class FuzzyRecall(_OneMetric):
    """|G ∩ P| / |G| (``update(preds, target)``, preds first)."""

    metric = "recall"


class FuzzyF1Score(_OneMetric):
    """2 |G ∩ P| / (|G| + |P|) (``update(preds, target)``, preds first)."""

    metric = "f1"


class FuzzyJaccardIndex(_OneMetric):
    """|G ∩ P| / |G ∪ P| (``update(preds, target)``, preds first)."""

    metric = "jaccard"


class FuzzyHammingLoss(_OneMetric):
    """(|G| + |P| − 2 |G ∩ P|) / cells; lower is better (``update(preds, target)``, preds first)."""

    metric = "hamming_loss"
    higher_is_better = False


class FuzzyHammingDistance(FuzzyHammingLoss):
    """torchmetrics' name (``MultilabelHammingDistance``) for :class:`FuzzyHammingLoss`."""


class FuzzyExactMatch(_OneMetric):
    """The mean over samples of min over classes of 1 − |μG − μP|: the exact match ratio (subset
    accuracy) on 0/1 labels; T-norm and averaging do not enter (``update(preds, target)``, preds first)."""

    metric = "exact_match_ratio"


class FuzzyFBetaScore(_OneMetric):
    """(1 + β²) |G ∩ P| / (β² |G| + |P|), with ``beta`` (``update(preds, target)``, preds first)."""

    metric = "fbeta"

    def __init__(self, *, classes: int | Sequence[str], beta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(classes=classes, _spec={"name": "fbeta", "beta": beta}, **kwargs)
        self.beta = beta
