"""Terminal tables fit the width they are given, lose no number, and explain what they shorten."""

from __future__ import annotations

import fcntl
import gzip
import io
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console
from run_depth import examples

import evalkit
from evalkit.cli import _print_tables, main
from evalkit.folding import LABEL_LIMITS, WRAP_FLOOR, Folded, fold_to_width, table_width
from evalkit.pivot import TextTable, comparison_table, tables
from evalkit.results import Results

ROOT = Path(__file__).resolve().parent.parent
with gzip.open(ROOT / "tests" / "snapshots" / "config_results.json.gz", "rt", encoding="utf-8") as _handle:
    SNAPSHOT = json.load(_handle)


def snapshot_results(name: str) -> Results:
    """A bundled config's results as the snapshot test keeps them equal to a real run."""
    return Results.from_json(json.dumps({"evalkit_results": 1, **SNAPSHOT[name]}))


def rendered(table: TextTable, width: int | None) -> tuple[str, Folded]:
    folded = fold_to_width(table, width)
    console = Console(width=width or 10_000, record=True, file=io.StringIO())
    for block in folded.rich_tables():
        console.print(block)
    return console.export_text(), folded


def numbers(table: TextTable) -> Counter[str]:
    return Counter(cell for row in table.rows for cell in row[table.n_index :] if cell)


def longest(text: str) -> int:
    return max(cell_len(line.rstrip()) for line in text.splitlines())


@pytest.mark.parametrize("name", sorted(SNAPSHOT))
def test_every_bundled_config_fits_80_columns_and_shows_every_number(name, capsys):
    results = snapshot_results(name)
    _print_tables(results, 80)
    out = capsys.readouterr().out
    assert longest(out) <= 80
    for table in [*tables(results), comparison_table(results)]:
        if table is not None:
            missing = [n for n, count in numbers(table).items() if out.count(n) < count]
            assert not missing, f"{name}: {table.title} lost {missing[:3]}"


def test_piped_output_is_the_whole_table(capsys):
    results = snapshot_results("tnorms.yaml")
    _print_tables(results, None)
    out = capsys.readouterr().out.split("p-values sit at their floor")[0]  # the tables, not the notes under them
    assert longest(out) >= table_width(tables(results)[0]) > 120  # four columns of intervals side by side
    assert "(part " not in out and " = " not in out and "— system:" not in out.split("Paired")[0]


def test_a_table_that_fits_is_printed_as_it_is():
    table = TextTable("Set metrics", ["system", "metric", "micro"], [["a", "f1", "0.5000"]], 2, "averaging")
    assert fold_to_width(table, 80).blocks[0].table == table
    assert fold_to_width(table, 80).legend == {}


def test_long_labels_are_abbreviated_and_numbered_where_they_would_read_alike():
    long = [f"psds_per_class(dtc_threshold=0.{k}, gtc_threshold=0.{k}, cttc_threshold=0.3)" for k in (1, 7)]
    rows = [[system, metric, "0.7687", "1.0000"] for system in ("baseline", "weak", "strong") for metric in long]
    table = TextTable("Per class", ["system", "metric", "Alarm", "Dog"], rows, 2, "class")  # wrapped, 18 more lines
    out, folded = rendered(table, 50)
    legend = folded.legend
    assert longest(out) <= 50
    assert sorted(legend.values()) == sorted(long)
    assert len(set(legend)) == 2 and all(k.startswith("psds_per_class") for k in legend)  # told apart: ¹ ²
    for short in legend:
        assert short in out


def test_a_sweep_goes_down_each_measure_under_itself_when_columns_do_not_fit():
    measures = ["fuzzy · minimum · micro · precision", "fuzzy · product · micro · precision"]
    rows = [["dwsnet", p, "0.8464 [0.827, 0.863]", "0.6069 [0.573, 0.636]"] for p in ("0", "0.5", "1")]
    table = TextTable("Sweep over tnorm.p", ["system", "tnorm.p", *measures], rows, 2, "measure")
    out, _ = rendered(table, 60)
    assert longest(out) <= 60
    body = [line for line in out.splitlines() if "0.8464" in line or "0.6069" in line]
    assert [("0.8464" in line) for line in body] == [True, True, True, False, False, False]


def test_several_systems_fold_into_one_table_each_when_that_keeps_numbers_side_by_side():
    header = ["system", "representation", "similarity", "tnorm", "metric", "micro", "macro"]
    rows = [[s, "threshold_match(threshold=0.8)", "segment_overlap", "minimum", m, "0.7619", "0.8258"]
            for s in ("good", "poor") for m in ("precision", "recall", "f1")]
    out, _ = rendered(TextTable("Set metrics", header, rows, 5, "averaging"), 72)
    assert longest(out) <= 72
    assert "Set metrics — system: good" in out and "Set metrics — system: poor" in out
    assert all("0.7619" in line and "0.8258" in line for line in out.splitlines() if "0.7619" in line)


def test_the_columns_of_a_test_stay_together():
    header = ["system", "baseline", "representation", "averaging", "metric", "difference", "p-value"]
    rows = [["tiny", "dwsnet", "soft_cardinality(similarity=levenshtein)", "micro", m, "-0.1336", "0.0010"]
            for m in ("precision", "recall")]
    out, _ = rendered(TextTable("Paired tests", header, rows, 5), 72)
    assert longest(out) <= 72
    assert all("-0.1336" in line and "0.0010" in line for line in out.splitlines() if "-0.1336" in line)


def test_control_characters_in_labels_stay_visible_and_cannot_break_lines():
    table = TextTable("t", ["system", "metric", "micro"], [["a\x1b[31m\nb" + "x" * 40, "f1", "0.5000"]], 2, "averaging")
    out, folded = rendered(table, 40)
    assert "\x1b" not in out and "\\x1b" in " ".join([out, *folded.legend.values()])
    assert all("\n" not in full for full in folded.legend.values())


# --- the command line ----------------------------------------------------------------------------


def run_events(*args: str, env: dict[str, str] | None = None) -> str:
    result = CliRunner(env=env).invoke(main, ["run", str(ROOT / "configs" / "events.yaml"), "--no-report", "-q", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_width_comes_from_the_option_then_columns_and_a_pipe_is_not_folded():
    assert longest(run_events("--width", "64")) <= 64
    assert longest(run_events(env={"COLUMNS": "70"})) <= 70
    assert longest(run_events("--width", "0", env={"COLUMNS": "70"})) > 80  # 0: never fold
    assert longest(run_events(env={"COLUMNS": ""})) > 80  # not a terminal, no COLUMNS: whole


def test_a_glossary_explains_the_unfamiliar_measures_once(capsys):
    results = snapshot_results("quickstart.yaml")
    _print_tables(results, 80)
    out = capsys.readouterr().out
    assert out.count("kld: Mean binary KL") == 1
    assert not re.search(r"^(precision|recall|f1|micro|macro): ", out, re.M)


# --- any table, any width ------------------------------------------------------------------------

_labels = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=40) | st.builds(
    lambda stem, params: f"{stem}({params})", st.from_regex(r"[a-z_]{3,20}", fullmatch=True),
    st.from_regex(r"[a-z]{1,12}=[0-9.]{1,4}(, [a-z]{1,12}=[0-9.]{1,4}){0,3}", fullmatch=True),
)
_numbers = st.sampled_from(["0.8468", "undefined", "0.8468 [0.838, 0.857]", "-0.1336", "1.0000", ""])


@st.composite
def any_table(draw):
    n_index = draw(st.integers(1, 4))
    n_values = draw(st.integers(1, 12))
    header = ["system" if draw(st.booleans()) else "metric", *draw(st.lists(_labels, min_size=n_index - 1, max_size=n_index - 1))]
    header += draw(st.lists(_labels, min_size=n_values, max_size=n_values, unique=True))
    rows = draw(st.lists(st.tuples(st.lists(_labels, min_size=n_index, max_size=n_index),
                                   st.lists(_numbers, min_size=n_values, max_size=n_values)), min_size=1, max_size=12))
    across = draw(st.sampled_from(["averaging", "class", None]))
    return TextTable("T", header, [[*labels, *values] for labels, values in rows], n_index, across)


@settings(max_examples=examples(200), deadline=None)
@given(any_table(), st.integers(40, 160))
def test_any_table_fits_any_width_it_can_and_keeps_its_numbers(table, width):
    # A column of numbers is as wide as its numbers or its header at its shortest (numbered
    # apart from up to 12 others); labels wrap down to WRAP_FLOOR, and one more label column
    # comes when the measures go down.
    widest = max(max(cell_len(c) for row in table.rows for c in row[table.n_index :]), LABEL_LIMITS[-1] + 2)
    if (table.n_index + 1) * (WRAP_FLOOR + 3) + widest + 3 + 1 > width:
        return  # too narrow for the labels at their narrowest beside one number
    out, folded = rendered(table, width)
    assert longest(out) <= width
    kept = numbers(table)
    assert all(out.count(n) >= count for n, count in kept.items())
    cells = {cell for b in folded.blocks for cell in [b.table.title, *b.table.header, *(c for row in b.table.rows for c in row)]}
    assert all(any(short in cell for cell in cells) for short in folded.legend)
    # a column's name is abbreviated, never broken: no label column wraps narrower than a word of it
    assert all(w is None or all(cell_len(word) <= w for word in name.split())
               for b in folded.blocks for name, w in zip(b.table.header, b.widths))


def test_in_a_real_terminal_the_width_is_the_terminals():
    """A pseudo-terminal 72 columns wide, no COLUMNS: the tables fold to it."""
    main_fd, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 72, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    command = [sys.executable, "-m", "evalkit", "run", str(ROOT / "configs" / "events.yaml"), "--no-report", "-q"]
    process = subprocess.Popen(command, stdin=terminal, stdout=terminal, stderr=subprocess.DEVNULL, env=env)
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # the terminal closed: the run has ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert process.wait() == 0
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode("utf-8").replace("\r", ""))
    assert "0.7619" in text and longest(text) <= 72


def test_a_negative_width_is_refused_with_the_range():
    result = CliRunner().invoke(main, ["run", str(ROOT / "configs" / "events.yaml"), "--no-report", "--width", "-1"])
    assert result.exit_code == 2
    assert "Invalid value for '--width': -1 is not in the range x>=0." in result.output


# --- results with intervals at 80 columns (issue 28, item 1) -------------------------------------


def test_a_tagger_with_intervals_and_a_paired_test_reads_at_80_columns(tmp_path):
    """Each test's difference, interval and p on one line, the labels abbreviated (legend below)
    rather than a header word broken, kld's test apart (no column of "—"), then the p-floor note
    and the summary the reports open with, oriented by each metric's direction."""
    data = ROOT / "configs" / "data" / "quickstart"
    config = tmp_path / "tagger.yaml"
    config.write_text(json.dumps({
        "name": "tagger",
        "data": {"reference": str(data / "reference.csv"),
                 "systems": {"dwsnet": str(data / "dwsnet.csv"), "baseline": str(data / "baseline.csv")}},
        "tnorm": ["minimum", "lukasiewicz"], "averaging": ["micro", "weighted"], "metrics": ["precision", "recall", "kld"],
        "statistics": {"bootstrap": {"resamples": 99, "seed": 1}, "test": {"resamples": 99, "seed": 1}},
    }), encoding="utf-8")
    result = CliRunner(env={"COLUMNS": "80"}).invoke(main, ["run", str(config), "--no-report", "-q"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    results = evalkit.run(config, write_reports=False)  # the same seeds: the same numbers
    short = {"precision": "precisi…", "lukasiewicz": "lukasie…"}

    def line(c, *labels: str) -> str:
        cells = "".join(f"│ {label:<8} " for label in labels)
        p = f"≤ {c.p_value:.4f}" if c.p_at_floor else f"{c.p_value:.4f}"
        return (f"{cells}│ {c.difference:+{8 if labels else 10}.4f} │ "
                f"{f'[{c.ci_low:+.4f}, {c.ci_high:+.4f}]':>18} │ {p:>8} │")

    set_tests = [c for c in results.comparisons if c.metric != "kld"]
    (kld,) = [c for c in results.comparisons if c.metric == "kld"]
    rule = "━━━━━━━━━━"
    expected = "\n".join([
        "Paired tests, system − against (permutation, 99 resamples) — system:         ",
        "baseline, against: dwsnet, representation: fuzzy                             ",
        "┏" + "┳".join([rule] * 4) + "┳━━━━━━━━━━━━━━━━━━━━┳" + rule + "┓",
        "┃ tnorm    ┃ averagi… ┃ metric   ┃ differe… ┃       95% interval ┃  p-value ┃",
        "┡" + "╇".join([rule] * 4) + "╇━━━━━━━━━━━━━━━━━━━━╇" + rule + "┩",
        *(line(c, short.get(c.tnorm, c.tnorm), c.averaging, short.get(c.metric, c.metric)) for c in set_tests),
        "└" + "┴".join(["──────────"] * 4) + "┴────────────────────┴──────────┘",
        "precisi… = precision",
        "lukasie… = lukasiewicz",
        "averagi… = averaging",
        "differe… = difference",
        "Paired tests, system − against (permutation,  ",
        "99 resamples) — system: baseline, against:    ",
        "dwsnet, metric: kld                           ",
        "┏━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┓",
        "┃ difference ┃       95% interval ┃  p-value ┃",
        "┡━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━┩",
        line(kld),
        "└────────────┴────────────────────┴──────────┘",
        "9 of 9 p-values sit at their floor, shown as “≤”: p ≤ 1/(99 + 1) = 0.01. The",
        "    true p may be far smaller: increase resamples to resolve smaller p.",
        "Summary",
        "- dwsnet is best on every measure (9).",
        "- baseline against dwsnet: p < 0.05 on 9 of 9 measures; the difference's 95%",
        "  interval excludes 0 on 9: baseline is worse on all 9.",
        "",
    ])
    assert len(set_tests) == 8 and all(c.p_at_floor and c.ci_high < 0 for c in set_tests)  # as the summary says
    assert kld.p_at_floor and kld.ci_low > 0 and results.lower_is_better == ["kld"]  # kld higher: worse
    assert out[out.index("Paired tests"):] == expected
    assert longest(out) <= 80
    # every word of a column's name is whole or an abbreviation the legend explains, in every table
    names = {word for table in [*tables(results), comparison_table(results)] for h in table.header for word in h.split()}
    legend = {entry.split(" = ")[0] for entry in out.splitlines() if " = " in entry and "…" in entry.split(" = ")[0]}
    for header in (row for row in out.splitlines() if row.startswith("┃")):
        for word in (w for cell in header.strip("┃").split("┃") for w in cell.split()):
            assert word in names or word in legend, f"{word!r} broken in {header!r}"
