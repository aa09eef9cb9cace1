"""Segments: exact lengths by sweep, segment overlap, Ziółko-style fuzzy P/R."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalkit
from evalkit.errors import DataError

PRF = ["precision", "recall", "f1"]


def segments(reference, prediction, **kwargs):
    return evalkit.evaluate(
        reference, prediction, representation="segments", metrics=PRF + ["card_ref", "card_pred", "card_inter"], **kwargs
    )


def test_identical_segments_score_one():
    out = segments([[(1.0, 4.0), (6.0, 7.5)]], [[(6.0, 7.5), (1.0, 4.0)]])
    assert out["precision"] == out["recall"] == out["f1"] == 1.0  # lengths 3 and 1.5 add up exactly


@pytest.mark.parametrize("delta", [0.0, 0.25, 1.0, 2.5])
def test_shifted_prediction_gives_l_minus_delta_over_l(delta):
    """A segment of length L = 4 predicted shifted by δ: shared length L − δ of L on both sides."""
    out = segments([[(2.0, 6.0)]], [[(2.0 + delta, 6.0 + delta)]])
    assert out["precision"] == pytest.approx((4 - delta) / 4)
    assert out["recall"] == pytest.approx((4 - delta) / 4)


def test_disjoint_segments_score_zero():
    out = segments([[(0.0, 1.0)]], [[(1.0, 2.0)]])  # touching, not overlapping
    assert out["precision"] == out["recall"] == 0.0


def test_overlapping_intervals_on_one_side_are_merged():
    # Reference [0, 4] ∪ [3, 6] ∪ [8, 9] = [0, 6] ∪ [8, 9]: length 7, not 4 + 3 + 1 = 8.
    # Prediction [5, 8.5] and a duplicate: length 3.5; shared [5, 6] + [8, 8.5] = 1.5.
    out = segments([[(0.0, 4.0), (3.0, 6.0), (8.0, 9.0)]], [[(5.0, 8.5), (5.0, 8.5)]])
    assert (out["card_ref"], out["card_pred"], out["card_inter"]) == pytest.approx((7.0, 3.5, 1.5))


def frames(items, resolution, horizon):
    """A frame-based crisp rendering: frame k is active when its centre lies in an interval."""
    centres = (np.arange(int(horizon / resolution)) + 0.5) * resolution
    active = np.zeros(len(centres), dtype=bool)
    for onset, offset in items:
        active |= (centres >= onset) & (centres < offset)
    return active


interval = st.tuples(st.floats(0, 9), st.floats(0.05, 3)).map(lambda t: (round(t[0], 2), round(t[0] + t[1], 2)))


@settings(max_examples=60, deadline=None)
@given(
    ref=st.lists(st.lists(interval, max_size=5), min_size=1, max_size=3),
    pred=st.lists(st.lists(interval, max_size=5), min_size=1, max_size=3),
)
def test_lengths_equal_a_fine_frame_computation(ref, pred):
    """Frames of 1 ms on times that are multiples of 10 ms count every length exactly, so the
    frame-based counts (× resolution) must equal the sweep's lengths to rounding."""
    pred = (pred * 3)[: len(ref)]
    resolution = 0.001
    out = evalkit.evaluate(
        ref, pred, representation="segments", averaging="none", metrics=["card_ref", "card_pred", "card_inter"]
    )
    ref_frames = [frames(items, resolution, 13) for items in ref]
    pred_frames = [frames(items, resolution, 13) for items in pred]
    assert out["card_ref"].iloc[0] == pytest.approx(sum(f.sum() for f in ref_frames) * resolution, abs=1e-6)
    assert out["card_pred"].iloc[0] == pytest.approx(sum(f.sum() for f in pred_frames) * resolution, abs=1e-6)
    shared = sum((r & p).sum() for r, p in zip(ref_frames, pred_frames)) * resolution
    assert out["card_inter"].iloc[0] == pytest.approx(shared, abs=1e-6)


def test_segment_overlap_similarity():
    # [0, 4] and [2, 8]: shared 2; longer 6 -> 1/3; union 8 -> 1/4.
    from evalkit.discovery import default_registry

    overlap = default_registry().create("similarity", "segment_overlap")
    iou = default_registry().create("similarity", {"name": "segment_overlap", "variant": "iou"})
    assert overlap.matrix([(0, 4)], [(2, 8)])[0, 0] == pytest.approx(1 / 3)
    assert iou.pairs([(0, 4)], [(2, 8)])[0] == pytest.approx(1 / 4)
    assert overlap.pairs([(3, 3)], [(3, 3)])[0] == 1.0  # an identical zero-length segment
    from evalkit.testing import check_similarity

    for sim in (overlap, iou):
        check_similarity(sim, [(0.0, 1.0), (0.5, 2.0), (0.0, 1.0), (5.0, 5.0), (1.0, 3.0)])


def test_fuzzy_pr_maps_each_segment_to_its_best_match():
    # Reference [0, 10]; predictions [2, 12] (overlap 8 / 10 = 0.8) and [20, 21] (nothing).
    # Recall = 0.8 / 1; precision = (0.8 + 0) / 2; F = 2·0.4·0.8 / 1.2.
    out = evalkit.evaluate(
        [[(0, 10)]], [[(2, 12), (20, 21)]], representation="fuzzy_pr", similarity="segment_overlap",
        metrics=PRF + ["card_ref", "card_pred"],
    )
    assert out == pytest.approx({"precision": 0.4, "recall": 0.8, "f1": 2 * 0.4 * 0.8 / 1.2, "card_ref": 1, "card_pred": 2})


def test_fuzzy_pr_pools_matched_masses_under_micro():
    ref = [[(0, 10)], [(0, 2), (4, 6)]]
    pred = [[(2, 12), (20, 21)], [(0, 2)]]
    out = evalkit.evaluate(ref, pred, representation="fuzzy_pr", similarity="segment_overlap", metrics=["precision", "recall"])
    # Matched reference mass 0.8 + (1 + 0) of 3 segments; prediction 0.8 + 0 + 1 of 3.
    assert out == pytest.approx({"precision": 1.8 / 3, "recall": 1.8 / 3})


def test_soft_and_crisp_star_on_segments():
    # One reference [0, 10], one prediction [2, 12]: overlap similarity 0.8.
    g, p = [[(0, 10)]], [[(2, 12)]]
    soft = evalkit.evaluate(g, p, representation="soft_cardinality", similarity="segment_overlap", metrics=["precision"])
    # card(G) = card(P) = 1, card(G ⧺ P) = 2 / 1.8 -> |G ∩ P| = 2 − 1/0.9.
    assert soft["precision"] == pytest.approx(2 - 1 / 0.9)
    star = evalkit.evaluate(
        g, p, representation={"name": "threshold_match", "threshold": 0.9}, similarity="segment_overlap", metrics=["precision"]
    )
    assert star["precision"] == 0.0


@pytest.mark.parametrize("bad", [(3.0, 1.0), (-1.0, 2.0), (float("nan"), 2.0), ("a", 2.0)])
def test_bad_segments_are_named(bad):
    with pytest.raises(DataError, match="segment|pairs of numbers"):
        segments([[(0.0, 1.0), bad]], [[(0.0, 1.0)]])


def test_a_class_a_system_never_predicts_is_empty_not_an_error(tmp_path):
    (tmp_path / "ref.tsv").write_text("a.wav\t0\t2\tdog\na.wav\t1\t3\tcar\n")
    (tmp_path / "sys.tsv").write_text("a.wav\t0\t2\tdog\n")
    config = tmp_path / "run.yaml"
    config.write_text(
        "data: {reference: ref.tsv, systems: {s: sys.tsv}}\nrepresentation: segments\naveraging: none\nmetrics: [recall]\n"
    )
    # Classes sorted: car (never predicted -> recall 0), dog (found -> 1).
    assert [(r.class_, r.value) for r in evalkit.run(config).rows] == [("car", 0.0), ("dog", 1.0)]
    (tmp_path / "sys.tsv").write_text("a.wav\t0\t2\tdog\na.wav\t0\t2\tbird\n")
    with pytest.raises(DataError, match="not in the reference 'bird'"):
        evalkit.run(config)


REF = [[(0.0, 4.0), (6.0, 9.0)], [(1.0, 2.0)]]
PRED = [[(0.5, 4.5), (8.0, 12.0)], [(1.5, 3.0)]]
CARD = ["card_ref", "card_pred", "card_inter"]


def fuzzy_segments(ramp, tnorm="minimum", reference=REF, prediction=PRED):
    return evalkit.evaluate(
        reference, prediction, representation={"name": "fuzzy_segments", "ramp": ramp}, tnorm=tnorm, metrics=CARD + PRF
    )


def test_fuzzy_boundaries_tend_to_crisp_lengths():
    crisp = segments(REF, PRED)
    for ramp in (1e-3, 1e-5):
        fuzzy = fuzzy_segments(ramp)
        for key in CARD + PRF:
            assert fuzzy[key] == pytest.approx(crisp[key], abs=5 * ramp), (ramp, key)
    assert fuzzy_segments(0.0) == pytest.approx({k: crisp[k] for k in CARD + PRF})


def test_long_segments_keep_their_length_and_identical_sides_score_one():
    # A ramp centred on each boundary adds what it removes: ∫μ of [0, 4] with ramp 1 is 4.
    out = fuzzy_segments(1.0, reference=[[(0.0, 4.0)]], prediction=[[(0.0, 4.0)]])
    assert out["card_ref"] == pytest.approx(4.0) and out["f1"] == pytest.approx(1.0)


def test_a_shift_inside_fuzzy_boundaries_by_hand():
    """[0, 10] against [1, 11], ramps of width 2: μ_G rises on [-1, 1], falls on [9, 11]; μ_P on
    [0, 2] and [10, 12]. ∫min: on [0, 1] min = μ_P = t/2 -> 1/4; [1, 2]: μ_P = t/2 (<= 1) -> 3/4;
    [2, 9]: 1 -> 7; [9, 10]: μ_G = (11 − t)/2 -> 3/4; [10, 11]: μ_G -> 1/4. Total 9."""
    out = fuzzy_segments(2.0, reference=[[(0.0, 10.0)]], prediction=[[(1.0, 11.0)]])
    assert out["card_inter"] == pytest.approx(9.0)
    assert out["precision"] == pytest.approx(0.9) and out["recall"] == pytest.approx(0.9)


@pytest.mark.parametrize("tnorm", ["minimum", "product", "lukasiewicz", "hamacher", {"name": "frank", "s": 5}, "einstein"])
def test_every_tnorm_stays_within_bounds(tnorm):
    out = fuzzy_segments(0.8, tnorm=tnorm)
    assert 0 <= out["card_inter"] <= min(out["card_ref"], out["card_pred"]) + 1e-9
    assert out["card_inter"] <= fuzzy_segments(0.8)["card_inter"] + 1e-9  # T <= minimum


def test_the_bundled_event_config_compares_table_5s_methods(root):
    results = evalkit.run(root / "configs" / "events.yaml", write_reports=False)
    f1 = {(r.system, r.representation): r.value for r in results.rows if (r.averaging, r.metric) == ("micro", "f1")}
    representations = (
        "exact_match", "threshold_match(threshold=0.8)", "fuzzy_pr", "soft_cardinality", "segments", "fuzzy_segments(ramp=0.5)"
    )
    for rep in representations:
        assert 0 <= f1[("poor", rep)] <= f1[("good", rep)] <= 1, rep
    # No predicted boundary is exact, so crisp matching finds nothing; the soft measures do.
    assert f1[("good", "exact_match")] == 0.0 and f1[("good", "soft_cardinality")] > 0.5


def test_unreachable_quadrature_tolerance_is_an_error_naming_the_cell(monkeypatch):
    import evalkit_segments.fuzzy_boundaries as fb

    monkeypatch.setattr(fb, "_MAX_DEPTH", 1)
    with pytest.raises(
        DataError,
        match=r"fuzzy_segments with T-norm 'schweizer_sklar': the integral of sample 'row 1', class 'items' "
        r"has an error bound of .* above the tolerance 1e-12",
    ):
        evalkit.evaluate(
            [[(0.0, 10.0)]], [[(1.0, 11.0)]], representation={"name": "fuzzy_segments", "ramp": 2.0, "tolerance": 1e-12},
            tnorm="schweizer_sklar",  # p = 2: a square-root singularity at its zero region's edge
        )


def test_merging_is_exact_in_any_cell():
    """Two intervals 5 ns apart in cell 50,000,000 stay two: the running maximum per cell is
    exact (shifting cells by multiples of the time span rounded them together)."""
    from evalkit_segments import merge

    cell = np.array([0, 50_000_000, 50_000_000])
    onset, offset = np.array([0.0, 59.0, 59.00000001]), np.array([60.0, 59.000000005, 60.0])
    merged_cell, merged_onset, merged_offset = merge(cell, onset, offset)
    assert merged_onset.tolist() == [0.0, 59.0, 59.00000001]
    assert merged_offset.tolist() == [60.0, 59.000000005, 60.0]
