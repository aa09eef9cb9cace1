"""A run's settings, resolved once by the plan: plain frozen values that phase 2 reads instead of
the pydantic config, and that travel to Dask workers as they are (small, picklable, equal by
value)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalkit.config import RunConfig, Runs
from evalkit.errors import ConfigError


@dataclass(frozen=True)
class Bootstrap:
    """Bootstrap intervals: ``method`` percentile or bca; ``keyed``: each sample's Poisson counts
    and jackknife group follow from its id alone (else multinomial resamples over all samples)."""

    method: str
    resamples: int
    seed: int
    keyed: bool


@dataclass(frozen=True)
class Test:
    """Paired tests against ``baseline``: ``method`` permutation or bootstrap; ``keyed``: the
    swaps or resample counts of a sample follow from its id, as the Poisson bootstrap's do."""

    method: str
    resamples: int
    seed: int
    baseline: str
    keyed: bool


@dataclass(frozen=True)
class Statistics:
    level: float
    bootstrap: Bootstrap | None
    test: Test | None
    agreement: bool


@dataclass(frozen=True)
class Engine:
    name: str
    address: str | None
    workers: int | None
    partition_rows: int
    timeout: float


@dataclass(frozen=True)
class Sweep:
    """What a sweep varies; for an offset sweep, the samples it offsets (all by default) and
    where they are named, for messages."""

    vary: str
    samples: tuple[str, ...] | None
    where: str


@dataclass(frozen=True)
class Settings:
    """Everything about a run's data handling and statistics that is not a component: missing
    samples, clipping, the classes selected, streaming, the statistics, the sweep, the engine."""

    missing: str
    clip: bool
    classes: tuple[str, ...] | None
    stream: bool
    statistics: Statistics | None
    sweep: Sweep | None
    engine: Engine
    per_sample: bool = False  # keep each sample's values (`per_sample: true`)

    @property
    def partitioned(self) -> bool:
        """Whether the data is reduced in parts (streamed, or on Dask) rather than whole."""
        return self.stream or self.engine.name == "dask"


def settings_of(config: RunConfig, baseline: str | None, where: Any) -> Settings:
    """The settings of a checked config; ``baseline`` is the test's resolved baseline.

    Draws are keyed by sample id unless the config says ``keyed: false``, which only a run that
    holds all its data at once can honour: a streamed or Dask run reduces its data in parts, and
    only keyed draws add up across them."""
    data, stats, engine = config.data, config.statistics, config.engine
    partitioned = data.stream or engine.name == "dask"
    statistics = None
    if stats is not None:
        for key, section in (("bootstrap", stats.bootstrap), ("test", stats.test)):
            if section is not None and not section.keyed and partitioned:
                raise ConfigError(
                    f"{where('statistics', key, 'keyed')}: {'a streamed run' if data.stream else 'a Dask run'} reduces "
                    "its data in parts, so its draws are keyed by sample id; leave out `keyed: false`"
                )
        bootstrap = None
        if stats.bootstrap is not None:
            boot = stats.bootstrap
            if boot.method == "poisson" and not boot.keyed:
                raise ConfigError(
                    f"{where('statistics', 'bootstrap', 'keyed')}: `method: poisson` draws keyed Poisson counts; "
                    "for multinomial resamples write `method: percentile` with `keyed: false`"
                )
            method = "percentile" if boot.method == "poisson" else boot.method
            bootstrap = Bootstrap(method, boot.resamples, boot.seed, boot.keyed)
        test = None
        if stats.test is not None and baseline is not None:
            test = Test(stats.test.method, stats.test.resamples, stats.test.seed, baseline, stats.test.keyed)
        statistics = Statistics(stats.level, bootstrap, test, stats.agreement)
    if config.per_sample:
        _check_per_sample(config, where)
    sweep = config.sweep
    return Settings(
        data.missing, data.clip, None if data.classes is None else tuple(data.classes), data.stream, statistics,
        None if sweep is None else Sweep(
            sweep.vary, None if sweep.samples is None else tuple(sweep.samples), where("sweep", "samples"),
        ),
        Engine(engine.name, engine.address, engine.workers, engine.partition_rows, engine.timeout), config.per_sample,
    )


def _check_per_sample(config: RunConfig, where: Any) -> None:
    """A system of several runs has a value per run, not one per sample. (Every engine keeps
    them: they grow with samples x quantities, which the plan sizes against the memory.)"""
    for system, given in config.data.systems.items():
        if isinstance(given, Runs) and len(given.runs) > 1:
            raise ConfigError(
                f"{where('per_sample')}: system {system!r} has {len(given.runs)} runs, so a sample has a value per run; "
                "per-sample values are kept for systems of one run: score its runs as systems of their own"
            )
