"""Word2Vec: semantic similarity of words and short phrases, as the cosine of their vectors.

The vectors come from a gensim ``KeyedVectors`` model in any of gensim's three file formats. The
similarity of two items is the cosine of their unit vectors, mapped to [0, 1]. A multi-word item
("coffee shop") is represented by the mean of its words' vectors, normalised (gensim's
``n_similarity`` convention).

A model only knows the words it was trained on: the paper's *Gray Color* example (Fränti &
Mariescu-Istodor 2023, Sections 3.4 and 4.3) fails because a US-English model has no *colour* or
*grey*. Such out-of-vocabulary (OOV) items are an error by default, listed with the samples they
occur in before anything is computed; ``oov: fallback`` scores them with another similarity
(e.g. ``levenshtein``) and ``oov: exact`` with exact matching.

gensim (>= 4.4, the first release that works with numpy 2) is imported only when a model is
loaded, so the plugin registers, and ``evalkit plugins`` lists it, without gensim installed.

gensim's native format is a pickle, and unpickling a file runs whatever code it holds: such a
model is refused when the component is created (so ``evalkit validate`` says so) unless the
config says ``trusted: true``; the word2vec formats are plain numbers and need no trust.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalkit.plugin import (
    Array,
    BaseComponent,
    ConfigError,
    ConfigPath,
    DataError,
    create_component,
    hookimpl,
    optional,
)


@hookimpl
def evalkit_register_similarities(register):
    register(Word2Vec)


# ---------------------------------------------------------------------------------------------
# Model files
# ---------------------------------------------------------------------------------------------

Format = Literal["text", "binary", "native"]

#: file suffix -> format, for ``format: auto`` (a trailing .gz or .bz2 is looked through)
SUFFIXES: dict[str, Format] = {
    ".txt": "text",
    ".vec": "text",
    ".bin": "binary",
    ".kv": "native",
    ".model": "native",
}

FORMATS: dict[str, str] = {
    "text": "word2vec text format (.txt, .vec)",
    "binary": "word2vec binary format (.bin)",
    "native": "gensim native format (KeyedVectors.save or Word2Vec.save: .kv, .model)",
}

#: pairs whose vectors pairs() gathers at a time (8192 x 300 float64 vectors = 20 MB per side)
PAIRS_BLOCK = 8192

#: models kept loaded for sharing between components and runs (each component also keeps a
#: reference to its own model, so this only bounds what stays alive after components are gone)
CACHE_SIZE = 4


def detect_format(path: Path) -> Format:
    """The format of ``path`` from its suffix, or a :class:`ConfigError` saying how to set it."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2"):
        suffixes.pop()
    suffix = suffixes[-1] if suffixes else ""
    try:
        return SUFFIXES[suffix]
    except KeyError:
        choices = "; ".join(f"{name}: {text}" for name, text in FORMATS.items())
        raise ConfigError(
            f"word2vec: cannot tell the format of model {str(path)!r} from its suffix "
            f"{suffix or '(none)'!r}. Set format: text, binary or native ({choices})"
        ) from None


def untrusted_message(path: Path) -> str:
    """Why a pickled model is refused, and how to convert it to a format that holds no code."""
    stem = path.name.removesuffix(".gz").removesuffix(".bz2").rsplit(".", 1)[0]
    out = path.with_name(stem + ".bin")
    if out == path:  # a native model named .bin (format: native)
        out = path.with_name(stem + ".w2v.bin")
    return (
        f"word2vec: model {str(path)!r} is in gensim's native format, which gensim loads with "
        "pickle, and loading a pickle runs any code the file holds. Convert it once, where you "
        "trust the file, to the word2vec binary format, which holds only numbers: python -c "
        f"\"from gensim.models import KeyedVectors; m = KeyedVectors.load({str(path)!r}); "
        f"getattr(m, 'wv', m).save_word2vec_format({str(out)!r}, binary=True)\" and name "
        f"{out.name!r} as the model; or, for a file you made yourself, set trusted: true"
    )


@functools.lru_cache(maxsize=CACHE_SIZE)
def load_keyed_vectors(path: str, mtime_ns: int, fmt: Format) -> Any:
    """The ``KeyedVectors`` in ``path``, loaded once per (path, modification time, format).

    ``mtime_ns`` is only part of the cache key: a rewritten file is loaded again.
    """
    from gensim.models import KeyedVectors

    if fmt == "native":
        loaded = KeyedVectors.load(path)
        # Word2Vec.save (a whole trainable model) keeps its vectors in ``.wv``.
        vectors = loaded if isinstance(loaded, KeyedVectors) else getattr(loaded, "wv", None)
        if not isinstance(vectors, KeyedVectors):
            raise TypeError(f"the file holds a {type(loaded).__name__}, not KeyedVectors")
        return vectors
    return KeyedVectors.load_word2vec_format(path, binary=fmt == "binary")


# ---------------------------------------------------------------------------------------------
# The similarity
# ---------------------------------------------------------------------------------------------


class Word2VecParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    model: ConfigPath = Field(
        description="The vector model file. A relative path is taken relative to the config file "
        "(from Python: the current directory).",
    )
    format: Literal["auto", "text", "binary", "native"] = Field(
        "auto",
        description="auto (from the suffix: .txt/.vec text, .bin binary, .kv/.model native; a "
        "trailing .gz/.bz2 is allowed), text, binary (word2vec C formats) or native "
        "(gensim KeyedVectors.save / Word2Vec.save).",
    )
    negative: Literal["clip", "rescale"] = Field(
        "clip",
        description="How a cosine in [-1, 1] becomes a similarity: clip = max(0, cos) (opposite "
        "and unrelated words both score 0); rescale = (1 + cos) / 2 (unrelated words score 0.5).",
    )
    oov: Literal["error", "fallback", "exact"] = Field(
        "error",
        description="Items with a word missing from the model: error (list them all, with their "
        "samples), fallback (score their pairs with the `fallback` similarity) or exact "
        "(1 for an identical item, else 0).",
    )
    fallback: str | dict[str, Any] | None = Field(
        None,
        description="With oov: fallback, the similarity for pairs that involve a missing word: a "
        "name (levenshtein) or a mapping {name: ..., **params}.",
    )
    lowercase: bool = Field(
        False, description="Lowercase items before looking their words up (default: as given)."
    )
    trusted: bool = Field(
        False,
        description="Load a model in gensim's native format (.kv, .model), which is a pickle: "
        "loading it runs any code the file holds, so only for a file you made or trust. The "
        "word2vec text and binary formats need no trust.",
    )

    @model_validator(mode="after")
    def _fallback_goes_with_oov(self) -> Word2VecParams:
        if self.oov == "fallback" and self.fallback is None:
            raise ValueError("oov: fallback needs a `fallback` similarity (e.g. fallback: levenshtein)")
        if self.oov != "fallback" and self.fallback is not None:
            raise ValueError(
                f"`fallback` is only used with oov: fallback, but oov is {self.oov!r}; set "
                "oov: fallback or remove `fallback`"
            )
        return self


Key = tuple[str, ...]


class Word2Vec(BaseComponent[Word2VecParams]):
    """Word2Vec: cosine similarity of word (or phrase) vectors from a gensim model, in [0, 1].

    Parameters: ``model`` (the file), ``format`` (auto|text|binary|native), ``negative``
    (clip: max(0, cos), or rescale: (1 + cos)/2), ``oov`` (error|fallback|exact), ``fallback``
    (the similarity used for missing words with oov: fallback), ``lowercase`` and ``trusted``
    (load a native, pickled model).

    An item is split on whitespace into words; its vector is the mean of its words' vectors,
    normalised. An item is out of vocabulary when ANY of its words is (an empty item too): a
    phrase is never scored on a part of it. Cosines are computed in float64 from the model's
    vectors and clipped to [0, 1]. Two equal items (after ``lowercase`` and splitting, so
    "coffee  shop" equals "coffee shop") score exactly 1.0, whatever the rounding and whatever
    the ``oov`` policy; a zero vector (e.g. "up down" from opposite vectors) has cosine 0 with
    everything else.
    """

    name = "word2vec"
    symmetric = True
    Params = Word2VecParams

    def __init__(self, params: Word2VecParams, *, registry: Any = None) -> None:
        """``registry`` (default: the installed plugins) creates the fallback similarity."""
        super().__init__(params)
        given = Path(params.model).expanduser()
        self.path = given.resolve()  # relative paths: against the current directory, now
        if not self.path.is_file():
            what = "is a directory, not a file" if self.path.is_dir() else "does not exist"
            resolved = "" if str(given) == str(self.path) else f" (resolved to {str(self.path)!r})"
            raise ConfigError(f"word2vec: model file {str(given)!r}{resolved} {what}")
        self.format: Format = detect_format(given) if params.format == "auto" else params.format
        if self.format == "native" and not params.trusted:  # a pickle: loading it runs its code
            raise ConfigError(untrusted_message(given))
        self._registry = registry
        self._vectors: Any = None
        self._fallback: Any = None

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={v!r}" for k, v in self.params.model_dump().items())
        return f"{type(self).__name__}({given})"

    def __getstate__(self) -> dict[str, Any]:
        # Pickled (e.g. to a worker process) without the model: each process loads its own.
        return {**self.__dict__, "_vectors": None, "_fallback": None}

    # -- lazily loaded parts -------------------------------------------------------------------

    @property
    def who(self) -> str:
        return f"word2vec model {str(self.params.model)!r}"

    def keyed_vectors(self) -> Any:
        """The model's ``KeyedVectors`` (loaded at first use, shared through the module cache)."""
        if self._vectors is None:
            try:
                mtime = self.path.stat().st_mtime_ns
            except OSError as exc:
                raise ConfigError(f"{self.who}: cannot read {str(self.path)!r} ({exc})") from None
            try:
                self._vectors = load_keyed_vectors(str(self.path), mtime, self.format)
            except ImportError as exc:
                raise ConfigError(
                    f"{self.who}: the word2vec similarity needs gensim >= 4.4 "
                    f"(pip install 'gensim>=4.4'); importing it failed: {exc}"
                ) from None
            except Exception as exc:  # gensim raises many kinds on a bad file
                others = ", ".join(f for f in FORMATS if f != self.format)
                raise ConfigError(
                    f"{self.who}: cannot read {str(self.path)!r} as {FORMATS[self.format]} "
                    f"({type(exc).__name__}: {exc}). If the file is in another format, set "
                    f"format: {others.replace(', ', ' or ')}"
                ) from None
        return self._vectors

    def fallback(self) -> Any:
        """The fallback similarity, created from ``params.fallback`` at first use."""
        if self._fallback is None:
            assert self.params.fallback is not None, "called only with oov: fallback, which the validator requires it for"
            self._fallback = create_component(
                "similarity", self.params.fallback, where=f"{self.who}: fallback", registry=self._registry
            )
        return self._fallback

    # -- the Similarity protocol ---------------------------------------------------------------

    def check(self, samples: Mapping[Any, Sequence[Any]]) -> None:
        """With oov: error, reject every word missing from the model, listing its samples.

        Also loads the model (so a bad file is reported before any work), and with oov: fallback
        creates the fallback and passes ``samples`` on to its own ``check``.
        """
        vocabulary = self.keyed_vectors().key_to_index
        if self.params.oov == "fallback":
            check = optional(self.fallback(), "check")
            if check is not None:
                check(samples)
            return
        if self.params.oov != "error":
            return
        missing: dict[str, dict[str, None]] = {}  # word -> sample ids (ordered sets)
        keys: dict[Any, Key] = {}
        for sample, items in samples.items():
            for item in items:
                key = keys.get(item) if isinstance(item, str) else None
                if key is None:
                    key = keys[item] = self._key(item, f"sample {sample}")
                for word in self._missing_words(key, vocabulary):
                    missing.setdefault(word, {})[str(sample)] = None
        if missing:
            raise DataError(self._oov_message(missing))

    def matrix(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        """The (len(xs), len(ys)) similarity matrix, from one float64 matrix product."""
        ix, iy, units, known = self._encode(xs, ys)
        # One product, over the distinct items of a side that repeats some.
        ux, inv_x = _distinct(ix)
        uy, inv_y = _distinct(iy)
        sim = self._map(units[ux] @ units[uy].T)
        if inv_x is not None:
            sim = sim[inv_x]
        if inv_y is not None:
            sim = sim[:, inv_y]
        out_x, out_y = ~known[ix], ~known[iy]
        if out_x.any() or out_y.any():
            oov = out_x[:, None] | out_y[None, :]
            if self.params.oov == "exact":
                sim[oov] = 0.0  # the equal ones become 1 below
            else:  # fallback (error was raised by _encode)
                rows, cols = np.flatnonzero(out_x), np.flatnonzero(out_y)
                keep = np.flatnonzero(~out_x)
                fallback = self.fallback()
                if rows.size:
                    sim[rows, :] = self._fallback_matrix(fallback, _take(xs, rows), list(ys))
                if cols.size and keep.size:
                    sim[np.ix_(keep, cols)] = self._fallback_matrix(
                        fallback, _take(xs, keep), _take(ys, cols)
                    )
        sim[ix[:, None] == iy[None, :]] = 1.0
        return np.clip(sim, 0.0, 1.0, out=sim)

    def pairs(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        """Element-wise similarities sim(xs[i], ys[i]), shape (len(xs),)."""
        if len(xs) != len(ys):
            raise ValueError(f"{self.who}: pairs() needs lists of one length, got {len(xs)} and {len(ys)}")
        ix, iy, units, known = self._encode(xs, ys)
        # Row-wise dot products of the distinct pairs, in blocks that bound the memory used.
        pair, inverse = np.unique(ix * len(units) + iy, return_inverse=True)
        px, py = np.divmod(pair, len(units))
        cos = np.empty(len(pair), dtype=np.float64)
        for start in range(0, len(pair), PAIRS_BLOCK):
            block = slice(start, start + PAIRS_BLOCK)
            cos[block] = np.einsum("ij,ij->i", units[px[block]], units[py[block]])
        sim = self._map(cos)[inverse]
        oov = ~known[ix] | ~known[iy]
        if oov.any():
            if self.params.oov == "exact":
                sim[oov] = 0.0
            else:
                where = np.flatnonzero(oov)
                sim[where] = self._fallback_pairs(self.fallback(), _take(xs, where), _take(ys, where))
        sim[ix == iy] = 1.0
        return np.clip(sim, 0.0, 1.0, out=sim)

    # -- helpers -------------------------------------------------------------------------------

    def _key(self, item: Any, where: str = "") -> Key:
        """The words of an item: split on whitespace, lowercased if asked."""
        if not isinstance(item, str):
            place = f" in {where}" if where else ""
            raise DataError(
                f"{self.who}: items must be strings (words or phrases), got {item!r} "
                f"({type(item).__name__}){place}"
            )
        return tuple((item.lower() if self.params.lowercase else item).split())

    @staticmethod
    def _missing_words(key: Key, vocabulary: Mapping[str, int]) -> list[str]:
        if not key:
            return [""]  # an empty item has no vector
        return [word for word in key if word not in vocabulary]

    def _encode(
        self, xs: Sequence[Any], ys: Sequence[Any]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Ids of the distinct items (after lowercasing and splitting) of xs and of ys, their
        float64 unit vectors (zero rows when unknown) and whether each is in the vocabulary.

        Raises the OOV error (without sample ids) under oov: error.
        """
        kv = self.keyed_vectors()
        vocabulary = kv.key_to_index
        ids: dict[Key, int] = {}
        by_item: dict[str, int] = {}

        def encode(items: Sequence[Any]) -> np.ndarray:
            out = np.empty(len(items), dtype=np.intp)
            for n, item in enumerate(items):
                i = by_item.get(item) if isinstance(item, str) else None
                if i is None:
                    key = self._key(item)
                    i = by_item[item] = ids.setdefault(key, len(ids))
                out[n] = i
            return out

        ix, iy = encode(xs), encode(ys)
        keys = list(ids)
        known = np.array([bool(k) and all(w in vocabulary for w in k) for k in keys], dtype=bool)
        if self.params.oov == "error" and not known.all():
            missing: dict[str, dict[str, None]] = {}
            for key in (k for k, ok in zip(keys, known) if not ok):
                for word in self._missing_words(key, vocabulary):
                    missing.setdefault(word, {})
            raise DataError(self._oov_message(missing))
        units = np.zeros((len(keys), kv.vector_size), dtype=np.float64)
        rows = np.flatnonzero(known)
        if rows.size:
            words = [vocabulary[w] for r in rows for w in keys[r]]
            starts = np.cumsum([0] + [len(keys[r]) for r in rows[:-1]])
            vectors = np.asarray(kv.vectors[np.asarray(words, dtype=np.intp)], dtype=np.float64)
            if len(words) == rows.size:  # single words only
                units[rows] = vectors
            else:  # sum of the word vectors: the mean up to a factor the normalisation removes
                units[rows] = np.add.reduceat(vectors, starts, axis=0)
            norms = np.linalg.norm(units, axis=1)
            np.divide(units, norms[:, None], out=units, where=norms[:, None] > 0)
        return ix, iy, units, known

    def _map(self, cosine: np.ndarray) -> np.ndarray:
        if self.params.negative == "rescale":
            cosine += 1.0
            cosine *= 0.5
            return cosine
        return np.maximum(cosine, 0.0, out=cosine)

    def _oov_message(self, missing: Mapping[str, Mapping[str, None]]) -> str:
        count = len(missing)
        parts = []
        for word, samples in missing.items():
            text = f"{word!r} (an empty item)" if word == "" else repr(word)
            if samples:
                ids = list(samples)
                text += f" ({'samples' if len(ids) > 1 else 'sample'} {', '.join(ids)})"
            parts.append(text)
        message = (
            f"{self.who}: {count} word{'s' if count != 1 else ''} not in the vocabulary: "
            f"{', '.join(parts)}."
        )
        if not self.params.lowercase:
            vocabulary = self.keyed_vectors().key_to_index
            lower = [w for w in missing if w != w.lower() and w.lower() in vocabulary]
            if lower:
                message += (
                    f" {len(lower)} of them {'is' if len(lower) == 1 else 'are'} in the "
                    "vocabulary in lower case: set lowercase: true."
                )
        return (
            message + " Set oov: fallback (with fallback: levenshtein) or oov: exact, or use a "
            "model that has them"
        )

    def _fallback_matrix(self, fallback: Any, xs: list[Any], ys: list[Any]) -> np.ndarray:
        return np.asarray(fallback.matrix(xs, ys), dtype=np.float64)  # checked by its guard

    def _fallback_pairs(self, fallback: Any, xs: list[Any], ys: list[Any]) -> np.ndarray:
        pairs: Callable[..., Any] | None = optional(fallback, "pairs")
        if pairs is not None:
            return np.asarray(pairs(xs, ys), dtype=np.float64)
        # No pairs(): diagonals of matrices over blocks, to bound the wasted work and memory.
        block = 256
        return np.concatenate(
            [
                np.diagonal(self._fallback_matrix(fallback, xs[i : i + block], ys[i : i + block]))
                for i in range(0, len(xs), block)
            ]
        )


def _distinct(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The distinct ids and where each position's is among them; no inverse if all differ."""
    unique, inverse = np.unique(ids, return_inverse=True)
    return (ids, None) if len(unique) == len(ids) else (unique, inverse)


def _take(items: Sequence[Any], where: np.ndarray) -> list[Any]:
    return [items[i] for i in where]
