"""The usual mistakes get a message that names their likely fix (issue 28, item 4), not only
what went wrong: a class or a file name that differs only in letter case, a YAML line indented
wrongly, an event list with an unknown label column, a misspelt component in ``evaluate()``."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from in_process import evalkit_cli

import evalkit
from evalkit.errors import ConfigError, DataError, UnknownComponentError

REFERENCE = "id,music,speech\na,1,0\nb,0,1\n"
CONFIG = """\
data:
  reference: ref.csv
  systems:
    s: {system}
representation: {representation}
averaging: micro
metrics: [f1]
"""


def config(tmp_path: Path, system: str = "sys.csv", representation: str = "fuzzy") -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(CONFIG.format(system=system, representation=representation), encoding="utf-8")
    return path


def test_a_class_differing_only_in_case_is_named_with_its_rename(tmp_path):
    (tmp_path / "ref.csv").write_text(REFERENCE)
    system = tmp_path / "sys.csv"
    system.write_text("id,Music,speech\na,1,0\nb,0,1\n")
    with pytest.raises(DataError) as raised:
        evalkit.run(config(tmp_path))
    assert str(raised.value).endswith(
        f"missing 'music'; not in the reference 'Music'. It differs only in case, and classes are matched "
        f"exactly: rename 'Music' to 'music' in {system}"
    )


def test_other_class_differences_still_suggest_selecting_common_classes():
    with pytest.raises(DataError, match=r"missing 'b'; not in the reference 'c'\. Select common classes with `classes="):
        evalkit.evaluate(pd.DataFrame(np.eye(2), columns=["a", "b"]), pd.DataFrame(np.eye(2), columns=["a", "c"]))


def test_a_data_file_differing_only_in_case_is_named(tmp_path):
    (tmp_path / "ref.csv").write_text(REFERENCE)
    (tmp_path / "Sys.csv").write_text(REFERENCE)
    path = config(tmp_path, "sys.csv")
    checked = evalkit_cli("validate", path)
    assert checked.returncode == 1
    assert checked.stderr == (
        f"error: {path}:4:8: no such data file 'sys.csv' (looked for {tmp_path / 'sys.csv'}); "
        f"{tmp_path / 'Sys.csv'} differs only in letter case: name it as it is written on disk\n"
    )


def test_a_file_with_no_case_twin_gets_the_plain_message(tmp_path):
    (tmp_path / "ref.csv").write_text(REFERENCE)
    path = config(tmp_path, "other.csv")
    assert evalkit_cli("validate", path).stderr.endswith(f"(looked for {tmp_path / 'other.csv'})\n")


def test_a_config_file_differing_only_in_case_is_named(tmp_path):
    (tmp_path / "Run.yaml").write_text("{}")
    checked = evalkit_cli("validate", tmp_path / "run.yaml")
    assert checked.stderr == (f"error: {tmp_path / 'run.yaml'}: no such config file; {tmp_path / 'Run.yaml'} "
                              "differs only in letter case: name it as it is written on disk\n")


@pytest.mark.parametrize("text,line,column", [
    ("data:\n  reference: a.csv\nmetrics: f1\n representation: fuzzy\n", 4, 16),  # indented one space too far
    ("data:\n  systems:\n    s: b.csv\n   classes: [a]\n", 4, 4),  # between two levels
])
def test_a_misindented_yaml_line_is_shown_with_a_caret(tmp_path, text, line, column):
    path = tmp_path / "run.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        evalkit.api.plan(path)
    message = str(raised.value)
    assert message.startswith(f"{path}:{line}:{column}: malformed YAML: ")
    assert f"this is usually the indentation of line {line}" in message
    written = text.splitlines()[line - 1]
    # the line as an editor numbers it, and a caret under the column the parser stopped at
    assert message.endswith(f"\n{line:>5} | {written}\n      | {' ' * (column - 1)}^")


def test_a_yaml_error_past_the_last_line_points_at_its_end(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("metrics: [f1, f2\n")
    with pytest.raises(ConfigError) as raised:
        evalkit.api.plan(path)
    assert "indentation" not in str(raised.value)  # an unclosed bracket is no indentation
    assert str(raised.value).endswith("\n    1 | metrics: [f1, f2\n      | " + " " * len("metrics: [f1, f2") + "^")


def test_an_event_list_with_an_unknown_label_column_suggests_the_events_loader(tmp_path):
    """The message the events loader gives once named, without having to name it."""
    events = tmp_path / "ev.tsv"
    events.write_text("filename\tonset\toffset\tsound\na.wav\t0.0\t1.0\tdog\n")
    (tmp_path / "ref.csv").write_text("")
    path = config(tmp_path, "ev.tsv", "segments")
    path.write_text(path.read_text().replace("ref.csv", "ev.tsv"))
    named = tmp_path / "named.yaml"
    named.write_text(path.read_text().replace("s: ev.tsv", "s: {path: ev.tsv, loader: events}")
                     .replace("reference: ev.tsv", "reference: {path: ev.tsv, loader: events}"))
    with pytest.raises(DataError) as by_name:
        evalkit.run(named)
    with pytest.raises(DataError) as unnamed:
        evalkit.api.plan(path)
    assert "expected filename|file|audio_filename, onset|event_onset, offset|event_offset, event_label|label" in str(
        by_name.value)
    assert str(unnamed.value) == (
        f"{path}:2:14: none of the loaders of '.tsv' files for items data (csv_items, events) recognises ev.tsv; it "
        f"looks like 'events' data, and that loader says: {by_name.value} (name it to read the file with it: "
        "{path: ev.tsv, loader: events})"
    )


def test_a_loader_key_under_data_says_where_it_belongs(tmp_path):
    path = config(tmp_path)
    path.write_text(path.read_text().replace("  reference: ref.csv\n", "  reference: ref.csv\n  loader: csv\n"))
    with pytest.raises(ConfigError, match=re.escape(
        "unknown key 'data.loader'. Allowed here: reference, systems, weights, classes, clip, missing, stream. "
        "`loader` belongs to one source, written as a mapping: `reference: {path: FILE, loader: NAME}`"
    )):
        evalkit.api.plan(path)


def test_evaluate_names_itself_in_its_errors():
    with pytest.raises(UnknownComponentError, match=r"^evaluate\(\): tnorm: unknown tnorm 'minimun'\. Did you mean 'minimum'\?"):
        evalkit.evaluate(np.eye(2), np.eye(2), tnorm="minimun")
    with pytest.raises(UnknownComponentError, match=r"^Evaluator\(\): tnorm: unknown tnorm 'minimun'"):
        evalkit.Evaluator(tnorm="minimun")


def test_an_evaluators_results_print_without_an_empty_name():
    evaluator = evalkit.Evaluator()
    evaluator.update(np.eye(2), np.eye(2))
    assert repr(evaluator.compute()).splitlines()[0] == "Results: 3 rows"


def test_a_private_keyword_is_not_offered_as_a_suggestion():
    with pytest.raises(TypeError) as raised:
        evalkit.Evaluator(calller="x")
    assert "_caller" not in str(raised.value)


def test_a_tab_in_the_indentation_is_named(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text("data:\n\treference: a.csv\n")
    with pytest.raises(ConfigError, match=r"YAML indents with spaces, never tabs: replace the tab on line 2 with spaces"):
        evalkit.api.plan(path)


def test_the_caret_of_a_long_line_points_at_the_place_in_the_part_shown(tmp_path):
    path = tmp_path / "run.yaml"
    written = "metrics: [" + ", ".join(["f1"] * 80) + ", {name: f1: x}]"
    path.write_text(written + "\n")
    with pytest.raises(ConfigError) as raised:
        evalkit.api.plan(path)
    *_, shown, caret = str(raised.value).splitlines()
    column = written.index("f1: x") + 2  # the colon the parser stops at
    assert raised.value.args[0].startswith(f"{path}:1:{column + 1}:")
    assert len(shown) < 140 and shown[caret.index("^")] == written[column] == ":"


def test_an_unknown_kind_reads_as_a_sentence():
    done = evalkit_cli("plugins", "--kind", "nonsense")
    assert done.stderr.startswith("error: --kind 'nonsense' is no kind of component. The kinds: ")
