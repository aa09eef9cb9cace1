"""Worked examples from the papers, checked through the public ``evalkit.evaluate`` API.

Sources (../shared/papers/):
* Harju & Mesaros (2023), "Evaluating classification systems against soft labels with fuzzy
  precision and recall": Table 1 (three four-point cases) and Figure 1 (two-point ε sweep).
* Kelz (2017), "Multilabel evaluation measure confusion": the two-frame "samples" vs "micro"
  precision example.

Every expected number below is either printed in a paper or derived by hand in the comments.
"""

from __future__ import annotations

from math import log

import numpy as np
import pytest

import evalkit

PRF = ("precision", "recall", "f1")


def column(values) -> np.ndarray:
    """One class, n samples: shape (n, 1)."""
    return np.asarray(values, dtype=np.float64).reshape(-1, 1)


# ---------------------------------------------------------------------------------------------
# (a) Harju & Mesaros, Table 1
# ---------------------------------------------------------------------------------------------
# The paper prints the metrics but shows the inputs only as bars. The inputs below come from
# tests/derive_table1.py (run: `python tests/derive_table1.py`), an exhaustive search over all
# multisets of four (reference, prediction) pairs on the 0.0, 0.1, ..., 1.0 grid (9,381,251
# candidates) for those matching every printed number of a row (hard P/R/F and soft P/R/F to
# 0.05 percentage points, KLD to 0.0005), plus the text of Sec. 2.2: exactly two references
# > 0.5 in every case ("50 % of positive references in the binarized case") and identical
# reference values in cases 1 and 2.
#   case 1: 2 numeric fits; exactly 1 shares its references with a case-2 fit -> unique.
#   case 2: 12 numeric fits, 7 with two positive references, 2 with the references of case 1;
#           both give identical numbers, the first in search order is used.
#   case 3: 7 numeric fits, 6 with two positive references; taken: the one whose values are
#           all closest to 0.5 ("the labels are close to the 0.5 threshold value"), unique.
# The order of the four points is arbitrary (every metric is a sum or mean over them).
TABLE1 = {
    # Case 1, pairs (y, ŷ): (0.1, 0.6) FP, (0.2, 0.1) TN, (0.8, 0.9) TP, (0.9, 0.2) FN.
    #   hard: TP = 1, |P| = 2, |G| = 2 -> P = R = F = 1/2.
    #   soft: Σmin = 0.1 + 0.1 + 0.8 + 0.2 = 1.2, Σŷ = 1.8, Σy = 2.0
    #         -> P = 1.2/1.8, R = 1.2/2.0, F = 2.4/3.8.
    #   KLD: mean of the four binary KL terms y ln(y/ŷ) + (1−y) ln((1−y)/(1−ŷ)).
    "case1": dict(
        ref=[0.1, 0.2, 0.8, 0.9],
        pred=[0.6, 0.1, 0.9, 0.2],
        printed_hard=(50.0, 50.0, 50.0),
        printed_soft=(66.7, 60.0, 63.2),
        printed_kld=0.446,
        exact_hard=(1 / 2, 1 / 2, 2 * 1 / (2 + 2)),
        exact_soft=(1.2 / 1.8, 1.2 / 2.0, 2 * 1.2 / (1.8 + 2.0)),
        exact_kld=(
            (0.1 * log(0.1 / 0.6) + 0.9 * log(0.9 / 0.4))
            + (0.2 * log(0.2 / 0.1) + 0.8 * log(0.8 / 0.9))
            + (0.8 * log(0.8 / 0.9) + 0.2 * log(0.2 / 0.1))
            + (0.9 * log(0.9 / 0.2) + 0.1 * log(0.1 / 0.8))
        ) / 4,
    ),
    # Case 2, same references: (0.1, 0.2) TN, (0.2, 0.3) TN, (0.8, 0.9) TP, (0.9, 0.6) TP.
    #   hard: TP = |P| = |G| = 2 ("both positive references are found") -> P = R = F = 1.
    #   soft: Σmin = 0.1 + 0.2 + 0.8 + 0.6 = 1.7, Σŷ = 2.0, Σy = 2.0 -> P = R = F = 0.85.
    "case2": dict(
        ref=[0.1, 0.2, 0.8, 0.9],
        pred=[0.2, 0.3, 0.9, 0.6],
        printed_hard=(100.0, 100.0, 100.0),
        printed_soft=(85.0, 85.0, 85.0),
        printed_kld=0.083,
        exact_hard=(2 / 2, 2 / 2, 2 * 2 / (2 + 2)),
        exact_soft=(1.7 / 2.0, 1.7 / 2.0, 2 * 1.7 / (2.0 + 2.0)),
        exact_kld=(
            (0.1 * log(0.1 / 0.2) + 0.9 * log(0.9 / 0.8))
            + (0.2 * log(0.2 / 0.3) + 0.8 * log(0.8 / 0.7))
            + (0.8 * log(0.8 / 0.9) + 0.2 * log(0.2 / 0.1))
            + (0.9 * log(0.9 / 0.6) + 0.1 * log(0.1 / 0.4))
        ) / 4,
    ),
    # Case 3: (0.4, 0.4) TN, (0.4, 0.6) FP, (0.6, 0.4) FN, (0.6, 0.4) FN ("complete opposites").
    #   hard: TP = 0, |P| = 1, |G| = 2 -> P = R = F = 0 (no zero division involved).
    #   soft: Σmin = 0.4 * 4 = 1.6, Σŷ = 1.8, Σy = 2.0 -> P = 1.6/1.8, R = 1.6/2.0, F = 3.2/3.8.
    #   KLD: (0.4, 0.4) gives 0; (0.4, 0.6) and (0.6, 0.4) each give
    #        0.4 ln(2/3) + 0.6 ln(3/2) = 0.2 ln 1.5, so the mean is 3 * 0.2 ln 1.5 / 4 = 0.15 ln 1.5.
    "case3": dict(
        ref=[0.4, 0.4, 0.6, 0.6],
        pred=[0.4, 0.6, 0.4, 0.4],
        printed_hard=(0.0, 0.0, 0.0),
        printed_soft=(88.9, 80.0, 84.2),
        printed_kld=0.061,
        exact_hard=(0 / 1, 0 / 2, 2 * 0 / (1 + 2)),
        exact_soft=(1.6 / 1.8, 1.6 / 2.0, 2 * 1.6 / (1.8 + 2.0)),
        exact_kld=0.15 * log(1.5),
    ),
}


def assert_printed_percent(value: float, printed: float) -> None:
    # Table 1 prints percentages to one decimal: the value must round to the printed one.
    assert abs(100 * value - printed) <= 0.05 + 1e-9, (100 * value, printed)


@pytest.mark.parametrize("case", sorted(TABLE1))
def test_table1_hard_metrics(case):
    c = TABLE1[case]
    got = evalkit.evaluate(column(c["ref"]), column(c["pred"]), representation="crisp", metrics=list(PRF))
    for name, printed, exact in zip(PRF, c["printed_hard"], c["exact_hard"]):
        assert_printed_percent(got[name], printed)
        assert got[name] == pytest.approx(exact, abs=1e-12), name


@pytest.mark.parametrize("case", sorted(TABLE1))
def test_table1_soft_metrics(case):
    c = TABLE1[case]
    got = evalkit.evaluate(
        column(c["ref"]), column(c["pred"]), representation="fuzzy", tnorm="minimum", metrics=list(PRF)
    )
    for name, printed, exact in zip(PRF, c["printed_soft"], c["exact_soft"]):
        assert_printed_percent(got[name], printed)
        assert got[name] == pytest.approx(exact, abs=1e-12), name


@pytest.mark.parametrize("case", sorted(TABLE1))
def test_table1_kld(case):
    c = TABLE1[case]
    got = evalkit.evaluate(column(c["ref"]), column(c["pred"]), metrics=["kld"])
    # Printed to three decimals.
    assert abs(got["kld"] - c["printed_kld"]) <= 0.0005 + 1e-12, got["kld"]
    assert got["kld"] == pytest.approx(c["exact_kld"], abs=1e-12)


def test_table1_kld_orders_case3_closest():
    # "according to the KL-divergence the predictions are closest to the references in the
    # last example, even though the hard metrics indicate the opposite."
    kld = {
        k: evalkit.evaluate(column(c["ref"]), column(c["pred"]), metrics=["kld"])["kld"]
        for k, c in TABLE1.items()
    }
    assert kld["case3"] < kld["case2"] < kld["case1"]


# ---------------------------------------------------------------------------------------------
# (b) Harju & Mesaros, Figure 1: two points, reference (0.8, 0.2), prediction (0.8, 0.2 + ε)
# ---------------------------------------------------------------------------------------------
# Soft F1 with the minimum, micro (one class, two samples):
#   Σmin = min(0.8, 0.8) + min(0.2, 0.2 + ε) = 0.8 + 0.2 + min(0, ε)
#   Σŷ   = 0.8 + 0.2 + ε = 1.0 + ε,   Σy = 0.8 + 0.2 = 1.0
#   F(ε) = 2 Σmin / (Σŷ + Σy)
#        = 2 (0.8 + 0.2) / (1.0 + 1.0 + ε)        for ε >= 0   (= 2 / (2 + ε))
#        = 2 (0.8 + 0.2 + ε) / (2.0 + ε)          for ε < 0    (= (2 + 2ε) / (2 + ε))
# F(0) = 1; for ε > 0 the denominator exceeds 2; for ε < 0 the numerator 2 + 2ε is below the
# denominator 2 + ε; so F < 1 on both sides (the "sharp peak at the correct value").
# Hard F (threshold 0.5 on both, value > 0.5): reference -> (1, 0); prediction -> (1, [0.2+ε > 0.5]).
#   ε <= 0.3: TP = 1, |P| = 1, |G| = 1 -> F = 2·1/(1+1) = 1
#   ε >  0.3: TP = 1, |P| = 2, |G| = 1 -> F = 2·1/(2+1) = 2/3
# (ε = 0.3 gives a prediction of exactly 0.5, which is not > 0.5; 0.2 + 0.3 == 0.5 in floats.)
# ε ranges over [-0.2, 0.8] so that 0.2 + ε stays in [0, 1].
EPSILONS = [-0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.3, 0.5, 0.8]


def figure1_inputs(eps: float):
    return column([0.8, 0.2]), column([0.8, 0.2 + eps])


def soft_f1_closed_form(eps: float) -> float:
    if eps >= 0:
        return 2 * (0.8 + 0.2) / (1.0 + 1.0 + eps)
    return 2 * (0.8 + 0.2 + eps) / (2.0 + eps)


def hard_f1_by_hand(eps: float) -> float:
    return 2 / 3 if 0.2 + eps > 0.5 else 1.0


@pytest.mark.parametrize("eps", EPSILONS)
def test_figure1_soft_f1_closed_form(eps):
    ref, pred = figure1_inputs(eps)
    got = evalkit.evaluate(
        ref, pred, representation="fuzzy", tnorm="minimum", averaging="micro", metrics=["f1"]
    )
    assert got["f1"] == pytest.approx(soft_f1_closed_form(eps), abs=1e-12)


@pytest.mark.parametrize("eps", EPSILONS)
def test_figure1_hard_f1(eps):
    ref, pred = figure1_inputs(eps)
    got = evalkit.evaluate(ref, pred, representation="crisp", averaging="micro", metrics=["f1"])
    assert got["f1"] == pytest.approx(hard_f1_by_hand(eps), abs=1e-12)


def test_figure1_sharp_peak_at_zero():
    soft = {
        eps: evalkit.evaluate(*figure1_inputs(eps), tnorm="minimum", metrics=["f1"])["f1"] for eps in EPSILONS
    }
    assert soft[0.0] == pytest.approx(1.0, abs=1e-12)
    for eps, value in soft.items():
        if eps != 0.0:
            assert value < 1.0 - 1e-6, (eps, value)
    # Increasing up to ε = 0, decreasing after it.
    below = [soft[e] for e in EPSILONS if e <= 0]
    above = [soft[e] for e in EPSILONS if e >= 0]
    assert all(a < b for a, b in zip(below, below[1:]))
    assert all(a > b for a, b in zip(above, above[1:]))


def test_figure1_soft_above_hard_past_threshold():
    # "For ε > 0.3 the hard metric interprets the label as incorrect, while the soft metrics
    # still finds some common mass ..., resulting in higher soft F-score than the hard one."
    # By hand: |G ∩ P| = 0.8 + 0.2 = 1 under the minimum, |G| = 1, |P| = 1 + ε, so soft F =
    # 2 / (2 + ε); crisp at 0.5, G = {1, 0} and P = {1, 1}, so hard F = 2·1 / (1 + 2) = 2/3.
    for eps, soft_by_hand in ((0.5, 2 / 2.5), (0.8, 2 / 2.8)):
        ref, pred = figure1_inputs(eps)
        soft = evalkit.evaluate(ref, pred, representation="fuzzy", metrics=["f1"])["f1"]
        hard = evalkit.evaluate(ref, pred, representation="crisp", metrics=["f1"])["f1"]
        assert soft == pytest.approx(soft_by_hand, abs=1e-12)  # sums of three floats: rounding only
        assert hard == 2 / 3  # counts: exact
        assert soft > hard


# ---------------------------------------------------------------------------------------------
# (c) Kelz (2017): two frames, "samples" vs "micro" precision
# ---------------------------------------------------------------------------------------------
# The note's figure shows only predictions: frame 0 has one false positive and no true positive
# (precision 0), frame 1 has two true positives and one false positive (precision 2/3).
# The references are our choice (the note does not draw them); four classes (pitches):
#   frame 0: reference {class 2}, prediction {class 0}          -> TP 0, FP 1, FN 1
#   frame 1: reference {class 0, 1}, prediction {class 0, 1, 3} -> TP 2, FP 1, FN 0
# Every frame has a reference positive, so per-frame recall is defined (no zero division).
#   P_samples = (0/1 + 2/3) / 2 = 1/3        P_micro = (0 + 2) / (1 + 3) = 2/4 = 1/2
#   R_samples = (0/1 + 2/2) / 2 = 1/2        R_micro = (0 + 2) / (1 + 2) = 2/3
# With 0/1 memberships every T-norm gives T(a, 1) = a and T(a, 0) = 0, i.e. the crisp
# intersection, so the fuzzy values equal the crisp ones for any T-norm.
KELZ_REF = np.array([[0, 0, 1, 0],
                     [1, 1, 0, 0]], dtype=np.float64)
KELZ_PRED = np.array([[1, 0, 0, 0],
                      [1, 1, 0, 1]], dtype=np.float64)
KELZ_SETTINGS = [pytest.param(dict(representation="crisp"), id="crisp")] + [
    pytest.param(dict(representation="fuzzy", tnorm=t), id=f"fuzzy-{t}")
    for t in ("minimum", "product", "lukasiewicz")
]


@pytest.mark.parametrize("settings", KELZ_SETTINGS)
def test_kelz_samples_vs_micro_precision(settings):
    pr = ["precision", "recall"]
    samples = evalkit.evaluate(KELZ_REF, KELZ_PRED, averaging="samples", metrics=pr, **settings)
    micro = evalkit.evaluate(KELZ_REF, KELZ_PRED, averaging="micro", metrics=pr, **settings)
    assert samples["precision"] == pytest.approx(1 / 3, abs=1e-12)
    assert micro["precision"] == pytest.approx(1 / 2, abs=1e-12)
    assert samples["recall"] == pytest.approx(1 / 2, abs=1e-12)
    assert micro["recall"] == pytest.approx(2 / 3, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# (d) Idempotency of the minimum (Harju & Mesaros, Sec. 2.1)
# ---------------------------------------------------------------------------------------------
# min(x, x) = x, so with ŷ = y: Σmin = Σŷ = Σy in every class, sample and overall, hence
# P = R = F = 1 under any averaging. Values strictly positive so no ratio is 0/0.
@pytest.mark.parametrize("averaging", ["micro", "macro", "samples"])
def test_minimum_is_idempotent(averaging):
    rng = np.random.default_rng(20230606)
    values = rng.uniform(0.01, 1.0, size=(50, 6))
    got = evalkit.evaluate(values, values.copy(), representation="fuzzy", tnorm="minimum",
                           averaging=averaging, metrics=list(PRF))
    for name in PRF:
        assert got[name] == pytest.approx(1.0, abs=1e-12), name
