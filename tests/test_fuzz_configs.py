"""The config fuzz suite: whatever a config holds, ``evalkit validate`` and ``evalkit run`` end
in success or one short error message (exit status 0, 1 or 2), never a traceback, never
unbounded work (a memory budget per command).

A valid config (the quickstart's structure, with statistics and a sweep; or one reading the
bundled sound-event lists, for the item representations and their loaders) is mutated at the YAML
text level (characters inserted, deleted or replaced; hostile tokens such as ``!!float "x"``,
``&a [*a]``, deep brackets, huge numbers, NaN, control characters, long strings) and at the
structure level (any value replaced by a value of another type, unknown keys added, keys
dropped), and both commands run in-process on the result.

The example budget is fixed, so the default run stays quick: the ``ci`` profile (the default)
runs 120 examples in all with ``EVALKIT_TESTS=all`` (as CI does) and 40 without, derandomised, so
that CI is reproducible. Run the ``long`` profile
locally to search further (a few minutes)::

    EVALKIT_FUZZ=long python -m pytest tests/test_fuzz_configs.py

A failure prints the mutated config; add it to tests/test_config_robustness.py as a
regression test once it is fixed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from allocation import allocation_peak
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from run_depth import examples

from evalkit.cli import main

DATA = Path(__file__).resolve().parent.parent / "configs" / "data"
QUICKSTART, EVENTS = DATA / "quickstart", DATA / "events"
#: Bytes each command may allocate on one example (traced, so the same on every machine): a
#: valid example peaks near 20 MiB; a config that got past a limit would allocate far more.
MEMORY_BUDGET = 256 * 2**20
#: Characters of stderr a failing command may print: one message, cut at 2,000 characters.
ERROR_BUDGET = 4096

_COMMON = {
    "deadline": None,  # the memory budget bounds the work; a clock would fail by chance
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
PROFILES = {
    "ci": settings(max_examples=examples(60), derandomize=True, **_COMMON),
    "long": settings(max_examples=1500, **_COMMON),
}
FUZZ = os.environ.get("EVALKIT_FUZZ", "ci")
if FUZZ not in PROFILES:
    raise pytest.UsageError(f"EVALKIT_FUZZ={FUZZ!r}: choose one of {', '.join(PROFILES)}")
PROFILE = PROFILES[FUZZ]


def base_config(kind: str = "matrix", out: Path | None = None) -> dict[str, Any]:
    """A valid config of membership matrices or of event lists (``kind`` "items") that runs in
    a few hundredths of a second; ``out`` adds a report there."""
    config: dict[str, Any] = {
        "name": "fuzz",
        "data": {
            "reference": str(QUICKSTART / "reference.csv"),
            "systems": {"dwsnet": str(QUICKSTART / "dwsnet.csv"), "tiny": str(QUICKSTART / "tiny.csv")},
        },
        "tnorm": ["minimum", {"name": "hamacher", "p": 0.5}],
        "averaging": ["micro"],
        "metrics": ["f1"],
        "statistics": {"bootstrap": {"resamples": 10}, "test": {"resamples": 10}},
        "sweep": {"vary": "tnorm.p", "values": [0.5, 2]},
    }
    if kind == "items":
        config.update({
            "data": {"reference": str(EVENTS / "reference.tsv"),
                     "systems": {"good": str(EVENTS / "good.tsv"), "poor": str(EVENTS / "poor.tsv")}},
            "representation": ["exact_match", {"name": "threshold_match", "threshold": 0.8}, "soft_cardinality"],
            "similarity": "segment_overlap",
            "tnorm": "minimum",
            "sweep": {"vary": "representation.threshold", "values": [0.5, 0.8]},
        })
    if out is not None:
        config["report"] = {"formats": ["markdown", "csv"], "out": str(out)}
    return config


#: Tokens that broke, or could break, a parser, a constructor or a check behind them.
HOSTILE = [
    '!!float "x"', "!!bool maybe", '!!int "1.5"', '!!timestamp "x"', "!!binary AAAA", "!!set {a}",
    "!!python/object:os.system {}", "&a [*a]", "*nowhere", "&a", "<<: *a", "? [1, 2]\n: 3", "[1, 2]: 3",
    "[", "]", "{", "}", ":", "- ", ",", "#", "|", ">-", "---\n", "...\n", "%YAML 1.1\n", "\t", '"', "'",
    "[" * 150 + "]" * 150, "{a: " * 120 + "1" + "}" * 120, "[" * 1000, "- " * 200,
    "1e300", "-1e300", "1e-320", ".nan", ".inf", "-.inf", "1" * 5000, "0x1F", "1_000", "2001-12-14",
    "null", "~", "true", "no", "''", "[]", "{}", "-1", "0", "10000000000000000000000",
    "\x00", "\x07", "\x1b[31m", "\u202e", "\ufeff", "\r\n", "é", "\U0001f642", "[/]", "[bold]x",
    "x" * 300, "/" + "x" * 300, "../" * 40, "=cmd()", "<script>",
]
#: Names for unknown keys, among them the ones that broke the error formatter.
KEYS = ["list", "str", "dict[str,any]", "a[b", "[", "RangeConfig", "literal['nan']", "", " ", "\x1b", "é" * 50]
#: Words evalkit knows (components, keys, values), so that replaced values and added keys reach
#: past the first check. Not `report` or `out`: a random report path would write anywhere.
WORDS = [
    "micro", "macro", "none", "samples", "weighted", "f1", "fbeta", "kld", "map", "omap", "precision", "jaccard",
    "crisp", "fuzzy", "fuzzy_pr", "soft_cardinality", "segments", "threshold_match", "hamacher", "product", "yager",
    "frank", "dombi", "levenshtein", "exact", "segment_overlap", "word2vec", "ontology", "matrix", "csv", "npy",
    "maestro", "events", "json", "markdown", "offset", "tnorm.p", "representation.threshold", "permutation",
    "bootstrap", "bca", "nan", "dwsnet", "tiny", str(QUICKSTART / "tiny.csv"), str(QUICKSTART), "name", "values",
    "classes", "ids", "runs", "path", "loader", "items", "p", "beta", "threshold", "resamples", "start", "stop", "step",
    "vary", "baseline", "method", "seed", "level", "clip", "missing", "empty", "agreement",
]

tokens = st.one_of(st.sampled_from(HOSTILE), st.sampled_from(WORDS), st.text(max_size=12))
# Positions are drawn unbounded and taken modulo the current length, so that they shrink well.
position = st.integers(min_value=0, max_value=10**6)
kinds = st.sampled_from(["matrix", "items"])


@st.composite
def mutated_text(draw: st.DrawFn) -> str:
    """A base config's YAML with one to three character-level edits."""
    text = yaml.safe_dump(base_config(draw(kinds)), sort_keys=False)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(position) % (len(text) + 1)
        cut = draw(st.integers(0, 40))
        edit = draw(st.sampled_from(["insert", "delete", "replace"]))
        if edit == "insert":
            text = text[:at] + draw(tokens) + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + cut:]
        else:
            text = text[:at] + draw(tokens) + text[at + max(cut, 1):]
    return text


values = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.sampled_from([10**30, -(10**30), 10**400]),
        st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30), st.sampled_from(HOSTILE),
        st.sampled_from(WORDS),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), st.sampled_from(KEYS + WORDS)), inner, max_size=4),
    ),
    max_leaves=12,
)


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every value in a config, the config itself first."""
    found = [path]
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        found += _paths(value, (*path, key))
    return found


def _at(config: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        config = config[key]
    return config


@st.composite
def mutated_structure(draw: st.DrawFn, out: Path) -> Any:
    """A base config (with a report under ``out``) with one to three values replaced by
    values of any type, unknown keys added or keys dropped. The report's `out:` is never
    replaced: a fuzzer's random path would write reports anywhere."""
    config: Any = base_config(draw(kinds), out)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(config)))
        parent = _at(config, path[:-1]) if path else None
        edit = draw(st.sampled_from(["replace", "add", "drop"]))
        if edit == "replace" and path not in (("report",), ("report", "out")):
            if path:
                parent[path[-1]] = draw(values)
            else:
                config = draw(values)
        elif edit == "add" and isinstance(_at(config, path), dict):
            key = draw(st.one_of(st.sampled_from(KEYS + WORDS), st.text(max_size=10)))
            if key != "report":
                _at(config, path)[key] = draw(values)
        elif edit == "drop" and isinstance(parent, (dict, list)):
            del parent[path[-1]]
    return config


def check_commands(config: Path) -> None:
    """Both commands end in success or one short message, within the memory budget; a config that
    `validate` rejects is rejected by `run` with the same message."""
    outputs = {}
    for args in (["validate", str(config)], ["run", str(config), "-q"]):
        with allocation_peak() as peak:
            result = CliRunner().invoke(main, args, catch_exceptions=True)
        shown = f"evalkit {args[0]}: exit {result.exit_code}\n{result.output[-3000:]}"
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            f"{shown}\nan exception escaped: {result.exception!r}"
        )
        assert result.exit_code in (0, 1, 2), shown
        assert "Traceback" not in result.output, shown
        assert "internal error" not in result.output, shown
        if result.exit_code:
            assert len(result.stderr) <= ERROR_BUDGET, f"{len(result.stderr):,} characters of error output\n{shown}"
        assert peak.bytes < MEMORY_BUDGET, f"{peak.mib:.0f} MiB allocated\n{shown}"
        outputs[args[0]] = result
    if outputs["validate"].exit_code:
        assert outputs["run"].exit_code == outputs["validate"].exit_code
        assert outputs["run"].output == outputs["validate"].output


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@PROFILE
@given(text=mutated_text(), encoding=st.sampled_from(["utf-8", "utf-8", "utf-8", "latin-1", "utf-16"]))
def test_mutated_yaml_text_never_crashes(folder: Path, text: str, encoding: str) -> None:
    config = folder / "text.yaml"
    config.write_bytes(text.encode(encoding, errors="replace"))
    check_commands(config)


@PROFILE
@given(data=st.data())
def test_mutated_structure_never_crashes(folder: Path, data: st.DataObject) -> None:
    mutated = data.draw(mutated_structure(folder / "out" / "fuzz"))
    config = folder / "structure.yaml"
    config.write_text(yaml.safe_dump(mutated, allow_unicode=True), encoding="utf-8")
    check_commands(config)


def test_the_base_configs_run(folder: Path) -> None:
    """The mutations start from configs that work: a failure below is the mutation's doing."""
    for kind in ("matrix", "items"):
        for out in (None, folder / "out" / "base"):
            path = folder / f"base-{kind}.yaml"
            path.write_text(yaml.safe_dump(base_config(kind, out)), encoding="utf-8")
            result = CliRunner().invoke(main, ["run", str(path), "-q"])
            assert result.exit_code == 0, (kind, out, result.output)
