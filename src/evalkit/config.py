"""The run configuration: pydantic models for the YAML file, validated in two phases.

Phase 1 (here) checks the structure. Phase 2 (:meth:`evalkit.registry.Registry.create`) resolves
each component name and validates its parameters with the plugin's own ``Params`` model. Errors of
both phases name the file, line and key.
"""

from __future__ import annotations

import difflib
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evalkit.errors import ConfigError, shortened

if TYPE_CHECKING:  # PyYAML is imported when a file is read: a config given as a mapping needs none of it
    from evalkit.yamlfile import YamlDocument


def _named(spec: str | dict[str, Any]) -> str | dict[str, Any]:
    """A component mapping says which component it is: every later step reads its ``name``."""
    if isinstance(spec, dict) and not isinstance(spec.get("name"), str):
        raise ValueError('a component given as a mapping needs a `name`, e.g. {"name": "hamacher", "p": 0.5}')
    return spec


#: A component: ``"minimum"`` or ``{name: hamacher, p: 0.5}``.
Spec = Annotated[str | dict[str, Any], AfterValidator(_named)]
#: Any component field takes one spec or a list of them; a list is a comparison axis.
Specs = Spec | list[Spec]
#: Data: a path relative to the config file, inline rows, ``{classes, values, ids}``, or (from
#: Python) a numpy array or LabelMatrix, passed through as is: checked by evalkit.sources.
DataSource = Annotated[Any, Field(description="a path, inline rows, or {values, classes, ids}")]


class _Strict(BaseModel):
    # JSON mode keeps infinities and NaN as floats (evalkit.results.config_record writes them as text)
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")


class Runs(_Strict):
    """Several runs of one system (e.g. repeated trainings), scored on the same reference."""

    runs: list[DataSource] = Field(
        min_length=1, description="one data source per run (one run is scored like a plain source)"
    )


class DataConfig(_Strict):
    reference: DataSource = Field(description="the reference (ground truth) labels")
    systems: dict[str, Runs | DataSource] = Field(
        min_length=1,
        description="system name -> its predictions, or {runs: [...]} for several runs of it "
        "(reported as the jackknife mean with its confidence interval across runs)",
    )
    weights: DataSource | None = Field(
        None, description="one weight per reference sample (scikit-learn's sample_weight: a weight of k counts "
        "a sample k times): a CSV of id and weight, or a list; matched to the reference by id",
    )
    classes: list[str] | None = Field(None, description="evaluate only these classes, in this order")
    clip: bool = Field(False, description="clip predictions outside [0, 1] instead of failing")
    missing: Literal["error", "empty"] = Field(
        "error", description="a sample on one side only: an error, or empty where it is absent (a reference "
        "sample absent from a system is an empty prediction; a sample only systems list, as a sparse reference "
        "omits its empty segments, is an empty reference sample)"
    )
    stream: bool = Field(
        False, description="read the files a chunk of rows at a time, side by side, so memory does not grow with "
        "the data; both sides must list the samples in the same order",
    )

    @field_validator("classes")
    @classmethod
    def _some_classes(cls, classes: list[str] | None) -> list[str] | None:
        """No class selected would score nothing: every ratio 0/0, or a representation's empty table."""
        if classes == []:
            raise ValueError("`classes: []` selects no class, so nothing would be scored; name at least one, or "
                             "leave `classes:` out to evaluate every class")
        return classes

    @field_validator("systems")
    @classmethod
    def _runs(cls, systems: dict[str, Any]) -> dict[str, Any]:
        """A mapping with ``runs`` that is no valid :class:`Runs` would pass as inline data (a
        source may be anything) and fail only when the data is read."""
        for name, given in systems.items():
            if isinstance(given, dict) and "runs" in given:
                raise ValueError(f"system {name!r}: `runs:` takes a non-empty list of data sources and no other key")
        return systems


class BootstrapConfig(_Strict):
    resamples: int = Field(1000, ge=10, description="how many bootstrap resamples of the samples")
    method: Literal["percentile", "bca", "poisson"] = Field(
        "bca", description="bias-corrected and accelerated (bca; covers better for skewed ratios "
        "such as a precision near 1) or percentile intervals (poisson: percentile, the name of earlier releases)",
    )
    seed: int = Field(0, ge=0, description="seed of the resampling, so that reports are reproducible")
    keyed: bool = Field(
        True, description="draw each sample's resample counts (Poisson) and jackknife group from its id alone, so "
        "memory does not grow with the samples and any split of the data (chunks, Dask partitions) gives the same "
        "numbers; false: multinomial resamples drawn over all the samples at once, as evalkit 0.1 did "
        "(in memory only; holds resamples x samples counts)",
    )


class TestConfig(_Strict):
    method: Literal["permutation", "bootstrap"] = Field(
        "permutation", description="paired permutation test (swap the systems per sample) or paired bootstrap"
    )
    resamples: int = Field(1000, ge=10, description="permutations or resamples; p-values are at least 1/(1 + resamples)")
    baseline: str | None = Field(None, description="the system every other is compared with (default: the first)")
    seed: int = Field(0, ge=0, description="seed of the permutations or resamples")
    keyed: bool = Field(
        True, description="draw each sample's swaps (permutation) or Poisson resample counts (bootstrap) from its "
        "id alone, so memory does not grow with the samples and any split of the data gives the same numbers; "
        "false: drawn over all the samples at once, as evalkit 0.1 did (in memory only)",
    )


class StatisticsConfig(_Strict):
    level: float = Field(0.95, gt=0, lt=1, description="confidence level of every interval")
    bootstrap: BootstrapConfig | None = Field(None, description="bootstrap confidence intervals over samples")
    test: TestConfig | None = Field(None, description="paired tests of each system against the baseline")
    agreement: bool = Field(False, description="Kendall's τ between the system rankings of every pair of measures")


class EngineConfig(_Strict):
    name: Literal["local", "dask"] = Field(
        "local", description="where the data is scored: in this process (local), or on a Dask cluster in "
        "partitions of rows (dask: the `evalkit[dask]` extra; files sorted by id, as for `stream: true`)",
    )
    address: str | None = Field(
        None, description="the Dask scheduler's address (tcp://host:8786); none starts a LocalCluster on this machine",
    )
    workers: int | None = Field(
        None, ge=1, le=1024, description="the LocalCluster's worker processes (default: Dask's choice for this machine)",
    )
    partition_rows: int = Field(
        1_000_000, ge=1, description="rows per partition: each is read, aligned and reduced to sums by one Dask task",
    )
    timeout: float = Field(
        30, gt=0, le=86_400, description="seconds to wait for the scheduler at `address` to answer, and for a worker "
        "while the cluster has none; past it the run stops with one error",
    )

    @model_validator(mode="before")
    @classmethod
    def _named(cls, value: Any) -> Any:
        """``engine: dask`` is ``engine: {name: dask}``."""
        return {"name": value} if isinstance(value, str) else value


#: A sweep value, or an end or step of a range: NaN or infinity would make no run (or no end).
Finite = Annotated[float, Field(allow_inf_nan=False)]


class RangeConfig(_Strict):
    start: Finite
    stop: Finite = Field(description="included when it falls on a step")
    step: Finite = Field(gt=0)

    def count(self) -> float:
        """How many values :meth:`values` gives, in floats, so a huge range is measured (not
        built) before anything else: ``stop: 1e300`` is 1e300 values, or infinity."""
        steps = (self.stop - self.start) / self.step + 1e-9
        return 0 if steps < 0 else steps if math.isinf(steps) else math.floor(steps) + 1

    def values(self) -> list[float]:
        return [round(self.start + i * self.step, 12) for i in range(int(self.count()))]


class SweepConfig(_Strict):
    vary: str = Field(
        description="offset (add the value to the predictions, clipped to [0, 1]) or FIELD.PARAMETER "
        "of a component field, e.g. tnorm.p or representation.threshold"
    )
    values: list[Finite] | RangeConfig = Field(description="a list, or {start, stop, step}")
    samples: list[str] | None = Field(
        None, description="offset only: the sample ids whose predictions are offset (default: all)"
    )

    @field_validator("vary")
    @classmethod
    def _vary(cls, value: str) -> str:
        fields = ("representation", "tnorm", "similarity", "averaging", "metrics")
        if value != "offset" and (value.count(".") != 1 or value.split(".")[0] not in fields):
            raise ValueError(f"must be offset or FIELD.PARAMETER with FIELD one of {', '.join(fields)}, e.g. tnorm.p")
        return value

    def count(self) -> float:
        """How many values the sweep has, a range's counted without building its list."""
        return self.values.count() if isinstance(self.values, RangeConfig) else len(self.values)

    def value_list(self) -> list[float]:
        return self.values.values() if isinstance(self.values, RangeConfig) else list(self.values)


class ReportConfig(_Strict):
    formats: list[str] = Field(["markdown"], min_length=1, description="report writer names")
    out: str = Field(
        description="the report path without suffix, relative to the config file (`~` is your home); "
        "a folder (`.`, `results/`, or one that exists) gets the reports named after the run's `name`. "
        "`validate` checks that it can be written",
    )


#: The default averagings (typed, so that the default checks against ``Specs``).
_AVERAGINGS: list[Spec] = ["micro", "macro"]


class RunConfig(_Strict):
    name: str = Field("", description="a label for the run, shown in reports")
    data: DataConfig = Field(description="the reference and the systems to score")
    representation: Specs = Field("fuzzy", description="how a sample becomes a set: what |G|, |P| and |G ∩ P| are")
    tnorm: Specs = Field("minimum", description="the fuzzy intersection, for representations that use one")
    similarity: Specs | None = Field(None, description="the item similarity, for representations that use one")
    averaging: Specs = Field(
        _AVERAGINGS, description="how the cardinality table is reduced to one value (or one per class)"
    )
    metrics: list[Spec] = Field(
        ["precision", "recall", "f1"], min_length=1,
        description="set metrics (ratios of cardinalities) and data metrics (kld, exact_match_ratio, map, omap)",
    )
    zero_division: float | Literal["nan"] = Field(
        0.0, description="value of an undefined ratio (0/0): 0, 1 or nan, as in scikit-learn"
    )
    statistics: StatisticsConfig | None = Field(
        None, description="confidence intervals, paired tests between systems, rank agreement"
    )
    sweep: SweepConfig | None = Field(None, description="run the config once per value of one varied quantity")
    per_sample: bool = Field(
        False, description="keep each sample's values (its counts and set metrics, per system and combination): "
        "`Results.per_sample()`, the json, csv and parquet reports, the worst files in the html report. Off by "
        "default: samples x systems x combinations x quantities values, which `validate` estimates",
    )
    report: ReportConfig | None = Field(None, description="report files to write; none by default")
    engine: EngineConfig = Field(
        default_factory=lambda: EngineConfig.model_validate({}),
        description="where the data is scored: `local` (the default) or `dask`",
    )

    @field_validator("zero_division", mode="before")
    @classmethod
    def _warn(cls, value: Any) -> Any:
        if value == "warn":
            raise ValueError(
                "'warn' is scikit-learn's setting (0 with a warning); the functions of evalkit.metrics "
                "take it. Here, give the value of 0/0: 0, 1 or nan"
            )
        return value

    @field_validator("zero_division")
    @classmethod
    def _zero_division(cls, value: float | str) -> float:
        value = math.nan if value == "nan" else float(value)
        if not (math.isnan(value) or value in (0.0, 1.0)):
            raise ValueError("must be 0, 1 or nan")
        return value


def as_list(specs: Specs | None) -> list[Spec]:
    if specs is None:
        return []
    return specs if isinstance(specs, list) else [specs]


class LoadedConfig:
    """A validated config with the file it came from (for relative paths and error places)."""

    def __init__(self, config: RunConfig, document: YamlDocument | None, base: Path) -> None:
        self.config, self.document, self.base = config, document, base
        #: top-level keys given on the command line instead, with how (``{"engine": "--engine dask"}``)
        self.overrides: dict[str, str] = {}

    def where(self, *path: Any) -> str:
        if path and path[0] in self.overrides:
            return self.overrides[path[0]]
        return self.document.where(path) if self.document else ".".join(map(str, path))


def load_config(
    source: str | Path | dict[str, Any] | RunConfig, where: str = "config", keywords: bool = False,
) -> LoadedConfig:
    """Validate a config file, mapping, or model; paths in it are relative to the file. ``where``
    names a mapping's origin in messages (``Evaluator()``); ``keywords``: the mapping holds a
    Python call's keyword arguments (its data settings under ``data``, as a config has them), so
    messages name the arguments (``missing``, not ``data.missing``)."""
    if isinstance(source, RunConfig):
        return LoadedConfig(source, None, Path.cwd())
    if isinstance(source, dict):
        document, base = None, Path.cwd()
        data = source
    else:
        from evalkit.yamlfile import load_yaml

        path = Path(source)
        document, base = load_yaml(path), path.resolve().parent
        data = document.data
        if not isinstance(data, dict):
            raise ConfigError(
                f"{path}: a config is a mapping with at least `data:` (reference and systems); "
                f"this file holds {type(data).__name__}"
            )
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, document, data, where, keywords)) from None
    return LoadedConfig(config, document, base)


#: Problems a config error lists, one per line.
_MAX_PROBLEMS = 10


def _describe(
    exc: ValidationError, document: YamlDocument | None, data: Any, where: str = "config", keywords: bool = False,
) -> str:
    """One line per wrong key. Of a union's branches (``str | list``), those that failed only on
    the type are left out when another fits the input's shape (its error is deeper, or its own
    validator's); the rest are merged into one line ("a valid string or a valid list")."""
    located = [(*_locate(err, data), err) for err in exc.errors()]
    fitting = {keys[:at] for keys, at, err in located if at is not None and (len(keys) > at or err["type"] == "value_error")}
    problems: dict[tuple[str, str], list[str]] = {}
    inputs: dict[tuple[str, str], Any] = {}
    for loc, at, err in located:
        if at is not None and len(loc) == at and err["type"] != "value_error" and loc in fitting:
            continue  # this branch's type does not fit, another's does
        place = document.where(loc) if document else where
        key = ".".join(map(str, loc[1:] if keywords and loc[:1] == ("data",) else loc)) or "(top level)"
        if err["type"] == "extra_forbidden":
            allowed = _allowed_keys(loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            text = f"unknown key {key!r}" + (f". Did you mean {close[0]!r}?" if close else ".")
            text += f" Allowed here: {', '.join(allowed)}" if allowed else ""
            if loc[-1] in ("loader", "path") and loc[:-1] == ("data",):
                text += (f". `{loc[-1]}` belongs to one source, written as a mapping: "
                         "`reference: {path: FILE, loader: NAME}`, and the same under `systems:`")
        elif err["type"] == "missing":
            text = f"missing required key {key!r}"
        else:
            text = f"{key}: {err['msg'].removeprefix('Input should be ').removeprefix('Value error, ')}"
            problems.setdefault((place, key), []).append(text)
            inputs[(place, key)] = err.get("input")
            continue
        problems[(place, text)] = [text]
    lines = []
    for (place, key), texts in problems.items():
        if len(texts) > 1:  # the branches of a union: "a valid string or a valid list"
            texts = [f"{key}: should be " + " or ".join(t.split(": ", 1)[1] for t in texts)]
        got = f" (got {shortened(repr(inputs[(place, key)]), 100)})" if (place, key) in inputs else ""
        lines.append(f"{place}: {texts[0]}{got}")
    if len(lines) > _MAX_PROBLEMS:  # a list of 10,000 wrong values: the first say what is wrong
        lines[_MAX_PROBLEMS:] = [f"… and {len(lines) - _MAX_PROBLEMS:,} more problems of the same config"]
    return "\n".join(lines)


def _locate(err: Any, data: Any) -> tuple[tuple[Any, ...], int | None]:
    """The keys and indices of an error's location, without the union branches pydantic puts
    in it (``str``, ``list[...]``, ``RangeConfig``), and how many keys precede the first branch
    (None without one). A part is a key where the input has it, so a user's key named ``list``
    or ``a[b]`` stays a key; a missing key is the last part, absent by definition."""
    loc = err["loc"]
    node, keys, branch = data, [], None
    for index, part in enumerate(loc):
        missing = err["type"] == "missing" and index == len(loc) - 1
        is_item = isinstance(node, (list, tuple)) and isinstance(part, int) and -len(node) <= part < len(node)
        if missing or is_item or (isinstance(node, dict) and part in node):
            keys.append(part)
            node = None if missing else node[part]
        elif branch is None:
            branch = len(keys)
    return tuple(keys), branch


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    model: type[BaseModel] = RunConfig
    for part in loc:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        annotation = getattr(field, "annotation", None)
        candidates = [a for a in getattr(annotation, "__args__", (annotation,)) if isinstance(a, type)]
        nested = [a for a in candidates if issubclass(a, BaseModel)]
        if not nested:
            return []
        model = nested[0]
    return list(model.model_fields)
