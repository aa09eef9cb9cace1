"""The distribution is publishable: ``python -m build`` makes a wheel and an sdist that pass
``twine check``, with the SPDX license, the license file, the classifiers and ``py.typed`` in
evalkit and in every built-in plugin package; the version is written in one place."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from fresh_venv import source_copy

import evalkit

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_wheel_and_sdist_build_and_pass_twine_check(tmp_path):
    tree = source_copy(ROOT, tmp_path / "src")
    built = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path / "dist"), str(tree)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    files = sorted((tmp_path / "dist").iterdir(), key=lambda f: f.suffix)
    assert [f.suffix for f in files] == [".gz", ".whl"]
    checked = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, files)],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    with zipfile.ZipFile(files[1]) as wheel:
        names = wheel.namelist()
        metadata = wheel.read(f"evalkit-{evalkit.__version__}.dist-info/METADATA").decode()
    packages = {n.split("/")[0] for n in names if n.endswith("__init__.py")}
    assert {n.split("/")[0] for n in names if n.endswith("/py.typed")} == packages
    assert packages == {p.name for p in (ROOT / "src").iterdir() if (p / "__init__.py").exists()}
    # the scripts evaluate.load takes by path (evalkit.hf.module)
    assert {f"evalkit/hf_modules/{p.name}" for p in (ROOT / "src" / "evalkit" / "hf_modules").glob("*.py")} <= set(names)
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata
    assert "Classifier: Typing :: Typed" in metadata
    assert f"Version: {evalkit.__version__}" in metadata


def test_the_version_is_written_in_one_place():
    """evalkit/version.py: pyproject reads it, and no other module sets a version of evalkit."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'version = {attr = "evalkit.version.__version__"}' in pyproject
    assert not re.search(r"^version\s*=\s*\"", pyproject, re.MULTILINE)  # no literal version
    setting = [p for p in (ROOT / "src").rglob("*.py")
               if re.search(r"^__version__\s*=", p.read_text(), re.MULTILINE)]
    assert setting == [ROOT / "src" / "evalkit" / "version.py"]
