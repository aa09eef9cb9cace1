"""String similarities: edit distances and token measures from rapidfuzz, as values in [0, 1].

Every similarity here computes a whole matrix with one ``rapidfuzz.process.cdist`` call (C++,
SIMD, several threads for large inputs) and element-wise pairs with one ``process.cpdist`` call,
so evalkit never calls a scorer per pair from Python.

Text preparation, applied once per list and per call, in this order:

1. NFC normalisation, always. rapidfuzz compares code points, not characters: an NFC ``café``
   ends in one code point (U+00E9), an NFD ``café`` in two (``e`` + U+0301), so without it
   ``café`` vs ``cafe`` would be one edit or two depending on how the file was typed.
2. ``case_fold``: :meth:`str.casefold` (full Unicode case folding: ``Straße`` ≡ ``STRASSE``).
3. ``accent_fold``: NFKD, then every combining mark (canonical combining class ≠ 0) dropped, so
   ``café`` ≡ ``cafe`` and ``Ångström`` ≡ ``Angstrom``. NFKD also folds compatibility forms
   (``ﬁ`` → ``fi``, ``²`` → ``2``, full-width → ASCII). Letters without a decomposition stay
   (``ø``, ``ł``, ``đ``, ``æ``), and in scripts whose marks are part of the spelling (Devanagari
   nukta and virama, Hebrew and Arabic vowel points) the marks are dropped as well: use it for
   accented Latin, Greek and Cyrillic text.
4. ``normalize_whitespace``: runs of Unicode whitespace collapsed to one space, ends stripped.
5. NFC again after folding, because folding can leave decomposed text (``J̌``.casefold() is
   ``j`` + U+030C, which NFC composes to ``ǰ``; NFKD splits Hangul syllables into jamo).

All folding options are off by default. The Fränti & Mariescu-Istodor Café example (Fig. 5,
Table 3) needs ``accent_fold: true``: its printed distances and soft cardinalities treat ``é`` as
``e``.

Items must be strings. A number or a boolean in YAML (``- 3``, ``- yes``) is not text and raises
:class:`evalkit.errors.DataError`: quote it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz, process
from rapidfuzz.distance import (
    OSA,
    DamerauLevenshtein,
    Hamming,
    Indel,
    Jaro,
    JaroWinkler,
    LCSseq,
    Levenshtein,
)

from evalkit.plugin import Array, BaseComponent, DataError, hookimpl


@hookimpl
def evalkit_register_similarities(register):
    for cls in (
        LevenshteinSimilarity,
        IndelSimilarity,
        DamerauLevenshteinSimilarity,
        OSASimilarity,
        JaroSimilarity,
        JaroWinklerSimilarity,
        HammingSimilarity,
        LCSseqSimilarity,
        TokenSortSimilarity,
        TokenSetSimilarity,
    ):
        register(cls)


# ---------------------------------------------------------------------------------------------
# Parameters and text preparation
# ---------------------------------------------------------------------------------------------


class StringParams(BaseModel):
    """The text options every string similarity accepts (all off by default)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    case_fold: bool = Field(False, description="compare case-insensitively (str.casefold)")
    accent_fold: bool = Field(
        False, description="drop accents: NFKD, then remove combining marks (café = cafe)"
    )
    normalize_whitespace: bool = Field(
        False, description="collapse runs of whitespace to one space and strip the ends"
    )


class JaroWinklerParams(StringParams):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    prefix_weight: float = Field(
        0.1, ge=0.0, le=0.25,
        description="Winkler's scaling p of the common prefix (at most 4 characters); "
        "p <= 0.25 keeps the value <= 1",
    )


def _drop_marks(text: str) -> str:
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def _not_text(similarity: str, item: Any, where: str = "", more: int = 0) -> DataError:
    number = isinstance(item, (int, float)) and not isinstance(item, bool)
    example = f' (write "{item}")' if number else ""
    others = f" ({more} more non-string items)" if more else ""
    return DataError(
        f"similarity {similarity!r}: {where}item {item!r} ({type(item).__name__}) is not a "
        f"string{others}. String similarities compare text: quote the item in the YAML "
        f"file{example}, since YAML reads unquoted numbers, yes/no/on/off/true/false and "
        "null/~ as numbers, booleans and nulls."
    )


# ---------------------------------------------------------------------------------------------
# The shared implementation
# ---------------------------------------------------------------------------------------------


#: The parameter model of a string similarity: the text options, and perhaps its scorer's own.
P = TypeVar("P", bound=StringParams)


class StringSimilarity(BaseComponent[P]):
    """Base of the string similarities: one rapidfuzz scorer, scaled to [0, 1].

    A subclass sets ``name``, ``scorer`` (a rapidfuzz scorer, wrapped in ``staticmethod``: the
    scorers are Cython functions, which would otherwise bind ``self``), ``scale`` (100 for the
    ``fuzz`` ratios, 1 for ``normalized_similarity``) and, when its scorer has options,
    ``scorer_kwargs``.
    """

    symmetric = True  # every measure here is symmetric (evalkit.testing.check_similarity checks it)

    name: ClassVar[str]
    Params: ClassVar[type[BaseModel]] = StringParams
    scorer: ClassVar[Callable[..., float]]
    scale: ClassVar[float] = 1.0
    #: Below this many pairs one thread is faster: starting rapidfuzz's worker threads costs
    #: about 0.1 ms, which is 35 times a whole 5 × 5 Levenshtein matrix (measured on 2 cores;
    #: the results are identical either way).
    parallel_pairs: ClassVar[int] = 200_000
    #: Every cell is scored as one ``cdist`` matrix: per call it costs about as much as preparing
    #: its items, and SIMD makes a small document's matrix several times faster than the same
    #: pairs from ``cpdist`` (issue 25: 0.93 s against 6.43 s over 100,000 documents).
    block_items: ClassVar[int] = 1

    def scorer_kwargs(self) -> dict[str, Any]:
        return {}

    # -- preparation ---------------------------------------------------------------------------

    def prepare(self, items: Iterable[Any]) -> list[str]:
        """The items as NFC strings with the configured folding applied (see the module doc).

        Raises:
            DataError: an item is not a string.
        """
        items = list(items)
        p = self.params
        try:
            # ASCII text is its own NFC form and has no accents: only case and whitespace apply.
            ascii_only = "".join(items).isascii()
        except TypeError:  # not all strings: the checks below name the first offending item
            ascii_only = False
        if ascii_only and not (p.case_fold or p.normalize_whitespace):
            return items
        try:
            # Each distinct string is prepared once: batched pairs repeat every item many times.
            distinct = list(dict.fromkeys(items))
        except TypeError:  # an unhashable item (a list, a mapping) is not a string
            raise _not_text(self.name, next(x for x in items if not isinstance(x, str))) from None
        for item in distinct:
            if not isinstance(item, str):
                raise _not_text(self.name, item)
        out = [unicodedata.normalize("NFC", s) for s in distinct]
        if p.case_fold:
            out = [s.casefold() for s in out]
        if p.accent_fold:
            out = [_drop_marks(s) for s in out]
        if p.normalize_whitespace:
            out = [" ".join(s.split()) for s in out]
        if p.case_fold or p.accent_fold:
            out = [unicodedata.normalize("NFC", s) for s in out]
        prepared = dict(zip(distinct, out))
        return [prepared[x] for x in items]

    def _both(self, xs: Sequence[Any], ys: Sequence[Any]) -> tuple[list[str], list[str]]:
        a = self.prepare(xs)
        # The same list twice (a self-similarity matrix) is prepared once, and ys is then a copy:
        # rapidfuzz's cdist takes a slower path without SIMD when both arguments are one object.
        b = list(a) if ys is xs else self.prepare(ys)
        return a, b

    def _workers(self, n_pairs: int) -> int:
        return -1 if n_pairs >= self.parallel_pairs else 1

    # -- the protocol --------------------------------------------------------------------------

    def matrix(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        """The (len(xs), len(ys)) float64 matrix of similarities in [0, 1]."""
        a, b = self._both(xs, ys)
        out = process.cdist(
            a, b, scorer=type(self).scorer, scorer_kwargs=self.scorer_kwargs(),
            dtype=np.float64, workers=self._workers(len(a) * len(b)),
        )
        return self._finish_matrix(out, a, b)

    def matrices(self, items: Sequence[Any], sizes: Sequence[int]) -> Array:
        """``matrix(g, g)`` of each consecutive group of ``sizes`` items, flattened and
        concatenated: the items are prepared once, then one ``cdist`` per group (many small
        documents cost one Python-level call each, not four)."""
        a = self.prepare(items)
        out = np.empty(sum(k * k for k in sizes))
        scorer, kwargs = type(self).scorer, self.scorer_kwargs()
        start = end = 0
        for k in sizes:
            group = a[start : start + k]
            block = process.cdist(group, list(group), scorer=scorer, scorer_kwargs=kwargs, dtype=np.float64,
                                  workers=self._workers(k * k))
            out[end : end + k * k] = self._finish_matrix(block, group, group).ravel()
            start, end = start + k, end + k * k
        return out

    def pairs(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        """Element-wise similarities sim(xs[i], ys[i]), float64 of shape (len(xs),)."""
        if len(xs) != len(ys):
            raise ValueError(f"similarity {self.name!r}: pairs() needs two lists of equal "
                             f"length, got {len(xs)} and {len(ys)}")
        a, b = self._both(xs, ys)
        out = process.cpdist(
            a, b, scorer=type(self).scorer, scorer_kwargs=self.scorer_kwargs(),
            dtype=np.float64, workers=self._workers(len(a)),
        )
        return self._finish_pairs(np.asarray(out, dtype=np.float64).reshape(len(a)), a, b)

    def check(self, samples: Mapping[Any, Iterable[Any]]) -> None:
        """Reject non-string items before anything is computed, naming their samples.

        Raises:
            DataError: naming the first offending item and its sample, and how many there are.
        """
        try:  # a C-level pass over each sample's items, which raises only on a non-string
            for items in samples.values():
                "".join(items)
            return
        except TypeError:
            pass
        bad = [(sid, item) for sid, items in samples.items() for item in items
               if not isinstance(item, str)]
        if bad:
            sid, item = bad[0]
            raise _not_text(self.name, item, where=f"sample {sid!r}: ", more=len(bad) - 1)

    # -- hooks for subclasses ------------------------------------------------------------------

    def _finish_matrix(self, out: np.ndarray, a: list[str], b: list[str]) -> Array:
        if self.scale != 1.0:
            out /= self.scale
        return out

    def _finish_pairs(self, out: np.ndarray, a: list[str], b: list[str]) -> Array:
        if self.scale != 1.0:
            out /= self.scale
        return out


# ---------------------------------------------------------------------------------------------
# Character-level measures
# ---------------------------------------------------------------------------------------------


class LevenshteinSimilarity(StringSimilarity[StringParams]):
    """Levenshtein similarity 1 − edit(a, b) / max(|a|, |b|) (Fränti & Mariescu-Istodor eq. 6).

    edit counts insertions, deletions and substitutions of characters (code points after the
    text preparation), each of cost 1. Two empty strings have similarity 1. Example:
    sim(gray, grey) = 1 − 1/4 = 0.75.
    """

    name = "levenshtein"
    scorer = staticmethod(Levenshtein.normalized_similarity)


class IndelSimilarity(StringSimilarity[StringParams]):
    """Indel similarity 1 − indel(a, b) / (|a| + |b|): edits are insertions and deletions only.

    indel(a, b) = |a| + |b| − 2·LCS(a, b), with LCS the longest common subsequence, so the
    value is 2·LCS / (|a| + |b|) (difflib's ratio; rapidfuzz ``fuzz.ratio`` / 100). A
    substitution costs 2. Two empty strings have similarity 1.
    """

    name = "indel"
    scorer = staticmethod(Indel.normalized_similarity)


class DamerauLevenshteinSimilarity(StringSimilarity[StringParams]):
    """Damerau–Levenshtein similarity 1 − d(a, b) / max(|a|, |b|), transpositions cost 1.

    d is the unrestricted Damerau–Levenshtein distance: insertions, deletions, substitutions and
    transpositions of adjacent characters, where a substring may be edited again after a
    transposition (so d(ca, abc) = 2, against 3 for OSA). Two empty strings have similarity 1.
    """

    name = "damerau_levenshtein"
    scorer = staticmethod(DamerauLevenshtein.normalized_similarity)


class OSASimilarity(StringSimilarity[StringParams]):
    """Optimal String Alignment similarity 1 − osa(a, b) / max(|a|, |b|).

    osa is the restricted Damerau–Levenshtein distance: insertions, deletions, substitutions and
    transpositions of adjacent characters, with no substring edited twice (d(ca, abc) = 3, not
    a metric). Two empty strings have similarity 1.
    """

    name = "osa"
    scorer = staticmethod(OSA.normalized_similarity)


class JaroSimilarity(StringSimilarity[StringParams]):
    """Jaro similarity (m/|a| + m/|b| + (m − t)/m) / 3, and 0 when m = 0.

    m counts the characters of a and b that match within a window of
    ⌊max(|a|, |b|) / 2⌋ − 1 positions, t is half the number of matched characters out of order.
    Two empty strings have similarity 1.
    """

    name = "jaro"
    scorer = staticmethod(Jaro.normalized_similarity)


class JaroWinklerSimilarity(StringSimilarity[JaroWinklerParams]):
    """Jaro–Winkler similarity J + ℓ·p·(1 − J), rewarding a common prefix.

    J is the Jaro similarity, ℓ the length of the common prefix (at most 4) and p the
    ``prefix_weight`` (default 0.1, at most 0.25). As in Winkler's definition and rapidfuzz, the
    prefix bonus applies only when J > 0.7. Two empty strings have similarity 1.
    """

    name = "jaro_winkler"
    Params = JaroWinklerParams
    scorer = staticmethod(JaroWinkler.normalized_similarity)

    def scorer_kwargs(self) -> dict[str, Any]:
        return {"prefix_weight": self.params.prefix_weight}


class HammingSimilarity(StringSimilarity[StringParams]):
    """Hamming similarity 1 − (mismatches + ||a| − |b||) / max(|a|, |b|), unequal lengths padded.

    Positions are compared from the start; the shorter string is padded at its end, so each
    missing position is one more mismatch (rapidfuzz ``Hamming`` with ``pad=True``). On strings of
    equal length this is the classical share of equal positions; with unequal lengths nothing is
    aligned after an insertion (sim(abc, xabc) = 0). Two empty strings have similarity 1.
    """

    name = "hamming"
    scorer = staticmethod(Hamming.normalized_similarity)

    def scorer_kwargs(self) -> dict[str, Any]:
        return {"pad": True}


class LCSseqSimilarity(StringSimilarity[StringParams]):
    """Longest-common-subsequence similarity LCS(a, b) / max(|a|, |b|).

    LCS is the length of the longest common (not necessarily contiguous) subsequence; compare
    ``indel``, which divides 2·LCS by |a| + |b|. Two empty strings have similarity 1.
    """

    name = "lcsseq"
    scorer = staticmethod(LCSseq.normalized_similarity)


# ---------------------------------------------------------------------------------------------
# Token-level measures
# ---------------------------------------------------------------------------------------------


class TokenSortSimilarity(StringSimilarity[StringParams]):
    """Token-sort similarity: the Indel similarity of the sorted whitespace-separated tokens.

    sim(a, b) = indel_sim(" ".join(sorted(a.split())), " ".join(sorted(b.split()))), i.e.
    rapidfuzz ``fuzz.token_sort_ratio`` / 100, so word order is ignored (sim(new york,
    york new) = 1) and the character comparison is Indel-based (not Levenshtein).
    """

    name = "token_sort"
    scorer = staticmethod(fuzz.token_sort_ratio)
    scale = 100.0
    parallel_pairs = 20_000  # a token scorer costs about 40 times a Levenshtein one per pair


class TokenSetSimilarity(StringSimilarity[StringParams]):
    """Token-set similarity: Indel similarities of the shared and unshared token sets, the best.

    With S the sorted shared tokens and A, B the sorted tokens only in a or only in b (sets, so
    duplicates count once), rapidfuzz ``fuzz.token_set_ratio`` / 100 is
    max(indel_sim(S, S+A), indel_sim(S, S+B), indel_sim(S+A, S+B)). It is 1 whenever one token
    set contains the other (sim(new york, new york city) = 1), and 0 when only one side has
    tokens. Two strings without tokens (empty or blank) have similarity 1 here (rapidfuzz
    gives 0), so that every item is similar to itself.
    """

    name = "token_set"
    scorer = staticmethod(fuzz.token_set_ratio)
    scale = 100.0
    parallel_pairs = 20_000

    def _finish_matrix(self, out: np.ndarray, a: list[str], b: list[str]) -> Array:
        out = super()._finish_matrix(out, a, b)
        blank_a = np.fromiter((not s.split() for s in a), bool, len(a))
        blank_b = np.fromiter((not s.split() for s in b), bool, len(b))
        if blank_a.any() and blank_b.any():
            out[np.ix_(blank_a, blank_b)] = 1.0
        return out

    def _finish_pairs(self, out: np.ndarray, a: list[str], b: list[str]) -> Array:
        out = super()._finish_pairs(out, a, b)
        both = [i for i, (s, t) in enumerate(zip(a, b)) if not s.split() and not t.split()]
        out[both] = 1.0
        return out
