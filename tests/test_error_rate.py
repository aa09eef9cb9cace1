"""Error rates (Mesaros, Heittola & Virtanen, "Metrics for polyphonic sound event detection",
2016): on binary matrices every representation and T-norm gives the hard rates counted unit by
unit as sed_eval counts them; the soft rate follows its definition on a worked example."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import evalkit
from evalkit.errors import ConfigError

RATES = ["error_rate", "substitution_rate", "deletion_rate", "insertion_rate"]


def counted(reference: np.ndarray, prediction: np.ndarray) -> dict[str, float]:
    """sed_eval's overall counts, row by row: S = min(Nref, Nsys) − Ntp, D = max(0, Nref − Nsys),
    I = max(0, Nsys − Nref), each over Nref in all."""
    ntp = (reference * prediction).sum(axis=1)
    nref, nsys = reference.sum(axis=1), prediction.sum(axis=1)
    s, d, i = np.minimum(nref, nsys) - ntp, np.maximum(0, nref - nsys), np.maximum(0, nsys - nref)
    n = nref.sum()
    return {"error_rate": (s + d + i).sum() / n, "substitution_rate": s.sum() / n,
            "deletion_rate": d.sum() / n, "insertion_rate": i.sum() / n}


BINARY = arrays(np.float64, st.tuples(st.integers(1, 12), st.integers(1, 5)), elements=st.sampled_from([0.0, 1.0]))


@settings(max_examples=60, deadline=None)
@given(reference=BINARY, data=st.data())
def test_on_binary_data_every_tnorm_gives_the_counted_rates(reference, data):
    prediction = data.draw(arrays(np.float64, reference.shape, elements=st.sampled_from([0.0, 1.0])))
    if reference.sum() == 0:
        reference[0, 0] = 1.0
    expected = counted(reference, prediction)
    for representation, tnorm in (("crisp", "minimum"), ("fuzzy", "minimum"), ("fuzzy", "product"),
                                  ("fuzzy", "lukasiewicz")):
        got = evalkit.evaluate(reference, prediction, representation=representation, tnorm=tnorm,
                               averaging="micro", metrics=RATES)
        for metric in RATES:
            assert got[metric] == pytest.approx(expected[metric], abs=1e-12), (representation, tnorm, metric)
    per_class = evalkit.evaluate(reference, prediction, representation="crisp", averaging="none", metrics=["error_rate"])
    fn = (reference * (1 - prediction)).sum(axis=0)
    fp = (prediction * (1 - reference)).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        by_class = np.where(reference.sum(axis=0) > 0, (fn + fp) / reference.sum(axis=0), 0.0)
    assert np.allclose(per_class["error_rate"].to_numpy(), by_class)


def test_the_soft_rate_on_a_worked_example():
    """μG = (1, 0.5), μP = (0.5, 1) in one sample, minimum T-norm: |G| = |P| = 1.5,
    |G ∩ P| = 0.5 + 0.5 = 1, so FN = FP = 0.5 and S = min(FN, FP) = 0.5, D = I = 0:
    ER = (0.5 + 0 + 0) / 1.5 = 1/3. Per class: class 1 has FN 0.5 over 1, class 2 FP 0.5 over
    0.5 (no substitutions within a class): ER 0.5 and 1."""
    reference, prediction = np.array([[1.0, 0.5]]), np.array([[0.5, 1.0]])
    got = evalkit.evaluate(reference, prediction, representation="fuzzy", tnorm="minimum", averaging="micro",
                           metrics=RATES)
    assert got == pytest.approx({"error_rate": 1 / 3, "substitution_rate": 1 / 3, "deletion_rate": 0.0,
                                 "insertion_rate": 0.0})
    per_class = evalkit.evaluate(reference, prediction, representation="fuzzy", tnorm="minimum", averaging="none",
                                 metrics=["error_rate"])
    assert per_class["error_rate"].to_numpy() == pytest.approx([0.5, 1.0])
    samples = evalkit.evaluate(reference, prediction, representation="fuzzy", tnorm="minimum", averaging="samples",
                               metrics=["error_rate"])
    assert samples["error_rate"] == pytest.approx(1 / 3)  # one sample: its own rate


def test_a_tables_substitutions_are_computed_only_for_error_rates_and_checked():
    from evalkit.errors import PluginContractError
    from evalkit.table import CardinalityTable, Summary
    from evalkit_averaging import SUBSTITUTIONS

    calls = []

    def given():
        calls.append(1)
        return np.array([0.5, 0.0])

    ones = np.ones((2, 2))
    table = CardinalityTable(ones, ones, 0.5 * ones, substitutions=given)
    Summary.of(table, [], 0.0)
    assert not calls  # no error rate: never computed
    assert Summary.of(table, [SUBSTITUTIONS], 0.0).sample_sum(SUBSTITUTIONS)[0] == 0.5 and len(calls) == 1
    wrong = CardinalityTable(ones, ones, 0.5 * ones, substitutions=lambda: np.array([-1.0, 0.0]))
    with pytest.raises(PluginContractError, match="returned substitutions of shape \\(2,\\); expected one finite "
                                                  "value >= 0 per sample"):
        Summary.of(wrong, [SUBSTITUTIONS], 0.0)


def test_segment_error_rates_take_bootstrap_intervals():
    reference = {"items": [{"dog": [(0.0, 2.0)], "cat": [(3.0, 4.0)]}, {"dog": [(1.0, 2.0)], "cat": []}] * 10,
                 "ids": [f"f{i}" for i in range(20)]}
    system = {"items": [{"dog": [(0.5, 2.0)], "cat": [(0.0, 1.0)]}, {"dog": [], "cat": [(1.0, 2.0)]}] * 10,
              "ids": [f"f{i}" for i in range(20)]}
    results = evalkit.run({"name": "b", "data": {"reference": reference, "systems": {"s": system}},
                           "representation": {"name": "segments", "resolution": 1.0}, "averaging": "micro",
                           "metrics": ["error_rate", "substitution_rate"],
                           "statistics": {"bootstrap": {"resamples": 50, "method": "percentile"}}})
    for row in results.rows:
        assert row.ci_low <= row.value <= row.ci_high, row
    substitutions = next(r for r in results.rows if r.metric == "substitution_rate")
    # per pair of files: in f1's segment 1 a dog is missed and a cat falsely output (S = 1); N = 3 + 1
    assert substitutions.value == pytest.approx(10 / 40)


PER_CLASS = ["none", "macro", {"name": "macro", "undefined": "skip"}, "weighted", "macro_pr"]


def test_the_substitution_rate_has_no_per_class_value_and_the_other_rates_do():
    """A substitution pairs a miss of one class with a false alarm of another in one unit, so a
    class alone has none: the averagings that take each class alone give the substitution rate
    no row (sed_eval's class-wise rates have none), and ER, D and I their class-wise values
    (ER = (FN + FP) / N per class: S is 0 there). Micro and samples keep S."""
    reference = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    prediction = np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    results = evalkit.run({"name": "s", "data": {"reference": reference.tolist(), "systems": {"s": prediction.tolist()},
                                                 "classes": ["a", "b"]},
                           "averaging": ["micro", "samples", *PER_CLASS], "metrics": RATES})
    got = {(r.averaging, r.metric, r.class_): r.value for r in results.rows}
    assert {a for a, m, _ in got if m == "substitution_rate"} == {"micro", "samples"}
    assert got[("micro", "substitution_rate", None)] == counted(reference, prediction)["substitution_rate"] == 1 / 4
    fn = (reference * (1 - prediction)).sum(axis=0)
    fp = (prediction * (1 - reference)).sum(axis=0)
    n = reference.sum(axis=0)
    for c, label in enumerate(["a", "b"]):  # counts over counts: exact
        assert got[("none", "error_rate", label)] == (fn[c] + fp[c]) / n[c]
        assert got[("none", "deletion_rate", label)] == fn[c] / n[c]
        assert got[("none", "insertion_rate", label)] == fp[c] / n[c]


@pytest.mark.parametrize("averaging", [*PER_CLASS, ["none", "macro"]])
def test_a_run_asking_the_substitution_rate_only_per_class_is_refused_at_the_plan(averaging):
    config = {"name": "s", "data": {"reference": [[1.0, 0.0]], "systems": {"s": [[0.0, 1.0]]}, "classes": ["a", "b"]},
              "averaging": averaging, "metrics": ["error_rate", "substitution_rate"]}
    with pytest.raises(ConfigError, match=r"metrics: substitution_rate has no value under the averaging of this run "
                                          r"\(.*\), since a class alone has no substitutions .*add micro or samples"):
        evalkit.api.plan(config, writes=False)  # before any data is read, as `evalkit validate` checks it
    with pytest.raises(ConfigError, match="a class alone has no substitutions"):
        evalkit.evaluate(np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), averaging="none", metrics=["substitution_rate"])
