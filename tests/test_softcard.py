"""Soft cardinality, exact matching and Crisp* on item lists (Fränti & Mariescu-Istodor)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from in_process import evalkit_cli

import evalkit
from evalkit.errors import DataError
from evalkit_softcard import max_matching

CARDS = ["card_ref", "card_pred", "card_union", "card_inter", "precision", "recall"]
CAFE = ([["café", "pizza", "hotel"]], [["café", "coffee", "caffe", "pizza", "plaza"]])
GRAY = ([["gray", "color"]], [["the", "grey", "colour"]])


def soft(reference, prediction, similarity="levenshtein", **kwargs):
    return evalkit.evaluate(
        reference, prediction, representation="soft_cardinality", similarity=similarity, metrics=CARDS, **kwargs
    )


def test_gray_color_table_3_syntactic():
    """Table 3, Syntactic column: card(G) 2.00, card(P) 2.60, card(G∪P) 2.96, card(G∩P) 1.64,
    recall 0.82, precision 0.63 (Section 4.3)."""
    out = soft(*GRAY)
    printed = {"card_ref": 2.00, "card_pred": 2.60, "card_union": 2.96, "card_inter": 1.64, "recall": 0.82, "precision": 0.63}
    assert {k: round(out[k], 2) for k in printed} == printed
    # Exactly, from Fig. 6: sim(gray, grey) = 3/4, sim(color, colour) = 5/6, sim(the, grey) = 1/4.
    # P: the 1/(1 + 1/4), grey 1/(1 + 1/4), colour 1 -> 2.6. G ⧺ P: gray 1/(7/4), color 1/(11/6),
    # the 1/(5/4), grey 1/(1 + 3/4 + 1/4) = 1/2, colour 1/(11/6).
    union = 4 / 7 + 6 / 11 + 4 / 5 + 1 / 2 + 6 / 11
    assert out["card_union"] == pytest.approx(union, rel=1e-12)
    assert out["card_inter"] == pytest.approx(2 + 2.6 - union, rel=1e-12)


def test_cafe_table_3_syntactic_needs_accent_folding():
    """Table 3: card(G) 2.67, card(P) 2.45, card(G∪P) 2.91 with é ≡ e; the printed 2.21 for the
    intersection came from rounded values: 2.67 + 2.45 − 2.91 = 2.21, exactly it is 2.2034."""
    out = soft(*CAFE, similarity={"name": "levenshtein", "accent_fold": True})
    assert [round(out[k], 2) for k in ("card_ref", "card_pred", "card_union")] == [2.67, 2.45, 2.91]
    assert out["card_inter"] == pytest.approx(out["card_ref"] + out["card_pred"] - out["card_union"], rel=1e-12)
    assert round(out["card_inter"], 4) == 2.2034
    assert round(out["precision"], 2) == 0.90  # "only the soft variants provide high precision (0.80 and 0.90)"
    # G: café and hotel are 1/5 apart by edits (sim 1 − 4/5); pizza shares nothing: card(G) = 1 + 2/(1 + 1/5).
    assert out["card_ref"] == pytest.approx(1 + 2 / 1.2, rel=1e-12)


def test_crisp_column_of_table_3_from_exact_matching():
    gray = evalkit.evaluate(*GRAY, representation="exact_match", metrics=CARDS)
    cafe = evalkit.evaluate(*CAFE, representation="exact_match", metrics=CARDS)
    assert [gray[k] for k in CARDS[:4]] == [2, 3, 5, 0]
    assert [cafe[k] for k in CARDS[:4]] == [3, 5, 6, 2]


def test_paper_examples_run_from_the_cli(root: Path):
    done = evalkit_cli("run", root / "configs" / "soft_keywords.yaml", "--format", "json", "--no-report", check=True)
    rows = json.loads(done.stdout)["rows"]
    value = {(r["class"], r["representation"], r["metric"]): r["value"] for r in rows}
    assert round(value[("gray_color", "soft_cardinality", "card_pred")], 2) == 2.60
    assert round(value[("gray_color", "soft_cardinality", "precision")], 2) == 0.63
    assert round(value[("cafe", "soft_cardinality", "card_union")], 2) == 2.91
    assert value[("gray_color", "exact_match", "precision")] == 0.0
    assert value[("cafe", "exact_match", "card_union")] == 6.0


words = st.lists(st.text(alphabet="abcdeé ", min_size=0, max_size=6), min_size=0, max_size=6)


@settings(max_examples=60, deadline=None)
@given(g=words, p=words)
def test_exact_similarity_gives_crisp_counts(g, p):
    """With sim = 1 for identical items else 0, duplicates share one count: soft = crisp sets."""
    ours = evalkit.evaluate([g], [p], representation="soft_cardinality", similarity="exact", metrics=CARDS)
    crisp = evalkit.evaluate([g], [p], representation="exact_match", metrics=CARDS)
    for key in CARDS:
        assert ours[key] == pytest.approx(crisp[key], abs=1e-12), key


def test_unique_item_counts_one_and_duplicates_half():
    out = soft([["alpha", "omega", "omega"]], [["zzzzz"]], similarity="exact")
    # alpha 1; omega twice: each 1/2 -> card(G) = 2.
    assert out["card_ref"] == 2.0 and out["card_pred"] == 1.0


@settings(max_examples=40, deadline=None)
@given(
    g=st.lists(st.text("abc", max_size=4), max_size=5),
    p=st.lists(st.text("abc", max_size=4), max_size=5),
    seed=st.integers(0, 99),
)
def test_invariant_to_item_order(g, p, seed):
    rng = np.random.default_rng(seed)
    out = soft([g], [p])
    shuffled = soft([list(rng.permutation(np.array(g, dtype=object)))], [list(rng.permutation(np.array(p, dtype=object)))])
    for key in CARDS:
        assert shuffled[key] == pytest.approx(out[key], rel=1e-12, abs=1e-12), key


def test_batched_documents_equal_one_by_one():
    """Many documents in one pairs() call give each document's own values (samples averaging)."""
    rng = np.random.default_rng(4)
    vocab = ["cafe", "coffee", "caffe", "pizza", "plaza", "hotel", "motel", "tea"]
    docs_g = [list(rng.choice(vocab, rng.integers(0, 5))) for _ in range(30)]
    docs_p = [list(rng.choice(vocab, rng.integers(0, 5))) for _ in range(30)]
    together = evalkit.evaluate(
        docs_g, docs_p, representation="soft_cardinality", similarity="levenshtein", averaging="none", metrics=["card_inter"]
    )
    alone = [soft([g], [p])["card_inter"] for g, p in zip(docs_g, docs_p)]
    # averaging none over one class sums the documents' intersections.
    assert together["card_inter"].iloc[0] == pytest.approx(sum(alone), rel=1e-12)


def test_matrix_only_similarity_gives_the_same_values(monkeypatch):
    """A third-party similarity without pairs() is scored one matrix per cell, same numbers."""
    from evalkit_similarity import GivenMatrix

    spec = {
        "name": "matrix", "values": [["gray", "grey", 0.75], ["color", "colour", 5 / 6], ["the", "grey", 0.25]], "default": 0.0
    }
    with_pairs = soft(*GRAY, similarity=spec)
    monkeypatch.delattr(GivenMatrix, "pairs")
    assert soft(*GRAY, similarity=spec) == pytest.approx(with_pairs, rel=1e-12)
    assert with_pairs == pytest.approx(soft(*GRAY), rel=1e-12)  # Fig. 6 values are Levenshtein's


def test_exponent_and_bound():
    # Two near-duplicates: sim(colour, color) = 5/6. p = 2 squares it: counts 1/(1 + 25/36).
    out = soft([["color", "colour"]], [["color"]], similarity={"name": "levenshtein"}, **{})
    squared = evalkit.evaluate(
        [["color", "colour"]], [["color"]], representation={"name": "soft_cardinality", "p": 2}, similarity="levenshtein",
        metrics=["card_ref"],
    )
    assert out["card_ref"] == pytest.approx(2 / (1 + 5 / 6))
    assert squared["card_ref"] == pytest.approx(2 / (1 + 25 / 36))
    # Unbounded precision can exceed 1 (the paper's remark); bound caps it at 1.
    g, p = [["abcd", "abce", "abcf"]], [["abcd"]]
    loose = evalkit.evaluate(g, p, representation="soft_cardinality", similarity="levenshtein", metrics=["precision"])
    tight = evalkit.evaluate(
        g, p, representation={"name": "soft_cardinality", "bound": True}, similarity="levenshtein", metrics=["precision"]
    )
    assert loose["precision"] > 1 and tight["precision"] == 1.0


def test_threshold_match_is_an_optimal_assignment():
    # A greedy match of the best pair (a0-b0, 0.95) would leave a1 unmatched (a1-b1 0.5 < 0.8);
    # the optimal assignment matches a0-b1 and a1-b0: two pairs.
    sim = np.array([[0.95, 0.85], [0.9, 0.5]])
    assert max_matching(sim, 0.8) == 2
    assert max_matching(sim, 0.96) == 0
    # With three candidates for one item, only one match counts.
    assert max_matching(np.array([[0.9], [0.9], [0.9]]), 0.8) == 1


def test_threshold_match_on_the_paper_example():
    # Crisp* at 0.8 on Gray Color: only color-colour (5/6) passes; gray-grey is 3/4.
    out = evalkit.evaluate(*GRAY, representation="threshold_match", similarity="levenshtein", metrics=["precision", "recall"])
    assert out == pytest.approx({"precision": 1 / 3, "recall": 1 / 2})


def test_items_grouped_by_class_give_class_columns():
    ref = [{"food": ["pizza"], "place": ["hotel"]}, {"food": ["tea"], "place": []}]
    pred = [{"food": ["pizza"], "place": ["motel"]}, {"food": [], "place": ["inn"]}]
    out = evalkit.evaluate(ref, pred, representation="exact_match", averaging="none", metrics=["recall"])
    assert out["recall"].tolist() == [0.5, 0.0]


def test_item_loaders_jsonl_and_csv(tmp_path: Path):
    (tmp_path / "both.jsonl").write_text(
        '{"id": "d1", "reference": ["café", "pizza"], "prediction": ["cafe"]}\n'
        '{"id": "d2", "reference": ["hotel"], "prediction": ["hotel", "inn"]}\n'
    )
    (tmp_path / "sys.csv").write_text("id,item\nd2,hotel\nd2,inn\nd1,cafe\n")
    config = tmp_path / "run.yaml"
    config.write_text(
        "data:\n  reference: both.jsonl\n  systems: {inline: both.jsonl, csv: sys.csv}\n"
        "representation: exact_match\naveraging: samples\nmetrics: [recall]\n"
    )
    rows = evalkit.run(config).rows
    # d1: nothing exact (cafe vs café) -> 0; d2: hotel found -> 1; mean 0.5, from both files.
    assert [(r.system, r.value) for r in rows] == [("inline", 0.5), ("csv", 0.5)]


def test_missing_document_is_an_error_or_empty(tmp_path: Path):
    (tmp_path / "ref.jsonl").write_text('{"id": "a", "items": ["x"]}\n{"id": "b", "items": ["y"]}\n')
    (tmp_path / "sys.jsonl").write_text('{"id": "a", "items": ["x"]}\n')
    config = tmp_path / "run.yaml"
    config.write_text(
        "data:\n  reference: ref.jsonl\n  systems: {s: sys.jsonl}\n"
        "representation: exact_match\naveraging: samples\nmetrics: [recall]\n"
    )
    with pytest.raises(DataError, match=r"missing 1 reference id\(s\): 'b' \(set `missing: empty`"):
        evalkit.run(config)
    config.write_text(config.read_text().replace("systems: {s: sys.jsonl}", "systems: {s: sys.jsonl}\n  missing: empty"))
    assert [r.value for r in evalkit.run(config).rows] == [0.5]


def test_bad_item_data_is_named(tmp_path: Path):
    with pytest.raises(DataError, match=r"prediction: sample 1: expected a list of items, got 'pizza'"):
        evalkit.evaluate([["pizza"]], ["pizza"], representation="exact_match")
    (tmp_path / "bad.jsonl").write_text('{"id": "a", "items": ["x"]}\n{"id": "b", items}\n')
    with pytest.raises(DataError, match=r"bad.jsonl:2: not valid JSON"):
        evalkit.run(
            {"data": {"reference": str(tmp_path / "bad.jsonl"), "systems": {"s": str(tmp_path / "bad.jsonl")}},
             "representation": "exact_match"}
        )


def test_mixing_matrix_and_item_representations_is_explained():
    with pytest.raises(evalkit.errors.ConfigError, match="read different kinds of data"):
        evalkit.run({"data": {"reference": [["a"]], "systems": {"s": [["a"]]}}, "representation": ["fuzzy", "exact_match"]})
    with pytest.raises(evalkit.errors.ConfigError, match=r"exact_match reads items, kld reads matrix\)"):
        evalkit.evaluate([["a"]], [["a"]], representation="exact_match", metrics=["kld"])


def test_matrix_similarity_from_a_csv_next_to_the_config(tmp_path: Path):
    (tmp_path / "judgments.csv").write_text("a,b,value\npupil,student,0.9\n")
    config = tmp_path / "run.yaml"
    config.write_text(
        "data:\n  reference: [[student]]\n  systems: {s: [[pupil]]}\n"
        "representation: threshold_match\nsimilarity: {name: matrix, file: judgments.csv}\nmetrics: [recall]\n"
        "averaging: micro\n"
    )
    assert [r.value for r in evalkit.run(config).rows] == [1.0]  # 0.9 >= 0.8
    config.write_text(config.read_text().replace("[[pupil]]", "[[teacher]]"))
    with pytest.raises(DataError, match=r"no value for the pair \('student', 'teacher'\); add it to `values` or set `default:`"):
        evalkit.run(config)


def test_large_documents_are_scored_as_blocks_with_the_same_values(monkeypatch):
    """Documents of block_items items or more use one matrix; below, batched pairs: same numbers."""
    import evalkit.cells

    rng = np.random.default_rng(9)
    letters = np.array(list("abcdef"))
    docs = [["".join(rng.choice(letters, 4)) for _ in range(n)] for n in (3, 40, 70, 0)]
    preds = [["".join(rng.choice(letters, 4)) for _ in range(n)] for n in (50, 2, 30, 5)]
    kwargs = dict(similarity="levenshtein", averaging="none", metrics=CARDS)
    mixed = evalkit.evaluate(docs, preds, representation="soft_cardinality", **kwargs)
    crisp_star = evalkit.evaluate(docs, preds, representation="threshold_match", **kwargs)
    monkeypatch.setattr(evalkit.cells, "CHUNK_VALUES", 1)  # one cell's matrix per chunk: the same sums
    for key, value in evalkit.evaluate(docs, preds, representation="soft_cardinality", **kwargs).items():
        np.testing.assert_array_equal(value, mixed[key])
    from evalkit_strings import StringSimilarity

    monkeypatch.setattr(evalkit.cells, "BLOCK_ITEMS", 10**9)
    monkeypatch.setattr(StringSimilarity, "block_items", 10**9)  # everything as pairs
    for key in CARDS:
        soft_value = evalkit.evaluate(docs, preds, representation="soft_cardinality", **kwargs)[key]
        np.testing.assert_allclose(soft_value, mixed[key], rtol=1e-12)
        star_value = evalkit.evaluate(docs, preds, representation="threshold_match", **kwargs)[key]
        np.testing.assert_allclose(star_value, crisp_star[key], rtol=1e-12)


def test_symmetric_similarities_score_each_pair_once_with_the_same_values(monkeypatch):
    from evalkit_strings import StringSimilarity

    rng = np.random.default_rng(12)
    vocab = ["cafe", "coffee", "caffe", "pizza", "plaza", "hotel", "motel", "tea", "the"]
    docs_g = [list(rng.choice(vocab, rng.integers(0, 6))) for _ in range(40)]
    docs_p = [list(rng.choice(vocab, rng.integers(0, 6))) for _ in range(40)]
    kwargs = dict(representation={"name": "soft_cardinality", "p": 2}, similarity="jaro_winkler", averaging="none", metrics=CARDS)
    once = evalkit.evaluate(docs_g, docs_p, **kwargs)
    monkeypatch.setattr(StringSimilarity, "symmetric", False)
    both_ways = evalkit.evaluate(docs_g, docs_p, **kwargs)
    for key in CARDS:
        np.testing.assert_allclose(once[key], both_ways[key], rtol=1e-12)


def soft_cards_by_definition(g: list[str], p: list[str]) -> tuple[float, float, float]:
    """card(G), card(P), card(G ⧺ P) of one document (eqs. 4, 5), each pair's similarity from
    rapidfuzz's scorer: the peer the string similarity wraps."""
    from rapidfuzz.distance import Levenshtein

    def card(items: list[str]) -> float:
        return sum(1 / sum(Levenshtein.normalized_similarity(a, b) for b in items) for a in items)

    return card(g), card(p), card(g + p)


@pytest.mark.parametrize("chunk_values", [None, 1])
def test_documents_with_an_empty_side_last_in_a_chunk_equal_the_definition(monkeypatch, chunk_values):
    """The row sums of a chunk of matrices (one reduceat) are right when the chunk's last
    document has no prediction (a sum would start at the end of the values) or no reference;
    with a chunk of one matrix, every document is last in its chunk."""
    import evalkit.cells

    if chunk_values is not None:
        monkeypatch.setattr(evalkit.cells, "CHUNK_VALUES", chunk_values)
    docs_g = [["gray", "color"], [], ["cafe", "coffee", "caffe"], ["tea"]]
    docs_p = [["the", "grey"], ["pizza", "plaza"], ["cafe"], []]
    out = evalkit.evaluate(docs_g, docs_p, representation="soft_cardinality", similarity="levenshtein",
                           averaging="none", metrics=["card_ref", "card_pred", "card_union"])
    expected = np.array([soft_cards_by_definition(g, p) for g, p in zip(docs_g, docs_p)]).sum(axis=0)
    got = [float(out[key].iloc[0]) for key in ("card_ref", "card_pred", "card_union")]
    # Sums of a few terms in another order: equal to rounding.
    assert got == pytest.approx(expected.tolist(), rel=1e-12)


def test_a_vocabulary_check_sees_each_sample_s_items_under_its_name():
    """by_sample: every item of a sample, classes in order, keyed by side and sample id (or row)."""
    from evalkit.items import ItemSets

    grouped = ItemSets.from_python([{"a": ["x", "y"], "b": ["z"]}, {"b": ["w"]}], ids=["d1", "d2"])
    assert grouped.by_sample("reference") == {"reference:d1": ("x", "y", "z"), "reference:d2": ("w",)}
    plain = ItemSets.from_python([["x", "x"], []])
    assert plain.by_sample("sys") == {"sys:row 1": ("x", "x"), "sys:row 2": ()}


def test_plain_lists_mixed_with_class_mappings_are_named():
    """Whichever comes first, the sample that is not a mapping is named (any sample that maps
    classes to items makes the data grouped by class)."""
    for samples, row in (([["x"], {"items": ["y"]}], 1), ([{"items": ["y"]}, ["x"]], 2)):
        with pytest.raises(DataError, match=rf"reference: sample {row}: the sample is a list; when some samples map "
                                            "classes to items, all must"):
            evalkit.evaluate(samples, samples, representation="exact_match")
