"""Bad input: one clear message that says what is wrong, where, and how to fix it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from in_process import evalkit_cli

import evalkit
from evalkit.errors import ConfigError, DataError

GOOD = np.array([[0.2, 0.9], [0.6, 0.1]])


def write_config(tmp_path: Path, body: str, **files: str) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    path = tmp_path / "run.yaml"
    path.write_text(textwrap.dedent(body))
    return path


CSV = """\
id,speech,birds
a,0.1,0.9
b,0.7,0.0
"""


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """A real ``python -m evalkit``: its exit status and streams (the other tests run it in this process)."""
    return subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True)


@pytest.mark.parametrize("bad,what", [(np.nan, "NaN or infinite"), (np.inf, "NaN or infinite")])
def test_nan_and_inf_name_sample_and_class(bad, what):
    pred = GOOD.copy()
    pred[1, 0] = bad
    with pytest.raises(DataError, match=rf"prediction: 1 value\(s\) are {what}, first at row 2, class '0'"):
        evalkit.evaluate(GOOD, pred)


def test_out_of_range_names_cell_and_suggests_clip(tmp_path):
    path = write_config(
        tmp_path,
        """\
        data:
          reference: ref.csv
          systems: {mse: mse.csv}
        """,
        **{"ref.csv": CSV, "mse.csv": "id,speech,birds\na,1.2,0.9\nb,0.7,-0.1\n"},
    )
    with pytest.raises(DataError) as info:
        evalkit.run(path)
    message = str(info.value)
    assert "mse.csv: 2 value(s) outside [0, 1], first 1.2 at sample 'a' (row 1), class 'speech'" in message
    assert "sample 'b' (row 2), class 'birds'" in message
    assert "clip: true" in message


def test_clip_true_clips_and_the_results_say_so(tmp_path):
    path = write_config(
        tmp_path,
        """\
        data:
          reference: ref.csv
          systems: {mse: mse.csv}
          clip: true
        metrics: [precision]
        averaging: micro
        """,
        **{"ref.csv": CSV, "mse.csv": "id,speech,birds\na,1.2,0.9\nb,0.7,-0.1\n"},
    )
    results = evalkit.run(path)
    assert results.notes == ["mse: 2 prediction value(s) outside [0, 1] were clipped (clip: true)"]
    # Clipped to [[1, .9], [.7, 0]] against [[.1, .9], [.7, 0]]: Σmin = .1+.9+.7 = 1.7, Σpred = 2.6.
    assert results.rows[0].value == pytest.approx(1.7 / 2.6)


def test_reference_out_of_range_is_never_clipped():
    # GOOD * 2 - 0.3 = [[0.1, 1.5], [0.9, -0.1]]: two values out of range.
    with pytest.raises(
        DataError,
        match=r"reference: 2 value\(s\) outside \[0, 1\], first 1.5 at row 1, class '1'; row 2, class '1'\. "
        r".*fix the reference labels$",
    ):
        evalkit.evaluate(GOOD * 2 - 0.3, GOOD, clip=True)


def test_shape_mismatch_without_ids():
    with pytest.raises(DataError, match="prediction: 3 samples, but the reference has 2;"):
        evalkit.evaluate(GOOD, np.vstack([GOOD, GOOD[:1]]))


def test_class_mismatch():
    with pytest.raises(DataError, match=r"classes differ from the reference .*not in the reference '2'"):
        evalkit.evaluate(GOOD, np.hstack([GOOD, GOOD[:, :1]]))


def test_empty_data():
    with pytest.raises(DataError, match=r"no data \(shape \(0, 2\)\)"):
        evalkit.evaluate(np.zeros((0, 2)), np.zeros((0, 2)))


def test_unknown_tnorm_suggests_closest():
    with pytest.raises(ConfigError, match=r"unknown tnorm 'hamaher'\. Did you mean 'hamacher'\?"):
        evalkit.evaluate(GOOD, GOOD, tnorm="hamaher")


def test_kind_confusion_is_explained():
    with pytest.raises(ConfigError, match="unknown averaging 'hamacher'. 'hamacher' is a tnorm, not an averaging."):
        evalkit.evaluate(GOOD, GOOD, averaging="hamacher")


def test_wrong_parameter_key_and_type_name_plugin_and_allowed(tmp_path):
    path = write_config(
        tmp_path,
        """\
        data:
          reference: ref.csv
          systems: {a: ref.csv}
        tnorm: [minimum, {name: hamacher, lambda: 0.5}]
        """,
        **{"ref.csv": CSV},
    )
    with pytest.raises(ConfigError) as info:
        evalkit.run(path)
    message = str(info.value)
    assert message.startswith(f"{path}:4:18: ")  # the spec "{name: hamacher, ...}" starts at column 18
    assert "tnorm 'hamacher' (from evalkit): unknown parameter 'lambda'" in message
    assert "It accepts: p (number)" in message

    path.write_text(path.read_text().replace("lambda: 0.5", "p: fast"))
    with pytest.raises(ConfigError, match=r"parameter 'p': Input should be a valid number.*got 'fast'"):
        evalkit.run(path)


def test_unknown_config_key_names_line_and_suggests(tmp_path):
    path = write_config(
        tmp_path,
        """\
        data:
          reference: ref.csv
          systems: {a: ref.csv}
        tnrom: minimum
        """,
        **{"ref.csv": CSV},
    )
    with pytest.raises(ConfigError, match=rf"{path}:4:8: unknown key 'tnrom'. Did you mean 'tnorm'\?"):
        evalkit.run(path)


def test_malformed_yaml_names_line(tmp_path):
    path = write_config(tmp_path, "data:\n  reference: [a, b\n  systems: x\n")
    with pytest.raises(ConfigError, match=rf"{path}:3:\d+: malformed YAML"):
        evalkit.run(path)


def test_duplicate_yaml_key_is_an_error(tmp_path):
    path = write_config(tmp_path, "data: {}\ntnorm: minimum\ntnorm: product\n")
    with pytest.raises(ConfigError, match=rf"{path}:3: duplicate key 'tnorm' \(first at line 2\)"):
        evalkit.run(path)


@pytest.mark.parametrize(
    "system,extra,files,problem",
    [
        ("nothere.csv", "", {}, r"{path}:3:16: no such data file 'nothere.csv'"),
        ("bad.csv", "", {"bad.csv": "id,speech,birds\na,0.1,0.9\nb,0.7,high\n"},
         r"bad.csv:3: 'high' in column 'birds' is not a number"),
        ("other.csv", "", {"other.csv": "id,speech,birds\na,0.1,0.9\nc,0.7,0.0\n"},
         r"missing 1 reference id\(s\): 'b' \(set `missing: empty` under `data:` if an absent sample "
         r"means an empty prediction\); 1 id\(s\) not in the reference: 'c'"),
        ("short.csv", "", {"short.csv": "id,speech,birds\na,0.1\n"},
         r"short.csv:2: 2 fields, but the header has 3"),
        ("ref.csv", "  classes: [speach]\n", {}, r"no class 'speach' \(did you mean 'speech'\?\)"),
    ],
)
def test_bad_data_files_name_the_place(tmp_path, system, extra, files, problem):
    path = write_config(
        tmp_path, f"data:\n  reference: ref.csv\n  systems: {{a: {system}}}\n{extra}", **{"ref.csv": CSV, **files}
    )
    with pytest.raises(DataError, match=problem.format(path=path)):
        evalkit.run(path)


def test_cli_prints_one_line_and_exits_nonzero(tmp_path):
    path = write_config(
        tmp_path,
        "data:\n  reference: ref.csv\n  systems: {a: ref.csv}\ntnorm: minimun\n",
        **{"ref.csv": CSV},
    )
    for command in ("run", "validate"):  # validate checks what run would reject
        done = run_cli(command, str(path))
        assert done.returncode == 1
        assert done.stdout == ""
        assert "Traceback" not in done.stderr
        assert done.stderr.startswith(f"error: {path}:4:8: unknown tnorm 'minimun'. Did you mean 'minimum'?")


def test_cli_missing_config_file(tmp_path):
    done = evalkit_cli("run", tmp_path / "nope.yaml")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "nope.yaml: no such config file" in done.stderr


def test_validate_finds_missing_data_files_without_loading(tmp_path):
    path = write_config(tmp_path, "data:\n  reference: ref.csv\n  systems: {a: ref.csv, b: gone.csv}\n", **{"ref.csv": CSV})
    done = evalkit_cli("validate", path)
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: {path}:3:28: no such data file 'gone.csv' (looked for {tmp_path / 'gone.csv'})"


@pytest.mark.parametrize(
    "line,problem",
    [
        ("averaging: 3", r"{path}:4:12: averaging: should be a valid string or a valid dictionary or a valid list \(got 3\)"),
        ("zero_division: 2", r"{path}:4:16: zero_division: must be 0, 1 or nan \(got 2\)"),
        ("metrics: []", r"{path}:4:10: metrics: List should have at least 1 item"),
    ],
)
def test_wrong_config_values_name_line_and_value(tmp_path, line, problem):
    path = write_config(tmp_path, f"data:\n  reference: ref.csv\n  systems: {{a: ref.csv}}\n{line}\n", **{"ref.csv": CSV})
    with pytest.raises(ConfigError, match=problem.format(path=path)):
        evalkit.run(path)


def test_zero_division_config_key_reaches_the_metrics(tmp_path):
    path = write_config(
        tmp_path,
        "data:\n  reference: [[0, 1]]\n  systems: {a: [[0, 0]]}\nzero_division: 1\naveraging: none\nmetrics: [precision]\n",
    )
    # No predicted mass in either class: both precisions are 0/0 -> 1.
    assert [r.value for r in evalkit.run(path).rows] == [1.0, 1.0]
