"""The stated plugin API: plugins import evalkit only through ``evalkit.plugin`` (tests add the
author kit ``evalkit.testing``), that module and the registry stay cheap to import, every
optional member is declared and read through ``optional``, a near miss of a member's name is
refused at registration, and the contract version is shown and pinned."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from in_process import evalkit_cli

import evalkit
import evalkit.plugin
from evalkit import hookspecs
from evalkit.discovery import default_registry
from evalkit.errors import PluginContractError
from evalkit.protocols import KINDS, OPTIONAL, NoParams, optional
from evalkit.registry import Registry
from evalkit.scaffold import BODIES, evalkit_range, registered, write

ROOT = Path(__file__).resolve().parent.parent
GPS = ROOT / "docs" / "examples" / "evalkit-gps"
#: Libraries that would make building the registry (or importing the plugin API) slow.
HEAVY = ("scipy", "matplotlib", "networkx", "gensim")
#: What a plugin's tests may use of the package itself: the documented Python API.
USER_API = {"evaluate", "run"}


def plugin_modules() -> list[Path]:
    """Every module of every built-in plugin and of the GPS example's package."""
    return sorted(ROOT.glob("src/evalkit_*/**/*.py")) + sorted((GPS / "evalkit_gps").glob("**/*.py"))


def forbidden_imports(path: Path, test: bool) -> list[str]:
    """``file:line: what`` for each use of evalkit other than the plugin API (and, in a test
    file, the author kit and ``evalkit.evaluate``/``evalkit.run``)."""
    modules = {"evalkit.plugin", "evalkit.testing"} if test else {"evalkit.plugin"}
    imported = modules | {"evalkit"} if test else modules  # `import evalkit` for the user API
    attributes = {m.split(".")[1] for m in modules} | (USER_API if test else set())

    def ours(module: str) -> bool:
        return module == "evalkit" or module.startswith("evalkit.")

    bad = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            ok = all(not ours(a.name) or a.name in imported for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and ours(node.module or ""):
            user_api = test and node.module == "evalkit" and {a.name for a in node.names} <= USER_API
            ok = node.module in modules or user_api
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "evalkit":
            ok = node.attr in attributes
        else:
            continue
        if not ok:
            shown = f"evalkit.{node.attr}" if isinstance(node, ast.Attribute) else ast.unparse(node)
            bad.append(f"{path}:{node.lineno}: {shown}")
    return bad


def test_the_plugins_import_evalkit_only_through_the_plugin_api():
    modules = plugin_modules()
    assert len(modules) > 15 and GPS / "evalkit_gps" / "route_grid.py" in modules
    bad = [line for path in modules for line in forbidden_imports(path, test=False)]
    bad += [line for path in sorted((GPS / "tests").glob("*.py")) for line in forbidden_imports(path, test=True)]
    assert not bad, "import these from evalkit.plugin (tests: evalkit.testing):\n" + "\n".join(bad)


@pytest.mark.parametrize("kind", list(BODIES))
def test_new_plugin_skeletons_import_only_the_plugin_api(tmp_path, kind):
    folder = write(f"my_{kind}", kind, tmp_path)
    bad = forbidden_imports(folder / f"evalkit_my_{kind}" / "__init__.py", test=False)
    bad += forbidden_imports(folder / "tests" / f"test_my_{kind}.py", test=True)
    assert not bad, bad


def test_the_check_catches_private_imports(tmp_path):
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import evalkit\nfrom evalkit.table import Summary\nfrom evalkit.plugin import hookimpl\n"
        "from evalkit.testing import check_tnorm\n"
    )
    assert sorted(forbidden_imports(plugin, test=False)) == [
        f"{plugin}:1: import evalkit", f"{plugin}:2: from evalkit.table import Summary",
        f"{plugin}:4: from evalkit.testing import check_tnorm",
    ]
    tests = tmp_path / "test_plugin.py"
    tests.write_text(
        "import evalkit\nfrom evalkit.testing import check_tnorm\nfrom evalkit import run\n"
        "from evalkit import hookimpl\nevalkit.run('x')\nevalkit.discovery.default_registry()\n"
    )
    assert sorted(forbidden_imports(tests, test=True)) == [
        f"{tests}:4: from evalkit import hookimpl", f"{tests}:6: evalkit.discovery"
    ]


def modules_after(code: str) -> list[str]:
    """The heavy libraries and evalkit modules in sys.modules after running ``code`` afresh."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_the_plugin_api_is_cheap_to_import():
    loaded = modules_after("import evalkit.plugin")
    pipeline = ("evalkit.api", "evalkit.engine", "evalkit.scoring", "evalkit.uncertainty", "evalkit.stats")
    assert not [m for m in loaded if m.split(".")[0] in HEAVY or m in pipeline]


def test_building_the_registry_imports_no_heavy_library():
    loaded = modules_after(
        "from evalkit.discovery import default_registry\nassert not default_registry().failures"
    )
    assert "evalkit_ontology.ontology" in loaded  # every plugin was imported
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]


def test_the_plugin_api_exports_what_it_lists():
    assert sorted(evalkit.plugin.__all__) == sorted(set(evalkit.plugin.__all__))
    for name in evalkit.plugin.__all__:
        assert hasattr(evalkit.plugin, name), name
    assert evalkit.plugin.CONTRACT_VERSION == hookspecs.CONTRACT_VERSION
    assert evalkit.plugin.__version__ == evalkit.__version__


#: Names a plugin needs though no built-in, example or skeleton imports them: the protocols a
#: third party implements (the built-ins satisfy them structurally, without naming them) and
#: the contract version a plugin may check.
NEEDED_UNUSED = {"Averaging", "DataMetric", "Loader", "ReportWriter", "SetRepresentation", "CONTRACT_VERSION"}


def imported_from_the_plugin_api(path: Path) -> set[str]:
    """The names a file imports from ``evalkit.plugin``."""
    return {
        alias.name for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        if isinstance(node, ast.ImportFrom) and node.module == "evalkit.plugin" for alias in node.names
    }


def test_the_plugin_api_holds_what_plugins_need_and_no_more(tmp_path):
    """Every name is imported by a built-in plugin, the GPS example or a skeleton of
    ``evalkit new-plugin``, or is one of the few a plugin needs without a built-in naming it; a
    name that falls out of use fails here, to be kept with a reason or removed with a new major
    contract version."""
    skeletons = [write(f"my_{kind}", kind, tmp_path) / f"evalkit_my_{kind}" / "__init__.py" for kind in BODIES]
    used = set().union(*map(imported_from_the_plugin_api, [*plugin_modules(), *skeletons]))
    assert used <= set(evalkit.plugin.__all__)
    assert set(evalkit.plugin.__all__) - used == NEEDED_UNUSED


def test_register_is_the_callback_the_hooks_receive():
    """``Register`` declares the signature of the callback a registration hook is handed."""
    callback = Registry().register_for("tnorm", "evalkit-y:y", "evalkit-y")
    declared = inspect.signature(evalkit.plugin.Register.__call__)
    assert str(inspect.signature(callback)) == str(declared.replace(parameters=list(declared.parameters.values())[1:]))


def test_create_component_builds_from_a_spec_like_a_config():
    tnorm = evalkit.plugin.create_component("tnorm", {"name": "hamacher", "p": 0.5}, where="here")
    assert tnorm.params.p == 0.5 and "hamacher(p=0.5)" in evalkit.plugin.who(tnorm)
    with pytest.raises(evalkit.plugin.ConfigError, match="^here: unknown tnorm 'hamacker'"):
        evalkit.plugin.create_component("tnorm", "hamacker", where="here")


# ---------------------------------------------------------------------------------------------
# Optional members
# ---------------------------------------------------------------------------------------------


def test_every_kind_declares_its_optional_members_once():
    assert set(OPTIONAL) == set(KINDS)
    names = [m.name for members in OPTIONAL.values() for m in members]
    assert len(names) == len(set(names)), "optional() looks members up by name alone"
    for member in (m for members in OPTIONAL.values() for m in members):
        assert member.meaning and (member.args is None or member.default is None), member


def _string_calls(path: Path, functions: set[str]) -> list[tuple[int, str, str]]:
    """(line, function, name) of every ``function(x, "name", ...)`` call in a file."""
    calls = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions
            and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
        ):
            calls.append((node.lineno, node.func.id, node.args[1].value))
    return calls


def test_optional_members_are_read_only_through_optional():
    declared = {m.name for members in OPTIONAL.values() for m in members}
    files = sorted(ROOT.glob("src/evalkit/**/*.py")) + plugin_modules() + sorted((ROOT / "docs" / "hooks").glob("*.py"))
    read = [(f, line, n) for f in files for line, _, n in _string_calls(f, {"optional"})]
    assert {n for _, _, n in read} == declared, "every declared member is read somewhere, and no other"
    bypass = [
        f"{f}:{line}: {func}(..., {name!r})" for f in files
        for line, func, name in _string_calls(f, {"getattr", "hasattr"}) if name in declared
    ]
    assert not bypass, "read optional members with evalkit.plugin.optional:\n" + "\n".join(bypass)


class Plain:
    """A similarity with only what it must have."""

    name, Params = "plain", NoParams

    def __init__(self, params):
        self.params = params

    def matrix(self, xs, ys):
        return np.zeros((len(xs), len(ys)))


def test_optional_gives_the_member_or_its_default_through_the_wrapper():
    registry = default_registry()
    levenshtein = registry.create("similarity", "levenshtein")
    assert optional(levenshtein, "symmetric") is True
    with pytest.raises(ValueError, match=r"pairs\(\) needs two lists of equal length"):
        optional(levenshtein, "pairs")(["a"], [])  # the wrapper's guarded method
    plain = Plain(NoParams())
    assert optional(plain, "symmetric") is False and optional(plain, "pairs") is None
    assert optional(Plain, "check") is None
    with pytest.raises(ValueError, match="'symetric' is not an optional member"):
        optional(levenshtein, "symetric")


def test_the_guide_generates_its_table_of_optional_members():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        table = importlib.import_module("evalkit_docs").generate("optional-members", {})
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    assert "<!-- evalkit:optional-members -->" in (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    for kind, members in OPTIONAL.items():
        for member in members:
            assert f"| `{kind}` | `{member.signature}` |" in table


# ---------------------------------------------------------------------------------------------
# Near misses of member names
# ---------------------------------------------------------------------------------------------


def register(kind: str, **attributes) -> None:
    """Register a class with ``attributes`` into a fresh registry, as plugin evalkit-y:y."""
    Registry().register_for(kind, "evalkit-y:y", "evalkit-y")(type("Overlap", (Plain,), attributes))


def misspelt(kind: str, attribute: str, meant: str) -> str:
    return (
        f"plugin 'evalkit-y:y' (distribution 'evalkit-y') registering {kind} Overlap: {attribute!r} "
        f"is not a member of the {kind} contract, so evalkit would ignore it. Did you mean {meant!r}? "
        f"Rename it to {meant!r}, or, if it is a helper of your own, make it private with a leading "
        f"underscore ('_{attribute}')"
    )


@pytest.mark.parametrize(
    ("kind", "attributes", "meant"),
    [
        ("similarity", {"symetric": True}, "symmetric"),
        ("similarity", {"pair": lambda self, xs, ys: np.ones(len(xs))}, "pairs"),
        ("metric", {"ratio": lambda self, r, p, i: (i, p), "lower_is_beter": True}, "lower_is_better"),
    ],
)
def test_a_near_miss_of_a_member_is_refused(kind, attributes, meant):
    (attribute,) = set(attributes) - {"ratio"}
    with pytest.raises(PluginContractError) as refused:
        register(kind, **attributes)
    assert str(refused.value) == misspelt(kind, attribute, meant)


def test_the_guide_shows_the_near_miss_message():
    page = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    assert misspelt("similarity", "symetric", "symmetric") in page


def test_helpers_with_other_names_are_accepted():
    register("similarity", checked=[], tokens=lambda self, x: x.split(), _pair=None, symmetric=True)


def test_no_builtin_example_or_skeleton_is_a_near_miss(tmp_path, monkeypatch):
    assert default_registry().failures == []
    monkeypatch.syspath_prepend(str(GPS))
    Registry().register_for("similarity", "evalkit-gps:gps", "evalkit-gps")(
        importlib.import_module("evalkit_gps").RouteGrid
    )
    for kind in BODIES:
        folder = write(f"my_{kind}", kind, tmp_path)
        monkeypatch.syspath_prepend(str(folder))
        module = importlib.import_module(f"evalkit_my_{kind}")
        cls = getattr(module, "".join(part.title() for part in f"my_{kind}".split("_")))
        Registry().register_for(registered(kind), f"evalkit-my-{kind}:my_{kind}", f"evalkit-my-{kind}")(cls)


# ---------------------------------------------------------------------------------------------
# The contract version
# ---------------------------------------------------------------------------------------------


def test_evalkit_plugins_shows_the_contract_version():
    def plugins(*args: str) -> str:
        return evalkit_cli("plugins", *args, check=True).stdout

    version, contract = evalkit.__version__, hookspecs.CONTRACT_VERSION
    assert plugins().splitlines()[0] == f"evalkit {version}, plugin contract {contract}"
    listing = json.loads(plugins("--format", "json"))
    assert (listing["evalkit_version"], listing["contract_version"]) == (version, contract)


@pytest.mark.parametrize(
    ("version", "expected"),
    [("0.1.0", ">=0.1,<0.2"), ("0.12.3.dev1", ">=0.12,<0.13"), ("1.4.2", ">=1.4,<2"), ("2.0rc1", ">=2.0,<3")],
)
def test_the_evalkit_range_ends_before_a_release_that_may_break_the_contract(version, expected):
    assert evalkit_range(version) == expected


def test_new_plugin_pins_the_running_evalkit_range(tmp_path):
    pyproject = (write("pinned", "tnorm", tmp_path) / "pyproject.toml").read_text()
    assert f'dependencies = ["evalkit{evalkit_range(evalkit.__version__)}", "numpy"]' in pyproject
    assert f"plugin contract {hookspecs.CONTRACT_VERSION}" in pyproject
