"""A bad config ends in one message with its place, and exit status 1 (2 for a usage error),
never in a traceback: every config that once crashed evalkit (found by fuzzing, issue 12) is a
regression test here, and so is each limit on what a config may make evalkit do (aliases,
nesting, sweep sizes, resamples), which must refuse a hostile config before it costs memory:
the bound is on traced allocations, which do not depend on the machine's speed or load.
The fuzz suite that looks for new ones is tests/test_fuzz_configs.py.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import yaml
from allocation import allocation_peak
from click.testing import CliRunner
from test_fuzz_configs import QUICKSTART, base_config

import evalkit.api
from evalkit.cli import MESSAGE_LIMIT, main
from evalkit.discovery import default_registry
from evalkit.errors import ConfigError

TINY = str(QUICKSTART / "tiny.csv")
PEAK_LIMIT = 32 * 2**20  # bytes


def config_text(extra: str = "", replace: tuple[str, str] | None = None) -> str:
    """The fuzz suite's matrix config without statistics and sweep (so that ``extra`` may add
    them), as YAML, with ``replace`` applied to the text."""
    config = base_config()
    del config["statistics"], config["sweep"]
    text = yaml.safe_dump(config, sort_keys=False)
    if replace is not None:
        assert replace[0] in text, replace[0]
        text = text.replace(*replace)
    return text + extra


BILLION_LAUGHS = "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 9) if previous else ', '.join(['lol'] * 9)}]\n"
    for previous, name in zip([None, *"abcdefgh"], "abcdefghi")
)

#: name -> (the config: YAML text, or bytes; a part of the message both commands must give)
REPRODUCERS = {
    "not UTF-8": (b"name: caf\xe9\n" + config_text().encode(), "1:10: not UTF-8 text: byte 0xe9 at offset 9"),
    "a list as a key": (config_text("[1, 2]: 3\n"), "keys must be text, but this key is a list"),
    "a mapping as a key": (config_text("{a: 1}: 3\n"), "keys must be text, but this key is a mapping"),
    "a merge key": (config_text("x: &x {a: 1}\ny:\n  <<: *x\n"), "merge keys (`<<`) are not supported"),
    "an alias of itself": (config_text("x: &a [*a]\n"), "holds an alias of itself"),
    "nesting 1,000 levels deep": (config_text("x: " + "[" * 1000 + "]" * 1000 + "\n"), "nested more than 100 levels deep"),
    "a component without a name": (config_text("representation: [fuzzy, {threshold: 0.5}]\n"), "needs a `name`"),
    "an empty component": (config_text("representation: {}\n"), "representation: a component given as a mapping needs a `name`"),
    "an unknown key named list": (config_text("list: 1\n"), "unknown key 'list'. Allowed here: name, data"),
    "an unknown key with a bracket": (config_text("'a[b': 1\n"), "unknown key 'a[b'"),
    "an unknown key in a sweep range": (
        config_text("sweep: {vary: tnorm.p, values: {start: 0, stop: 1, step: 1, list: 2}}\n"),
        "unknown key 'sweep.values.list'. Allowed here: start, stop, step",
    ),
    "!!bool maybe": (config_text("statistics: {agreement: !!bool maybe}\n"), "'maybe' is not a valid !!bool value"),
    '!!float "abc"': (config_text('zero_division: !!float "abc"\n'), "'abc' is not a valid !!float value"),
    "an integer of 5,000 digits": (
        config_text("statistics: {bootstrap: {resamples: " + "1" * 5000 + "}}\n"), "is not a valid !!int value",
    ),
    "a data path over 255 characters": (
        config_text(replace=(TINY, "x" * 300 + ".csv")), "cannot use the data path 'xxx",
    ),
    "true: in inline data": (
        config_text(replace=(TINY, "{true: 1, values: [[1]]}")), "`true` is read as !!bool; quote it ('true':)",
    ),
    "null: in inline data": (config_text(replace=(TINY, "{null: 1, values: [[1]]}")), "`null` is read as !!null"),
    "a number as a key in inline data": (config_text(replace=(TINY, "{1: 1, values: [[1]]}")), "`1` is read as !!int"),
    "representation: []": (config_text("representation: []\n"), "`representation:` lists no component"),
    "a sweep without values": (config_text("sweep: {vary: tnorm.p, values: []}\n"), "the sweep has no values"),
    "a sweep range starting at NaN": (
        config_text("sweep: {vary: tnorm.p, values: {start: .nan, stop: 1, step: 0.5}}\n"),
        "sweep.values.start: a finite number (got nan)",
    ),
    "a sweep range stopping at infinity": (
        config_text("sweep: {vary: tnorm.p, values: {start: 0, stop: .inf, step: 0.5}}\n"),
        "sweep.values.stop: a finite number (got inf)",
    ),
    "a sweep range with a step of NaN": (
        config_text("sweep: {vary: tnorm.p, values: {start: 0, stop: 1, step: .nan}}\n"),
        "sweep.values.step: a finite number (got nan)",
    ),
    "a sweep value of NaN": (config_text("sweep: {vary: tnorm.p, values: [0.5, .nan]}\n"), "sweep.values.1: a finite number"),
    "runs: []": (
        config_text(replace=(TINY, "{runs: []}")), "system 'tiny': `runs:` takes a non-empty list of data sources",
    ),
    "a negative seed": (
        config_text("statistics: {bootstrap: {seed: -1}}\n"), "statistics.bootstrap.seed: greater than or equal to 0",
    ),
    "fbeta with beta = 1e308": (
        config_text(replace=("- f1", "- {name: fbeta, beta: 1.0e+308}")), "parameter 'beta': Input should be less than or equal",
    ),
    "a component path with a NUL": (
        config_text("similarity: {name: ontology, ontology: \"a\\0b.json\"}\n"), "a path cannot contain a NUL character",
    ),
    "a component path over 255 bytes": (
        config_text("similarity: {name: word2vec, model: " + "m" * 300 + ".txt}\n"), "over 255 bytes",
    ),
    # bounded resources: each is refused before any work, with the limit in the message
    "a billion laughs": (BILLION_LAUGHS + config_text(), "aliases of this config expand to more than 100,000 values"),
    "a sweep of 1e300 values": (
        config_text("sweep: {vary: tnorm.p, values: {start: 0, stop: 1e300, step: 1}}\n"),
        "the sweep has 1.00e+300 values, more than the 10,000 a sweep may have (each is a whole run); raise `step`",
    ),
    "a sweep of infinitely many values": (
        config_text("sweep: {vary: tnorm.p, values: {start: -1e308, stop: 1e308, step: 1}}\n"),
        "the sweep has infinitely many values",
    ),
    "resamples of 400 digits": (
        config_text("statistics: {bootstrap: {resamples: 1" + "0" * 400 + "}}\n"),
        "1.00e+400 resamples x 301 samples",
    ),
}


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module", autouse=True)
def registry():
    """The plugins load once, before any allocation below is traced."""
    return default_registry()


@pytest.mark.parametrize("name", list(REPRODUCERS))
def test_a_bad_config_gives_one_message_fast(name, tmp_path):
    config, expected = REPRODUCERS[name]
    path = tmp_path / "config.yaml"
    path.write_bytes(config if isinstance(config, bytes) else config.encode("utf-8"))
    with allocation_peak() as peak:
        checked, ran = invoke("validate", str(path)), invoke("run", str(path), "-q")
    # the worst case, a billion laughs, peaks at 15 MiB; unguarded it took 2.26 GB
    assert peak.bytes < PEAK_LIMIT, f"refused only after allocating {peak.mib:.0f} MiB"
    for result in (checked, ran):
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
        assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    assert checked.stderr.startswith(f"error: {path}:"), checked.stderr  # its place, file:line:col
    assert expected in checked.stderr, checked.stderr
    assert len(checked.stderr) < 1000
    assert same_but_free_memory(ran.output) == same_but_free_memory(checked.output)


def same_but_free_memory(text: str) -> str:
    """A message without the memory the machine had free when it was written ("22.4 GiB is
    available"), which other processes change between two calls."""
    return re.sub(r"[\d.,]+ [KMGTP]?i?B is available", "… is available", text)


def test_a_config_error_lists_the_first_ten_problems(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(config_text("sweep: {vary: tnorm.p, values: [" + ", ".join(["a"] * 500) + "]}\n"), encoding="utf-8")
    lines = invoke("validate", str(path)).stderr.splitlines()
    assert len(lines) == 11 and "sweep.values.9: a valid number" in lines[9]
    assert lines[10] == "… and 490 more problems of the same config"


def test_out_slash_ends_cleanly(tmp_path):
    """``out: /`` is a folder (the reports are named after the run); `validate` writes nothing
    but its probe. Whether / is writable depends on the user."""
    path = tmp_path / "config.yaml"
    path.write_text(config_text("report: {formats: [markdown], out: /}\n"), encoding="utf-8")
    result = invoke("validate", str(path))
    assert result.exit_code in (0, 1) and "Traceback" not in result.output, result.output
    assert result.exit_code == 0 or "cannot write report files in /" in result.stderr, result.stderr


def test_inline_data_beyond_the_float_range_is_a_data_error(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(config_text(replace=(TINY, "[[1" + "0" * 400 + "]]")), encoding="utf-8")
    result = invoke("run", str(path), "-q")
    assert result.exit_code == 1 and "internal error" not in result.stderr, result.stderr


def test_aliases_in_moderation_still_work(tmp_path):
    """The limits refuse expansion, not aliases: a file named once and used twice is fine, and a
    quoted key that reads like a bool is a name."""
    dwsnet = str(QUICKSTART / "dwsnet.csv")
    text = config_text(replace=(dwsnet, f"&file {dwsnet}")).replace(TINY, "*file").replace("tiny:", "'true':")
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    done = invoke("run", str(path), "-q", "--format", "csv")
    assert done.exit_code == 0, done.output
    assert "\ntrue," in done.stdout


def test_a_sweep_multiplies_the_rows_in_the_memory_check(tmp_path, monkeypatch):
    monkeypatch.setattr("evalkit.budget.available_memory", lambda: 2**20)
    path = tmp_path / "config.yaml"
    path.write_text(config_text("sweep: {vary: tnorm.p, values: {start: 0, stop: 1999, step: 1}}\n"), encoding="utf-8")
    result = invoke("validate", str(path))
    assert result.exit_code == 1
    assert "result rows (2,000 sweep values x 2 systems x 2 measures)" in result.stderr
    assert "lower the number of sweep values (`sweep.values`)" in result.stderr
    line = path.read_text().split("\n").index("sweep: {vary: tnorm.p, values: {start: 0, stop: 1999, step: 1}}") + 1
    assert result.stderr.startswith(f"error: {path}:{line}:"), result.stderr  # at the sweep's values


def test_the_python_api_checks_component_specs_as_a_config_does():
    with pytest.raises(ConfigError, match="needs a `name`"):
        evalkit.evaluate([[1.0]], [[0.5]], tnorm={"p": 0.5})


# ------------------------------------------------------------------ the CLI's last line of defence


@pytest.fixture
def failing_plan(monkeypatch):
    """`evalkit validate` raising what it is given, as a bug or an interrupt would."""

    def use(error: BaseException) -> None:
        def plan(*args, **kwargs):
            raise error

        monkeypatch.setattr(evalkit.api, "plan", plan)

    return use


def test_an_internal_error_is_one_line_asking_for_a_report(failing_plan, monkeypatch):
    monkeypatch.delenv("EVALKIT_DEBUG", raising=False)
    failing_plan(RuntimeError("the disk caught fire"))
    result = invoke("validate", "config.yaml")
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.stderr == (
        "internal error: RuntimeError: the disk caught fire — this is a bug in evalkit; please report it with the "
        "command you ran (run again with --debug or EVALKIT_DEBUG=1 for the traceback)\n"
    )


@pytest.mark.parametrize("how", ["option", "environment"])
def test_debug_shows_the_traceback(failing_plan, how):
    failing_plan(RuntimeError("the disk caught fire"))
    if how == "option":
        result = CliRunner().invoke(main, ["--debug", "validate", "config.yaml"])
    else:
        result = CliRunner(env={"EVALKIT_DEBUG": "1"}).invoke(main, ["validate", "config.yaml"])
    assert isinstance(result.exception, RuntimeError), "the exception propagates: Python prints its traceback"


def test_an_interrupt_exits_130(failing_plan):
    failing_plan(KeyboardInterrupt())
    result = invoke("validate", "config.yaml")
    assert (result.exit_code, result.stderr) == (130, "interrupted\n")


def test_a_huge_message_is_cut(failing_plan):
    failing_plan(ConfigError("x" * 40_000 + "\x1b[2J"))
    result = invoke("validate", "config.yaml")
    assert result.exit_code == 1
    assert result.stderr == f"error: {'x' * MESSAGE_LIMIT}… ({40_004 - MESSAGE_LIMIT:,} more characters)\n"


def test_control_characters_in_a_message_are_shown_not_sent(failing_plan):
    failing_plan(ConfigError("unknown system '\x1b[31mred'\nsecond line"))
    result = invoke("validate", "config.yaml")
    assert result.stderr == "error: unknown system '\\x1b[31mred'\nsecond line\n"


def test_a_usage_error_exits_2():
    result = invoke("run")
    assert result.exit_code == 2 and "Missing argument 'CONFIG'" in result.output


def test_running_out_of_memory_is_one_line_not_an_internal_error(failing_plan, monkeypatch):
    """Where no part of evalkit named what it was building, the line names the innermost
    function of evalkit's that was running (a real MemoryError: numpy asked for 7.28 TiB)."""
    monkeypatch.delenv("EVALKIT_DEBUG", raising=False)
    try:
        np.ones((1_000_000, 1_000_000))
    except MemoryError as exc:
        failing_plan(exc)
    result = invoke("validate", "config.yaml")
    assert result.exit_code == 1 and "internal error" not in result.stderr
    assert re.fullmatch(r"error: ran out of memory in evalkit\.cli\.validate; [0-9.]+ [KMGT]iB is available.*: lower "
                        r"the data or the settings it grows with, or raise the limit\n", result.stderr), result.stderr
