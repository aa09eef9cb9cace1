"""``evalkit new-plugin``: each kind's skeleton passes the author kit's checks as generated (the
full install, entry point included, is in test_third_party.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.scaffold import BODIES, write


def evalkit(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evalkit", *map(str, args)], capture_output=True, text=True)


def test_the_command_writes_a_package_and_says_what_next(tmp_path):
    done = evalkit("new-plugin", "geo", "--kind", "metric", "--output", tmp_path)
    folder = tmp_path / "evalkit-geo"
    assert done.returncode == 0 and done.stdout.splitlines() == [
        f"wrote {folder}",
        f"next: pip install -e '{folder}[test]' && python -m pytest {folder / 'tests'}",
        "then use it in a config as `metrics: [geo]`",
    ]


@pytest.mark.parametrize("kind", list(BODIES))
def test_each_kind_is_written_and_passes_the_author_kit(tmp_path, kind):
    folder = write(f"my_{kind}", kind, tmp_path)
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == sorted(
        ["README.md", "pyproject.toml", f"evalkit_my_{kind}/__init__.py", f"tests/test_my_{kind}.py"]
    )
    assert f'my_{kind} = "evalkit_my_{kind}"' in (folder / "pyproject.toml").read_text()
    # Not installed here, so only the author-kit test; the entry point needs an install.
    env = {**os.environ, "PYTHONPATH": str(folder)}
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "contract", "tests"],
        capture_output=True, text=True, cwd=folder, env=env,
    )
    assert tests.returncode == 0 and "1 passed" in tests.stdout, tests.stdout + tests.stderr


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["Geo-Dist"], "plugin name 'Geo-Dist' must match [a-z][a-z0-9_]* (it is the name used in YAML); e.g. 'geo_dist'"),
        (
            ["minimum", "--kind", "tnorm"],
            "a tnorm called 'minimum' is registered already (see `evalkit plugins`); choose another name",
        ),
        (
            ["segments", "--kind", "similarity"],
            "plugin name 'segments' would make the package evalkit_segments, one of evalkit's built-in plugin "
            "packages: installing it would replace that package; choose another name, e.g. 'my_segments'",
        ),
    ],
)
def test_bad_names_are_refused(tmp_path, args, problem):
    done = evalkit("new-plugin", *args, "--output", tmp_path)
    assert done.returncode == 1 and done.stderr.strip() == f"error: {problem}"
    assert not any(tmp_path.iterdir())


def test_an_existing_folder_is_never_overwritten(tmp_path):
    assert evalkit("new-plugin", "twice", "--output", tmp_path).returncode == 0
    readme = tmp_path / "evalkit-twice" / "README.md"
    readme.write_text("mine")
    done = evalkit("new-plugin", "twice", "--output", tmp_path)
    assert done.returncode == 1 and "already exists" in done.stderr and readme.read_text() == "mine"
