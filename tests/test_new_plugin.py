"""``evalkit new-plugin``: each kind's skeleton passes the author kit's checks as generated, and
the printed next step installs it and passes its tests, entry point included, from anywhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import fresh_venv
import pytest
from in_process import evalkit_cli

from evalkit.scaffold import BODIES, write

ROOT = Path(__file__).resolve().parent.parent


def test_the_command_writes_a_package_and_says_what_next(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = evalkit_cli("new-plugin", "geo", "--kind", "metric")  # --output defaults to the working directory
    folder = tmp_path / "evalkit-geo"
    assert done.returncode == 0 and done.stdout.splitlines() == [
        "wrote evalkit-geo",
        f"next: cd {folder} && pip install -e '.[test]' && python -m pytest",  # from any directory
        "then use it in a config as `metrics: [geo]`",
    ]


def test_every_kind_is_written_and_passes_the_author_kit(tmp_path):
    folders = [write(f"my_{kind}", kind, tmp_path) for kind in BODIES]
    for kind, folder in zip(BODIES, folders):
        assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) == sorted(
            ["README.md", "pyproject.toml", f"evalkit_my_{kind}/__init__.py", f"tests/test_my_{kind}.py"]
        )
        assert f'my_{kind} = "evalkit_my_{kind}"' in (folder / "pyproject.toml").read_text()
    # Not installed here, so only the author-kit tests; the entry point needs an install (below).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, folders))}
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "contract", *(f / "tests" for f in folders)],
        capture_output=True, text=True, cwd=tmp_path, env=env,
    )
    assert tests.returncode == 0 and f"{len(BODIES)} passed" in tests.stdout, tests.stdout + tests.stderr


@pytest.mark.slow
def test_the_printed_commands_work_from_the_folder_that_holds_a_checkout(tmp_path):
    """The reported failure: evalkit installed editable from a checkout named evalkit, the
    plugin made beside it, the printed line run from their parent folder (``python -m pytest``
    there once imported the checkout's folder as evalkit)."""
    scripts = fresh_venv.fresh_venv(tmp_path / "venv")
    checkout = fresh_venv.source_copy(ROOT, tmp_path / "evalkit")
    fresh_venv.run(scripts / "python", *fresh_venv.PIP, "-e", checkout, plugins="evalkit-mysim")
    # From the folder above the checkout, `evalkit` is the package, not the checkout's folder
    # imported as a namespace package (the src layout: an editable install is a path on sys.path).
    imported = fresh_venv.run(scripts / "python", "-c", "import evalkit; print(evalkit.__file__, evalkit.evaluate.__name__)",
                              plugins="evalkit-mysim", cwd=tmp_path).stdout
    assert imported == f"{checkout / 'src' / 'evalkit' / '__init__.py'} evaluate\n"
    made = fresh_venv.run(scripts / "evalkit", "new-plugin", "mysim", plugins="evalkit-mysim", cwd=tmp_path).stdout
    line = next(line.removeprefix("next: ") for line in made.splitlines() if line.startswith("next: "))
    # pip offline as the other installs here; the line itself is the one printed
    env = {**fresh_venv.environment("evalkit-mysim"), "PATH": f"{scripts}{os.pathsep}{os.environ['PATH']}",
           "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0", "PIP_QUIET": "1"}
    for where in (tmp_path, checkout):
        done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=where, env=env)
        assert done.returncode == 0 and "2 passed" in done.stdout, f"from {where}: {line}\n{done.stdout}\n{done.stderr}"
    # With the plugin installed and loaded as any installed plugin is (nothing chosen), evalkit's
    # own tests of the plugin machinery still pass: none assumes that no third party is there.
    env.pop("EVALKIT_LOAD_PLUGINS")
    assert "mysim" in subprocess.run([scripts / "evalkit", "plugins"], capture_output=True, text=True, env=env).stdout
    suites = ["test_plugins.py", "test_plugin_api.py", "test_plugin_selection.py", "test_glossary.py", "test_run.py"]
    done = subprocess.run([scripts / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           *(f"tests/{suite}" for suite in suites)], capture_output=True, text=True, cwd=checkout, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


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
    done = evalkit_cli("new-plugin", *args, "--output", tmp_path)
    assert done.returncode == 1 and done.stderr.strip() == f"error: {problem}"
    assert not any(tmp_path.iterdir())


def test_an_existing_folder_is_never_overwritten(tmp_path):
    assert evalkit_cli("new-plugin", "twice", "--output", tmp_path).returncode == 0
    readme = tmp_path / "evalkit-twice" / "README.md"
    readme.write_text("mine")
    done = evalkit_cli("new-plugin", "twice", "--output", tmp_path)
    assert done.returncode == 1 and "already exists" in done.stderr and readme.read_text() == "mine"
