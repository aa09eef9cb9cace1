"""The layers of the core as a contract: a module imports only from its own layer or lower ones.

The layer table lives here, and only here: it is what the suite enforces, and the picture in
``docs/design.md`` is checked against it (the page names every module under its layer), so a new
module is placed once, in this table, and the page follows or the suite fails.

Every kind of import counts, since each is a real dependency: top level, inside a function (the
CLI imports what a command needs when it runs) and under ``TYPE_CHECKING`` (none goes upward
today, so none is allowed to). That built-in plugins import evalkit only through
``evalkit.plugin`` (their tests add ``evalkit.testing``) is the contract of
``tests/test_plugin_api.py``, which holds today without exceptions.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "src" / "evalkit"

#: Lowest first. A module may import from its own layer (``test_structure`` keeps that acyclic) or below.
LAYERS: list[tuple[str, list[str]]] = [
    ("leaves", (
        "errors version keywords progress provenance siphash stats gather optional measures budget loading yamlfile blas "
        "control_chars"
    ).split()),
    ("data types",
     "components score_series items data table cells results config arrays weights time_units state settings".split()),
    ("plugin boundary", "protocols contracts registry hookspecs discovery scaffold".split()),
    ("plan", "axes sweeps sources plan schema".split()),
    ("run", "engine uncertainty per_sample reduction streaming folders dask_engine execute evaluator".split()),
    ("presentation", "reporting pivot folding glossary findings listing".split()),
    # plugin.py re-exports from every layer below, presentation helpers included (report writers
    # are plugins); like api.py it is a way in, and nothing inside evalkit imports it.
    ("entry points", "__init__ __main__ api cli metrics torch_metrics hf hf_modules plugin testing file_checks".split()),
]


@dataclass(frozen=True)
class Import:
    """One import of an evalkit module: what is imported, where, and how."""

    module: str  # the module's stem ("engine"), "__init__" for the package itself
    line: int
    kind: str  # "top level", "in a function" or "under TYPE_CHECKING"
    text: str


def imports(path: Path) -> list[Import]:
    """Every import of an evalkit module in a file of the core (or of a synthetic core: the
    modules are the file's neighbours), with its line and kind."""
    found: list[Import] = []

    def targets(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name.partition(".")[2] or "__init__" for a in node.names if a.name.split(".")[0] == "evalkit"]
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "evalkit":
            if node.module == "evalkit":  # `from evalkit import x`: the module x, or a name of the package
                return [a.name if (path.parent / f"{a.name}.py").exists() else "__init__" for a in node.names]
            return [node.module.split(".")[1]]
        return []

    def visit(node: ast.AST, kind: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = kind
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and kind == "top level":
                inner = "in a function"
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for sub in child.body:
                    visit_one(sub, "under TYPE_CHECKING")
                for sub in child.orelse:
                    visit_one(sub, kind)
                continue
            visit_one(child, inner)

    def visit_one(node: ast.AST, kind: str) -> None:
        found.extend(Import(m, node.lineno, kind, ast.unparse(node)) for m in dict.fromkeys(targets(node)))
        visit(node, kind)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), "top level")
    return found


def violations(layers: list[tuple[str, list[str]]], graph: dict[str, list[Import]]) -> list[str]:
    """One line per module missing from the table, listed but absent, or importing upward."""
    layer_of = {module: (i, name) for i, (name, modules) in enumerate(layers) for module in modules}
    table = "LAYERS in tests/test_layers.py"
    found = [f"evalkit/{m}.py is in no layer; add it to {table}" for m in sorted(set(graph) - set(layer_of))]
    found += [f"{table} lists {m}, which is no module of evalkit" for m in sorted(set(layer_of) - set(graph))]
    for module, found_imports in sorted(graph.items()):
        for imp in found_imports:
            if module in layer_of and imp.module in layer_of and layer_of[imp.module][0] > layer_of[module][0]:
                found.append(
                    f"evalkit/{module}.py:{imp.line}: {imp.text} ({imp.kind}) imports upward: {module} is in layer "
                    f"{layer_of[module][0] + 1} ({layer_of[module][1]}), {imp.module} in layer "
                    f"{layer_of[imp.module][0] + 1} ({layer_of[imp.module][1]}); move what it uses down, or the module up"
                )
    return found


def core_graph() -> dict[str, list[Import]]:
    """Each module's imports; a module split into a package (``metrics/``) is one module of its
    layer, importing what its files import from outside it."""
    graph = {path.stem: imports(path) for path in sorted(CORE.glob("*.py"))}
    for package in sorted(init.parent for init in CORE.glob("*/__init__.py")):
        graph[package.name] = [i for path in sorted(package.glob("*.py")) for i in imports(path) if i.module != package.name]
    return graph


def test_no_module_of_the_core_imports_from_a_higher_layer():
    graph = core_graph()
    assert len(graph) > 50 and "plan" in graph
    assert not (found := violations(LAYERS, graph)), "\n".join(found)


def test_every_kind_of_import_is_seen(tmp_path: Path):
    source = tmp_path / "m.py"
    (tmp_path / "errors.py").write_text("")
    source.write_text(
        "from typing import TYPE_CHECKING\nimport evalkit\nfrom evalkit import errors, hookimpl\n"
        "if TYPE_CHECKING:\n    from evalkit.plan import Plan\nelse:\n    import evalkit.folding\n"
        "class A:\n    def f(self):\n        import evalkit.cli as c\n        return lambda: c\n"
    )
    assert [(i.module, i.line, i.kind) for i in imports(source)] == [
        ("__init__", 2, "top level"), ("errors", 3, "top level"), ("__init__", 3, "top level"),
        ("plan", 5, "under TYPE_CHECKING"), ("folding", 7, "top level"), ("cli", 10, "in a function"),
    ]


def test_an_upward_import_fails_with_the_module_line_and_both_layers(tmp_path: Path):
    """The checker on a synthetic core: a leaf that imports, inside a function, from the run
    layer; a module the table does not place; and a table entry with no module."""
    (tmp_path / "low.py").write_text("def f():\n    from evalkit.high import go\n    return go\n")
    (tmp_path / "high.py").write_text("from evalkit import low\n")
    (tmp_path / "new.py").write_text("")
    graph = {path.stem: imports(path) for path in sorted(tmp_path.glob("*.py"))}
    layers = [("leaves", ["low", "gone"]), ("plan", []), ("run", ["high"])]
    assert violations(layers, graph) == [
        "evalkit/new.py is in no layer; add it to LAYERS in tests/test_layers.py",
        "LAYERS in tests/test_layers.py lists gone, which is no module of evalkit",
        "evalkit/low.py:2: from evalkit.high import go (in a function) imports upward: low is in layer 1 (leaves), "
        "high in layer 3 (run); move what it uses down, or the module up",
    ]
    assert violations([("leaves", ["low", "new"]), ("run", ["high"])], {"low": [], "high": graph["high"], "new": []}) == []


def test_the_design_page_draws_every_module_in_its_layer():
    """docs/design.md has a ``### Layer n: name`` heading per layer, each with a table whose rows
    start with a module's file name; it must equal the table above."""
    drawn: list[tuple[str, list[str]]] = []
    for line in (ROOT / "docs" / "design.md").read_text(encoding="utf-8").splitlines():
        if heading := re.fullmatch(r"### Layer (\d+): (.+)", line):
            assert int(heading[1]) == len(drawn) + 1, line
            drawn.append((heading[2], []))
        elif drawn and (row := re.match(r"\| `(\w+)(?:\.py|/)` \|", line)):  # a module, or a package
            drawn[-1][1].append(row[1])
    assert [(name, sorted(ms)) for name, ms in drawn] == [(name, sorted(ms)) for name, ms in LAYERS]
