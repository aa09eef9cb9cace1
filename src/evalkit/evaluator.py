"""Evaluation batch by batch: :class:`Evaluator` accumulates a public, mergeable
:class:`~evalkit.state.State` and computes the same :class:`~evalkit.results.Results` as a run.

    ev = evalkit.Evaluator(tnorm=["minimum", "product"], averaging=["micro", "macro"])
    for reference, prediction in batches:          # a training loop, a stream of files
        ev.update(reference, prediction)
    ev.compute()                                   # the rows a YAML run gives

States of several processes merge by ``+`` (or :meth:`Evaluator.merge`), in any order and
grouping, into the state of all their samples.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.arrays import host_array
from evalkit.axes import Axes, Combination, resolve, unweighted
from evalkit.config import Spec, as_list, load_config
from evalkit.data import LabelMatrix, named
from evalkit.discovery import default_registry
from evalkit.engine import Sums, Values, prepared, reduce
from evalkit.errors import DataError
from evalkit.items import ItemSets
from evalkit.keywords import suggest_keywords
from evalkit.plan import Job, Step, plan_source
from evalkit.reduction import engine_rows, prepare
from evalkit.registry import Registry
from evalkit.results import Results, Row
from evalkit.settings import Engine, Settings
from evalkit.sources import load_source
from evalkit.state import State
from evalkit.table import chunk_rows
from evalkit.weights import batch_weights


class Evaluator:
    """Accumulates the state of an evaluation over any number of batches.

    The keywords are the YAML vocabulary: ``representation``, ``tnorm``, ``similarity``,
    ``averaging`` and ``metrics`` each take a component (a name, or ``{"name": ..., **params}``)
    or a list of them, which is an axis of the comparison, as in a config; ``classes`` names the
    columns of unnamed arrays, or selects and orders the classes of named data; ``zero_division``
    is the value of 0/0; ``clip`` clips predictions to [0, 1] instead of refusing them;
    ``missing="empty"`` scores a reference sample absent from a prediction as an empty prediction.
    """

    @suggest_keywords
    def __init__(
        self,
        *,
        representation: Spec | Sequence[Spec] = "fuzzy",
        tnorm: Spec | Sequence[Spec] = "minimum",
        similarity: Spec | Sequence[Spec] | None = None,
        averaging: Spec | Sequence[Spec] = "micro",
        metrics: Spec | Sequence[Spec] = ("precision", "recall", "f1"),
        classes: Sequence[str] | None = None,
        zero_division: float | str = 0.0,
        clip: bool = False,
        missing: str = "error",
        registry: Registry | None = None,
        _caller: str = "Evaluator()",
    ) -> None:
        """``_caller`` is what errors name as the call: :func:`evalkit.evaluate` builds one."""
        self.registry = registry or default_registry()
        spec = {
            "representation": _listed(representation), "tnorm": _listed(tnorm), "similarity": _listed(similarity),
            "averaging": _listed(averaging), "metrics": as_list(_listed(metrics)), "zero_division": zero_division,
        }
        # The same checks of every argument as a config's (components, parameters, zero_division).
        config = load_config({
            "data": {"reference": [], "systems": {"prediction": []}, "classes": classes, "clip": clip, "missing": missing},
            **spec,
        }, where=_caller, keywords=True).config
        assert isinstance(config.zero_division, float), "RunConfig's validator makes 'nan' a float"

        def axis(kind: str, key: str) -> list[Any]:
            return resolve(self.registry, kind, as_list(getattr(config, key)), lambda i: f"{_caller}: {key}")

        self.axes = Axes(
            axis("representation", "representation"), axis("tnorm", "tnorm"), axis("similarity", "similarity"),
            axis("averaging", "averaging"), axis("metric", "metrics"), config.zero_division,
        )
        self.kind = self.axes.check()
        settings = Settings(missing, clip, None, False, None, None, Engine("local", None, None, 1, 0))
        #: what preparing a batch needs: the batch is a partition of the one system "prediction"
        self.job = Job((Step(None, self.axes),), settings, {"prediction": 1})
        #: the classes asked for: they name unnamed columns, and select those of named data
        self.given: tuple[str, ...] | None = tuple(classes) if classes is not None else None
        self.clip, self.missing = clip, missing
        shown = "nan" if np.isnan(config.zero_division) else config.zero_division  # NaN != NaN would never merge
        self.spec = json.loads(json.dumps({**spec, "zero_division": shown}, default=str))
        self._state = State(self.spec, self.given or ())
        self._pending = Pending()

    @property
    def classes(self) -> tuple[str, ...] | None:
        """The classes of the state: those asked for, else the first batch's (None before it)."""
        return self._state.classes or None

    @suggest_keywords
    def update(
        self, reference: Any, prediction: Any, *, ids: Sequence[Any] | None = None,
        sample_weight: Any | None = None,
    ) -> Evaluator:
        """Add a batch: ``reference`` and ``prediction`` are what a representation reads
        (memberships as arrays, lists, DataFrames or tensors of samples x classes; item lists),
        aligned by sample id and class name where they have them. ``ids`` names the rows of both
        sides when they have no ids of their own; ``sample_weight`` gives each sample a weight
        (scikit-learn's). Returns the evaluator, so calls chain."""
        loaded = self._joined(self._load(reference, "reference", ids))
        partition, _ = prepare(self.job, loaded, {"prediction": [self._load(prediction, "prediction", ids)]},
                               files=False, python=True, whole_samples=False)
        ref, pred = partition.reference, partition.systems["prediction"][0]
        weights = None if sample_weight is None else batch_weights(sample_weight, ref)
        refused = unweighted(self.axes.data_metrics) if weights is not None else None
        if refused:
            raise DataError(refused)
        if self.classes is None:  # a first batch that passed every check names the state's classes
            self._state = replace(self._state, classes=ref.classes)
        if isinstance(ref, LabelMatrix) and isinstance(pred, LabelMatrix) and len(ref) < chunk_rows(len(ref.classes)):
            self._pending.add(ref.values, pred.values, weights, self._score)
        else:
            self._pending.flush(self._score)
            self._score(engine_rows(ref), engine_rows(pred), weights)
        return self

    def _score(self, ref_rows: Any, pred_rows: Any, weights: np.ndarray | None) -> None:
        if self.axes.data_metrics and isinstance(ref_rows, np.ndarray):  # their states may keep the rows
            ref_rows, pred_rows = ref_rows.copy(), pred_rows.copy()
        self._state = self._state + self._batch_state(ref_rows, pred_rows, weights)

    def state(self) -> State:
        """The state so far: small, picklable (and :meth:`State.to_json`), merged by ``+``."""
        self._pending.flush(self._score)
        return self._state

    def merge(self, state: State) -> Evaluator:
        """Add the samples of another evaluator's state (of the same components and classes)."""
        if not isinstance(state, State):
            raise TypeError(f"merge() takes an evalkit State, not {type(state).__name__}")
        self._state = self.state() + state
        return self

    def reset(self) -> None:
        """Forget every sample (the components and classes stay), e.g. at the start of an epoch."""
        self._state = State(self.spec, self._state.classes)
        self._pending = Pending()

    def values(self) -> Values:
        """Every value of the samples seen, keyed by the measure it is."""
        state = self.state()
        if state.empty:
            raise DataError("nothing to compute: update() the evaluator with at least one batch first")
        sums = Sums(
            {i: state.summaries[_key(c)] for i, c in enumerate(self.axes.set_combinations())},
            [state.data[metric.label] for metric in self.axes.data_metrics],
        )
        return sums.values(self.axes, state.classes)

    def compute(self, system: str = "prediction") -> Results:
        """The results of every sample seen, as the tidy rows of a run (``system`` names them)."""
        rows = [Row.of(system, measure, value) for measure, value in self.values().items()]
        return Results(rows, config={"evaluator": self.spec, "classes": list(self._state.classes)})

    def _load(self, value: Any, role: str, ids: Sequence[Any] | None) -> LabelMatrix | ItemSets:
        value = host_array(value, role)
        if self._plain_batch(value):  # the training-loop case, without detours
            assert self.classes is not None, "a plain batch has the known columns"
            data: LabelMatrix | ItemSets = LabelMatrix(value, self.classes, None, role)
        else:
            source = plan_source(value, role, None, role, Path.cwd(), self.registry, self.kind)
            data = load_source(
                value, where=role, kind=self.kind, role=role, classes=self.given, loader=source.loader,
                full=source.full,
            )
        if ids is not None and data.ids is None:
            if len(ids) != len(data):
                raise DataError(f"{role}: {len(data)} samples but {len(ids)} ids")
            data = replace(data, ids=tuple(str(i).strip() for i in ids))
        return data

    def _joined(self, reference: LabelMatrix | ItemSets) -> LabelMatrix | ItemSets:
        """The reference of a batch with the state's classes in the state's order (its columns
        matched by name, as within a batch), or the one error of :meth:`State.check_join`. As a
        prediction's within a batch, a class no sample of an item batch mentions is empty."""
        if self.classes is None:
            return reference
        if isinstance(reference, ItemSets) and reference.absent_class_is_empty and set(reference.classes) < set(self.classes):
            reference = reference.select(self.classes, fill=True)
        self._state.check_join(self.spec, reference.classes, reference.source, reorders=True)
        return reference if reference.classes == self.classes else reference.select(self.classes)

    def _plain_batch(self, value: Any) -> bool:
        """A float matrix with one column per class of a state whose columns may be unnamed
        (the classes were given, or the first batch had no names): nothing to look up, convert
        or name."""
        classes = self.classes
        return (
            self.kind == "matrix" and classes is not None and (self.given is not None or not named(classes))
            and isinstance(value, np.ndarray) and value.ndim == 2 and value.dtype in (np.float32, np.float64)
            and value.shape[1] == len(classes)
        )

    def _batch_state(self, ref_rows: Any, pred_rows: Any, weights: np.ndarray | None) -> State:
        classes = self.classes
        assert classes is not None, "the first batch names the classes"
        prepared(self.axes, classes)
        (sums,), _ = reduce(self.axes, ref_rows, [pred_rows], weights)
        combinations = self.axes.set_combinations()
        summaries = {_key(combinations[key]): summary for key, summary in sums.summaries.items()}
        data = {metric.label: state for metric, state in zip(self.axes.data_metrics, sums.data)}
        n = float(weights.sum()) if weights is not None else len(ref_rows)
        return State(self.spec, tuple(classes), summaries, data, n)


class Pending:
    """Checked small batches of memberships, copied into one chunk of
    :func:`~evalkit.table.chunk_rows` rows before they are scored: a training loop's batches
    then cost a call to each component per chunk, as one call on all the data does."""

    def __init__(self) -> None:
        self.ref: np.ndarray | None = None
        self.pred: np.ndarray | None = None
        self.weights: np.ndarray | None = None
        self.rows = 0

    def add(self, ref: np.ndarray, pred: np.ndarray, weights: np.ndarray | None, score: Any) -> None:
        n = len(ref)
        if self.ref is None or self.pred is None or (ref.dtype, pred.dtype) != (self.ref.dtype, self.pred.dtype):
            self.flush(score)
            self.ref = np.empty((chunk_rows(ref.shape[1]), ref.shape[1]), ref.dtype)
            self.pred = np.empty((len(self.ref), pred.shape[1]), pred.dtype)
        elif self.rows + n > len(self.ref):
            self.flush(score)
        assert self.ref is not None and self.pred is not None, "allocated above"
        if weights is not None and self.weights is None:
            self.weights = np.ones(len(self.ref))
        self.ref[self.rows : self.rows + n], self.pred[self.rows : self.rows + n] = ref, pred
        if self.weights is not None:
            self.weights[self.rows : self.rows + n] = 1.0 if weights is None else weights
        self.rows += n

    def flush(self, score: Any) -> None:
        """Score the rows waiting (views of the buffers, which are reused)."""
        if self.rows and self.ref is not None and self.pred is not None:
            weights = None if self.weights is None else self.weights[: self.rows]
            score(self.ref[: self.rows], self.pred[: self.rows], weights)
        self.rows, self.weights = 0, None


def _listed(value: Any) -> Any:
    """A tuple as a list (an axis), a string or mapping as it is."""
    return list(value) if isinstance(value, tuple) else value


def _key(combination: Combination) -> str:
    """A combination as text, the same in every process."""
    rep, tnorm, similarity = combination
    return json.dumps([rep.label, tnorm.label if tnorm else None, similarity.label if similarity else None])

