"""``evalkit new-plugin NAME``: the skeleton of a plugin package that installs and passes the
author kit's checks as written, so an author starts from something that works and changes it.

The package is an ordinary distribution ``evalkit-NAME`` with one module ``evalkit_NAME`` and an
``evalkit`` entry point, exactly how the built-ins are registered.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from string import Template

from evalkit.errors import ConfigError
from evalkit.hookspecs import CONTRACT_VERSION
from evalkit.version import __version__

NAME = re.compile(r"[a-z][a-z0-9_]*\Z")

PYPROJECT = Template('''\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "$dist"
version = "0.1.0"
description = "A $kind for evalkit: $name"
requires-python = ">=3.10"
# Written for evalkit's plugin contract $contract: the evalkit releases that keep it.
dependencies = ["evalkit$evalkit_range", "numpy"]

[project.optional-dependencies]
test = ["pytest"]

# This entry point is how evalkit finds the plugin once the package is installed.
[project.entry-points.evalkit]
$name = "$package"

[tool.setuptools]
packages = ["$package"]

# Its own pytest settings: run from anywhere (next to an evalkit checkout too), the tests are
# this package's, with this folder as their root.
[tool.pytest.ini_options]
testpaths = ["tests"]
''')

README = Template('''\
# $dist

A $kind for evalkit, made with `evalkit new-plugin $name --kind $kind`.

```bash
pip install -e '.[test]'      # installs the package and registers the plugin
evalkit plugins               # lists '$name' with distribution $dist
python -m pytest              # the evalkit author kit's checks, and the entry point
```

Use it in a config by its name: `$usage`. Replace the placeholder computation in
`$package/__init__.py` with your own; the tests hold it to the properties every evalkit $kind
must have.

Once it is installed, `evalkit schema > evalkit.schema.json` writes the schema of a run config
with your $kind among the choices; a config that starts with
`# yaml-language-server: $$schema=evalkit.schema.json` is then completed and checked as you type
(VS Code with the YAML extension, JetBrains, Neovim with yaml-language-server).
''')

HEADER = Template('''\
"""$summary

Registered through the ``evalkit`` entry point in pyproject.toml: evalkit calls the hook below
once at start-up, then calls the component's vectorized methods directly.
"""

from __future__ import annotations

${imports}
from evalkit.plugin import ${evalkit_imports}


@hookimpl
def $hook(register: Register) -> None:
    register($cls)


''')

BODIES = {
    "similarity": (
        "A similarity: the ratio of the shorter to the longer item's length (a placeholder).",
        ("import numpy as np\nfrom pydantic import BaseModel, ConfigDict, Field\n", ()),
        '''
class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelled parameter is then an error
    empty: float = Field(1.0, ge=0, le=1, description="similarity of two empty items")


class $cls(BaseComponent):
    """$name: min(len(x), len(y)) / max(len(x), len(y)); 1 for items of equal length."""

    name = "$name"
    symmetric = True  # sim(x, y) = sim(y, x): soft cardinality then scores each pair once
    Params = Params

    def matrix(self, xs, ys):
        """The (len(xs), len(ys)) similarities in [0, 1], all in one vectorized step."""
        a = np.array([len(str(x)) for x in xs], dtype=np.float64).reshape(-1, 1)
        b = np.array([len(str(y)) for y in ys], dtype=np.float64).reshape(1, -1)
        longest = np.maximum(a, b)
        out = np.full(longest.shape, self.params.empty)
        return np.divide(np.minimum(a, b), longest, out=out, where=longest > 0)
''',
        '''check_similarity($cls($cls.Params()), ["", "a", "ab", "ab", "abcd", "naïve"])''',
        "similarity: $name",
    ),
    "tnorm": (
        "A T-norm: the Hamacher family T(a, b) = ab / (p + (1 − p)(a + b − ab)), p >= 0.",
        ("import numpy as np\nfrom pydantic import BaseModel, ConfigDict, Field\n", ()),
        '''
class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelled parameter is then an error
    p: float = Field(2.0, ge=0, allow_inf_nan=False, description="p = 1: product; p = 2: Einstein")


class $cls(BaseComponent):
    """$name: Hamacher T-norm with parameter p (0 where a = b = 0)."""

    name = "$name"
    Params = Params

    def __call__(self, a, b):
        """Element-wise and broadcasting; keeps the inputs' float precision."""
        a, b = np.asarray(a), np.asarray(b)
        product = a * b
        denominator = self.params.p + (1 - self.params.p) * (a + b - product)
        return np.divide(product, denominator, out=np.zeros_like(product), where=denominator > 0)
''',
        '''check_tnorm($cls($cls.Params(p=0.5)))
    check_tnorm($cls($cls.Params()))''',
        "tnorm: $name",
    ),
    "metric": (
        "A set metric: the overlap coefficient |G ∩ P| / min(|G|, |P|).",
        ("import numpy as np\nfrom pydantic import BaseModel, ConfigDict\n", ()),
        '''
class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")  # no parameters; unknown ones are an error


class $cls(BaseComponent):
    """$name: |G ∩ P| / min(|G|, |P|), 1 when one set contains the other."""

    name = "$name"
    Params = Params

    def ratio(self, ref, pred, inter):
        """(numerator, denominator) from the cardinalities; evalkit divides, with zero_division."""
        return inter, np.minimum(ref, pred)
''',
        '''check_metric($cls($cls.Params()))''',
        "metrics: [$name]",
    ),
    "representation": (
        "A set representation: memberships squared (Zadeh's 'very' hedge), intersected by a T-norm.",
        ("from pydantic import BaseModel, ConfigDict, Field\n", ("CardinalityTable",)),
        '''
class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelled parameter is then an error
    power: float = Field(2.0, gt=0, allow_inf_nan=False, description="the hedge's exponent")


class $cls(BaseComponent):
    """$name: |A| = Σ μ^power, |G ∩ P| = Σ T(μ_G^power, μ_P^power)."""

    name = "$name"
    uses = frozenset({"tnorm"})  # evalkit passes the configured T-norm(s)
    data = "matrix"  # reads (samples x classes) membership arrays
    Params = Params

    def cardinalities(self, reference, prediction, *, tnorm, similarity):
        """The (samples x classes) cardinalities of a whole batch."""
        ref, pred = reference ** self.params.power, prediction ** self.params.power
        return CardinalityTable(ref, pred, tnorm(ref, pred))
''',
        '''rng = np.random.default_rng(0)
    tnorm = plugin_registry().create("tnorm", "minimum")
    check_representation($cls($cls.Params()), rng.random((20, 3)), rng.random((20, 3)), tnorm=tnorm)''',
        "representation: $name",
    ),
    "averaging": (
        "An averaging: the mean of per-class values over the classes present in the reference.",
        ("from pydantic import BaseModel, ConfigDict\n", ()),
        '''
class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")  # no parameters; unknown ones are an error


class $cls(BaseComponent):
    """$name: macro average over the classes with reference support (|G| > 0)."""

    name = "$name"
    Params = Params

    def sample_metrics(self, metrics):
        return []  # needs no per-sample sums, only the per-class ones

    def reduce(self, summary, metric, zero_division):
        per_class = summary.value(metric, zero_division)
        supported = summary.ref > 0
        return float(per_class[supported].mean()) if supported.any() else float(zero_division)
''',
        '''check_averaging($cls($cls.Params()))''',
        "averaging: $name",
    ),
    "data_metric": (
        "A data metric: the mean absolute difference of the memberships (lower is better).",
        ("import numpy as np\nfrom pydantic import BaseModel, ConfigDict\n", ()),
        '''
class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")  # no parameters; unknown ones are an error


class $cls(BaseComponent):
    """$name: the mean over samples of each sample's mean |μ_G - μ_P| over its classes."""

    name = "$name"
    lower_is_better = True  # rankings and summaries orient it
    weighted = True  # update() also takes sample weights
    Params = Params

    def update(self, reference, prediction, weights=None):
        """A chunk's state: sums that add up across chunks (evalkit merges states by +)."""
        error = np.abs(reference - prediction).mean(axis=1)
        counted = np.ones(len(error)) if weights is None else weights
        return np.array([counted @ error, counted.sum()])

    def compute(self, state):
        return float(state[0] / state[1]) if state[1] > 0 else float("nan")
''',
        '''check_data_metric($cls($cls.Params()))''',
        "metrics: [$name]",
    ),
    "loader": (
        "A loader: memberships as space-separated values, a header of class names first.",
        ("import numpy as np\nfrom pydantic import BaseModel, ConfigDict\n", ("DataError", "LabelMatrix", "text_lines")),
        '''
class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")  # no parameters; unknown ones are an error


class $cls(BaseComponent):
    """$name: a .ssv file, `speech music` then `clip1 0.9 0.1` per line."""

    name = "$name"
    kind = "matrix"  # (samples x classes) memberships
    suffixes = (".ssv",)
    Params = Params

    def load(self, path, role):
        """The file's memberships; a problem is a DataError naming the file and line."""
        rows = [(number, line.split()) for number, line in text_lines(path) if line.strip()]
        if not rows:
            raise DataError(f"{path}: empty; the first line names the classes")
        (_, header), body = rows[0], rows[1:]
        values = np.empty((len(body), len(header)))
        for at, (number, fields) in enumerate(body):
            if len(fields) != len(header) + 1:
                raise DataError(f"{path}:{number}: expected a sample id and {len(header)} memberships, "
                                f"got {len(fields)} fields")
            try:
                values[at] = [float(x) for x in fields[1:]]
            except ValueError:
                raise DataError(f"{path}:{number}: a membership that is not a number") from None
        return LabelMatrix(values, tuple(header), tuple(fields[0] for _, fields in body), str(path))
''',
        '''path = tmp_path / "memberships.ssv"
    path.write_text("speech music\\nclip1 0.9 0.1\\nclip2 0.2 0.8\\n", encoding="utf-8")
    check_loader($cls($cls.Params()), [path])''',
        "{path: FILE.ssv, loader: $name}",
    ),
    "report": (
        "A report writer: one tab-separated line per result, for tools that read plain text.",
        ("from pydantic import BaseModel, ConfigDict\n", ("visible",)),
        '''
class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")  # no parameters; unknown ones are an error


class $cls(BaseComponent):
    """$name: `system<TAB>measure<TAB>value` per result row (the measure's parts joined by ·)."""

    name = "$name"
    suffix = ".tsv.txt"
    Params = Params

    def render(self, results):
        """The report's text; evalkit writes it atomically. Names are shown with control
        characters escaped (visible), so no name can move the terminal or break a line."""
        return "".join(f"{visible(row.system)}\\t{visible(row.measure.label())}\\t{row.value!r}\\n" for row in results.rows)
''',
        '''check_report_writer($cls($cls.Params()))''',
        "report: {formats: [$name], out: results/run}",
    ),
}

#: The kind a plugin of each scaffold registers its component as.
REGISTERED = {"data_metric": "metric", "report": "report_writer"}

#: kind -> registration hook
HOOKS = {
    "similarity": "evalkit_register_similarities",
    "tnorm": "evalkit_register_tnorms",
    "metric": "evalkit_register_metrics",
    "representation": "evalkit_register_set_representations",
    "averaging": "evalkit_register_averagings",
    "data_metric": "evalkit_register_metrics",
    "loader": "evalkit_register_loaders",
    "report": "evalkit_register_report_writers",
}

CHECKS = {
    "similarity": "check_similarity", "tnorm": "check_tnorm", "metric": "check_metric",
    "representation": "check_representation", "averaging": "check_averaging", "data_metric": "check_data_metric",
    "loader": "check_loader", "report": "check_report_writer",
}

TEST = Template('''\
"""The author kit's checks (evalkit.testing) and the entry point: run with python -m pytest."""

${numpy}from evalkit.testing import $check, plugin_registry
from $package import $cls


def test_${name}_keeps_the_${kind}_contract($fixtures):
    $call


def test_${name}_is_found_through_its_entry_point():
    """Needs the package installed (pip install -e .), as evalkit finds plugins that way."""
    assert plugin_registry().entry("$registered", "$name").distribution == "$dist"
''')


def _import_order(name: str) -> tuple[bool, bool, str]:
    """isort's order of imported names (constants, classes, then the rest), as ruff checks it."""
    return not name.isupper(), not name[:1].isupper(), name.lower()


def evalkit_range(version: str = __version__) -> str:
    """The evalkit releases a plugin generated by this one should accept: ``>=0.1,<0.2``.

    A plugin relies on the plugin contract (``CONTRACT_VERSION``), but pip can only pin
    evalkit's own version, and evalkit changes the contract's major version only with a new
    major release (a new minor one before 1.0, as 0.x releases may break things). So the range
    starts at the running release's minor version, which has every name the skeleton uses, and
    ends before the next release that may break it: the next minor before 1.0, the next major
    from 1.0 on. A bare ``evalkit`` would let pip pair the plugin with an incompatible release.
    """
    major, minor = (int(part) for part in re.findall(r"\d+", version)[:2])
    end = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"
    return f">={major}.{minor},<{end}"


def registered(kind: str) -> str:
    """The kind of component a scaffold of ``kind`` registers (a data metric is a metric)."""
    return REGISTERED.get(kind, kind)


def usage(name: str, kind: str) -> str:
    """How a config names the component: ``similarity: NAME``, ``metrics: [NAME]``, ..."""
    return Template(BODIES[kind][4]).substitute(name=name)


def next_step(folder: Path) -> str:
    """The shell line that installs the package and runs its tests, from any directory.

    The tests run from inside the package's folder: ``python -m pytest`` puts the working
    directory first on sys.path, and from the folder that holds an evalkit checkout (named
    ``evalkit``, as git clones it) ``import evalkit`` would find the checkout instead of the
    installed package.
    """
    return f"cd {shlex.quote(str(folder.resolve()))} && pip install -e '.[test]' && python -m pytest"


def builtin_packages() -> set[str]:
    """The packages evalkit's own entry points name (``evalkit_tnorms``, ...)."""
    import importlib.metadata

    return {
        ep.value.split(":")[0].split(".")[0] for ep in importlib.metadata.entry_points(group="evalkit")
        if ep.dist is not None and ep.dist.name == "evalkit"
    }


def write(name: str, kind: str, output: Path) -> Path:
    """Write the package ``evalkit-NAME`` for a component of ``kind`` under ``output``; returns
    its folder. Refuses names that evalkit could not register and existing folders."""
    if not NAME.match(name):
        fixed = re.sub(r"[^a-z0-9_]", "_", name.lower()).lstrip("_0123456789") or "my_plugin"
        raise ConfigError(f"plugin name {name!r} must match [a-z][a-z0-9_]* (it is the name used in YAML); e.g. {fixed!r}")
    if kind not in BODIES:
        raise ConfigError(f"unknown kind {kind!r}; choose one of {', '.join(BODIES)}")
    dist, package = f"evalkit-{name.replace('_', '-')}", f"evalkit_{name}"
    if package in builtin_packages():
        raise ConfigError(
            f"plugin name {name!r} would make the package {package}, one of evalkit's built-in plugin packages: "
            f"installing it would replace that package; choose another name, e.g. 'my_{name}'"
        )
    folder = output / dist
    if folder.exists():
        raise ConfigError(f"{folder} already exists; choose another name or --output folder")
    summary, imports, body, call, _ = BODIES[kind]
    cls = "".join(part.title() for part in name.split("_"))
    values = {"name": name, "kind": kind, "dist": dist, "package": package, "cls": cls,
              "hook": HOOKS[kind], "check": CHECKS[kind], "contract": CONTRACT_VERSION,
              "evalkit_range": evalkit_range(), "registered": registered(kind),
              "fixtures": "tmp_path" if "tmp_path" in call else ""}
    values["usage"] = usage(name, kind)
    names = ", ".join(sorted({"BaseComponent", "Register", "hookimpl", *imports[1]}, key=_import_order))
    source = HEADER.substitute(values, summary=summary, imports=imports[0], evalkit_imports=names)
    source += Template(body).substitute(values).lstrip("\n")
    files = {
        "pyproject.toml": PYPROJECT.substitute(values),
        "README.md": README.substitute(values),
        f"{package}/__init__.py": source,
        f"tests/test_{name}.py": TEST.substitute(
            values, call=Template(call).substitute(values),
            numpy="import numpy as np\n\n" if kind == "representation" else "",
        ),
    }
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder
