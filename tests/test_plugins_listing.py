"""`evalkit plugins` at a glance (issue 28, item 5): one line per component grouped by kind and cut
to the terminal, `--kind`, and a name for one component in full."""

from __future__ import annotations

import json

import pytest
from in_process import evalkit_cli

from evalkit.discovery import default_registry
from evalkit.errors import plural


def listed(*args: str, columns: int = 80) -> str:
    return evalkit_cli("plugins", *args, env={"COLUMNS": str(columns)}, check=True).stdout


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_one_line_per_component_under_a_heading_per_kind_within_the_width(columns):
    registry = list(default_registry())
    kinds = list(dict.fromkeys(e.kind for e in registry))
    lines = listed(columns=columns).splitlines()
    assert max(map(len, lines)) <= columns
    # two header lines, a blank and a heading per kind, a line per component, a blank and the hint
    assert len(lines) == 2 + 2 * len(kinds) + len(registry) + 2
    for kind in kinds:
        names = sorted(e.name for e in registry if e.kind == kind)
        heading = lines.index(f"{plural(kind).replace('_', ' ')} ({len(names)})")
        rows = lines[heading + 1: heading + 1 + len(names)]
        assert [row.split()[0] for row in rows] == names
        assert all(row.split()[1] == "evalkit" for row in rows)


def test_a_summary_is_shown_whole_when_it_fits_and_cut_with_an_ellipsis():
    rows = {line.split()[0]: line for line in listed(columns=400).splitlines() if line.startswith("  ")}
    for name in ("fbeta", "levenshtein"):  # levenshtein's cites "eq. 6", no sentence end
        assert rows[name].endswith(next(e for e in default_registry() if e.name == name).summary)
    narrow = {line.split()[0]: line for line in listed(columns=40).splitlines() if line.startswith("  ")}
    assert len(narrow["fbeta"]) == 40 and narrow["fbeta"].endswith("…")


def test_kind_lists_one_kind_singular_or_plural():
    tnorms = sorted(e.name for e in default_registry() if e.kind == "tnorm")
    for written in ("tnorm", "tnorms", "TNorms"):
        rows = [line.split()[0] for line in listed("--kind", written).splitlines() if line.startswith("  ")]
        assert rows == tnorms
    done = evalkit_cli("plugins", "--kind", "tnrm")
    assert done.returncode == 1
    assert done.stderr.startswith("error: --kind 'tnrm' is no kind of component; did you mean 'tnorm'? The kinds: ")


def test_a_name_shows_the_component_in_full_from_its_params_model():
    entry = next(e for e in default_registry() if e.name == "hamacher")
    text = listed("hamacher", columns=200)
    (p,) = entry.params.items()
    assert text.splitlines() == [
        "hamacher: a tnorm from evalkit (plugin evalkit:tnorms)",
        f"  {entry.summary}",
        "",
        "  in a config: tnorm: hamacher",
        "",
        "  parameters:",
        f"    p (number, default {p[1]['default']!r}, ≥ {p[1]['minimum']}): {p[1]['description']}",
    ]


def test_every_component_can_be_shown_and_a_loader_says_how_a_source_names_it():
    for entry in default_registry():
        text = listed("--kind", entry.kind, entry.name, columns=100)
        assert text.startswith(f"{entry.name}: a {entry.kind.replace('_', ' ')} from evalkit")
        assert all(f"    {key} (" in text for key in entry.params)
    assert "in a config: {path: FILE, loader: events}" in listed("events")


def test_an_unknown_name_suggests_the_closest():
    done = evalkit_cli("plugins", "levenstein")
    assert (done.returncode, done.stderr) == (
        1, "error: no component is called 'levenstein'; did you mean 'levenshtein', 'einstein', "
           "'damerau_levenshtein'? (see `evalkit plugins`)\n")
    done = evalkit_cli("plugins", "--kind", "tnorm", "levenshtein")
    assert done.stderr.startswith("error: no tnorm is called 'levenshtein'")


def test_json_lists_what_was_chosen():
    listing = json.loads(listed("--format", "json", "--kind", "averaging"))
    assert {c["name"] for c in listing["components"]} == {e.name for e in default_registry() if e.kind == "averaging"}
    (one,) = json.loads(listed("--format", "json", "hamacher"))["components"]
    assert one["params"] == next(e for e in default_registry() if e.name == "hamacher").params
