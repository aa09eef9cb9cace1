"""The documentation site: every config shown runs, the numbers quoted are evalkit's, the Python
examples give the output shown, the plugin guide's example plugin works, and the site builds
with `mkdocs build --strict` without a warning.

Configs on the pages are written relative to configs/ (as if saved next to the bundled ones),
so they run from there; the Python examples run from the repository root.
"""

from __future__ import annotations

import difflib
import doctest
import re
import subprocess
import sys
import types
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

import evalkit
from evalkit.discovery import build_registry, default_registry, make_plugin_manager
from evalkit.protocols import KINDS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: The pages of the site: docs/examples/ (complete example packages) and docs/hooks/ (the
#: generator) are excluded from the build, as in mkdocs.yml.
PAGES = sorted(
    p for p in DOCS.rglob("*.md") if p.relative_to(DOCS).parts[0] not in ("examples", "hooks")
)
FENCE = re.compile(r"^```(?P<lang>[a-z]*)[^\n]*\n(?P<body>.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def blocks(page: Path, lang: str) -> list[tuple[int, str]]:
    """(line, body) of every fenced block of ``lang`` on a page."""
    text = page.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 1, m["body"])
        for m in FENCE.finditer(text)
        if m["lang"] == lang
    ]


def doc_configs() -> list[Any]:
    """Every ```yaml block of the site that is a full config (a top-level ``data:`` key)."""
    found = []
    for page in PAGES:
        for line, body in blocks(page, "yaml"):
            config = yaml.safe_load(body)
            if isinstance(config, dict) and "data" in config:
                found.append(pytest.param(page.name, config, id=f"{page.name}:{line}"))
    return found


CONFIGS = doc_configs()


# ---------------------------------------------------------------------------------------------
# The plugin guide's example plugin, built from its code blocks
# ---------------------------------------------------------------------------------------------


def guide_modules() -> dict[str, types.ModuleType]:
    """The packages written out on the pages: ```python blocks whose first line is
    ``# <package>/__init__.py``, each executed as that module."""
    modules = {}
    for page in PAGES:
        for _, body in blocks(page, "python"):
            first = body.splitlines()[0] if body.strip() else ""
            match = re.fullmatch(r"# (\w+)/__init__\.py", first.strip())
            if match:
                module = types.ModuleType(match[1])
                exec(compile(body, f"{page.name}:{match[1]}", "exec"), module.__dict__)
                modules[match[1]] = module
    return modules


MODULES = guide_modules()


@pytest.fixture(scope="module")
def registry():
    """The installed plugins plus the example plugins of the pages."""
    extra = {f"{name.replace('_', '-')}:{name}": module for name, module in MODULES.items()}
    registry = build_registry(*make_plugin_manager(extra=extra))
    assert registry.conflicts == [], registry.conflicts
    return registry


_RESULTS: dict[tuple[str, str], Any] = {}


def results_of(page: str, name: str, registry, **overrides: Any) -> Any:
    """The results of the config named ``name`` on ``page``, run from configs/."""
    key = (page, name, repr(sorted(overrides.items())))
    if key not in _RESULTS:
        (config,) = [c.values[1] for c in CONFIGS if c.values[0] == page and c.values[1].get("name") == name]
        config = {**config, **overrides}
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(ROOT / "configs")
            _RESULTS[key] = evalkit.run(config, registry=registry, write_reports=False)
    return _RESULTS[key]


def value(results: Any, **where: Any) -> float:
    """The one value of the rows matching ``where`` (field=value; ``class_`` for the class)."""
    rows = [r for r in results.rows if all(getattr(r, k) == v for k, v in where.items())]
    assert len(rows) == 1, f"{len(rows)} rows match {where}"
    return rows[0].value


# ---------------------------------------------------------------------------------------------
# Every config runs
# ---------------------------------------------------------------------------------------------


def test_the_pages_hold_configs():
    assert len(CONFIGS) >= 10
    names = [c.values[1].get("name") for c in CONFIGS]
    assert all(names), "every doc config has a name (results are looked up by it)"
    assert len(set(zip([c.values[0] for c in CONFIGS], names))) == len(names), "names are unique per page"


@pytest.mark.parametrize("page,config", CONFIGS)
def test_doc_config_runs(page, config, registry):
    results = results_of(page, config["name"], registry)
    assert results.rows
    assert all(isinstance(r.value, float) for r in results.rows)


def test_quickstart_on_the_front_page_is_the_bundled_one():
    (config,) = [c.values[1] for c in CONFIGS if c.values[0] == "index.md" and c.values[1]["name"] == "quickstart"]
    assert config == yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# The numbers quoted on the pages
# ---------------------------------------------------------------------------------------------

F = Fraction
#: (page, config, where, expected): exact fractions where the page derives them by hand, else
#: the 4 decimals the page shows.
QUOTED = [
    # faq.md: soft precision above 1 (cat, dog / pet)
    *[
        ("faq.md", "precision_above_one", {"representation": rep, "metric": m}, v)
        for rep, row in {
            "soft_cardinality": [2, 1, F(11, 6), F(7, 6), F(7, 6), F(7, 12), F(7, 9)],
            "soft_cardinality(bound=True)": [2, 1, 2, 1, 1, F(1, 2), F(2, 3)],
            "exact_match": [2, 1, 3, 0, 0, 0, 0],
        }.items()
        for m, v in zip(["card_ref", "card_pred", "card_union", "card_inter", "precision", "recall", "f1"], row)
    ],
    # faq.md: OmAP₀ is not mAP
    ("faq.md", "omap_lambda0", {"system": "near", "metric": "map"}, F(5, 6)),
    ("faq.md", "omap_lambda0", {"system": "far", "metric": "map"}, F(5, 6)),
    ("faq.md", "omap_lambda0", {"system": "near", "metric": "omap_lambda0"}, F(26, 27)),
    ("faq.md", "omap_lambda0", {"system": "far", "metric": "omap_lambda0"}, F(4, 5)),
    ("faq.md", "omap_lambda0", {"system": "near", "metric": "omap"}, 0.9972),
    ("faq.md", "omap_lambda0", {"system": "far", "metric": "omap"}, 0.8089),
    # faq.md: the silent segment, with zero_division: nan
    *[
        ("faq.md", "silence", {"averaging": a, "metric": m}, 1)
        for a in ("micro", "macro", "samples") for m in ("precision", "recall", "f1")
    ],
    # metrics.md: Kelz's two frames
    *[
        ("metrics.md", "kelz_frames", {"averaging": a, "metric": m}, v)
        for a, row in {
            "micro": [F(1, 2), 1, F(2, 3)],
            "samples": [F(1, 3), F(1, 2), F(2, 5)],
            "samples_pr": [F(1, 3), F(1, 2), F(2, 5)],
        }.items()
        for m, v in zip(["precision", "recall", "f1"], row)
    ],
    # comparing.md: one split cell, and F of averages versus average of F
    *[
        ("comparing.md", "calibration", {"system": s, "tnorm": t, "metric": "f1"}, v)
        for s, row in {"calibrated": [1, F(1, 2), 0], "overconfident": [F(2, 3)] * 3}.items()
        for t, v in zip(["minimum", "product", "lukasiewicz"], row)
    ],
    *[
        ("comparing.md", "f_of_averages", {"averaging": a, "metric": m}, v)
        for a, row in {
            "micro": [F(2, 5)] * 3,
            "samples": [F(5, 8), F(5, 8), F(2, 5)],
            "samples_pr": [F(5, 8)] * 3,
        }.items()
        for m, v in zip(["precision", "recall", "f1"], row)
    ],
    ("comparing.md", "compare_tnorms", {"system": "perfect", "tnorm": "minimum", "averaging": "micro", "metric": "f1"}, 1),
    ("comparing.md", "compare_tnorms", {"system": "perfect", "tnorm": "product", "averaging": "micro", "metric": "f1"}, 0.6681),
    # configuration.md: two ways of writing the same predictions
    *[
        ("configuration.md", "data_sources", {"system": s, "metric": m}, v)
        for s in ("rows", "named")
        for m, v in (("precision", F(25, 29)), ("recall", F(5, 6)))
    ],
    # configuration.md: sample weights, summed by hand
    ("configuration.md", "weighted", {"metric": "precision"}, F(295, 340)),
    ("configuration.md", "weighted", {"metric": "recall"}, F(295, 350)),
    # plugins.md: the Mayor–Torrens example
    ("plugins.md", "mayor_torrens", {"tnorm": "mayor_torrens(lam=0)", "metric": "f1"}, 0.8810),
    ("plugins.md", "mayor_torrens", {"tnorm": "mayor_torrens(lam=0.5)", "metric": "f1"}, 0.6928),
    ("plugins.md", "mayor_torrens", {"tnorm": "mayor_torrens(lam=1)", "metric": "f1"}, 0.5162),
]


@pytest.mark.parametrize(
    "page,name,where,expected", QUOTED, ids=[f"{p}:{n}:{','.join(map(str, w.values()))}" for p, n, w, _ in QUOTED]
)
def test_quoted_number(page, name, where, expected, registry):
    got = value(results_of(page, name, registry), **where)
    if name != "silence":  # the page shows the number (its table of zero_division is checked below)
        assert f"{float(expected):.4f}" in (DOCS / page).read_text(encoding="utf-8")
    if isinstance(expected, float):  # shown with 4 decimals
        assert round(got, 4) == expected, got
    else:
        assert got == pytest.approx(float(expected), abs=1e-12)


def test_faq_cafe_numbers(registry):
    """The Café cardinalities faq.md quotes from configs/soft_keywords.yaml."""
    results = evalkit.run(ROOT / "configs" / "soft_keywords.yaml", registry=registry, write_reports=False)
    cafe = {r.metric: r.value for r in results.rows if r.representation == "soft_cardinality" and r.class_ == "cafe"}
    assert {m: round(cafe[m], 4) for m in ("card_ref", "card_pred", "card_inter")} == {
        "card_ref": 2.6667, "card_pred": 2.4475, "card_inter": 2.2034
    }
    page = (DOCS / "faq.md").read_text(encoding="utf-8")
    assert all(n in page for n in ("2.6667", "2.4475", "2.2034"))


def test_faq_zero_division_table(registry):
    """The three rows of the zero_division table, and Kelz's samples recall under each."""
    for zero_division, samples in ((0, 0.5), (1, 1.0), ("nan", 1.0)):
        silence = results_of("faq.md", "silence", registry, zero_division=zero_division)
        kelz = results_of("metrics.md", "kelz_frames", registry, zero_division=zero_division)
        for metric in ("precision", "recall", "f1"):  # crisp: integer sums, one division, exact
            assert value(silence, averaging="samples", metric=metric) == samples
            assert value(silence, averaging="micro", metric=metric) == 1
            assert value(silence, averaging="macro", metric=metric) == 1
        assert value(kelz, averaging="samples", metric="recall") == samples
        assert value(kelz, averaging="samples", metric="precision") == pytest.approx(1 / 3)
        assert value(kelz, averaging="samples", metric="f1") == pytest.approx(0.4)


def test_comparing_claims(registry):
    """What comparing.md says about its big table."""
    results = results_of("comparing.md", "compare_tnorms", registry)
    v = {(r.system, r.tnorm, r.averaging, r.metric): r.value for r in results.rows}
    tnorms = list(dict.fromkeys(r.tnorm for r in results.rows))
    averagings = list(dict.fromkeys(r.averaging for r in results.rows))
    assert len(tnorms) == len(default_registry().names("tnorm")) == 12
    # the minimum bounds every T-norm, and the perfect prediction scores 1 only under it
    for t in tnorms:
        for s in ("dwsnet", "baseline", "tiny", "perfect"):
            for m in ("precision", "recall", "f1"):
                assert v[(s, t, "micro", m)] <= v[(s, "minimum", "micro", m)] + 1e-12
        assert (v[("perfect", t, "micro", "f1")] == 1) == (t == "minimum")  # min(x, x) = x: 2S / (S + S)
    # the Hamacher family decreases in p: p = 0, product (p = 1), einstein (p = 2), drastic
    chain = [v[("dwsnet", t, "micro", "f1")] for t in ("hamacher(p=0)", "product", "einstein", "drastic")]
    assert chain == sorted(chain, reverse=True)
    # the spread between dwsnet and tiny
    spread = {t: v[("dwsnet", t, "micro", "f1")] - v[("tiny", t, "micro", "f1")] for t in tnorms}
    assert (round(spread["minimum"], 3), round(spread["drastic"], 3)) == (0.170, 0.048)
    # the same ranking everywhere, and average of F <= F of averages (Jensen)
    for t in tnorms:
        for a in averagings:
            assert v[("dwsnet", t, a, "f1")] > v[("baseline", t, a, "f1")] > v[("tiny", t, a, "f1")]
        for s in ("dwsnet", "baseline", "tiny", "perfect"):
            assert v[(s, t, "macro", "f1")] <= v[(s, t, "macro_pr", "f1")] + 1e-12
            assert v[(s, t, "samples", "f1")] <= v[(s, t, "samples_pr", "f1")] + 1e-12
            assert v[(s, t, "macro", "precision")] == pytest.approx(v[(s, t, "macro_pr", "precision")])


def test_mayor_torrens_ends_are_the_builtins(registry):
    results = results_of("plugins.md", "mayor_torrens", registry)
    f1 = {r.tnorm: r.value for r in results.rows}
    assert f1["mayor_torrens(lam=0)"] == f1["minimum"]  # λ = 0: min(a, b) in every cell, so the same sums
    # λ = 1 rounds a − (1 − b), Łukasiewicz min − (1 − max): a cell may differ in its last bit
    # (1 − b is inexact for some b < 1/2), so the sums agree to rounding, not bit for bit
    assert f1["mayor_torrens(lam=1)"] == pytest.approx(f1["lukasiewicz"], rel=1e-12)


def test_plugin_error_table_shows_evalkits_messages(monkeypatch):
    """Each message of the table in plugins.md, reproduced, appears there verbatim."""
    import importlib.metadata
    from dataclasses import dataclass

    import numpy as np

    from evalkit.errors import ConfigError, PluginContractError
    from evalkit.protocols import NoParams
    from evalkit.table import CardinalityTable

    @dataclass
    class Dist:
        name: str

    @dataclass
    class BrokenEntryPoint:
        name: str
        value: str
        dist: Dist
        group: str = "evalkit"

        def load(self):
            raise ImportError(f"No module named {self.value!r}")

    real = importlib.metadata.entry_points

    def entry_points(**kwargs):  # evalkit's own plugins and a broken evalkit-gps
        found = list(real(**kwargs))
        if kwargs.get("group") != "evalkit":
            return found
        builtins = [e for e in found if e.dist is not None and e.dist.name == "evalkit"]
        return builtins + [BrokenEntryPoint("gps", "evalkit_gps", Dist("evalkit-gps"))]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)

    class Typo:
        __name__ = "typo"

        @evalkit.hookimpl
        def evalkit_register_tnorm(self, register):
            pass

    class BadSets:
        name, uses, data, Params = "bad_sets", frozenset(), "matrix", NoParams

        def __init__(self, params):
            self.params = params

        def cardinalities(self, reference, prediction, *, tnorm, similarity):
            return CardinalityTable(reference, prediction, reference[:, :1])  # one column short

    class Bad:
        __name__ = "bad"

        @evalkit.hookimpl
        def evalkit_register_tnorms(self, register):
            raise RuntimeError("boom")

        @evalkit.hookimpl
        def evalkit_register_set_representations(self, register):
            register(BadSets)

    class BadName:
        __name__ = "x"

        @evalkit.hookimpl
        def evalkit_register_tnorms(self, register):
            register(type("MyNorm", (), {"name": "my-norm", "Params": NoParams, "__call__": lambda s, a, b: a}))

    class Clash:
        __name__ = "toy"

        @evalkit.hookimpl
        def evalkit_register_tnorms(self, register):
            from evalkit_tnorms import Minimum

            register(Minimum)

    registry = build_registry(*make_plugin_manager(extra={
        "evalkit-typo:typo": Typo(), "evalkit-bad:bad": Bad(), "evalkit-x:x": BadName(),
        "evalkit-toy:toy": Clash(),
    }))
    messages = [str(f) for f in registry.failures] + registry.conflicts
    assert len(messages) == 5, messages
    with pytest.raises(ConfigError) as bad_parameter:
        evalkit.evaluate([[0.5]], [[0.5]], tnorm={"name": "hamacher", "q": 1})
    messages.append(str(bad_parameter.value).split(": ", 2)[-1])
    data = np.array([[0.5, 1.0], [0.2, 0.0]])
    with pytest.raises(PluginContractError) as wrong:
        evalkit.evaluate(data, data, representation="bad_sets", registry=registry)
    messages.append(str(wrong.value))

    page = (DOCS / "plugins.md").read_text(encoding="utf-8")
    for message in messages:
        assert message in page, message


# ---------------------------------------------------------------------------------------------
# Python on the pages
# ---------------------------------------------------------------------------------------------


def test_the_guide_defines_its_example_plugin():
    assert "evalkit_mayor_torrens" in MODULES


@pytest.mark.parametrize(
    "page,line,body",
    [
        pytest.param(page, line, body, id=f"{page.name}:{line}")
        for page in PAGES
        for line, body in blocks(page, "python")
        if re.match(r"# tests/\w+\.py\n", body)
    ],
)
def test_guide_test_files_pass(page, line, body, monkeypatch, registry):
    """The test files written out on the pages run, against the example plugin."""
    for name, module in MODULES.items():
        monkeypatch.setitem(sys.modules, name, module)
    namespace: dict[str, Any] = {}
    exec(compile(body, f"{page.name}:{line}", "exec"), namespace)
    tests = {k: f for k, f in namespace.items() if k.startswith("test_") and callable(f)}
    assert tests
    for func in tests.values():
        marks = [m for m in getattr(func, "pytestmark", []) if m.name == "parametrize"]
        if not marks:
            func()
            continue
        ((argnames, argvalues),) = [m.args[:2] for m in marks]
        names = [n.strip() for n in argnames.split(",")] if isinstance(argnames, str) else list(argnames)
        for values in argvalues:
            func(**dict(zip(names, values if len(names) > 1 else (values,))))


@pytest.mark.parametrize(
    "page", [p for p in PAGES if any(b.lstrip().startswith(">>>") for _, b in blocks(p, "python"))],
    ids=lambda p: p.name,
)
def test_python_examples_give_the_output_shown(page, monkeypatch):
    """The ``>>>`` blocks of a page, in order and sharing their names like one session."""
    monkeypatch.chdir(ROOT)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    globs: dict[str, Any] = {}
    output: list[str] = []
    for line, body in blocks(page, "python"):
        if body.lstrip().startswith(">>>"):
            test = doctest.DocTestParser().get_doctest(body, globs, f"{page.name}:{line}", str(page), line)
            runner.run(test, out=output.append, clear_globs=False)
            globs = test.globs  # the next block continues the session
    assert runner.tries > 0
    assert runner.failures == 0, "".join(output)


# ---------------------------------------------------------------------------------------------
# The site
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hook():
    """docs/hooks/evalkit_docs.py, imported as MkDocs and its command do: with its folder on
    sys.path, for its sibling modules."""
    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        import evalkit_docs
    finally:
        sys.path.remove(str(DOCS / "hooks"))
    return evalkit_docs


def test_the_generated_sections_are_current(hook):
    """The reference written into the pages is what the code gives now."""
    stale = hook.stale_pages()
    first = next(iter(stale), None)
    diff = "" if first is None else "".join(
        list(difflib.unified_diff(
            first.read_text(encoding="utf-8").splitlines(True), stale[first].splitlines(True), first.name, "regenerated",
        ))[:40]
    )
    assert not stale, (
        f"stale generated sections in {', '.join(p.name for p in stale)}: regenerate them with "
        f"`{hook.COMMAND}`\n{diff}"
    )


def test_no_generated_section_is_empty(hook):
    """Every marker of a page opens a section that is closed and filled in the repository."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        sections = list(hook.SECTION.finditer(text))
        assert len(sections) == len(re.findall(r"^<!-- evalkit:", text, re.MULTILINE)), page.name
        for section in sections:
            assert section["body"].strip(), f"{page.name}: {section['open']} is empty"


def test_the_command_writes_stale_sections_and_check_names_it(hook, tmp_path, monkeypatch, capsys):
    """--check lists a stale page and exits 1 with the command; --write fills its section and
    keeps the prose around it; a second --check is clean."""
    page = tmp_path / "page.md"
    before, after = "# A page\n\n<!-- evalkit:bundled-configs -->\n", "<!-- /evalkit:bundled-configs -->\n\nProse.\n"
    page.write_text(before + "an old table\n" + after, encoding="utf-8")
    monkeypatch.setattr(hook, "DOCS", tmp_path)
    assert hook.main(["--check"]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == (f"stale: {tmp_path.name}/page.md\n", f"regenerate them with `{hook.COMMAND}`\n")
    assert hook.main(["--write"]) == 0
    assert page.read_text(encoding="utf-8") == before + "\n" + hook.generate("bundled-configs", {}) + "\n" + after
    assert hook.main(["--check"]) == 0


def test_every_config_section_and_key_is_documented(hook):
    """Every model reachable from RunConfig's fields has a section of config-keys, and every
    field of it a row, so a section added to the config cannot be left out of the reference."""
    import inspect
    import typing

    from pydantic import BaseModel

    from evalkit.config import RunConfig

    def models(annotation: Any) -> list[type]:
        own = [annotation] if inspect.isclass(annotation) and issubclass(annotation, BaseModel) else []
        return own + [m for arg in typing.get_args(annotation) for m in models(arg)]

    text = hook.generate("config-keys", {})
    sections = re.split(r"^<a id=", text, flags=re.MULTILINE)
    seen, todo = set(), [RunConfig]
    while todo:
        model = todo.pop()
        if model in seen:
            continue
        seen.add(model)
        found = [s for s in sections if f"`{model.__module__}.{model.__name__}`. Unknown keys" in s]
        assert len(found) == 1, f"{model.__name__} has {len(found)} sections: list it in evalkit_tables.config_keys"
        section = found[0]
        for name, field in model.model_fields.items():
            assert f"\n| `{field.alias or name}` |" in section, (model.__name__, name)
            todo += models(field.annotation)
    assert len(seen) == len(sections) - 1  # no section of a model the config does not use


def test_an_unpaired_marker_names_the_page_line_and_fix(hook):
    with pytest.raises(ValueError, match=r"^x\.md:3: '<!-- evalkit:cli -->' is not one of a pair: .* <!-- /evalkit:NAME -->"):
        hook.fill("# x\n\n<!-- evalkit:cli -->\n\ntext\n", "x.md")
    with pytest.raises(ValueError, match=r"^x\.md: cannot generate <!-- evalkit:nope -->: ValueError: unknown marker"):
        hook.fill("<!-- evalkit:nope -->\n<!-- /evalkit:nope -->\n", "x.md")


@pytest.mark.slow
def test_site_builds_strictly_without_warnings(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert "WARNING" not in log, log

    # The generated reference covers every built-in component, every hook and every check.
    config = (site / "configuration" / "index.html").read_text(encoding="utf-8")
    for entry in default_registry():
        if entry.distribution == "evalkit":
            assert f'id="{entry.kind}-{entry.name}"' in config, entry
    hooks = (site / "plugin-reference" / "index.html").read_text(encoding="utf-8")
    for _, hook in KINDS.values():
        assert f'id="{hook}"' in hooks, hook
    from evalkit import testing

    for kind in KINDS:
        if hasattr(testing, f"check_{kind}"):
            assert f'id="check_{kind}"' in hooks, kind
    html = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
    assert "<!-- evalkit:" not in html, "a marker was left unreplaced"


def test_the_bundled_configs_are_listed_from_the_folder(hook):
    """docs/index.md's table is generated from configs/ (each config's first comment sentence);
    the README's prose list names every config too."""
    table = hook.generate("bundled-configs", {})
    configs = sorted(p.name for p in (ROOT / "configs").glob("*.yaml"))
    assert re.findall(r"^\| `([a-z0-9_]+\.yaml)` \| \S", table, re.MULTILINE) == configs
    assert "<!-- evalkit:bundled-configs -->" in (DOCS / "index.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [c for c in configs if c not in readme] == []


def test_ci_runs_the_readmes_lines_with_every_test():
    """What the README tells a newcomer to run is what CI runs, word for word, plus the switch
    the README names for the slow tests (so a green CI means the README's lines work)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [line for block in re.findall(r"```bash\n(.*?)```", readme, re.S) for line in block.splitlines()]
    quick_start = next(line for line in lines if "evalkit run configs/quickstart.yaml" in line)
    tests = next(line for line in lines if line.endswith("python -m pytest"))
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert [line for line in ci if "pip install" in line] == [quick_start, tests]
    assert "export DEBIAN_FRONTEND=noninteractive EVALKIT_TESTS=all" in ci and "`EVALKIT_TESTS=all`" in readme
