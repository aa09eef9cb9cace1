"""The string similarities (src/evalkit_strings) and the author kit's similarity check.

Every expected value is derived here, not measured: edit distances come from plain-Python
dynamic programs written below (independent of rapidfuzz), the paper values from Fränti &
Mariescu-Istodor (2023), eq. 4–7 and Fig. 5–6, Table 3.
"""

from __future__ import annotations

import unicodedata
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalkit_strings as es
from evalkit.discovery import build_registry, make_plugin_manager
from evalkit.errors import ConfigError, DataError
from evalkit.testing import check_similarity

NAMES = {
    "levenshtein", "indel", "damerau_levenshtein", "osa", "jaro", "jaro_winkler", "hamming",
    "lcsseq", "token_sort", "token_set",
}
FOLDS = {"case_fold": True, "accent_fold": True, "normalize_whitespace": True}
NFC = "caf\u00e9"  # café, é as one code point
NFD = "cafe\u0301"  # café, e + combining acute


def registry():
    return build_registry(*make_plugin_manager(load_entrypoints=False, extra={"evalkit:strings": es}))


def make(name: str, **params):
    return registry().create("similarity", {"name": name, **params})


def sim(name: str, a: str, b: str, **params) -> float:
    return float(make(name, **params).matrix([a], [b])[0, 0])


def nfc(s: str) -> str:
    return unicodedata.normalize("NFC", s)


# ---------------------------------------------------------------------------------------------
# Independent reference implementations (plain Python dynamic programming)
# ---------------------------------------------------------------------------------------------


def levenshtein(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def osa(a: str, b: str) -> int:
    """Restricted Damerau–Levenshtein: adjacent transpositions, no substring edited twice."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


def damerau(a: str, b: str) -> int:
    """Unrestricted Damerau–Levenshtein (Lowrance–Wagner with unit costs)."""
    inf = len(a) + len(b)
    d = [[inf] * (len(b) + 2) for _ in range(len(a) + 2)]
    for i in range(len(a) + 1):
        d[i + 1][1] = i
    for j in range(len(b) + 1):
        d[1][j + 1] = j
    last_row: dict[str, int] = {}
    for i in range(1, len(a) + 1):
        last_col = 0
        for j in range(1, len(b) + 1):
            k, l_ = last_row.get(b[j - 1], 0), last_col
            cost = a[i - 1] != b[j - 1]
            if not cost:
                last_col = j
            d[i + 1][j + 1] = min(
                d[i][j] + cost, d[i + 1][j] + 1, d[i][j + 1] + 1,
                d[k][l_] + (i - k - 1) + 1 + (j - l_ - 1),
            )
        last_row[a[i - 1]] = i
    return d[-1][-1]


def lcs(a: str, b: str) -> int:
    row = [0] * (len(b) + 1)
    for ca in a:
        prev = 0
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], prev + 1 if ca == cb else max(row[j], row[j - 1])
    return row[-1]


def normalized(distance: int, a: str, b: str) -> float:
    """Paper eq. 6: 1 − distance / max(|a|, |b|), and 1 for two empty strings."""
    longest = max(len(a), len(b))
    return 1.0 - distance / longest if longest else 1.0


def soft_cardinality(m: np.ndarray) -> float:
    """Paper eq. 4–5: Σ_i 1 / Σ_j sim(A_i, A_j)."""
    return float((1.0 / m.sum(axis=1)).sum())


words = st.text(max_size=10)  # any code points (no surrogates), the empty string included
word_lists = st.lists(words, max_size=5)
small = st.text(alphabet="abc\u00e9", max_size=7)  # a small alphabet makes transpositions common


def matrix_of(name: str, xs: list[str], ys: list[str]) -> np.ndarray:
    return make(name).matrix(xs, ys)


# ---------------------------------------------------------------------------------------------
# Each measure against its definition
# ---------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(word_lists, word_lists)
def test_levenshtein_is_one_minus_edit_over_max_length(xs, ys):
    # The component compares NFC code points (module doc), so the reference does too.
    got = matrix_of("levenshtein", xs, ys)
    expected = [[normalized(levenshtein(nfc(x), nfc(y)), nfc(x), nfc(y)) for y in ys] for x in xs]
    np.testing.assert_allclose(got, np.reshape(expected, (len(xs), len(ys))), rtol=0, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(word_lists, word_lists)
def test_indel_and_lcsseq_follow_from_the_longest_common_subsequence(xs, ys):
    # indel(a, b) = |a| + |b| − 2·LCS, normalised by |a| + |b|; lcsseq = LCS / max(|a|, |b|).
    xs, ys = [nfc(x) for x in xs], [nfc(y) for y in ys]
    indel = [[1 - (len(x) + len(y) - 2 * lcs(x, y)) / (len(x) + len(y)) if x or y else 1.0
              for y in ys] for x in xs]
    lcsseq = [[lcs(x, y) / max(len(x), len(y)) if x or y else 1.0 for y in ys] for x in xs]
    shape = (len(xs), len(ys))
    np.testing.assert_allclose(matrix_of("indel", xs, ys), np.reshape(indel, shape), atol=1e-12)
    np.testing.assert_allclose(matrix_of("lcsseq", xs, ys), np.reshape(lcsseq, shape), atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(st.lists(small, max_size=4), st.lists(small, max_size=4))
def test_osa_and_damerau_levenshtein_match_their_dynamic_programs(xs, ys):
    shape = (len(xs), len(ys))
    for name, distance in (("osa", osa), ("damerau_levenshtein", damerau)):
        expected = [[normalized(distance(x, y), x, y) for y in ys] for x in xs]
        np.testing.assert_allclose(matrix_of(name, xs, ys), np.reshape(expected, shape), atol=1e-12)


@pytest.mark.parametrize(
    ("a", "b", "lev", "osa_", "dl"),
    [
        ("ab", "ba", 2, 1, 1),  # one transposition
        ("ca", "abc", 3, 3, 2),  # ca → ac → abc: DL edits the transposed pair again, OSA cannot
        ("abcdef", "badcfe", 4, 3, 3),  # three disjoint transpositions
        ("kitten", "sitting", 3, 3, 3),  # no transposition helps
        ("", "abc", 3, 3, 3),
    ],
)
def test_transposition_measures_on_hand_cases(a, b, lev, osa_, dl):
    assert (levenshtein(a, b), osa(a, b), damerau(a, b)) == (lev, osa_, dl)  # the references
    n = max(len(a), len(b))
    assert sim("levenshtein", a, b) == pytest.approx(1 - lev / n)
    assert sim("osa", a, b) == pytest.approx(1 - osa_ / n)
    assert sim("damerau_levenshtein", a, b) == pytest.approx(1 - dl / n)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 8).flatmap(lambda n: st.tuples(*[st.text("ab\u00e9", min_size=n, max_size=n)] * 2)))
def test_hamming_on_equal_lengths_is_the_share_of_equal_positions(pair):
    a, b = pair
    expected = sum(x == y for x, y in zip(a, b)) / len(a) if a else 1.0
    assert sim("hamming", a, b) == pytest.approx(expected, abs=1e-12)


def test_hamming_counts_missing_positions_as_mismatches():
    # Padded at the end: 1 − (mismatches + |len difference|) / max length.
    assert sim("hamming", "abc", "abcde") == pytest.approx(1 - 2 / 5)
    assert sim("hamming", "abc", "xbcde") == pytest.approx(1 - 3 / 5)
    assert sim("hamming", "abc", "xabc") == 0.0  # nothing aligned after an insertion
    assert sim("hamming", "", "abc") == 0.0


def test_jaro_and_jaro_winkler_on_winklers_example():
    # MARTHA/MARHTA: m = 6 matches, t = 2 out of order / 2 = 1 → J = (1 + 1 + 5/6) / 3 = 17/18;
    # common prefix ℓ = 3 → JW = J + 3p(1 − J) = (17 + 3p) / 18.
    assert sim("jaro", "MARTHA", "MARHTA") == pytest.approx(17 / 18)
    assert sim("jaro_winkler", "MARTHA", "MARHTA") == pytest.approx((17 + 0.3) / 18)
    assert sim("jaro_winkler", "MARTHA", "MARHTA", prefix_weight=0.25) == pytest.approx(17.75 / 18)
    assert sim("jaro_winkler", "MARTHA", "MARHTA", prefix_weight=0.0) == pytest.approx(17 / 18)
    # DIXON/DICKSONX: window ⌊8/2⌋ − 1 = 3, m = 4 (D, I, O, N), t = 0 → J = (4/5 + 4/8 + 1) / 3.
    assert sim("jaro", "DIXON", "DICKSONX") == pytest.approx((4 / 5 + 4 / 8 + 1) / 3)


def test_jaro_winkler_prefix_weight_is_bounded():
    # With ℓ = 4 the bonus is 4p(1 − J): p > 0.25 could push the value above 1.
    with pytest.raises(ConfigError, match="prefix_weight"):
        make("jaro_winkler", prefix_weight=0.3)
    with pytest.raises(ConfigError, match="unknown parameter 'prefix_weight'"):
        make("jaro", prefix_weight=0.1)


def test_token_measures_ignore_word_order_and_token_set_ignores_extra_words():
    assert sim("token_sort", "new york", "york new") == 1.0
    assert sim("token_set", "new york", "york new") == 1.0
    # token_set: one token set inside the other gives 1; token_sort compares the sorted strings
    # "new york" and "city new york" with Indel: LCS = 8 → 2·8 / (8 + 13).
    assert sim("token_set", "new york", "new york city") == 1.0
    assert sim("token_sort", "new york", "new york city") == pytest.approx(16 / 21)
    # Indel-based, not Levenshtein: "ab" vs "ac" is 1 − 2/4 (a substitution costs 2), not 1 − 1/2.
    assert sim("token_sort", "ab", "ac") == pytest.approx(0.5)
    assert sim("token_set", "ab", "ac") == pytest.approx(0.5)


def test_token_set_gives_one_to_two_strings_without_tokens():
    # rapidfuzz's token_set_ratio("", "") is 0; an item must be similar to itself.
    t = make("token_set")
    blank = ["", " ", "\t\u3000"]
    np.testing.assert_array_equal(t.matrix(blank, list(blank)), np.ones((3, 3)))
    np.testing.assert_array_equal(t.matrix(blank, ["a"]), np.zeros((3, 1)))
    np.testing.assert_array_equal(t.pairs(["", "a", " "], ["\t", "", "a"]), [1.0, 0.0, 0.0])


# ---------------------------------------------------------------------------------------------
# The paper's examples
# ---------------------------------------------------------------------------------------------


def test_gray_color_example_fig6():
    # Fig. 6 (its caption says Word2Vec, but the values and Table 3's syntactic column are
    # Levenshtein): gray/grey 1 − 1/4, color/colour 1 − 1/6, the/grey 1 − 3/4, others share no
    # aligned letters (edit = max length) and give 0.
    g, p = ["gray", "color"], ["the", "colour", "grey"]
    lev = make("levenshtein")
    union = g + p
    m = lev.matrix(union, union)
    expected = {("gray", "grey"): 0.75, ("color", "colour"): 1 - 1 / 6, ("the", "grey"): 0.25}
    for i, a in enumerate(union):
        for j, b in enumerate(union):
            want = 1.0 if i == j else expected.get((a, b), expected.get((b, a), 0.0))
            assert m[i, j] == pytest.approx(want), (a, b)
    # Soft cardinalities, exactly: card(G) = 2, card(P) = 0.8 + 1 + 0.8,
    # card(G ∪ P) = 1/1.75 + 2·(6/11) + 1/1.25 + 1/2, card(G ∩ P) by eq. 7.
    card_g, card_p = soft_cardinality(lev.matrix(g, g)), soft_cardinality(lev.matrix(p, p))
    card_u = soft_cardinality(m)
    exact_u = float(Fraction(4, 7) + Fraction(12, 11) + Fraction(4, 5) + Fraction(1, 2))
    assert (card_g, card_p, card_u) == pytest.approx((2.0, 2.6, exact_u))
    assert [round(v, 2) for v in (card_g, card_p, card_u, card_g + card_p - card_u)] == [
        2.00, 2.60, 2.96, 1.64]  # Fig. 6 and Table 3


CAFE_G = ["café", "pizza", "hotel"]
CAFE_P = ["café", "coffee", "caffe", "pizza", "plaza"]


def test_cafe_fig5_distances_need_accent_folding():
    # Fig. 5: "distances of café to the predicted words are: café (0), coffee (2), caffe (1),
    # pizza (5), plaza (4)". Distance = (1 − sim) · max length.
    def distances(**params):
        m = make("levenshtein", **params).matrix(["café"], CAFE_P)[0]
        lengths = np.array([max(4, len(w)) for w in CAFE_P])
        return np.rint((1 - m) * lengths).astype(int).tolist()

    # Without folding é ≠ e: caffe needs an insertion and é → e (2), not 1 as printed.
    assert distances() == [0, 4, 2, 5, 4]
    # With é ≡ e caffe is 1 (insert f), pizza 5, plaza 4 as printed. coffee is 3, not 2: it is
    # two letters longer (≥ 2 insertions) and 'a' does not occur in coffee (one more edit).
    assert distances(accent_fold=True) == [0, 3, 1, 5, 4]
    assert levenshtein("cafe", "coffee") == 3


def test_cafe_table3_syntactic_cardinalities_need_accent_folding():
    # Table 3, Café, syntactic: G 2.67, P 2.45, G ∪ P 2.91, G ∩ P 2.21 (from the rounded three).
    def cards(**params):
        lev = make("levenshtein", **params)
        u = CAFE_G + CAFE_P
        return [soft_cardinality(lev.matrix(s, s)) for s in (CAFE_G, CAFE_P, u)]

    g, p, u = cards(accent_fold=True)
    # café/hotel = cafe/hotel = 1 − 4/5 with folding, so card(G) = 2/1.2 + 1 = 8/3.
    assert g == pytest.approx(8 / 3)
    assert [round(v, 2) for v in (g, p, u)] == [2.67, 2.45, 2.91]
    assert g + p - u == pytest.approx(2.21, abs=0.01)
    # Without folding café shares nothing aligned with hotel: card(G) = 3, not the printed 2.67.
    assert [round(v, 2) for v in cards()][:2] == [3.00, 2.59]


# ---------------------------------------------------------------------------------------------
# Text preparation
# ---------------------------------------------------------------------------------------------


def test_accent_and_case_folding():
    assert sim("levenshtein", "café", "cafe") == 0.75  # é → e is one substitution of 4
    assert sim("levenshtein", "café", "cafe", accent_fold=True) == 1.0
    assert sim("levenshtein", "Café", "CAFE", case_fold=True, accent_fold=True) == 1.0
    assert sim("levenshtein", "Café", "CAFE", case_fold=True) == 0.75  # é still ≠ e
    assert sim("levenshtein", "Café", "CAFE", accent_fold=True) == 0.25  # a, f, e differ in case
    assert sim("levenshtein", "Straße", "STRASSE", case_fold=True) == 1.0  # casefold, not lower
    assert sim("levenshtein", "ﬁle", "file", accent_fold=True) == 1.0  # NFKD: ligature ﬁ → fi
    assert sim("levenshtein", "ø", "o", accent_fold=True) == 0.0  # no decomposition: kept


def test_nfd_and_nfc_input_give_identical_results():
    # Raw code points: an NFD café has 5, so rapidfuzz alone puts it 2 edits from an NFC café
    # (é → e, insert U+0301) and only 1 from cafe (delete U+0301).
    from rapidfuzz.distance import Levenshtein

    assert Levenshtein.normalized_similarity(NFD, NFC) == pytest.approx(1 - 2 / 5)
    assert Levenshtein.normalized_similarity(NFD, "cafe") == pytest.approx(1 - 1 / 5)
    assert sim("levenshtein", NFD, NFC) == 1.0
    items = ["cafe", "coffee", "Café", "naïve", "Ångström"]
    decomposed = [unicodedata.normalize("NFD", s) for s in items]
    assert decomposed != items
    for name in sorted(NAMES):
        for params in ({}, FOLDS):
            s = make(name, **params)
            np.testing.assert_array_equal(s.matrix(decomposed, items), s.matrix(items, items))
            np.testing.assert_array_equal(s.pairs(decomposed, items), s.pairs(items, items))
    assert sim("levenshtein", NFD, "cafe") == 0.75


def test_folding_recomposes_its_output():
    # "J̌" has no precomposed capital: casefold gives j + U+030C, which NFC composes to ǰ (U+01F0).
    assert sim("levenshtein", "J\u030c", "\u01f0", case_fold=True) == 1.0
    # NFKD splits Hangul syllables into jamo; recomposed, 한국 vs 한국어 is one edit of 3.
    assert sim("levenshtein", "한국", "한국어", accent_fold=True) == pytest.approx(2 / 3)


def test_whitespace_normalisation():
    a, b = "  new \t york\u3000", "new york"
    assert sim("levenshtein", a, b, normalize_whitespace=True) == 1.0
    assert sim("levenshtein", a, b) == pytest.approx(1 - 5 / 13)  # 3 + 1 + 1 extra blanks
    assert sim("levenshtein", " ", "", normalize_whitespace=True) == 1.0


def test_options_are_shared_and_documented():
    for name in NAMES:
        entry = registry().entry("similarity", name)
        assert issubclass(entry.cls.Params, es.StringParams)
        assert set(FOLDS) <= set(entry.params)
        assert all(entry.params[k]["default"] is False for k in FOLDS)
        assert entry.summary and entry.cls.__doc__.count("\n") >= 2  # summary, then formula


# ---------------------------------------------------------------------------------------------
# The protocol: matrix, pairs, shapes, errors
# ---------------------------------------------------------------------------------------------

ITEMS = ["", "a", "café", NFD, "Café", "coffee", "caffe", "new york", "york new", "  x  y ",
         "ab", "ba", "kitten", "sitting", "한국어", "a"]


def test_hook_registers_every_string_similarity():
    reg = registry()
    assert not reg.failures and not reg.conflicts
    assert set(reg.names("similarity")) == NAMES


@pytest.mark.parametrize("name", sorted(NAMES))
@pytest.mark.parametrize("params", [{}, FOLDS], ids=["plain", "folded"])
def test_author_kit_accepts_every_string_similarity(name, params):
    check_similarity(make(name, **params), ITEMS, symmetric=True)


@settings(max_examples=60, deadline=None)
@given(word_lists.filter(lambda xs: len(xs) >= 2), st.sampled_from(sorted(NAMES)))
def test_author_kit_on_random_strings(xs, name):
    check_similarity(make(name), xs)


def test_matrix_is_float64_with_the_right_shape_for_empty_lists():
    lev = make("levenshtein")
    for xs, ys in (([], ["a", "b"]), (["a"], []), ([], [])):
        m = lev.matrix(xs, ys)
        assert m.dtype == np.float64 and m.shape == (len(xs), len(ys))
    assert lev.pairs([], []).shape == (0,)


def test_large_matrix_uses_threads_and_agrees_with_pairs():
    # Above parallel_pairs the matrix is computed by several workers; results are the same.
    xs = [f"w{i % 97}x{i % 13}" for i in range(500)]
    lev = make("levenshtein")
    assert len(xs) ** 2 >= lev.parallel_pairs
    m = lev.matrix(xs, xs)
    np.testing.assert_array_equal(m, m.T)
    np.testing.assert_array_equal(np.diag(m), 1.0)
    np.testing.assert_array_equal(lev.pairs(xs, xs[::-1]), m[np.arange(500), np.arange(500)[::-1]])


def test_pairs_needs_lists_of_equal_length():
    with pytest.raises(ValueError, match="equal length, got 2 and 1"):
        make("levenshtein").pairs(["a", "b"], ["a"])


@pytest.mark.parametrize("item", [3, 1.5, True, None])
def test_non_string_items_are_data_errors(item):
    with pytest.raises(DataError) as info:
        make("jaro").matrix(["a", item], ["b"])
    message = str(info.value)
    assert "'jaro'" in message and repr(item) in message and type(item).__name__ in message
    assert "quote" in message and "YAML" in message
    if item in (3, 1.5) and not isinstance(item, bool):
        assert f'"{item}"' in message


def test_check_names_the_sample_of_a_non_string_item():
    s = make("levenshtein")
    s.check({"doc1": ["a", "b"], "doc2": ["café"]})  # fine
    with pytest.raises(DataError, match=r"sample 'doc2': item 42 \(int\).*1 more"):
        s.check({"doc1": ["a"], "doc2": ["b", 42], "doc3": [None]})


def test_author_kit_reports_a_broken_similarity():
    class Broken(es.LevenshteinSimilarity):
        def pairs(self, xs, ys):
            return super().pairs(xs, ys) * 0.5

    class Asymmetric(es.LevenshteinSimilarity):
        def matrix(self, xs, ys):
            m = super().matrix(xs, ys)
            return m * np.array([len(y) % 2 for y in ys]) if len(xs) and len(ys) else m

    with pytest.raises(AssertionError, match="similarity levenshtein.*pairs"):
        check_similarity(Broken(es.StringParams()), ["ab", "ac", "b"])
    with pytest.raises(AssertionError, match="equal items|symmetric"):
        check_similarity(Asymmetric(es.StringParams()), ["ab", "ac", "b"])
