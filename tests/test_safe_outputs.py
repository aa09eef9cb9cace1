"""Safe outputs: names from configs and data files are shown, never acted on.

A config whose run, system and class names are hostile (HTML with a script, a Markdown pipe and
link, rich markup, an ANSI colour sequence, spreadsheet formulas, a matplotlib formula) is run
like a user would: its HTML report is opened in headless Chromium, its Markdown report rendered
with the ``markdown`` package, its CSV read back, and the CLI's output searched for ESC. Then
report paths: an ``out:`` that would replace an input is refused, and ``out:``'s edge cases.
"""

from __future__ import annotations

import base64
import csv
import errno
import fcntl
import html.parser
import io
import json
import os
import re
import resource
import signal
import string
import subprocess
import sys
import threading
import time
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from in_process import Finished, evalkit_cli
from processes import alive, workers_of
from run_depth import examples

import evalkit
from evalkit import api
from evalkit.control_chars import visible
from evalkit.discovery import build_registry, default_registry, make_plugin_manager
from evalkit.errors import ConfigError, ReportError
from evalkit.pivot import TextTable, markdown
from evalkit.protocols import report_pattern
from evalkit.reporting import LOCK_NAME, write_reports
from evalkit_reports import plots

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "configs" / "data" / "quickstart"

SCRIPT = "<script>document.title='pwned'</script>"
IMAGE = "<img src=x onerror=\"document.title='pwned'\">"
SYSTEMS = [SCRIPT + "|[/]", "\x1b[31mred\x1b[0m [bold]x", "=cmd|' /C calc'!A0", "\u202e*star* _under_"]
CLASSES = [IMAGE, "a|b", "[x](javascript:alert(1))", "@SUM(A1)", "-0.25", "$\\frac$"]
NAME = SCRIPT + " \x1b]0;title\x07 [/]"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    """A config with hostile names in every place a name goes, asking for every text report."""
    folder = tmp_path_factory.mktemp("hostile")
    rng = np.random.default_rng(3)
    reference = rng.random((24, len(CLASSES))).round(2).tolist()
    systems = {s: np.clip(np.asarray(reference) + rng.normal(0, 0.2 * (i + 1), (24, len(CLASSES))), 0, 1).round(2).tolist()
               for i, s in enumerate(SYSTEMS)}
    path = folder / "hostile.yaml"
    path.write_text(yaml.safe_dump({
        "name": NAME,
        "data": {"reference": reference, "systems": systems, "classes": CLASSES},
        "tnorm": ["minimum", "product"], "averaging": ["micro", "none"], "metrics": ["f1"],
        "statistics": {"bootstrap": {"resamples": 30, "seed": 1}, "agreement": True,
                       "test": {"method": "permutation", "resamples": 30, "seed": 1}},
        "report": {"formats": ["html", "markdown", "csv", "json"], "out": "reports/hostile"},
    }))
    return path


@pytest.fixture(scope="module")
def cli_run(hostile: Path) -> Finished:
    return evalkit_cli("run", hostile, check=True)


@pytest.fixture(scope="module")
def reports(hostile: Path, cli_run) -> Path:
    """The folder of the reports ``evalkit run`` wrote: ``hostile.html``, ``.md``, ``.csv``, ``.json``."""
    return hostile.parent / "reports"


# ---------------------------------------------------------------------------------------------
# The terminal
# ---------------------------------------------------------------------------------------------


def test_the_terminal_gets_no_escape_sequence_and_no_markup(cli_run):
    assert "\x1b" not in cli_run.stdout and "\x07" not in cli_run.stdout
    assert "\x1b" not in cli_run.stderr
    text = re.sub(r"\s+", " ", cli_run.stdout)
    assert "\\x1b[31mred\\x1b[0m [bold]x" in text  # made visible, and markup printed as written
    assert "|[/]" in text and "=cmd|' /C calc'!A0" in text


@pytest.mark.parametrize("fmt", ["csv", "markdown", "json"])
def test_report_formats_printed_on_the_terminal_carry_no_escape(hostile, fmt):
    done = evalkit_cli("run", hostile, "--format", fmt, "--no-report", check=True)
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert len(done.stdout.splitlines()) > 10


def test_visible_shows_every_control_character_and_keeps_lines_on_request():
    assert visible("a\x1b[31mb\x07\r\x9b\u202ec\n\t") == "a\\x1b[31mb\\x07\\r\\x9b\\u202ec\\n\\t"
    assert visible("a\x1b\nb\tc", lines=True) == "a\\x1b\nb\tc"
    assert visible("café [/] ∩ 日本") == "café [/] ∩ 日本"


def test_visible_shows_every_bidirectional_control_and_line_separator():
    """Every character Unicode gives a bidirectional control class (embeddings, overrides,
    isolates) and the three marks that move neutral characters (U+200E, U+200F, U+061C), found
    from the Unicode database rather than listed, and the separators U+2028 and U+2029 that
    editors break lines at: each shown as its escape. Joiners (U+200D), which scripts and emoji
    need, are kept."""
    controls = {"LRE", "RLE", "PDF", "LRO", "RLO", "LRI", "RLI", "FSI", "PDI"}
    mark_names = {"LEFT-TO-RIGHT MARK", "RIGHT-TO-LEFT MARK", "ARABIC LETTER MARK"}
    found = [chr(c) for c in range(0x110000) if unicodedata.bidirectional(chr(c)) in controls]
    marks = [chr(c) for c in range(0x110000) if unicodedata.name(chr(c), "") in mark_names]
    separators = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) in ("Zl", "Zp")]
    assert len(found) == 9 and sorted(marks) == ["\u061c", "\u200e", "\u200f"] and len(separators) == 2
    for c in [*found, *marks, *separators]:
        assert visible(f"a{c}b") == f"a\\u{ord(c):04x}b", hex(ord(c))
    assert visible("👩\u200d💻") == "👩\u200d💻"


def test_plugin_problems_are_printed_escaped(capsys):
    from evalkit.cli import _warn

    _warn("plugin evil:x failed to load (ImportError: \x1b[2J[/])")
    assert capsys.readouterr().err == "warning: plugin evil:x failed to load (ImportError: \\x1b[2J[/])\n"


# ---------------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------------


class Elements(html.parser.HTMLParser):
    """The elements of an HTML fragment, and the text of each table's rows."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.rows: list[list[str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.rows[-1].append("")

    def handle_data(self, data):
        self.text.append(data)
        if self.rows and self.rows[-1] and self.tags[-1] in ("td", "th"):
            self.rows[-1][-1] += data


def commonmark(text: str) -> str:
    """``text`` rendered by markdown-it-py (rich's Markdown parser): CommonMark, with GFM's tables."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(text)


def test_the_markdown_report_renders_to_no_script_link_or_broken_table(reports):
    text = (reports / "hostile.md").read_text(encoding="utf-8")
    rendered = commonmark(text)
    page = Elements()
    page.feed(rendered)
    assert {"script", "img", "a", "em", "strong", "code"}.isdisjoint(page.tags), set(page.tags)
    assert page.tags.count("table") == text.count("\n### ") and len(page.rows) > 10
    shown = "".join(page.text)
    for name in [SCRIPT, IMAGE, "a|b", "[x](javascript:alert(1))", "=cmd|' /C calc'!A0", "$\\frac$"]:
        assert name in shown, name  # shown literally, whole
    assert visible(SYSTEMS[1]) in shown and visible(SYSTEMS[3]) in shown and "\x1b" not in text
    # every row of a table has as many cells as its header: no `|` split a cell
    tables = re.split(r"<table>", rendered)[1:]
    for table in tables:
        part = Elements()
        part.feed(table)
        assert len({len(row) for row in part.rows}) == 1, table


#: Names made of what Markdown acts on: every ASCII punctuation, digits, letters, spaces, ESC and
#: U+202E. Leading and trailing spaces are left out: CommonMark trims them from a line.
HOSTILE_TEXT = st.text(st.sampled_from([*string.punctuation, "a", "b", "1", " ", "\x1b", "\u202e"]),
                       min_size=1, max_size=12).map(str.strip).filter(bool)

#: How the Markdown report places a text: a heading, a paragraph, a list item, a table cell.
PLACES = {
    "heading": (lambda text: f"### {markdown(text)}", {"h3"}),
    "paragraph": (lambda text: markdown(text), {"p"}),
    "list item": (lambda text: f"- {markdown(text)}", {"ul", "li"}),
    "table cell": (
        lambda text: markdown(TextTable("t", ["h"], [[text]], 1)), {"h3", "table", "thead", "tr", "th", "tbody", "td"}
    ),
}


@pytest.mark.parametrize("place", PLACES)
@settings(max_examples=examples(600), deadline=None)
@given(text=HOSTILE_TEXT)
def test_a_hostile_name_renders_as_its_literal_text_wherever_it_goes(place, text):
    """CommonMark's own parser renders the escaped name as the name (control characters made
    visible), inside the element the place makes and no other."""
    write, elements = PLACES[place]
    page = Elements()
    page.feed(commonmark(write(text)))
    assert set(page.tags) == elements
    shown = page.rows[-1][0] if place == "table cell" else "".join(page.text)
    assert shown.strip() == visible(text)


@pytest.mark.parametrize("text", ["p < 0.05", "snake_case", "2 * 3", "AT&T", "[0.1, 0.9]", "-0.25", "a > b", "C# 10",
                                  "x#", "C:\\data", "it`s", "a | b"])
def test_markdown_escapes_nothing_that_would_not_act(text):
    assert markdown(text) == text
    cell = markdown(TextTable("t", ["h"], [[text]], 1)).splitlines()[-1]
    assert cell == "| " + text.replace("|", "\\|") + " |"  # a pipe only where it would end a cell


def test_markdown_escapes_names_once_where_they_become_markdown():
    table = TextTable("t <b>|", ["system", "a|b"], [["<i>x</i>", "0.5000 [0.1, 0.9]"]], 1)
    assert markdown(table).splitlines() == [
        "### t &lt;b>|",
        "",
        "| system | a\\|b |",
        "|---|---:|",
        "| &lt;i>x&lt;/i> | 0.5000 [0.1, 0.9] |",
    ]
    assert markdown("a\\|b `c` \x1b *d* _e_ [f](g) &amp;") == "a\\\\|b \\`c\\` \\x1b \\*d\\* \\_e\\_ [f\\](g) &amp;amp;"
    assert [markdown(t) for t in ("# h", "1. x", "---", "> q", "+ x", "~~~", "C #")] == [
        "\\# h", "1\\. x", "\\---", "\\> q", "\\+ x", "\\~~~", "C \\#"]


# ---------------------------------------------------------------------------------------------
# CSV
# ---------------------------------------------------------------------------------------------


def test_csv_cells_that_start_like_formulas_are_neutralised_and_numbers_stay(reports):
    rows = list(csv.DictReader(io.StringIO((reports / "hostile.csv").read_text(encoding="utf-8"))))
    systems = {r["system"] for r in rows}
    classes = {r["class"] for r in rows} - {""}
    assert "'=cmd|' /C calc'!A0" in systems and "=cmd|' /C calc'!A0" not in systems
    assert classes == {IMAGE, "a|b", "[x](javascript:alert(1))", "'@SUM(A1)", "-0.25", "$\\frac$"}
    for row in rows:
        assert not row["system"].startswith(("=", "+", "-", "@", "\t", "\r"))
        float(row["value"])  # values stay numbers


def test_csv_neutralises_each_formula_start():
    from evalkit_reports import _cell

    for text in ("=1+1", "+1+1", "-1+1", "@SUM(A1)", "-cmd"):
        assert _cell(text) == "'" + text
    for kept in ("-0.25", "+3", "-1e-05", "a=b", "", -0.25, None):
        assert _cell(kept) == kept
    for text in ("\t=1", "\r=1", "\x1b[2J=1"):  # shown as escapes, which start no formula
        assert _cell(text) == visible(text) != text


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------


#: Characters a terminal acts on (C0 and C1 controls but newline and tab; bidirectional overrides).
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize("report", ["hostile.csv", "hostile.html", "hostile.md", "hostile.json"])
def test_no_report_holds_a_character_a_terminal_would_act_on(reports, report):
    """``cat report`` must not retitle (ESC ] 0 ; ... BEL), clear or reverse the terminal."""
    text = (reports / report).read_text(encoding="utf-8")
    assert RAW_CONTROL.search(text) is None
    if report in ("hostile.csv", "hostile.html"):  # shown as the terminal shows them (Markdown: below)
        assert visible(SYSTEMS[1]) in text and visible(SYSTEMS[3]) in text


def test_the_html_report_escapes_every_name(reports):
    page = (reports / "hostile.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "<img" not in page.replace('<img src="data:image/png;base64,', "")
    for name in [SCRIPT, IMAGE, "=cmd|' /C calc'!A0"]:
        assert html.escape(name, quote=True) in page, name


@pytest.mark.slow
def test_headless_chromium_runs_no_script_from_the_html_report(reports, tmp_path):
    from test_html_report import chromium

    report_file = reports / "hostile.html"
    common = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}"]
    done = subprocess.run([*common, "--virtual-time-budget=5000", "--dump-dom", report_file.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    # the script would have made the title "pwned"; it is the run's name, shown as text
    assert title and html.unescape(title.group(1)).startswith(SCRIPT) and title.group(1).endswith("— evalkit report")
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom  # shown as text
    assert "<script" not in dom.lower() and "<img src=\"x\"" not in dom


# ---------------------------------------------------------------------------------------------
# Report paths
# ---------------------------------------------------------------------------------------------


def quick(tmp_path: Path, out: str, formats=("csv",), name: str = "quick", **data: str) -> Path:
    """A config in ``tmp_path`` over copies of the quickstart data there."""
    for file in ("reference.csv", "dwsnet.csv"):
        if not (tmp_path / file).exists():
            (tmp_path / file).write_bytes((QUICKSTART / file).read_bytes())
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump({
        "name": name,
        "data": {"reference": data.get("reference", "reference.csv"), "systems": {"dwsnet": data.get("system", "dwsnet.csv")}},
        "averaging": "micro", "metrics": ["f1"], "report": {"formats": list(formats), "out": out},
    }))
    return path


@pytest.mark.parametrize("out,replaced", [("reference", "reference.csv"), ("./dwsnet", "dwsnet.csv"),
                                          ("sub/../reference", "reference.csv")])
def test_a_report_that_would_replace_an_input_is_refused(tmp_path, out, replaced):
    config = quick(tmp_path, out, formats=("markdown", "csv"))
    before = (tmp_path / replaced).read_bytes()
    message = rf"run\.yaml:\d+:\d+: the csv report would replace the input {re.escape(str(tmp_path / replaced))}; choose another"
    with pytest.raises(ConfigError, match=message):
        evalkit.run(config)
    assert (tmp_path / replaced).read_bytes() == before
    done = evalkit_cli("validate", config)
    assert done.returncode == 1 and "would replace the input" in done.stderr


def test_an_input_reached_through_a_link_is_compared_resolved(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "old.csv").write_bytes((QUICKSTART / "reference.csv").read_bytes())
    (tmp_path / "linked.csv").symlink_to(tmp_path / "results" / "old.csv")
    with pytest.raises(ConfigError, match="would replace the input .*results/old.csv"):
        api.plan(quick(tmp_path, "results/old", reference="linked.csv"))


def test_reports_inside_an_input_folder_and_over_a_component_file_are_refused(tmp_path):
    maestro = ROOT / "configs" / "data" / "maestro"
    config = tmp_path / "maestro.yaml"
    config.write_text(yaml.safe_dump({
        "data": {"reference": str(maestro / "reference"), "systems": {"s": str(maestro / "system")}},
        "metrics": ["f1"], "report": {"formats": ["csv"], "out": str(maestro / "reference" / "report")},
    }))
    with pytest.raises(ConfigError, match=r"the reports would be written inside the input folder .*maestro/reference; "):
        api.plan(config)
    ontology = ROOT / "configs" / "data" / "audioset" / "ontology.json"
    config.write_text(yaml.safe_dump({
        "data": {"reference": {"ids": ["a"], "items": [["Giggle"]]}, "systems": {"s": {"ids": ["a"], "items": [["Laughter"]]}}},
        "representation": "soft_cardinality", "similarity": {"name": "ontology", "ontology": str(ontology)},
        "metrics": ["f1"], "report": {"formats": ["json"], "out": str(ontology.with_suffix(""))},
    }))
    with pytest.raises(ConfigError, match=r"the json report would replace the input .*audioset/ontology\.json"):
        api.plan(config)


def test_the_config_itself_is_an_input(tmp_path):
    config = quick(tmp_path, "run", formats=("json",))
    json_config = config.rename(tmp_path / "run.json")
    with pytest.raises(ConfigError, match=r"the json report would replace the input .*run\.json"):
        api.plan(json_config)


class Tables:
    """A writer of several files (``write``), one per table: ``{out}-{n}.csv``."""

    name = "tables"
    suffix = ".csv"
    Params = evalkit.NoParams

    def __init__(self, params):
        self.params = params

    def render(self, results):
        return ""

    def write(self, results, out):
        return []


class TablesPlugin:
    @evalkit.hookimpl
    def evalkit_register_report_writers(self, register):
        register(Tables)


def test_a_writer_of_several_files_is_checked_against_its_pattern(tmp_path):
    registry = build_registry(*make_plugin_manager(extra={"evalkit-tables:tables": TablesPlugin()}))
    (tmp_path / "run-1.csv").write_bytes((QUICKSTART / "dwsnet.csv").read_bytes())
    with pytest.raises(ConfigError, match=r"the tables report would replace the input .*run-1\.csv"):
        api.plan(quick(tmp_path, "run", formats=("tables",), system="run-1.csv"), registry)
    assert api.plan(quick(tmp_path, "other", formats=("tables",), system="run-1.csv"), registry).report
    png = default_registry().create("report_writer", "png")
    assert report_pattern(Path("/r/x[1]"), png) == "x[[]1]-*.png"  # the name's own brackets match themselves


@pytest.mark.parametrize("out,expected", [
    ("", "{base}/quick"), (".", "{base}/quick"), ("  ", "{base}/quick"), ("sub/", "{base}/sub/quick"),
    ("~", "{home}/quick"), ("~/reports/", "{home}/reports/quick"), ("~/reports/r", "{home}/reports/r"),
])
def test_out_edge_cases(tmp_path, monkeypatch, out, expected):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    base = tmp_path / "config"
    base.mkdir()
    plan = api.plan(quick(base, out))
    assert plan.report.out == Path(expected.format(base=base, home=home))


def test_out_at_the_root_is_a_folder_too(tmp_path):
    config = quick(tmp_path, "/")
    if not os.access("/", os.W_OK):
        with pytest.raises(ConfigError, match=r"cannot write report files in / \(Permission denied\)"):
            api.plan(config)
    else:
        assert api.plan(config).report.out == Path("/quick")


@pytest.mark.parametrize("name,file", [("a/../../b", "a_.._.._b"), ("..", "report"), ("", "report"), ("x\ny", "x_y")])
def test_the_run_name_makes_one_file_name(tmp_path, name, file):
    assert api.plan(quick(tmp_path, ".", name=name)).report.out == tmp_path / file


@pytest.mark.parametrize("out,reason", [
    ("~nosuchuser-evalkit/x", "Could not determine home directory"),
    ("a\x00b", "embedded null byte"),
    ("x" * 300 + "/r", "File name too long"),
])
def test_outs_that_cannot_be_written_are_config_errors(tmp_path, out, reason):
    with pytest.raises(ConfigError, match=rf"run\.yaml:\d+:\d+: cannot write report files in .*\({reason}.*\); choose an `out:`"):
        api.plan(quick(tmp_path, out))


def test_existing_reports_are_replaced_not_written_through(tmp_path, monkeypatch):
    """Every writer renames a new file over the old one, so a report path that is a link to
    another file replaces the link and leaves that file alone."""
    config = quick(tmp_path, "results/r", formats=("html", "markdown", "csv", "json", "png"))
    (tmp_path / "results").mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    for suffix in (".html", ".md", ".csv", ".json", "-bars.png"):
        (tmp_path / "results" / f"r{suffix}").symlink_to(victim)
    written = evalkit.run(config, write_reports=True).reports
    assert len(written) == 5
    assert victim.read_text() == "keep me"
    for suffix in (".html", ".md", ".csv", ".json", "-bars.png"):
        path = tmp_path / "results" / f"r{suffix}"
        assert path.is_file() and not path.is_symlink()
    assert not list((tmp_path / "results").glob(".*.part"))


# ---------------------------------------------------------------------------------------------
# Outputs are never lost: standard output
# ---------------------------------------------------------------------------------------------

#: With and without PYTHONUNBUFFERED (which many container images set): the text layer of an
#: unbuffered stdout used to drop the rest of a short write without a word.
LOST = "error: could not write the results to standard output"
BUFFERING = [pytest.param({"PYTHONUNBUFFERED": "1"}, id="unbuffered"), pytest.param({}, id="buffered")]


def evalkit_process(*args, env: dict[str, str], **popen) -> subprocess.Popen:
    """A real ``python -m evalkit ARGS``, with ``env`` added to an environment without
    PYTHONUNBUFFERED (this machine's environment sets it)."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | env
    return subprocess.Popen([sys.executable, "-m", "evalkit", *map(str, args)], env=environment, text=True, **popen)


@pytest.mark.slow
@pytest.mark.parametrize("env", BUFFERING)
def test_a_full_disk_under_stdout_is_one_error_and_the_reports_are_still_written(tmp_path, env):
    """/dev/full fails every write with ENOSPC: the real error of a full disk."""
    config = quick(tmp_path, "results/r", formats=("json",))
    with open("/dev/full", "w") as full:
        process = evalkit_process("run", config, "--format", "json", env=env, stdout=full, stderr=subprocess.PIPE)
        _, stderr = process.communicate(timeout=300)
    report = tmp_path / "results" / "r.json"
    lines = [f"wrote {os.path.relpath(report)}", f"{LOST}: {os.strerror(errno.ENOSPC)}"]
    assert (process.returncode, stderr.splitlines()) == (1, lines)
    assert json.loads(report.read_text())["rows"]


@pytest.mark.slow
@pytest.mark.parametrize("env", BUFFERING)
def test_a_file_size_limit_under_stdout_is_one_error_and_keeps_what_was_written(tmp_path, env):
    """RLIMIT_FSIZE ends a write at the limit (EFBIG after it): a short write, which the
    unbuffered text layer used to ignore (exit status 0, the rest of the results lost)."""
    config = QUICKSTART.parent.parent / "quickstart.yaml"
    whole = evalkit_cli("run", config, "--format", "csv", "--no-report", check=True).stdout
    limit = len(whole.encode()) // 2
    output = tmp_path / "out.csv"

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    with output.open("w") as file:
        process = evalkit_process("run", config, "--format", "csv", "--no-report", env=env, stdout=file,
                                  stderr=subprocess.PIPE, preexec_fn=limited)
        _, stderr = process.communicate(timeout=300)
    assert (process.returncode, stderr) == (1, f"{LOST}: {os.strerror(errno.EFBIG)}\n")
    assert output.read_text() == whole[:limit]  # what is there is the start of the results, unchanged


@pytest.mark.slow
@pytest.mark.parametrize("env", BUFFERING)
def test_a_closed_pipe_stays_quiet_whatever_the_buffering(env):
    process = evalkit_process("run", QUICKSTART.parent.parent / "quickstart.yaml", "--format", "csv", "--no-report",
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # before it prints its first row
    stderr = process.stderr.read()
    assert (process.wait(timeout=300), stderr) == (1, "")  # click's status for a closed pipe


# ---------------------------------------------------------------------------------------------
# Outputs are never lost or mixed: a report folder gets one run's set
# ---------------------------------------------------------------------------------------------


SYSTEMS_OF = {"alpha": ("dwsnet.csv", "baseline.csv", "tiny.csv"), "beta": ("tiny.csv", "dwsnet.csv", "baseline.csv")}


def heavy(folder: Path, run: str) -> Path:
    """A config ``run`` (alpha or beta) whose reports take seconds to write (an HTML page and PNG
    files of four figures, after a small Markdown report), in ``folder/results/r.*``. Both runs
    have the same systems, with their files swapped, so their figures have the same names and
    different contents."""
    for file in SYSTEMS_OF["alpha"] + ("reference.csv",):
        (folder / file).write_bytes((QUICKSTART / file).read_bytes())
    path = folder / f"{run}.yaml"
    path.write_text(yaml.safe_dump({
        "name": run,
        "data": {"reference": "reference.csv", "systems": dict(zip(("s1", "s2", "s3"), SYSTEMS_OF[run]))},
        "tnorm": ["minimum", "product"], "averaging": ["micro", "macro"], "metrics": ["precision", "recall", "f1"],
        "report": {"formats": ["markdown", "csv", "html", "png"], "out": "results/r"},
    }))
    return path


def folder_state(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def written_by(folder: Path) -> str:
    """Which run wrote the report set in ``folder``, which must be whole and of one run: the
    Markdown and HTML reports are titled with its name, the CSV report is the one its results
    render, and the HTML's figures are byte for byte the PNG files."""
    state = folder_state(folder)
    figures = sorted(n for n in state if n.endswith(".png"))
    assert sorted(state) == [*figures, "r.csv", "r.html", "r.md"] and len(figures) == 4, sorted(state)
    run = state["r.md"].decode().splitlines()[0].removeprefix("# ")
    assert f"<h1>{run}</h1>".encode() in state["r.html"]
    csv_report = default_registry().create("report_writer", "csv").render(evalkit.run(heavy(folder.parent, run)))
    assert state["r.csv"].decode() == csv_report
    embedded = {base64.b64decode(m) for m in re.findall(rb"data:image/png;base64,([A-Za-z0-9+/=]+)", state["r.html"])}
    assert embedded == {state[n] for n in figures}
    return run


def wait_for(folder: Path, pattern: str, process: subprocess.Popen, timeout: float = 300) -> None:
    """Poll until a file matching ``pattern`` appears in ``folder`` (the run is writing)."""
    deadline = time.monotonic() + timeout
    while not list(folder.glob(pattern)):
        assert process.poll() is None, f"the run ended before writing: {process.communicate()}"
        assert time.monotonic() < deadline, f"no {pattern} in {timeout} s"
        time.sleep(0.002)


def writing_over_a_previous_set(tmp_path: Path, **popen: Any) -> tuple[Path, dict[str, bytes], subprocess.Popen]:
    """A previous set ("alpha") in ``results``, and a run of another ("beta") into it, in its own
    process, caught once its first report (Markdown) is a temporary: the HTML page and the figures
    still take seconds to draw, so whatever happens next lands before the set is renamed."""
    results = tmp_path / "results"
    evalkit.run(heavy(tmp_path, "alpha"), write_reports=True)
    before = folder_state(results)
    process = evalkit_process("run", heavy(tmp_path, "beta"), "-q", env={}, stdout=subprocess.DEVNULL, **popen)
    wait_for(results, ".r.md.*.part", process)
    return results, before, process


@pytest.mark.slow
@pytest.mark.parametrize("signum,status,line", [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_a_run_interrupted_while_writing_leaves_the_previous_set_and_no_temporary(tmp_path, signum, status, line):
    results, before, process = writing_over_a_previous_set(tmp_path, stderr=subprocess.PIPE)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=300)
    assert (process.returncode, stderr) == (status, f"{line}\n")
    assert folder_state(results) == before  # the previous set, whole: no temporary, no lock file
    assert written_by(results) == "alpha"


@pytest.mark.slow
def test_a_killed_run_leaves_its_temporaries_which_the_next_run_removes(tmp_path):
    results, before, process = writing_over_a_previous_set(tmp_path, stderr=subprocess.DEVNULL)
    process.kill()
    process.wait(timeout=300)
    left = folder_state(results)
    assert [n for n in left if n.startswith(".r.md.") and n.endswith(".part")], "SIGKILL cannot be cleaned up after"
    assert {n: d for n, d in left.items() if not n.startswith(".")} == before  # the previous set, untouched
    evalkit.run(heavy(tmp_path, "beta"), write_reports=True)
    assert written_by(results) == "beta"  # the stale temporaries and lock file are gone with it


def drawing_in_workers(tmp_path: Path) -> tuple[Path, dict[str, bytes], subprocess.Popen, set[int]]:
    """A previous set in ``results``, and a run of another into it, in its own process group,
    caught while its worker processes draw the figures."""
    if not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("figures are drawn in worker processes on Linux with 2 cores or more")
    results, before, process = writing_over_a_previous_set(tmp_path, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 300
    while not (workers := workers_of(process.pid)):
        assert process.poll() is None and time.monotonic() < deadline, "the figures were never drawn in workers"
        time.sleep(0.002)
    return results, before, process, workers


@pytest.mark.slow
@pytest.mark.parametrize("signum,status,line", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_ctrl_c_to_the_process_group_while_figures_are_drawn_ends_the_run_and_its_workers(tmp_path, signum, status, line):
    """A terminal's Ctrl-C reaches every process of the group, the figure workers too. A worker
    ended by it hung the run for good (the pool waited for the other worker, blocked sending a
    figure nobody read), and a signal that landed in a fork was printed as 'Exception ignored'
    and lost (exit status 0)."""
    results, before, process, workers = drawing_in_workers(tmp_path)
    os.killpg(process.pid, signum)
    _, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr) == (status, f"{line}\n")
    assert folder_state(results) == before  # the previous set, whole: no temporary, no lock file
    assert not [w for w in workers if alive(w)]  # the pool was stopped and joined


@pytest.mark.slow
def test_a_killed_run_takes_its_figure_workers_with_it(tmp_path):
    """SIGKILL cannot be answered, but the workers die with the run: left waiting for work they
    held the command's stderr open, so whoever read it (a pipe, a CI log) waited for ever, and
    the folder's lock, so the next run waited 60 s and failed naming the killed run."""
    results, _, process, workers = drawing_in_workers(tmp_path)
    process.kill()
    process.communicate(timeout=120)  # stderr reaches its end: no worker holds it
    deadline = time.monotonic() + 10  # a worker closes its files a moment before it has ended
    while left := [w for w in workers if alive(w)]:
        assert time.monotonic() < deadline, f"workers {left} outlived the run"
        time.sleep(0.01)
    evalkit.run(heavy(tmp_path, "beta"), write_reports=True)
    assert written_by(results) == "beta"


@pytest.mark.slow
def test_two_runs_into_one_folder_at_once_write_one_after_the_other(tmp_path):
    results = tmp_path / "results"
    runs = [evalkit_process("run", heavy(tmp_path, s), "-q", env={}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for s in ("alpha", "beta")]
    done = [(run.wait(timeout=600), run.stderr.read()) for run in runs]
    assert [status for status, _ in done] == [0, 0], done
    assert written_by(results) in ("alpha", "beta")  # one run's set, whole


def hold(folder: Path) -> int:
    """Take the folder's report lock as another run would (flock on its own open file)."""
    folder.mkdir(parents=True, exist_ok=True)
    handle = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    fcntl.flock(handle, fcntl.LOCK_EX)
    os.write(handle, b"4242")
    return handle


def test_a_folder_locked_by_another_run_is_named_after_the_wait(tmp_path):
    results = evalkit.run(quick(tmp_path, "out/r", formats=("markdown", "csv")))
    writers = {f: default_registry().create("report_writer", f) for f in ("markdown", "csv")}
    handle = hold(tmp_path / "out")
    try:
        written = write_reports(results, writers, tmp_path / "out" / "r", wait=0.2)
    finally:
        os.close(handle)
    folder = tmp_path / "out"
    assert written.paths == [] and written.failures == [
        f"another evalkit run (process 4242) has been writing reports in {folder} for 0.2 s (it holds "
        f"{folder / LOCK_NAME}); run again when it has finished, or choose another `out:`"
    ]
    assert sorted(p.name for p in folder.iterdir()) == [LOCK_NAME]  # nothing written, no temporary


def test_a_run_waits_for_the_lock_then_writes_and_leaves_no_lock_file(tmp_path):
    results = evalkit.run(quick(tmp_path, "out/r", formats=("markdown", "csv")))
    writers = {f: default_registry().create("report_writer", f) for f in ("markdown", "csv")}
    handle = hold(tmp_path / "out")
    release = threading.Timer(0.3, os.close, [handle])
    release.start()
    started = time.monotonic()
    written = write_reports(results, writers, tmp_path / "out" / "r", wait=60)
    assert time.monotonic() - started >= 0.3 and not written.failures
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r.csv", "r.md"]


def test_a_disk_error_writing_a_figure_names_that_figure_not_a_plugin_bug(tmp_path):
    """RLIMIT_FSIZE makes the kernel refuse to write past a size (EFBIG), here and portably; a
    full disk (ENOSPC) takes the same path, and the real process's is tested above."""
    results = evalkit.run(quick(tmp_path, "out/r", formats=("png",)))
    writers = {f: default_registry().create("report_writer", f) for f in ("markdown", "png")}
    found = plots.gallery(results).plots
    size = min(map(len, plots.images(found, "png"))) - 1  # a Markdown report fits, no figure does
    assert len(writers["markdown"].render(results).encode()) < size
    first = found[0].name
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / f"r-{first}.png").write_bytes(b"the previous figure")
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, limit[1]))
    try:
        written = write_reports(results, writers, tmp_path / "out" / "r")
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limit)
    figure = tmp_path / "out" / f"r-{first}.png"
    assert written.failures == [f"report writer 'png': could not write {figure}: {os.strerror(errno.EFBIG)}"]
    assert written.paths == [tmp_path / "out" / "r.md"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [figure.name, "r.md"]  # no temporary
    assert figure.read_bytes() == b"the previous figure"


def test_the_next_run_removes_the_temporaries_a_killed_run_left_whatever_their_format(tmp_path):
    results = evalkit.run(quick(tmp_path, "out/r", formats=("markdown",)))
    folder = tmp_path / "out"
    folder.mkdir()
    stale = [".r.md.k2j3h4g5.part", ".r-bars.png.a1b2c3d4.part", ".r.html.zzzzzzzz.part"]
    for name in [*stale, ".other.md.a1b2c3d4.part", "r-notes.txt"]:
        (folder / name).write_text("left by a killed run")
    write_reports(results, {"markdown": default_registry().create("report_writer", "markdown")}, folder / "r")
    assert sorted(p.name for p in folder.iterdir()) == [".other.md.a1b2c3d4.part", "r-notes.txt", "r.md"]


@pytest.mark.slow
def test_a_full_disk_under_the_reports_is_a_disk_error_naming_the_file_being_written(tmp_path):
    """A 16 KiB tmpfs fills for real (ENOSPC): mounting one needs root, so the portable check is
    RLIMIT_FSIZE's above; this one is the error the issue reported, where it can be made."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(disk)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        config = quick(tmp_path, str(disk / "r"), formats=("markdown", "html", "png"))
        done = evalkit_cli("run", config, "-q")
        figures = [plot.name for plot in plots.gallery(evalkit.run(config)).plots]
        left = sorted(p.name for p in disk.iterdir())
    finally:
        subprocess.run(["umount", str(disk)], check=True)
    assert done.returncode == 1 and "Set metrics" in done.stdout  # the results, then the error
    failures = done.stderr.split("error: ")[-1].splitlines()  # after "wrote <the Markdown report>"
    assert len(failures) == 2
    assert failures[0] == f"report writer 'html': could not write {disk / 'r.html'}: {os.strerror(errno.ENOSPC)}"
    png = re.fullmatch(rf"report writer 'png': could not write {re.escape(str(disk))}/r-(.+)\.png: (.+)", failures[1])
    assert png and png[1] in figures and png[2] == os.strerror(errno.ENOSPC)  # a figure it was writing
    assert left == ["r.md"]  # no temporary, no lock file; the html and png writers' files dropped whole


@pytest.mark.slow
@pytest.mark.parametrize("args,what", [(("plugins", "--format", "json"), "the listing"),
                                       (("validate", QUICKSTART.parent.parent / "quickstart.yaml"), "the result")])
def test_every_command_says_when_stdout_is_full(args, what):
    with open("/dev/full", "w") as full:
        process = evalkit_process(*args, env={"PYTHONUNBUFFERED": "1"}, stdout=full, stderr=subprocess.PIPE)
        _, stderr = process.communicate(timeout=300)
    assert (process.returncode, stderr) == (1, f"error: could not write {what} to standard output: {os.strerror(errno.ENOSPC)}\n")


def test_the_report_paths_printed_after_a_run_carry_no_escape(tmp_path):
    folder = "out\x1b]0;title\x07"
    done = evalkit_cli("run", quick(tmp_path, f"{folder}/r", formats=("csv",)), "-q", check=True)
    assert "\x1b" not in done.stderr and f"{visible(folder)}/r.csv" in done.stderr
    assert (tmp_path / folder / "r.csv").is_file()


def test_a_report_name_taken_by_a_folder_fails_that_writer_alone_before_any_rename(tmp_path):
    """``r.md`` an existing folder: the rename of the set failed half done (the CSV already
    replaced, nothing listed as written). Now the Markdown writer fails at once, naming the folder,
    and the others' reports are written and listed."""
    for file in ("reference.csv", "dwsnet.csv"):
        (tmp_path / file).write_bytes((QUICKSTART / file).read_bytes())
    (tmp_path / "results" / "r.md").mkdir(parents=True)
    config = {"name": "r", "data": {"reference": "reference.csv", "systems": {"s": "dwsnet.csv"}},
              "report": {"formats": ["csv", "markdown", "json"], "out": "results/r"}}
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    with pytest.raises(ReportError, match=r"^report writer 'markdown': could not write .*r\.md: it is a folder; "
                                          r"choose another `out:` name, or move the folder$") as caught:
        evalkit.run(tmp_path / "r.yaml", write_reports=True)
    assert sorted(Path(p).name for p in caught.value.results.reports) == ["r.csv", "r.json"]
    assert (tmp_path / "results" / "r.md").is_dir() and (tmp_path / "results" / "r.csv").is_file()
