"""torchmetrics ``Metric`` classes over evalkit's evaluation state (``pip install 'evalkit[torch]'``).

Every number of an :class:`~evalkit.state.State` for set metrics is a sum over samples, so it
becomes a set of float64 tensors registered with ``dist_reduce_fx="sum"``: torchmetrics then
accumulates, resets, merges (``merge_state``) and synchronises them across processes as it does
its own, and ``compute()`` hands the summed state back to an :class:`~evalkit.evaluator.Evaluator`.

    f1 = FuzzyF1Score(classes=17, averaging="macro")
    for x, soft_labels in loader:
        f1.update(model(x).sigmoid(), soft_labels)     # torchmetrics' order: preds, then target
    f1.compute()                                       # tensor(0.83..., dtype=torch.float64)

Unlike :meth:`Evaluator.update(reference, prediction) <evalkit.evaluator.Evaluator.update>`,
``update`` takes torchmetrics' order, **preds first**. Each batch is copied to the host as it is
scored (evaluation needs no gradient), and only the sums stay on the metric's device.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields, replace
from typing import Any, ClassVar

import numpy as np
import torch
from torchmetrics import Metric

from evalkit.config import Spec
from evalkit.evaluator import Evaluator
from evalkit.state import State

__all__ = [
    "EvalkitMetric",
    "FuzzyF1Score",
    "FuzzyFBetaScore",
    "FuzzyHammingLoss",
    "FuzzyJaccardIndex",
    "FuzzyPrecision",
    "FuzzyRecall",
]


def _sums(state: State) -> dict[str, np.ndarray]:
    """Every number of a state, by a name that says where it sits (``summary.<key>.<field>``,
    ``data.<metric>``, ``n_samples``), as float64 arrays. A data metric whose state is not an
    array of sums (mAP keeps its scores) is refused."""
    out = {"n_samples": np.asarray(state.n_samples, dtype=np.float64)}
    for key, summary in state.summaries.items():
        for f in fields(summary):
            value = getattr(summary, f.name)
            if isinstance(value, dict):
                out.update({f"summary.{key}.{f.name}.{k}": np.asarray(v, dtype=np.float64) for k, v in value.items()})
            elif value is not None:
                out[f"summary.{key}.{f.name}"] = np.asarray(value, dtype=np.float64)
    for label, value in state.data.items():
        if not isinstance(value, np.ndarray):
            raise ValueError(
                f"metric {label!r} keeps more than sums ({type(value).__name__}), so it cannot be a torchmetrics "
                "state that syncs by summing; evaluate it with evalkit.Evaluator"
            )
        out[f"data.{label}"] = value.astype(np.float64)
    return out


def _state(template: State, sums: dict[str, np.ndarray]) -> State:
    """The state of ``template``'s layout holding ``sums`` (the inverse of :func:`_sums`)."""
    summaries = {}
    for key, summary in template.summaries.items():
        changes: dict[str, Any] = {}
        for f in fields(summary):
            value = getattr(summary, f.name)
            if isinstance(value, dict):
                changes[f.name] = {k: sums[f"summary.{key}.{f.name}.{k}"] for k in value}
            elif value is not None:
                changes[f.name] = sums[f"summary.{key}.{f.name}"]
        summaries[key] = replace(summary, **changes)
    data = {label: sums[f"data.{label}"] for label in template.data}
    return replace(template, summaries=summaries, data=data, n_samples=float(sums["n_samples"]))


class EvalkitMetric(Metric):
    """evalkit's metrics of one combination of components as a torchmetrics ``Metric``.

    ``classes`` (names, or how many) fixes the columns, so that every state has its shape from
    the start, as torchmetrics requires; the other keywords are :class:`Evaluator`'s, one
    component each (make one metric per combination to compare several). ``compute()`` gives
    {metric label: tensor}: a scalar, or one value per class under ``averaging="none"``.
    Keywords torchmetrics' ``Metric`` takes (``sync_on_compute``, ``dist_sync_fn``, ...) pass on.
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
        for key, value in (("representation", representation), ("tnorm", tnorm), ("averaging", averaging)):
            if isinstance(value, (list, tuple)):
                raise ValueError(f"{type(self).__name__}: {key} takes one component; make one metric per combination")
        names = [f"class {i}" for i in range(classes)] if isinstance(classes, int) else [str(c) for c in classes]
        settings: dict[str, Any] = {
            "representation": representation, "tnorm": tnorm, "similarity": similarity, "averaging": averaging,
            "metrics": metrics, "classes": names, "zero_division": zero_division, "clip": clip,
        }
        self._settings = settings
        self._evaluator = Evaluator(**settings)
        zeros = np.zeros((1, len(names)))  # a sample of weight 0: every sum in its shape, all 0
        self._template = Evaluator(**settings).update(zeros, zeros, sample_weight=[0.0]).state()
        sums = _sums(self._template)
        self._names = sorted(sums)
        for i, name in enumerate(self._names):  # torchmetrics' states are attributes: named by index
            self.add_state(f"sum_{i}", default=torch.zeros(sums[name].shape, dtype=torch.float64), dist_reduce_fx="sum")

    def update(self, preds: Any, target: Any, sample_weight: Any = None) -> None:
        """Add a batch: ``preds`` and ``target`` are (samples x classes) memberships (tensors on
        any device, gradients or not, arrays, lists), **predictions first**, as in torchmetrics;
        ``sample_weight`` weighs the samples."""
        self._evaluator.reset()
        batch = _sums(self._evaluator.update(target, preds, sample_weight=sample_weight).state())
        for i, name in enumerate(self._names):
            total = getattr(self, f"sum_{i}")
            total += torch.as_tensor(batch[name], dtype=torch.float64, device=total.device)

    def compute(self) -> Any:
        sums = {name: getattr(self, f"sum_{i}").detach().cpu().numpy() for i, name in enumerate(self._names)}
        evaluator = Evaluator(**self._settings)
        out: dict[str, Any] = {}
        for measure, value in evaluator.merge(_state(self._template, sums)).values().items():
            out.setdefault(measure.metric, []).append(value)
        return {k: torch.tensor(v[0] if len(v) == 1 else v, dtype=torch.float64) for k, v in out.items()}


class _OneMetric(EvalkitMetric):
    """One metric, whose ``compute()`` is its tensor."""

    metric: ClassVar[Spec]
    higher_is_better = True

    def __init__(self, *, classes: int | Sequence[str], metric: Spec | None = None, **kwargs: Any) -> None:
        super().__init__(classes=classes, metrics=[metric or self.metric], **kwargs)

    def compute(self) -> Any:
        (value,) = super().compute().values()
        return value


class FuzzyPrecision(_OneMetric):
    """|G ∩ P| / |P| (Harju & Mesaros's fuzzy precision on soft labels)."""

    metric = "precision"


class FuzzyRecall(_OneMetric):
    """|G ∩ P| / |G|."""

    metric = "recall"


class FuzzyF1Score(_OneMetric):
    """2 |G ∩ P| / (|G| + |P|)."""

    metric = "f1"


class FuzzyJaccardIndex(_OneMetric):
    """|G ∩ P| / |G ∪ P|."""

    metric = "jaccard"


class FuzzyHammingLoss(_OneMetric):
    """(|G| + |P| − 2|G ∩ P|) / cells; lower is better."""

    metric = "hamming_loss"
    higher_is_better = False


class FuzzyFBetaScore(_OneMetric):
    """(1 + β²) |G ∩ P| / (β² |G| + |P|), with ``beta``."""

    metric = "fbeta"

    def __init__(self, *, classes: int | Sequence[str], beta: float = 1.0, **kwargs: Any) -> None:
        super().__init__(classes=classes, metric={"name": "fbeta", "beta": beta}, **kwargs)
