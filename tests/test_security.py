"""No code from data: a file named in a config is read as numbers or text, never unpickled,
unless the config says the file is trusted.

The attack is a model file from a stranger: gensim's native ``.kv`` format is a pickle, and
unpickling runs the code in it. The crafted file here would create a marker file.
"""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import numpy as np
import pytest
from in_process import evalkit_cli

import evalkit
from evalkit.errors import ConfigError, EvalkitError
from evalkit_word2vec import Word2Vec

gensim_models = pytest.importorskip("gensim.models")

ROOT = Path(__file__).resolve().parent.parent


class Payload:
    """Unpickling this calls ``open(marker, "w")``: the marker file appears if the file is loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return open, (str(self.marker), "w")


@pytest.fixture
def crafted(tmp_path: Path) -> tuple[Path, Path]:
    """A ``.kv`` model that runs code when unpickled, and the marker that code would create."""
    marker = tmp_path / "pwned"
    model = tmp_path / "vectors.kv"
    model.write_bytes(pickle.dumps(Payload(marker)))
    return model, marker


def config(folder: Path, model: str, **params: object) -> Path:
    extra = "".join(f", {k}: {str(v).lower()}" for k, v in params.items())
    path = folder / "run.yaml"
    path.write_text(
        "data:\n  reference: {ids: [d1], items: [[coffee, cup]]}\n  systems: {s: {ids: [d1], items: [[cafe, cup]]}}\n"
        f"representation: soft_cardinality\nsimilarity: {{name: word2vec, model: {model}{extra}}}\n"
        "averaging: micro\nmetrics: [precision]\n"
    )
    return path


def test_a_pickled_model_is_refused_when_the_component_is_created(crafted):
    model, marker = crafted
    with pytest.raises(ConfigError) as refused:
        Word2Vec(Word2Vec.Params(model=model))
    message = str(refused.value)
    assert "pickle" in message and "runs any code the file holds" in message  # why
    assert "save_word2vec_format(" in message and "binary=True" in message and "'vectors.bin'" in message  # how
    assert "trusted: true" in message
    with pytest.raises(ConfigError, match="pickle"):  # whatever the suffix, when the format says native
        Word2Vec(Word2Vec.Params(model=model.rename(model.with_suffix(".bin")), format="native"))
    assert not marker.exists()


@pytest.mark.parametrize("command", ["validate", "run"])
def test_the_cli_refuses_the_crafted_model_and_runs_no_code(crafted, command):
    model, marker = crafted
    done = evalkit_cli(command, config(model.parent, model.name))
    assert done.returncode == 1
    assert done.stderr.startswith("error: word2vec: model ") and "pickle" in done.stderr
    assert "Traceback" not in done.stderr
    assert not marker.exists()


def test_a_trusted_native_model_loads(tmp_path: Path):
    corpus = [["coffee", "cafe", "cup"], ["cafe", "coffee", "cup"]] * 50
    model = gensim_models.Word2Vec(corpus, vector_size=8, window=2, min_count=1, workers=1, seed=1, epochs=3)
    model.wv.save(str(tmp_path / "vectors.kv"))
    rows = evalkit.run(config(tmp_path, "vectors.kv", trusted=True)).rows
    assert len(rows) == 1 and 0 < rows[0].value <= 1
    # ... and the conversion the refusal suggests gives the same vectors without the trust
    converted = tmp_path / "vectors.bin"
    model.wv.save_word2vec_format(str(converted), binary=True)
    assert evalkit.run(config(tmp_path, "vectors.bin")).rows[0].value == rows[0].value  # the same float32 vectors


def calls(tree: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith(name)]


def test_no_loader_unpickles():
    """Every numpy load refuses pickled object arrays, and no module unpickles or loads YAML
    with a loader that builds Python objects (gensim's native format is the one opt-in)."""
    sources = sorted((ROOT / "src").rglob("*.py"))
    assert len(sources) > 30
    for path in sources:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for call in calls(tree, "np.load"):
            pickles = {k.arg: ast.unparse(k.value) for k in call.keywords}.get("allow_pickle")
            assert pickles == "False", f"{path}:{call.lineno}: np.load without allow_pickle=False"
        imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                    for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])}
        unpicklers = {"pickle", "dill", "joblib", "marshal", "shelve", "cloudpickle"}
        if path.name == "dask_engine.py":
            # The run's Work, pickled by the client itself and opened by its Dask workers (Dask
            # pickles every task in any case): bytes from this process, never from a file.
            loads = calls(tree, "pickle.loads")
            assert [ast.unparse(c.args[0]) for c in loads] == ["shipped"], f"{path}: pickle.loads of what?"
            unpicklers -= {"pickle"}
        assert not imported & unpicklers, path
        for call in calls(tree, "yaml.load") + calls(tree, "yaml.unsafe_load") + calls(tree, "yaml.full_load"):
            raise AssertionError(f"{path}:{call.lineno}: {ast.unparse(call.func)}; use a SafeLoader")
        if path.parent.name == "evalkit_word2vec":
            assert len(calls(tree, "KeyedVectors.load")) == 1  # behind the `trusted` check


def test_an_npy_with_objects_is_a_data_error_not_code(tmp_path: Path):
    data = np.empty((2, 1), dtype=object)
    data[:] = [[Payload(tmp_path / "pwned")], [1.0]]
    np.save(tmp_path / "ref.npy", data, allow_pickle=True)
    with pytest.raises(EvalkitError):
        evalkit.evaluate(str(tmp_path / "ref.npy"), [[1.0], [0.0]])
    assert not (tmp_path / "pwned").exists()
