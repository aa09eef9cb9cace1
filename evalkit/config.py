"""The run configuration: pydantic models for the YAML file, validated in two phases.

Phase 1 (here) checks the structure. Phase 2 (:meth:`evalkit.registry.Registry.create`) resolves
each component name and validates its parameters with the plugin's own ``Params`` model. Errors of
both phases name the file, line and key.
"""

from __future__ import annotations

import difflib
import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evalkit.errors import ConfigError
from evalkit.yamlfile import YamlDocument, load_yaml

#: A component: ``"minimum"`` or ``{name: hamacher, p: 0.5}``.
Spec = str | dict[str, Any]
#: Any component field takes one spec or a list of them; a list is a comparison axis.
Specs = Spec | list[Spec]
#: Data: a path relative to the config file, inline rows, ``{classes, values, ids}``, or (from
#: Python) a numpy array or LabelMatrix, passed through as is: checked by evalkit.sources.
DataSource = Annotated[Any, Field(description="a path, inline rows, or {values, classes, ids}")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


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
    classes: list[str] | None = Field(None, description="evaluate only these classes, in this order")
    clip: bool = Field(False, description="clip predictions outside [0, 1] instead of failing")
    missing: Literal["error", "empty"] = Field(
        "error", description="a reference sample absent from a system: an error, or an empty prediction"
    )


class BootstrapConfig(_Strict):
    resamples: int = Field(1000, ge=10, description="how many bootstrap resamples of the samples")
    method: Literal["percentile", "bca"] = Field(
        "bca", description="bias-corrected and accelerated (bca; covers better for skewed ratios "
        "such as a precision near 1) or percentile intervals",
    )
    seed: int = Field(0, description="seed of the resampling, so that reports are reproducible")


class TestConfig(_Strict):
    method: Literal["permutation", "bootstrap"] = Field(
        "permutation", description="paired permutation test (swap the systems per sample) or paired bootstrap"
    )
    resamples: int = Field(1000, ge=10, description="permutations or resamples; p-values are at least 1/(1 + resamples)")
    baseline: str | None = Field(None, description="the system every other is compared with (default: the first)")
    seed: int = Field(0, description="seed of the permutations or resamples")


class StatisticsConfig(_Strict):
    level: float = Field(0.95, gt=0, lt=1, description="confidence level of every interval")
    bootstrap: BootstrapConfig | None = Field(None, description="bootstrap confidence intervals over samples")
    test: TestConfig | None = Field(None, description="paired tests of each system against the baseline")
    agreement: bool = Field(False, description="Kendall's τ between the system rankings of every pair of measures")


class RangeConfig(_Strict):
    start: float
    stop: float = Field(description="included when it falls on a step")
    step: float = Field(gt=0)

    def values(self) -> list[float]:
        count = int(math.floor((self.stop - self.start) / self.step + 1e-9)) + 1
        return [round(self.start + i * self.step, 12) for i in range(max(count, 0))]


class SweepConfig(_Strict):
    vary: str = Field(
        description="offset (add the value to the predictions, clipped to [0, 1]) or FIELD.PARAMETER "
        "of a component field, e.g. tnorm.p or representation.threshold"
    )
    values: list[float] | RangeConfig = Field(description="a list, or {start, stop, step}")
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
        description="set metrics (ratios of cardinalities) and data metrics (kld, map, omap)",
    )
    zero_division: float | Literal["nan"] = Field(
        0.0, description="value of an undefined ratio (0/0): 0, 1 or nan, as in scikit-learn"
    )
    statistics: StatisticsConfig | None = Field(
        None, description="confidence intervals, paired tests between systems, rank agreement"
    )
    sweep: SweepConfig | None = Field(None, description="run the config once per value of one varied quantity")
    report: ReportConfig | None = Field(None, description="report files to write; none by default")

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

    def where(self, *path: Any) -> str:
        return self.document.where(path) if self.document else ".".join(map(str, path))


def load_config(source: str | Path | dict[str, Any] | RunConfig) -> LoadedConfig:
    """Validate a config file, mapping, or model; paths in it are relative to the file."""
    if isinstance(source, RunConfig):
        return LoadedConfig(source, None, Path.cwd())
    if isinstance(source, dict):
        document, base = None, Path.cwd()
        data = source
    else:
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
        raise ConfigError(_describe(exc, document)) from None
    return LoadedConfig(config, document, base)


def _describe(exc: ValidationError, document: YamlDocument | None) -> str:
    """One line per wrong key; a union's per-branch errors are merged into one."""
    problems: dict[tuple[str, str], list[str]] = {}
    inputs: dict[tuple[str, str], Any] = {}
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not _is_union_branch(p))
        place = document.where(loc) if document else "config"
        key = ".".join(map(str, loc)) or "(top level)"
        if err["type"] == "extra_forbidden":
            allowed = _allowed_keys(loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            text = f"unknown key {key!r}" + (f". Did you mean {close[0]!r}?" if close else "")
            text += f" Allowed here: {', '.join(allowed)}" if allowed else ""
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
        lines.append(f"{place}: {texts[0]}" + (f" (got {inputs[(place, key)]!r})" if (place, key) in inputs else ""))
    return "\n".join(lines)


def _is_union_branch(part: Any) -> bool:
    return isinstance(part, str) and ("[" in part or part in ("str", "list", "dict", "float", "literal"))


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
