"""Tidy result rows: every table, plot, report and JSON document is rendered from these.

A run's JSON document (the json report, ``evalkit run --format json``) reads back into equal
:class:`Results` with :meth:`Results.from_json`, and its Parquet tables (the parquet report) with
:meth:`Results.from_parquet`; :meth:`Results.to_pandas`, :meth:`Results.pivot` and
:meth:`Results.per_sample` give DataFrames named as the reports are.
"""

from __future__ import annotations

import difflib
import html
import itertools
import json
import math
import os
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from evalkit.errors import ConfigError, DataError, shortened
from evalkit.measures import Curve, Measure
from evalkit.version import __version__

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]
    from pydantic import BaseModel

COLUMNS = (
    "system", "representation", "similarity", "tnorm", "averaging", "metric", "class", "level",
    "sweep", "sweep_value", "value", "ci_low", "ci_high",
)

#: The columns of a per-sample table (:meth:`Results.per_sample`, the reports' per-sample files).
SAMPLE_COLUMNS = (
    "sample", "system", "representation", "similarity", "tnorm", "metric", "sweep", "sweep_value", "value",
)

#: The columns that say what a value is, which tables pivot on.
LABELS = tuple(c for c in COLUMNS if c not in ("value", "ci_low", "ci_high"))
_ATTRIBUTES = tuple("class_" if c == "class" else c for c in LABELS)  # of Row
#: What a table shows for a component that does not apply (crisp uses no T-norm).
NOT_APPLICABLE = "—"

#: The layout of the JSON document: one of another layout is refused rather than misread.
#: Documents written before the layout was numbered have no number, and are layout 1.
RESULTS_FORMAT = 1

#: How a field of a record is read from JSON and typed in a DataFrame: its type, and what its
#: null means (NaN: undefined, as 0/0; None: not computed, or does not apply; _NEVER: a field
#: that is always there). Every other field is a label, text or null when it does not apply.
_NEVER: Any = object()
_FIELDS: dict[str, tuple[type, Any]] = {
    **dict.fromkeys(("value", "difference", "p_value", "tau"), (float, math.nan)),
    **dict.fromkeys(("ci_low", "ci_high", "sweep_value"), (float, None)),
    "level": (int, None),
    **dict.fromkeys(("resamples", "n_systems"), (int, _NEVER)),
    **dict.fromkeys(("system", "baseline", "metric", "method", "measure_a", "measure_b", "sample"), (str, _NEVER)),
}


def _number(value: float | None) -> float | None:
    """JSON has no NaN: an undefined value is null."""
    return None if value is None or math.isnan(value) else value


#: JSON has no infinities either (Python writes ``-Infinity``, which other readers refuse): in the
#: JSON document ±inf, such as a best threshold at which every frame is detected, is the text
#: "-inf" or "inf" in a number's place, which :meth:`Results.from_json` reads back.
_INFINITIES = {"inf": math.inf, "-inf": -math.inf}


def _text_of_infinities(record: dict[str, Any]) -> dict[str, Any]:
    """A record for the JSON document: its infinite numbers (also in a curve's points) as text."""
    return _as_text(record, nan=False)


def _as_text(value: Any, nan: bool) -> Any:
    """``value`` with each infinity (and, with ``nan``, NaN) inside it as the text a config and
    :meth:`Results.from_json` read back: "inf", "-inf", "nan"."""
    if isinstance(value, dict):
        return {key: _as_text(v, nan) for key, v in value.items()}
    if isinstance(value, list):
        return [_as_text(v, nan) for v in value]
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return "nan" if nan and isinstance(value, float) and math.isnan(value) else value


def config_record(config: BaseModel) -> dict[str, Any]:
    """A checked config as the results keep it: JSON data that runs again as written, its
    infinities (a threshold of -inf) and NaN (``zero_division: nan``) as the text a config takes
    (pydantic's JSON mode would make them null, which no parameter takes)."""
    return _as_text(config.model_dump(mode="json", fallback=_described_value), nan=True)


def _described_value(value: Any) -> str:
    """How in-memory data given from Python appears in a report's config."""
    return f"<{type(value).__name__} of shape {getattr(value, 'shape', '?')}>"


def _read_number(value: Any) -> Any:
    """A number read back from JSON: "inf" and "-inf" are the infinities."""
    return _INFINITIES[value] if isinstance(value, str) and value in _INFINITIES else value


@dataclass(frozen=True)
class Row:
    """One number: a metric of a system under one combination of components.

    Components are named as in the config (``hamacher(p=0.5)``); ``None`` means the component
    does not apply (crisp uses no T-norm; KL divergence uses no representation). ``class_`` is
    set for per-class values (averaging ``none``), ``level`` for per-level values of a metric
    that has levels (OmAP per λ), ``sweep`` and ``sweep_value`` for the rows of a sweep (what
    was varied, e.g. ``offset`` or ``tnorm.p``, and its value). ``ci_low`` and ``ci_high`` bound
    the confidence interval when one was asked for (bootstrap over samples, or jackknife across
    a system's runs).
    """

    system: str
    representation: str | None
    similarity: str | None
    tnorm: str | None
    averaging: str | None
    metric: str
    value: float
    class_: str | None = None
    level: int | None = None
    sweep: str | None = None
    sweep_value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None

    @classmethod
    def of(
        cls, system: str, measure: Measure, value: float, ci_low: float | None = None, ci_high: float | None = None,
    ) -> Row:
        return cls(
            system, measure.representation, measure.similarity, measure.tnorm, measure.averaging,
            measure.metric, value, measure.class_, measure.level, measure.sweep, measure.sweep_value,
            ci_low, ci_high,
        )

    @property
    def measure(self) -> Measure:
        """What was measured, but not for which system nor the value (a set metric always has an
        averaging; a data metric never has)."""
        return Measure(
            "set" if self.averaging is not None else "data", self.metric, self.representation,
            self.similarity, self.tnorm, self.averaging, self.class_, self.level, self.sweep, self.sweep_value,
        )

    def as_dict(self) -> dict[str, Any]:
        row = asdict(self)
        row["class"] = row.pop("class_")
        for key in ("value", "ci_low", "ci_high"):
            row[key] = _number(row[key])
        return {k: row[k] for k in COLUMNS}


@dataclass(frozen=True)
class Comparison:
    """A paired test of ``system`` against ``baseline`` on the same samples, for one measure:
    ``difference`` = system − baseline, the two-sided ``p_value`` of "no difference", and the
    difference's confidence interval ``ci_low``–``ci_high`` (paired bootstrap; None in results
    written before evalkit computed it)."""

    system: str
    baseline: str
    representation: str | None
    similarity: str | None
    tnorm: str | None
    averaging: str | None
    metric: str
    difference: float
    p_value: float
    method: str  # "permutation" or "bootstrap"
    resamples: int
    sweep_value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None

    @classmethod
    def of(
        cls, system: str, baseline: str, measure: Measure, difference: float, p_value: float, method: str,
        resamples: int, ci_low: float | None = None, ci_high: float | None = None,
    ) -> Comparison:
        return cls(
            system, baseline, measure.representation, measure.similarity, measure.tnorm, measure.averaging,
            measure.metric, difference, p_value, method, resamples, measure.sweep_value, ci_low, ci_high,
        )

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("difference", "p_value", "ci_low", "ci_high"):
            out[key] = _number(out[key])
        return out

    @property
    def p_at_floor(self) -> bool:
        """Whether ``p_value`` is the smallest p the resamples can give, ``1/(1 + resamples)``:
        the true p may be far smaller, and only more resamples would tell."""
        return self.p_value <= 1.0 / (1 + self.resamples) * (1 + 1e-9)


@dataclass(frozen=True)
class CurveRow:
    """A system's curve of one data metric (:class:`evalkit.measures.Curve`), for the data set or
    one class (``class_``), at one sweep value."""

    system: str
    metric: str
    curve: Curve
    class_: str | None = None
    sweep_value: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "system": self.system, "metric": self.metric, "class": self.class_, "sweep_value": self.sweep_value,
            "x_label": self.curve.x_label, "y_label": self.curve.y_label, "steps": self.curve.steps,
            "x": [_number(v) for v in self.curve.x.tolist()], "y": [_number(v) for v in self.curve.y.tolist()],
        }


def _curve_row(record: Any, where: str) -> CurveRow:
    if not isinstance(record, dict):
        raise DataError(f"{where}: not an object")
    try:
        x, y = ([np.nan if v is None else _read_number(v) for v in record[key]] for key in ("x", "y"))  # null: undefined
        curve = Curve(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64),
                      str(record["x_label"]), str(record["y_label"]), bool(record.get("steps", True)))
        sweep, class_ = record.get("sweep_value"), record.get("class")
        return CurveRow(str(record["system"]), str(record["metric"]), curve, None if class_ is None else str(class_),
                        None if sweep is None else float(sweep))
    except KeyError as exc:
        raise DataError(f"{where}: no `{exc.args[0]}`") from None
    except (TypeError, ValueError) as exc:
        raise DataError(f"{where}: {exc}") from None


@dataclass(frozen=True)
class SampleValues:
    """One per-sample quantity of one system under one combination of components (at one sweep
    value), on each of some samples: a set metric as ``samples`` averaging takes it on one
    sample (its cells summed over classes), or one of the sample's counts (:data:`COUNTS`).
    ``samples`` are sample ids; a sample of data without ids is named by its row, from 0."""

    system: str
    representation: str | None
    similarity: str | None
    tnorm: str | None
    metric: str
    samples: tuple[str, ...]
    values: tuple[float, ...]
    sweep: str | None = None
    sweep_value: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "system": self.system, "representation": self.representation, "similarity": self.similarity,
            "tnorm": self.tnorm, "metric": self.metric, "sweep": self.sweep, "sweep_value": self.sweep_value,
            "samples": list(self.samples), "values": [_number(v) for v in self.values],
        }


#: A sample's counts, beside its set metrics: |G|, |P| and |G ∩ P| summed over its classes
#: (sed_eval's Nref, Nsys and Ntp, for the event representations), FN = |G| − |G ∩ P|,
#: FP = |P| − |G ∩ P|, and, when the run has an error rate, its substitutions S (the
#: representation's, or min(FN, FP)), deletions FN − S and insertions FP − S.
COUNTS = ("n_ref", "n_sys", "tp", "fn", "fp")
ERROR_COUNTS = ("substitutions", "deletions", "insertions")


def sample_quantities(metrics: Sequence[str], errors: bool) -> list[str]:
    """What each sample is given a value of: its counts (with ``errors``, when the run has an
    error rate, its substitutions, deletions and insertions too), then the set ``metrics``."""
    return [*COUNTS, *(ERROR_COUNTS if errors else ()), *metrics]


#: How many of each system's worst samples the results keep the events of, for the HTML report.
WORST_SAMPLES = 5


def worst_samples(
    blocks: Sequence[SampleValues], lower_is_better: Collection[str], n: int = WORST_SAMPLES,
) -> dict[str, tuple[SampleValues, list[tuple[str, float]]]]:
    """Each system's ``n`` worst samples and their values, by the run's first set metric under
    its first combination (and sweep value): the lowest first, or the highest for a metric in
    ``lower_is_better`` (an error rate); undefined values are left out, and so are samples empty
    on both sides (nothing to get wrong, where ``zero_division`` would rank them worst); ties
    are kept in sample order. With the block of values they were ranked by."""

    def labels(block: SampleValues) -> tuple[Any, ...]:
        return block.system, block.representation, block.similarity, block.tnorm, block.sweep_value

    metrics = [b.metric for b in blocks if b.metric not in COUNTS + ERROR_COUNTS]
    if not metrics:
        return {}
    first = next(b for b in blocks if b.metric == metrics[0])
    counts = {labels(b) + (b.metric,): b.values for b in blocks if b.metric in ("n_ref", "n_sys")}
    out = {}
    for block in blocks:
        if labels(block)[1:] == labels(first)[1:] and block.metric == first.metric and block.system not in out:
            sign = -1.0 if block.metric in lower_is_better else 1.0
            ref, sys = (counts[labels(block) + (count,)] for count in ("n_ref", "n_sys"))
            kept = (i for i, v in enumerate(block.values) if not math.isnan(v) and ref[i] + sys[i] > 0)
            ranked = sorted(kept, key=lambda i: sign * block.values[i])
            out[block.system] = (block, [(block.samples[i], block.values[i]) for i in ranked[:n]])
    return out


#: An event on a timeline: its class, onset and offset.
Event = tuple[str, float, float]


@dataclass(frozen=True)
class Timeline:
    """The events of one of a system's worst samples (:func:`worst_samples`), on both sides,
    kept for the HTML report when the data is an event list (``per_sample: true``)."""

    system: str
    sample: str
    reference: tuple[Event, ...]
    prediction: tuple[Event, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"system": self.system, "sample": self.sample, "reference": [list(e) for e in self.reference],
                "prediction": [list(e) for e in self.prediction]}


def _timeline(record: Any, where: str) -> Timeline:
    if not isinstance(record, dict):
        raise DataError(f"{where}: not an object")
    got = _record(record, where, ("system", "sample"))
    sides = []
    for side in ("reference", "prediction"):
        events = record.get(side)
        if not isinstance(events, list) or not all(
            isinstance(e, list) and len(e) == 3 and isinstance(e[0], str)
            and all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in e[1:]) for e in events
        ):
            raise DataError(f"{where}.{side}: not a list of events [class, onset, offset]")
        sides.append(tuple((e[0], float(e[1]), float(e[2])) for e in events))
    return Timeline(got["system"], got["sample"], *sides)


def _sample_values(record: Any, where: str) -> SampleValues:
    if not isinstance(record, dict):
        raise DataError(f"{where}: not an object")
    got = _record(record, where, ("system", "representation", "similarity", "tnorm", "metric", "sweep", "sweep_value"))
    samples, values = record.get("samples"), record.get("values")
    if not isinstance(samples, list) or not all(isinstance(s, str) for s in samples):
        raise DataError(f"{where}.samples: not a list of sample ids (text)")
    if not isinstance(values, list) or len(values) != len(samples) or not all(
        v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values
    ):
        raise DataError(f"{where}.values: not a list of numbers (or null), one per sample")
    return SampleValues(**got, samples=tuple(samples), values=tuple(math.nan if v is None else float(v) for v in values))


@dataclass(frozen=True)
class Agreement:
    """Kendall's τ between the system rankings of two measures (each oriented so that higher is
    better), over ``n_systems`` systems."""

    measure_a: Measure
    measure_b: Measure
    tau: float
    p_value: float
    n_systems: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "measure_a": self.measure_a.label(), "measure_b": self.measure_b.label(),
            "tau": _number(self.tau), "p_value": _number(self.p_value), "n_systems": self.n_systems,
        }


@dataclass(repr=False)
class Results:
    """The rows of a run, with what produced them.

    ``provenance``: ``evalkit_version``, ``created`` (an ISO timestamp, the only field that
    differs between two runs of one config and seed), ``config_file`` and ``config_text`` (the
    YAML as written), and ``data``: for each file read, ``{"role", "system", "path", "sha256",
    "bytes"}``.
    """

    rows: list[Row]
    name: str = ""
    notes: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    comparisons: list[Comparison] = field(default_factory=list)
    agreement: list[Agreement] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    reports: list[str] = field(default_factory=list)  # the report files written (not a result)
    curves: list[CurveRow] = field(default_factory=list)
    lower_is_better: list[str] = field(default_factory=list)  # metrics that improve as they fall (a loss)
    sample_values: list[SampleValues] = field(default_factory=list)  # with `per_sample: true`
    timelines: list[Timeline] = field(default_factory=list)  # the events of each system's worst samples
    #: the ceiling of each measure of a representation using a T-norm: the reference scored
    #: against itself (system ``reference``), the most a perfect system reaches with that T-norm
    ceilings: list[Row] = field(default_factory=list)

    def worst_samples(self, n: int = WORST_SAMPLES) -> dict[str, tuple[SampleValues, list[tuple[str, float]]]]:
        """Each system's ``n`` worst samples (:func:`worst_samples`)."""
        return worst_samples(self.sample_values, self.lower_is_better, n)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "evalkit_version": __version__,
            "evalkit_results": RESULTS_FORMAT,
            "rows": [row.as_dict() for row in self.rows],
            "comparisons": [c.as_dict() for c in self.comparisons],
            "agreement": [a.as_dict() for a in self.agreement],
            "curves": [c.as_dict() for c in self.curves],
            "lower_is_better": self.lower_is_better,
            "per_sample": [v.as_dict() for v in self.sample_values],
            "timelines": [t.as_dict() for t in self.timelines],
            "ceilings": [row.as_dict() for row in self.ceilings],
            "notes": self.notes,
            "config": self.config,
            "provenance": self.provenance,
        }

    def to_json(self) -> str:
        """The JSON document of the json report, without writing a file."""
        document = self.as_dict()
        for key in ("rows", "comparisons", "agreement", "curves", "ceilings"):
            document[key] = [_text_of_infinities(record) for record in document[key]]
        return json.dumps(document, indent=2) + "\n"

    @classmethod
    def from_json(cls, source: str | os.PathLike[str]) -> Results:
        """The results a JSON document holds: ``source`` is the path of a json report (or of the
        output of ``evalkit run --format json``), or that text itself (a string starting with
        ``{``). Undefined numbers (null) are NaN, a confidence interval or sweep value that
        does not apply is None. A file that is not such a document is a
        :class:`~evalkit.errors.DataError` naming it."""
        from evalkit.loading import parse_json, reading

        if isinstance(source, str) and source.lstrip().startswith("{"):
            where, text = "results JSON text", source
        else:
            where = str(source)
            with reading(where):
                text = Path(source).read_text(encoding="utf-8-sig")
        return _document(parse_json(text, where), where)

    def to_parquet(self) -> dict[str, bytes]:
        """The Parquet files of the parquet report, by the part of their name after the report's
        (``""``: ``NAME.parquet``; ``"-curves"``: ``NAME-curves.parquet``): the rows, with the
        rest of the JSON document (name, notes, config, provenance) in the file's metadata, and
        one file each for the paired tests, the rank agreement, the curves (a line per curve, its
        points as lists) and the per-sample values (tidy, as :meth:`per_sample`). Columns are
        typed (text, float64, int64, lists of float64); null is what JSON's null is."""
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        document = {**self.as_dict(), "per_sample": []}
        records = {key: document.pop(key) for key in ("rows", "comparisons", "agreement", "curves", "per_sample")}
        files = {}
        for table, schema in _parquet_schemas(pa).items():
            if table == "per_sample":  # by column: a record per value would take ten times the memory
                blocks = self.sample_values
                columns: dict[str, Any] = {"sample": [s for b in blocks for s in b.samples]}
                for column in SAMPLE_COLUMNS[1:-1]:
                    columns[column] = [v for b in blocks for v in itertools.repeat(getattr(b, column), len(b.samples))]
                columns["value"] = [_number(v) for b in blocks for v in b.values]
                data = pa.Table.from_pydict(columns, schema=schema)
            else:
                data = pa.Table.from_pylist(records[table], schema=schema)
            if table == "rows":
                data = data.replace_schema_metadata({_PARQUET_KEY: json.dumps(document)})
            sink = pa.BufferOutputStream()
            pq.write_table(data, sink)
            files["" if table == "rows" else f"-{table}"] = sink.getvalue().to_pybytes()
        return files

    @classmethod
    def from_parquet(cls, source: str | os.PathLike[str]) -> Results:
        """The results of a parquet report: ``source`` is its ``NAME.parquet``, whose companions
        ``NAME-comparisons.parquet``, ``NAME-agreement.parquet``, ``NAME-curves.parquet`` and
        ``NAME-per_sample.parquet`` lie beside it. They read back equal to the JSON document's
        results (:meth:`from_json`); a file that is not such a report is a
        :class:`~evalkit.errors.DataError` naming it."""
        from evalkit.loading import parse_json, read_parquet

        path = Path(source)
        main = read_parquet(path, 64, "Python values")
        metadata = (main.schema.metadata or {}).get(_PARQUET_KEY.encode())
        if metadata is None:
            raise DataError(f"{path}: not an evalkit parquet report (its metadata has no `{_PARQUET_KEY}` key; "
                            "read the NAME.parquet of a parquet report, not one of its NAME-*.parquet companions)")
        document = parse_json(metadata.decode("utf-8"), f"{path} (its metadata)")
        if not isinstance(document, dict):
            raise DataError(f"{path}: its metadata `{_PARQUET_KEY}` is not a JSON object")
        document["rows"] = main.to_pylist()
        for table in ("comparisons", "agreement", "curves", "per_sample"):
            companion = path.with_name(f"{path.stem}-{table}{path.suffix}")
            if not companion.is_file():
                raise DataError(f"{path}: its companion {companion} is missing; copy the parquet report's files together")
            document[table] = read_parquet(companion, 64, "Python values").to_pylist()
        document["per_sample"] = _sample_blocks(document["per_sample"])
        return _document(document, str(path))

    def to_pandas(self, what: str = "rows") -> pd.DataFrame:
        """A DataFrame of the ``rows`` (the columns of the CSV report: ``class``, not
        ``class_``), or of the paired tests (``"comparisons"``) or the rank ``"agreement"``
        (measures as labels), one record per line as in the JSON report. A label that does not
        apply and an undefined number are NaN, which pandas' ``isna`` and ``dropna`` know;
        ``level`` is a float column for that reason."""
        import numpy as np
        import pandas as pd

        kinds: dict[str, tuple[Sequence[Any], Sequence[str]]] = {
            "rows": (self.rows, COLUMNS),
            "comparisons": (self.comparisons, _COMPARISON_COLUMNS),
            "agreement": (self.agreement, _AGREEMENT_COLUMNS),
        }
        if what not in kinds:
            raise ConfigError(f"to_pandas(what={what!r}): what is one of {', '.join(map(repr, kinds))}")
        records, columns = kinds[what]
        dicts = [r.as_dict() for r in records]
        text = pd.Series(["text"]).dtype  # what this pandas makes of text: object, or str from pandas 3
        data = {}
        for column in columns:
            kind, null = _FIELDS.get(column, (str, None))
            values = [np.nan if d[column] is None else d[column] for d in dicts]
            data[column] = pd.Series(values, dtype=text if kind is str else np.int64 if null is _NEVER else np.float64)
        return pd.DataFrame(data, columns=list(columns))

    def per_sample(self) -> pd.DataFrame:
        """Each sample's values, one per line: ``sample``, ``system``, the components, ``metric``
        (a set metric of the run, or a count: ``n_ref``, ``n_sys``, ``tp``, ``fn``, ``fp``, and
        ``substitutions``, ``deletions``, ``insertions`` with an error rate), the sweep and
        ``value``; typed as :meth:`to_pandas` types them. The mean of a metric's defined values
        over a system's samples is its ``samples`` average. A run computes them only when its
        config says ``per_sample: true``: results without them are a
        :class:`~evalkit.errors.ConfigError` saying so."""
        import pandas as pd

        if not self.sample_values:
            raise ConfigError(
                "per_sample(): these results hold no per-sample values; a run computes them when its config says "
                "`per_sample: true`"
            )
        text = pd.Series(["text"]).dtype
        blocks = self.sample_values
        sizes = [len(b.samples) for b in blocks]
        data: dict[str, Any] = {"sample": pd.Series([s for b in blocks for s in b.samples], dtype=text)}
        for column in SAMPLE_COLUMNS[1:-2]:  # a label that does not apply is NaN, as in to_pandas
            labels = np.array([np.nan if getattr(b, column) is None else getattr(b, column) for b in blocks], dtype=object)
            data[column] = pd.Series(np.repeat(labels, sizes), dtype=text)
        data["sweep_value"] = np.repeat(np.array([np.nan if b.sweep_value is None else b.sweep_value for b in blocks],
                                                 dtype=np.float64), sizes)
        data["value"] = np.concatenate([np.asarray(b.values, dtype=np.float64) for b in blocks])
        return pd.DataFrame(data, columns=list(SAMPLE_COLUMNS))

    def pivot(
        self, index: str | Sequence[str] | None = None, columns: str = "averaging", values: str = "value",
        where: Mapping[str, Any] | None = None,
    ) -> pd.DataFrame:
        """The rows as a table of numbers, ``index`` down and ``columns`` across (T-norms down,
        averagings across, as the terminal shows them), in the config's order. A row whose
        component does not apply (crisp has no T-norm) stays, under "—", where
        ``DataFrame.pivot_table`` would drop it for its NaN key; ``level`` and ``sweep_value``
        stay numbers (NaN). ``index`` defaults to ``system`` and every other label that varies;
        ``where`` keeps rows by label: ``{"metric": "f1"}``, ``{"tnorm": ["minimum", None]}``
        (None: does not apply). ``values`` may be ``ci_low`` or ``ci_high``. Two rows in one cell
        are an error naming the labels that tell them apart, never one value silently chosen."""
        import pandas as pd

        if values not in ("value", "ci_low", "ci_high"):
            raise ConfigError(f"pivot(): values {values!r} is not a value column; one of value, ci_low, ci_high")
        rows = _where(self.rows, where or {})
        across = _attribute(columns, "columns")
        if index is None:
            down = ["system", *(k for k in _ATTRIBUTES
                                if k not in ("system", across) and len({getattr(r, k) for r in rows}) > 1)]
        else:
            down = [_attribute(k, "index") for k in ([index] if isinstance(index, str) else index)]
            if not down or across in down:
                raise ConfigError(f"pivot(): index needs at least one label, and not the columns' {columns!r}")

        def number(row: Row) -> float:
            value = getattr(row, values)
            return math.nan if value is None else value

        header, cells, repeated = grid(rows, lambda r: tuple(getattr(r, k) for k in down), lambda r: getattr(r, across), number)
        if repeated:
            a = repeated[0][0]
            differ = [_name(k) for k in _ATTRIBUTES if any(getattr(x, k) != getattr(y, k) for x, y in repeated)]
            raise ConfigError(
                f"pivot(): several rows in one cell ({', '.join(f'{_name(k)} {_shown(getattr(a, k))}' for k in down)}, "
                f"{_name(across)} {_shown(getattr(a, across))}, and more): they differ in {', '.join(map(repr, differ))}; "
                "add those to index, or narrow the rows with where"
            )
        names = [_name(k) for k in down]
        keys = [tuple(_key(v, k) for v, k in zip(key, down)) for key in cells]
        labels = pd.MultiIndex.from_tuples(keys, names=names) if len(down) > 1 else pd.Index([k[0] for k in keys], name=names[0])
        return pd.DataFrame(
            [[line.get(c, math.nan) for c in header] for line in cells.values()],
            index=labels, columns=pd.Index([_key(c, across) for c in header], name=_name(across)), dtype=float,
        )

    def __repr__(self) -> str:
        """A few lines, not the thousands of characters of every row: what the results hold."""

        def listed(values: Sequence[str]) -> str:
            # A name with a control character shows as its Python literal, escaped.
            return shortened(", ".join(v if v.isprintable() else repr(v) for v in values), 200) if values else "none"

        systems = list(dict.fromkeys(r.system for r in self.rows))
        metrics = list(dict.fromkeys(r.metric for r in self.rows))
        lines = [
            f"Results{f' {self.name!r}' if self.name else ''}: {len(self.rows):,} rows",
            f"  systems ({len(systems)}): {listed(systems)}",
            f"  metrics ({len(metrics)}): {listed(metrics)}",
        ]
        statistics = [f"{len(self.comparisons):,} paired tests" if self.comparisons else "",
                      f"rank agreement of {len(self.agreement):,} pairs of measures" if self.agreement else ""]
        if any(statistics):
            lines.append("  statistics: " + ", ".join(filter(None, statistics)))
        if self.sample_values:
            samples = sum(len(v.samples) for v in self.sample_values)
            lines.append(f"  per-sample values: {samples:,} (per_sample())")
        lines += [f"  notes: {len(self.notes)}", f"  reports: {listed(self.reports)}"]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """A notebook shows the summary and the rows pivoted, as pandas shows a DataFrame."""
        import pandas as pd

        try:
            table = self.pivot()
        except ConfigError:  # rows that no label tells apart: the tidy rows, then
            table = self.to_pandas()
        shown = table.to_html(max_rows=pd.get_option("display.max_rows"), max_cols=pd.get_option("display.max_columns"))
        return f"<pre>{html.escape(repr(self))}</pre>\n{shown}"


Cell = TypeVar("Cell")
Column = TypeVar("Column", bound=Hashable)


def grid(
    rows: Sequence[Row], key: Callable[[Row], tuple], column: Callable[[Row], Column], cell: Callable[[Row], Cell],
) -> tuple[list[Column], dict[tuple, dict[Column, Cell]], list[tuple[Row, Row]]]:
    """The pivot of every table (the terminal's, the Markdown report's, :meth:`Results.pivot`):
    the columns, and the cells by row key, both in the order the rows first show them (the
    config's order, where sorting would put lukasiewicz before minimum); and the pairs of rows
    that fell in one cell (the later one is kept)."""
    columns = list(dict.fromkeys(column(r) for r in rows))
    cells: dict[tuple, dict[Column, Cell]] = {}
    placed: dict[tuple, Row] = {}
    repeated = []
    for r in rows:
        k, c = key(r), column(r)
        if c in cells.setdefault(k, {}):
            repeated.append((placed[(k, c)], r))
        placed[(k, c)] = r
        cells[k][c] = cell(r)
    return columns, cells, repeated


def _where(rows: Sequence[Row], where: Mapping[str, Any]) -> list[Row]:
    """The rows whose labels have the values ``where`` asks for; a value no row has is an error
    naming the values there are (a typo would otherwise give an empty table)."""
    kept = list(rows)
    for name, wanted in where.items():
        attribute = _attribute(name, "where")
        allowed = set(wanted) if isinstance(wanted, Collection) and not isinstance(wanted, str) else {wanted}
        narrowed = [r for r in kept if getattr(r, attribute) in allowed]
        if not narrowed:
            present = ", ".join(dict.fromkeys(_shown(getattr(r, attribute)) for r in kept))
            raise ConfigError(
                f"pivot(): no row has {_name(attribute)} {wanted!r}"
                + (" among those where selects" if len(kept) < len(rows) else "")
                + f"; {_name(attribute)}: {present or 'no rows'}"
            )
        kept = narrowed
    return kept


def _attribute(name: str, what: str) -> str:
    """The Row attribute of a report column (``class`` is ``class_``); an unknown one is an error."""
    if name in ("class", "class_"):
        return "class_"
    if name not in LABELS:
        close = difflib.get_close_matches(name, LABELS, 1)
        raise ConfigError(
            f"pivot(): {what} {name!r} is not a label" + (f"; did you mean {close[0]!r}?" if close else "")
            + f" Labels: {', '.join(LABELS)}"
        )
    return name


def _name(attribute: str) -> str:
    return "class" if attribute == "class_" else attribute


def _key(value: Any, attribute: str) -> Any:
    """A label as a DataFrame shows it: "does not apply" is :data:`NOT_APPLICABLE`, or NaN for
    the labels that are numbers."""
    if value is None:
        return math.nan if attribute in ("level", "sweep_value") else NOT_APPLICABLE
    return value


def _shown(value: Any) -> str:
    """A label in a message."""
    return NOT_APPLICABLE if value is None else f"{value:g}" if isinstance(value, float) else str(value)


_COMPARISON_COLUMNS = tuple(f.name for f in fields(Comparison))
_AGREEMENT_COLUMNS = ("measure_a", "measure_b", "tau", "p_value", "n_systems")
_CURVE_COLUMNS = ("system", "metric", "class", "sweep_value", "x_label", "y_label", "steps", "x", "y")
#: The metadata key of a parquet report's rows file that holds the rest of the JSON document.
_PARQUET_KEY = "evalkit"


def _parquet_schemas(pa: Any) -> dict[str, Any]:
    """The typed columns of each table of a parquet report (by :data:`_FIELDS`, as from_json reads them)."""

    def typed(columns: Sequence[str]) -> Any:
        kinds = {float: pa.float64(), int: pa.int64(), str: pa.string()}
        return pa.schema([(c, kinds[_FIELDS.get(c, (str, None))[0]]) for c in columns])

    points = pa.list_(pa.float64())
    curves = [(c, points if c in ("x", "y") else pa.bool_() if c == "steps" else typed([c]).field(0).type)
              for c in _CURVE_COLUMNS]
    return {"rows": typed(COLUMNS), "comparisons": typed(_COMPARISON_COLUMNS), "agreement": typed(_AGREEMENT_COLUMNS),
            "curves": pa.schema(curves), "per_sample": typed(SAMPLE_COLUMNS)}


def _sample_blocks(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tidy per-sample records as the JSON document's blocks: consecutive records of one system,
    components, metric and sweep value make one block."""
    blocks: list[dict[str, Any]] = []
    for record in records:
        labels = {k: v for k, v in record.items() if k not in ("sample", "value")}
        if not blocks or any(blocks[-1][k] != v for k, v in labels.items()):
            blocks.append({**labels, "samples": [], "values": []})
        blocks[-1]["samples"].append(record.get("sample"))  # a record without one: an error naming the block
        blocks[-1]["values"].append(record.get("value"))
    return blocks


def _document(document: Any, where: str) -> Results:
    """Results from a parsed JSON document, every field checked: a wrong one is an error naming
    the document and the field (``rows[3].value``), never a half-read result."""
    if not isinstance(document, dict) or not isinstance(document.get("rows"), list) or not (
        "evalkit_results" in document or "evalkit_version" in document
    ):
        raise DataError(
            f"{where}: not an evalkit results document (a JSON object with `rows` and `evalkit_results`, "
            "as the json report or `evalkit run --format json` write it)"
        )
    layout = document.get("evalkit_results", 1)
    if layout != RESULTS_FORMAT:
        newer = isinstance(layout, int) and not isinstance(layout, bool) and layout > RESULTS_FORMAT
        raise DataError(
            f"{where}: results format {shortened(repr(layout), 40)}"
            + (f", written by evalkit {shortened(str(document.get('evalkit_version')), 40)}" if newer else "")
            + f"; this evalkit ({__version__}) reads format {RESULTS_FORMAT}"
            + (": upgrade evalkit to read it" if newer else "")
        )

    def records(key: str) -> list[Any]:
        value = document.get(key, [])
        if not isinstance(value, list):
            raise DataError(f"{where}: `{key}` is not a list")
        return value

    rows = [Row(**_record(r, f"{where}: rows[{i}]", COLUMNS)) for i, r in enumerate(records("rows"))]
    ceilings = [Row(**_record(r, f"{where}: ceilings[{i}]", COLUMNS)) for i, r in enumerate(records("ceilings"))]
    comparisons = [
        Comparison(**_record(_interval_optional(c), f"{where}: comparisons[{i}]", _COMPARISON_COLUMNS))
        for i, c in enumerate(records("comparisons"))
    ]
    # Agreement names its measures by label: they are the measures of the rows with that label
    # (two measures with one label, which only components named alike could make, read as the first).
    measures: dict[str, Measure] = {}
    for measure in (row.measure for row in rows):
        if measure.single:
            measures.setdefault(measure.label(), measure)
    agreement = []
    for i, a in enumerate(records("agreement")):
        place = f"{where}: agreement[{i}]"
        got = _record(a, place, _AGREEMENT_COLUMNS)
        for key in ("measure_a", "measure_b"):
            if got[key] not in measures:
                raise DataError(f"{place}.{key}: {shortened(repr(got[key]), 80)} is the measure of no row")
            got[key] = measures[got[key]]
        agreement.append(Agreement(**got))
    notes = records("notes")
    if not all(isinstance(n, str) for n in notes):
        raise DataError(f"{where}: `notes` holds something other than text")
    name, config, provenance = document.get("name", ""), document.get("config", {}), document.get("provenance", {})
    if not isinstance(name, str) or not isinstance(config, dict) or not isinstance(provenance, dict):
        raise DataError(f"{where}: `name` is not text, or `config` or `provenance` not an object")
    curves = [_curve_row(c, f"{where}: curves[{i}]") for i, c in enumerate(records("curves"))]
    lower = records("lower_is_better")
    if not all(isinstance(m, str) for m in lower):
        raise DataError(f"{where}: `lower_is_better` holds something other than metric names")
    sample_values = [_sample_values(v, f"{where}: per_sample[{i}]") for i, v in enumerate(records("per_sample"))]
    timelines = [_timeline(t, f"{where}: timelines[{i}]") for i, t in enumerate(records("timelines"))]
    return Results(rows, name, notes, config, comparisons, agreement, provenance, curves=curves, lower_is_better=lower,
                   sample_values=sample_values, timelines=timelines, ceilings=ceilings)


def _interval_optional(record: Any) -> Any:
    """A comparison record with ``ci_low`` and ``ci_high`` null where it has none (results written
    before comparisons carried the difference's interval)."""
    return {"ci_low": None, "ci_high": None, **record} if isinstance(record, dict) else record


def _record(record: Any, where: str, columns: Sequence[str]) -> dict[str, Any]:
    """The fields of one JSON record as Python values (see :data:`_FIELDS`), keyed by attribute."""
    if not isinstance(record, dict):
        raise DataError(f"{where}: not an object")
    out = {}
    for column in columns:
        if column not in record:
            raise DataError(f"{where}: no `{column}`")
        value, (kind, null) = record[column], _FIELDS.get(column, (str, None))
        if kind is float:
            value = _read_number(value)
        if value is None and null is not _NEVER:
            value = null
        elif kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = float(value)
        elif not isinstance(value, kind) or isinstance(value, bool):
            expected = {float: "a number", int: "a whole number", str: "text"}[kind]
            expected += " or null" if null is not _NEVER else ""
            raise DataError(f"{where}.{column}: {shortened(json.dumps(value), 80)} where {expected} belongs")
        out["class_" if column == "class" else column] = value
    return out
