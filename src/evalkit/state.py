"""The evaluation state: what an :class:`~evalkit.evaluator.Evaluator` has seen, reduced to
sums that merge by ``+``.

For each combination of the axes it holds a :class:`~evalkit.table.Summary` (per-class sums of
the cardinality table, and one running sum per samples-averaged metric), and for each data
metric that metric's own state. Its size does not grow with the number of samples, except for
metrics that rank (mAP, OmAP), whose state is their scores. It is picklable, and written as
JSON by :meth:`State.to_json`, so it can be checkpointed, sent between processes and merged
in any order: ``a + b`` is the state of both batches of samples.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from evalkit.data import listed, named
from evalkit.errors import DataError
from evalkit.table import Summary

#: The layout of a state; a state of another version is refused rather than misread.
STATE_VERSION = 1


@dataclass
class State:
    """``spec``: the evaluator's components and settings (states merge only with the same);
    ``classes``: the class names, in column order; ``summaries``: combination key -> summary;
    ``data``: data-metric label -> its state; ``n_samples``: samples seen (their weight
    summed, when weighted)."""

    spec: dict[str, Any]
    classes: tuple[str, ...] = ()
    summaries: dict[str, Summary] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    n_samples: float = 0
    version: int = STATE_VERSION

    @property
    def empty(self) -> bool:
        return not self.summaries and not self.data

    def __add__(self, other: State) -> State:
        if not isinstance(other, State):
            return NotImplemented
        if self.version != other.version:
            raise DataError(f"cannot merge evaluation states of different versions: {self.version} and {other.version}")
        self.check_join(other.spec, other.classes)
        if self.empty or other.empty:  # an empty state may know its classes (an Evaluator's `classes=`)
            kept = other if self.empty and not other.empty else self
            return replace(kept, classes=self.classes or other.classes)
        return State(
            self.spec, self.classes,
            {key: summary + other.summaries[key] for key, summary in self.summaries.items()},
            {key: value + other.data[key] for key, value in self.data.items()},
            self.n_samples + other.n_samples,
        )

    def check_join(
        self, spec: dict[str, Any], classes: tuple[str, ...], what: str = "the state merged in", reorders: bool = False,
    ) -> None:
        """Refuse ``what`` (a batch, or another state, of ``spec`` and ``classes``) joining this
        state unless its sums mean the same: the same components and settings, and the same
        classes, by name, or by number where neither names them. Columns in another order pass
        only where ``reorders`` (a batch, which is aligned by name). The one check of
        ``Evaluator.update``, ``+`` (so ``Evaluator.merge``) and the torch classes'
        ``merge_state``, so that each refuses the same things with the same message. A state
        that knows no classes yet (no batch, no ``classes=``) takes any."""
        if spec != self.spec:
            differ = [k for k in sorted({*self.spec, *spec}) if self.spec.get(k) != spec.get(k)]
            raise DataError(
                "cannot merge evaluation states of different components or settings: "
                + "; ".join(f"{k}: {self.spec.get(k)!r} and {spec.get(k)!r}" for k in differ)
            )
        have = self.classes
        if not have or not classes or classes == have:
            return
        if len(classes) != len(have):
            why = "a different number of classes"
        elif named(classes) != named(have):
            why = "unnamed columns are never matched with named classes by position"
        elif set(classes) == set(have):
            if reorders:
                return
            why = "the same classes in another order (states merge column by column)"
        else:  # as many names (each once), not the same: some on each side only
            why = (
                f"different classes: missing {', '.join(repr(c) for c in have if c not in classes)}; "
                f"not in the state {', '.join(repr(c) for c in classes if c not in have)}"
            )
        raise DataError(
            f"{what} has {listed(classes)}, but the evaluation state it joins has {listed(have)}: {why}. Every "
            "batch needs the classes of the first, and a state merged in those of the state it joins: give them "
            "the same class names (DataFrame columns, or classes=[...] for arrays)"
        )

    def to_json(self) -> str:
        """The state as JSON text: floats written exactly (shortest round-trip repr), arrays with
        their dtype, so :meth:`from_json` gives back an equal state."""
        return json.dumps({
            "evalkit_state": self.version, "spec": self.spec, "classes": list(self.classes), "n_samples": self.n_samples,
            "summaries": {key: _encode(_summary_fields(s)) for key, s in self.summaries.items()},
            "data": {key: _encode(value) for key, value in self.data.items()},
        })

    @classmethod
    def from_json(cls, text: str | bytes) -> State:
        try:
            document = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DataError(f"not an evaluation state: not JSON ({exc})") from None
        if not isinstance(document, dict) or "evalkit_state" not in document:
            raise DataError("not an evaluation state: no `evalkit_state` version (was it written by State.to_json()?)")
        if document["evalkit_state"] != STATE_VERSION:
            raise DataError(
                f"an evaluation state of version {document['evalkit_state']!r}; this evalkit reads version "
                f"{STATE_VERSION}: use the evalkit that wrote it"
            )
        summaries = {key: Summary(**_decode(value)) for key, value in document["summaries"].items()}
        data = {key: _decode(value) for key, value in document["data"].items()}
        return cls(document["spec"], tuple(document["classes"]), summaries, data, document["n_samples"])


def _summary_fields(summary: Summary) -> dict[str, Any]:
    return {f.name: getattr(summary, f.name) for f in fields(summary)}


def _encode(value: Any) -> Any:
    """JSON of numbers, arrays (tagged with dtype and shape), lists, tuples and mappings."""
    if isinstance(value, np.ndarray):
        return {"__array__": value.dtype.str, "shape": list(value.shape), "values": value.ravel().tolist()}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {"__dict__": {str(k): _encode(v) for k, v in value.items()}}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise DataError(
        f"a metric's state holds a {type(value).__name__}, which evalkit cannot write as JSON; "
        "pickle the state instead, or keep metric states to numbers, arrays, lists and mappings"
    )


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if "__array__" in value:
            return np.array(value["values"], dtype=np.dtype(value["__array__"])).reshape(value["shape"])
        if "__tuple__" in value:
            return tuple(_decode(v) for v in value["__tuple__"])
        return {k: _decode(v) for k, v in value["__dict__"].items()}
    return value
