"""The word2vec similarity, on small gensim models trained or built here (no downloads)."""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from pydantic import BaseModel, ValidationError

import evalkit
import evalkit_word2vec
from evalkit.contracts import unwrap
from evalkit.discovery import build_registry, make_plugin_manager
from evalkit.errors import ConfigError, DataError, UnknownComponentError
from evalkit.protocols import NoParams, Similarity
from evalkit_word2vec import Word2Vec

gensim_models = pytest.importorskip("gensim.models")  # the plugin itself imports gensim lazily
KeyedVectors = gensim_models.KeyedVectors

TOPICS = [
    ["coffee", "cafe", "espresso", "shop", "cup", "the"],
    ["hotel", "room", "bed", "night", "the"],
    ["university", "student", "teacher", "pupil", "the"],
    ["gray", "color", "paint", "wall", "the"],
]
WORDS = sorted({w for topic in TOPICS for w in topic})


@dataclass
class Trained:
    vectors: KeyedVectors
    text: Path
    binary: Path
    native: Path
    full: Path


@pytest.fixture(scope="session")
def trained(tmp_path_factory) -> Trained:
    """A tiny Word2Vec model (words of one topic co-occur), saved in every format."""
    rng = np.random.default_rng(7)
    corpus = [list(rng.choice(TOPICS[i % len(TOPICS)], size=6)) for i in range(400)]
    model = gensim_models.Word2Vec(
        corpus, vector_size=12, window=3, min_count=1, workers=1, seed=7, epochs=5
    )
    folder = tmp_path_factory.mktemp("w2v")
    saved = Trained(
        model.wv, folder / "m.txt", folder / "m.bin", folder / "m.kv", folder / "full.model"
    )
    model.wv.save_word2vec_format(str(saved.text), binary=False)
    model.wv.save_word2vec_format(str(saved.binary), binary=True)
    model.wv.save(str(saved.native))
    model.save(str(saved.full))
    return saved


def make(model: Path | str, **params) -> Word2Vec:
    return Word2Vec(Word2Vec.Params(model=model, **params))


def cosines(kv: KeyedVectors, xs: list[str], ys: list[str]) -> np.ndarray:
    """Cosines of mean word vectors, straight from the model's vectors, in float64."""

    def unit(item: str) -> np.ndarray:
        v = np.mean([kv[w].astype(np.float64) for w in item.split()], axis=0)
        return v / np.linalg.norm(v)

    return np.array([[unit(x) @ unit(y) for y in ys] for x in xs])


def in_unit_interval(values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    assert values.shape == shape and values.dtype == np.float64
    assert np.all((values >= 0) & (values <= 1)), values
    return values


def assert_pairs_match(sim: Word2Vec, xs: list[str], ys: list[str]) -> np.ndarray:
    """matrix() in [0, 1], and pairs() equal to its diagonal (index-aligned zip of xs, ys)."""
    matrix = in_unit_interval(sim.matrix(xs, ys), (len(xs), len(ys)))
    n = min(len(xs), len(ys))
    pairs = in_unit_interval(sim.pairs(xs[:n], ys[:n]), (n,))
    np.testing.assert_allclose(pairs, np.diagonal(matrix)[:n], rtol=0, atol=1e-12)
    return matrix


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------


def test_every_format_gives_the_same_matrix(trained, tmp_path):
    odd = tmp_path / "vectors.data"  # unknown suffix: needs an explicit format
    odd.write_bytes(trained.binary.read_bytes())
    sims = [
        make(trained.text),
        make(trained.binary),
        make(trained.native, trusted=True),
        make(trained.full, trusted=True),  # Word2Vec.save: the vectors are taken from .wv
        make(str(trained.text), format="text"),
        make(odd, format="binary"),
    ]
    assert [s.format for s in sims] == ["text", "binary", "native", "native", "text", "binary"]
    for sim in sims:
        kv = sim.keyed_vectors()
        assert kv.index_to_key == trained.vectors.index_to_key
        np.testing.assert_array_equal(kv.vectors, trained.vectors.vectors)
    expected = sims[0].matrix(WORDS, WORDS)
    for sim in sims[1:]:
        np.testing.assert_array_equal(sim.matrix(WORDS, WORDS), expected)


def test_models_are_loaded_once_and_again_when_the_file_changes(trained, tmp_path):
    path = tmp_path / "copy.kv"
    trained.vectors.save(str(path))
    first, second = make(path, trusted=True), make(str(path), trusted=True)
    assert first.keyed_vectors() is second.keyed_vectors()
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert make(path, trusted=True).keyed_vectors() is not first.keyed_vectors()


def test_a_missing_model_file_is_a_config_error_naming_it(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match=r"model file '/nowhere/vectors\.bin' does not exist"):
        make("/nowhere/vectors.bin")
    monkeypatch.chdir(tmp_path)
    resolved = str(tmp_path / "models" / "v.txt")
    with pytest.raises(ConfigError) as err:
        make("models/v.txt")
    assert str(err.value) == (
        f"word2vec: model file 'models/v.txt' (resolved to {resolved!r}) does not exist"
    )
    with pytest.raises(ConfigError, match="is a directory"):
        make(tmp_path, format="native")


def test_relative_paths_are_resolved_against_the_current_directory(trained, monkeypatch):
    monkeypatch.chdir(trained.text.parent)
    sim = make("m.txt")
    monkeypatch.chdir("/")  # later directory changes do not matter
    assert sim.path == trained.text
    assert sim.matrix(["coffee"], ["cafe"]).shape == (1, 1)


def test_unknown_suffix_and_wrong_format_are_config_errors(trained, tmp_path):
    odd = tmp_path / "vectors.data"
    odd.write_bytes(b"")
    with pytest.raises(ConfigError, match=r"from its suffix '\.data'\. Set format: text, binary or native"):
        make(odd)
    sim = make(trained.binary, format="text")
    with pytest.raises(ConfigError, match=r"cannot read .* as word2vec text format .* set format: binary or native"):
        sim.matrix(["coffee"], ["cafe"])


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------


def test_cosines_are_those_of_the_model_vectors(trained):
    cos = cosines(trained.vectors, WORDS, WORDS)
    off = ~np.eye(len(WORDS), dtype=bool)
    clip = assert_pairs_match(make(trained.text), WORDS, WORDS)
    np.testing.assert_allclose(clip[off], np.maximum(cos, 0)[off], rtol=0, atol=1e-12)
    rescale = assert_pairs_match(make(trained.text, negative="rescale"), WORDS, WORDS)
    np.testing.assert_allclose(rescale[off], ((1 + cos) / 2)[off], rtol=0, atol=1e-12)
    # gensim's own float32 similarity agrees to float32 accuracy.
    gensim = np.array([[trained.vectors.similarity(x, y) for y in WORDS] for x in WORDS])
    np.testing.assert_allclose(rescale[off], ((1 + gensim) / 2)[off], atol=1e-6)


def test_negative_cosines_are_clipped_or_rescaled(tmp_path):
    kv = KeyedVectors(vector_size=3)
    kv.add_vectors(
        ["up", "down", "left", "diagonal", "nothing"],
        np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 0]], dtype=np.float32),
    )
    path = tmp_path / "hand.vec"
    kv.save_word2vec_format(str(path))
    xs = ["up", "down", "left", "diagonal", "nothing", "up down"]  # "up down" sums to zero
    cos = np.array(
        [  # up, down, left, diagonal, nothing, up down
            [1, -1, 0, 0.5**0.5, 0, 0],
            [-1, 1, 0, -(0.5**0.5), 0, 0],
            [0, 0, 1, 0.5**0.5, 0, 0],
            [0.5**0.5, -(0.5**0.5), 0.5**0.5, 1, 0, 0],
            [0, 0, 0, 0, 1, 0],
            [0, 0, 0, 0, 0, 1],
        ]
    )
    clip = assert_pairs_match(make(path), xs, xs)
    np.testing.assert_allclose(clip, np.maximum(cos, 0), rtol=0, atol=1e-15)
    rescale = assert_pairs_match(make(path, negative="rescale"), xs, xs)
    expected = (1 + cos) / 2
    np.fill_diagonal(expected, 1)
    np.testing.assert_allclose(rescale, expected, rtol=0, atol=1e-15)
    assert rescale[0, 1] == 0 and rescale[0, 2] == 0.5  # unit axis vectors: every product and sum is exact


def test_a_phrase_is_the_normalised_mean_of_its_words(trained):
    xs = ["coffee shop", "cafe", "the hotel room"]
    ys = ["cafe", "espresso cup", "coffee shop", "coffee   shop", "hotel"]
    sim = make(trained.native, negative="rescale", trusted=True)
    matrix = assert_pairs_match(sim, xs, ys)
    expected = (1 + cosines(trained.vectors, xs, ys)) / 2
    expected[0, 2:4] = 1  # equal phrases (whitespace aside) are exactly 1
    np.testing.assert_allclose(matrix, expected, rtol=0, atol=1e-12)
    assert matrix[0, 2] == matrix[0, 3] == 1.0
    gensim = (1 + trained.vectors.n_similarity(["coffee", "shop"], ["espresso", "cup"])) / 2
    assert matrix[0, 1] == pytest.approx(gensim, abs=1e-6)


def test_identical_items_are_exactly_one(trained):
    items = WORDS + ["coffee shop", "the university student"]
    for negative in ("clip", "rescale"):
        sim = make(trained.binary, negative=negative)
        assert np.all(np.diagonal(sim.matrix(items, list(items))) == 1.0)
        assert np.all(sim.pairs(items, items) == 1.0)


def test_lowercase_is_opt_in(trained):
    with pytest.raises(DataError, match="in the vocabulary in lower case: set lowercase: true"):
        make(trained.text).matrix(["Coffee"], ["cafe"])
    sim = make(trained.text, lowercase=True)
    matrix = assert_pairs_match(sim, ["Coffee Shop", "cafe"], ["coffee shop", "CAFE"])
    np.testing.assert_allclose(matrix, make(trained.text).matrix(["coffee shop", "cafe"], ["coffee shop", "cafe"]))
    assert matrix[0, 0] == matrix[1, 1] == 1.0


# ---------------------------------------------------------------------------------------------
# Words missing from the model
# ---------------------------------------------------------------------------------------------

GRAY = {  # the paper's Gray Color example, with British spellings the model has never seen
    "s1": ["grey", "colour"],
    "s2": ["gray", "color"],
    "s3": ["the", "colour", "dark grey"],
    "s4": ["Coffee", ""],
}


def test_check_lists_every_missing_word_with_its_samples(trained):
    sim = make(trained.text)
    with pytest.raises(DataError) as err:
        sim.check(GRAY)
    assert str(err.value) == (
        f"word2vec model {str(trained.text)!r}: 5 words not in the vocabulary: "
        "'grey' (samples s1, s3), 'colour' (samples s1, s3), 'dark' (sample s3), "
        "'Coffee' (sample s4), '' (an empty item) (sample s4). 1 of them is in the vocabulary "
        "in lower case: set lowercase: true. Set oov: fallback (with fallback: levenshtein) or "
        "oov: exact, or use a model that has them"
    )
    sim.check({"a": ["gray", "color"], "b": ["coffee shop"]})  # all known: no error
    make(trained.text, oov="exact").check(GRAY)


def test_matrix_without_check_names_the_missing_words(trained):
    sim = make(trained.text)
    with pytest.raises(DataError, match=r"2 words not in the vocabulary: 'grey', 'colour'\. Set oov"):
        sim.matrix(["gray", "grey"], ["colour", "color", "grey"])
    with pytest.raises(DataError, match=r"1 word not in the vocabulary: 'grey'\."):
        sim.pairs(["gray"], ["the grey"])
    with pytest.raises(DataError, match=r"items must be strings .* got 3 \(int\) in sample s2"):
        sim.check({"s1": ["gray"], "s2": [3]})


def test_oov_exact_scores_missing_words_by_equality(trained):
    xs = ["grey", "gray", "coffee", "grey", "dark grey"]
    ys = ["grey", "colour", "cafe", "color", "dark grey"]
    sim = make(trained.native, oov="exact", trusted=True)
    matrix = assert_pairs_match(sim, xs, ys)
    known_x, known_y = [1, 2], [2, 3]
    np.testing.assert_allclose(
        matrix[np.ix_(known_x, known_y)],
        np.maximum(cosines(trained.vectors, ["gray", "coffee"], ["cafe", "color"]), 0),
        rtol=0, atol=1e-12,
    )
    oov = np.ones(matrix.shape, dtype=bool)
    oov[np.ix_(known_x, known_y)] = False
    equal = np.array([[x == y for y in ys] for x in xs])
    np.testing.assert_array_equal(matrix[oov], equal[oov].astype(float))


class LengthRatio:
    """A toy similarity: the shorter length over the longer one."""

    name = "length_ratio"
    Params = NoParams
    checked: ClassVar[list] = []

    def __init__(self, params):
        self.params = params

    def matrix(self, xs, ys):
        a = np.array([len(x) for x in xs], dtype=float)[:, None]
        b = np.array([len(y) for y in ys], dtype=float)[None, :]
        return np.minimum(a, b) / np.maximum(np.maximum(a, b), 1)


class LengthRatioWithPairs(LengthRatio):
    """The toy similarity with pairs() and check()."""

    name = "length_ratio_pairs"

    def pairs(self, xs, ys):
        return np.diagonal(self.matrix(xs, ys)).copy()

    def check(self, samples):
        LengthRatio.checked.append(dict(samples))


class Toys:
    __name__ = "toys"

    @evalkit.hookimpl
    def evalkit_register_similarities(self, register):
        register(LengthRatio)
        register(LengthRatioWithPairs)


@pytest.fixture(scope="module")
def registry():
    return build_registry(
        *make_plugin_manager(
            load_entrypoints=False,
            extra={"evalkit-test:toys": Toys(), "evalkit:word2vec": evalkit_word2vec},
        )
    )


@pytest.mark.parametrize("fallback", ["length_ratio", {"name": "length_ratio_pairs"}])
def test_oov_fallback_uses_the_fallback_for_missing_words_only(trained, registry, fallback):
    xs = ["grey", "gray", "coffee", "grey", "dark grey", "the"]
    ys = ["grey", "colour", "cafe", "color", "dark grey", "gray"]
    params = Word2Vec.Params(model=trained.binary, oov="fallback", fallback=fallback)
    sim = Word2Vec(params, registry=registry)
    matrix = assert_pairs_match(sim, xs, ys)
    # Many pairs: a fallback without pairs() is asked for diagonals of blocks.
    np.testing.assert_allclose(
        sim.pairs(xs * 100, ys * 100), np.tile(np.diagonal(matrix), 100), rtol=0, atol=1e-12
    )
    known_x, known_y = [1, 2, 5], [2, 3, 5]
    vectors = ["gray", "coffee", "the"], ["cafe", "color", "gray"]
    np.testing.assert_allclose(
        matrix[np.ix_(known_x, known_y)],
        np.maximum(cosines(trained.vectors, *vectors), 0),
        rtol=0, atol=1e-12,
    )
    oov = np.ones(matrix.shape, dtype=bool)
    oov[np.ix_(known_x, known_y)] = False
    np.testing.assert_array_equal(matrix[oov], LengthRatio(None).matrix(xs, ys)[oov])
    assert matrix[0, 0] == matrix[4, 4] == 1.0


def test_check_creates_the_fallback_and_passes_the_samples_on(trained, registry):
    LengthRatio.checked.clear()
    params = Word2Vec.Params(model=trained.text, oov="fallback", fallback="length_ratio_pairs")
    Word2Vec(params, registry=registry).check(GRAY)
    assert LengthRatio.checked == [GRAY]


def test_fallback_comes_from_the_installed_plugins_by_default(trained, registry, monkeypatch):
    monkeypatch.setattr("evalkit.discovery.default_registry", lambda: registry)
    sim = make(trained.text, oov="fallback", fallback="length_ratio")
    assert sim.matrix(["grey"], ["color"])[0, 0] == 0.8
    unknown = make(trained.text, oov="fallback", fallback="length_rato")
    with pytest.raises(UnknownComponentError, match="fallback: unknown similarity 'length_rato'. Did you mean 'length_ratio'"):
        unknown.check(GRAY)


def test_parameters_are_validated(trained, registry):
    assert isinstance(make(trained.text), Similarity)
    created = registry.create("similarity", {"name": "word2vec", "model": str(trained.text)})
    assert isinstance(unwrap(created), Word2Vec) and created.params.oov == "error"
    bad = [
        ({"oov": "fallback"}, "oov: fallback needs a `fallback` similarity"),
        ({"fallback": "levenshtein"}, "`fallback` is only used with oov: fallback"),
        ({"negative": "abs"}, "parameter 'negative'"),
        ({"lowercas": True}, "unknown parameter 'lowercas'"),
    ]
    for extra, message in bad:
        with pytest.raises(ConfigError, match=message):
            registry.create("similarity", {"name": "word2vec", "model": str(trained.text), **extra})
    with pytest.raises(ValidationError):
        Word2Vec.Params()


def test_pickles_without_the_model(trained):
    sim = make(trained.text, negative="rescale")
    before = sim.matrix(WORDS, WORDS)
    copy = pickle.loads(pickle.dumps(sim))
    assert copy._vectors is None
    np.testing.assert_array_equal(copy.matrix(WORDS, WORDS), before)
    assert isinstance(copy.params, BaseModel)


def test_keeps_the_similarity_protocol(trained, registry):
    from evalkit.testing import check_similarity

    items = ["coffee", "cafe", "the hotel room", "gray", "coffee", "coffee  shop", "coffee shop"]
    oov = [*items, "grey", "colour", "", "café", "grey"]
    for params, words in [
        ({}, items),
        ({"negative": "rescale", "format": "binary"}, items),
        ({"oov": "exact"}, oov),
        ({"oov": "fallback", "fallback": "length_ratio"}, oov),
        ({"oov": "fallback", "fallback": "length_ratio_pairs", "lowercase": True}, oov),
    ]:
        sim = Word2Vec(Word2Vec.Params(model=trained.binary, **params), registry=registry)
        check_similarity(sim, words)


def test_a_yaml_config_loads_the_model_next_to_it_and_rejects_oov(trained, tmp_path):
    """The whole path: YAML -> registry -> word2vec (model path relative to the config) ->
    soft cardinality; an unknown word is an error naming its sample before anything runs."""
    import shutil

    import evalkit
    from evalkit.errors import DataError

    shutil.copy(trained.text, tmp_path / "vectors.txt")
    words = list(trained.vectors.index_to_key)[:4]
    config = tmp_path / "run.yaml"
    config.write_text(
        "data:\n"
        f"  reference: {{ids: [d1], items: [[{words[0]}, {words[1]}]]}}\n"
        f"  systems: {{s: {{ids: [d1], items: [[{words[2]}, {words[3]}]]}}}}\n"
        "representation: soft_cardinality\nsimilarity: {name: word2vec, model: vectors.txt}\n"
        "averaging: micro\nmetrics: [card_pred, precision]\n"
    )
    rows = {r.metric: r.value for r in evalkit.run(config).rows}
    sim = np.clip(cosines(trained.vectors, words[2:4], words[2:4])[0, 1], 0, 1)
    assert rows["card_pred"] == pytest.approx(2 / (1 + sim), rel=1e-9)
    config.write_text(config.read_text().replace(f"[[{words[2]}, ", "[[zzzunknown, "))
    with pytest.raises(DataError, match=r"'zzzunknown' \(sample s:d1\)"):
        evalkit.run(config)
