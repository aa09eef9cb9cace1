"""Sample weights in a config (``data: weights:``): matched to the reference by id, equal to the
Evaluator's ``sample_weight`` and to repeated samples, carried into bootstrap intervals and
paired tests, and refused with a message that names the file and sample when they are wrong."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.errors import DataError
from evalkit.weights import MAX_TOTAL

QUICKSTART = Path(__file__).resolve().parent.parent / "configs" / "data" / "quickstart"
REFERENCE, SYSTEM = QUICKSTART / "reference.csv", QUICKSTART / "dwsnet.csv"
METRICS = ["precision", "recall", "f1", "hamming_loss", "kld", "exact_match_ratio"]


def config(weights, **extra):
    data = {"reference": str(REFERENCE), "systems": {"dwsnet": str(SYSTEM)}, "weights": weights}
    return {
        "name": "weighted", "data": data, "representation": ["fuzzy", "crisp"], "tnorm": ["minimum", "product"],
        "averaging": ["micro", "macro", "samples"], "metrics": METRICS, **extra,
    }


def values(results):
    return {(r.representation, r.tnorm, r.averaging, r.metric): r.value for r in results.rows}


@pytest.fixture(scope="module")
def ids():
    return pd.read_csv(REFERENCE)["segment"].tolist()


def write_weights(path: Path, ids, weights, *, shuffle_seed=None) -> Path:
    frame = pd.DataFrame({"segment": ids, "weight": weights})
    if shuffle_seed is not None:
        frame = frame.sample(frac=1.0, random_state=shuffle_seed)
    frame.to_csv(path, index=False)
    return path


def test_a_weights_file_in_any_row_order_equals_the_evaluators_sample_weight(tmp_path, ids):
    weights = np.random.default_rng(1).random(len(ids)) * 3
    path = write_weights(tmp_path / "weights.csv", ids, weights, shuffle_seed=4)
    ran = evalkit.run(config(str(path)))
    assert any("samples weighted by" in note for note in ran.notes)
    reference, prediction = pd.read_csv(REFERENCE, index_col=0), pd.read_csv(SYSTEM, index_col=0)
    for row in ran.rows:
        ev = evalkit.Evaluator(
            representation=row.representation or "fuzzy", tnorm=row.tnorm or "minimum", averaging=row.averaging or "micro",
            metrics=[row.metric],
        )
        (expected,) = ev.update(reference, prediction, sample_weight=weights).values().values()
        assert row.value == pytest.approx(expected, rel=1e-12), row


def test_integer_weights_equal_repeated_samples(tmp_path, ids):
    counts = np.random.default_rng(2).integers(0, 4, len(ids))
    counts[0] = max(counts[0], 1)
    weighted = evalkit.run(config(str(write_weights(tmp_path / "w.csv", ids, counts))))
    reference, prediction = pd.read_csv(REFERENCE), pd.read_csv(SYSTEM)
    repeated = {
        name: frame.loc[frame.index.repeat(counts)].assign(segment=lambda f: [f"{s}#{i}" for i, s in enumerate(f.segment)])
        for name, frame in (("reference", reference), ("dwsnet", prediction))
    }
    for name, frame in repeated.items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
    plain = config(None)
    plain["data"] = {"reference": str(tmp_path / "reference.csv"), "systems": {"dwsnet": str(tmp_path / "dwsnet.csv")}}
    expected = values(evalkit.run(plain))
    for key, value in values(weighted).items():
        assert value == pytest.approx(expected[key], rel=1e-12, abs=1e-15), key


def test_weights_of_one_change_nothing_statistics_included(tmp_path, ids):
    statistics = {"bootstrap": {"resamples": 200, "seed": 3}, "test": {"resamples": 200, "seed": 3}}
    extra = {"statistics": statistics, "metrics": ["f1", "kld"], "representation": "fuzzy", "tnorm": "minimum"}
    ones = write_weights(tmp_path / "ones.csv", ids, np.ones(len(ids)))
    two_systems = {"dwsnet": str(SYSTEM), "baseline": str(QUICKSTART / "baseline.csv")}
    weighted, plain = config(str(ones), **extra), config(None, **extra)
    weighted["data"]["systems"] = plain["data"]["systems"] = two_systems
    a, b = evalkit.run(weighted), evalkit.run(plain)
    def numbers(results):
        return [x for r in results.rows for x in (r.value, r.ci_low, r.ci_high)]

    assert numbers(a) == pytest.approx(numbers(b), rel=1e-12)
    # counts over R: the statistics agree to rounding, and p_value allows for rounding at a tie
    assert [c.p_value for c in a.comparisons] == [c.p_value for c in b.comparisons]


def test_weighted_bootstrap_intervals_hold_the_weighted_value(tmp_path, ids):
    weights = np.random.default_rng(5).random(len(ids)) * 2
    path = write_weights(tmp_path / "w.csv", ids, weights)
    ran = evalkit.run(config(str(path), statistics={"bootstrap": {"resamples": 300}}, metrics=["f1", "exact_match_ratio"]))
    unweighted = {k: v for k, v in values(evalkit.run(config(None, metrics=["f1", "exact_match_ratio"]))).items()}
    for row in ran.rows:
        assert row.ci_low <= row.value <= row.ci_high, row
    assert any(values(ran)[k] != pytest.approx(v, rel=1e-9) for k, v in unweighted.items())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("segment,weight\ncafe01_000,1\n", "missing"),
        ("segment,a,b\n", "sample weights take one value column"),
        ("segment,weight\n{ids_negative}", "the weight of sample 'cafe01_000' is -1.0; weights must be finite numbers >= 0"),
        ("segment,weight\n{ids_zero}", "every weight is 0"),
    ],
)
def test_bad_weights_are_an_error_naming_the_file(tmp_path, ids, content, message):
    content = content.format(
        ids_negative="".join(f"{s},{-1 if i == 0 else 1}\n" for i, s in enumerate(ids)),
        ids_zero="".join(f"{s},0\n" for s in ids),
    )
    path = tmp_path / "weights.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError, match=message) as caught:
        evalkit.run(config(str(path)))
    assert "weights.csv" in str(caught.value)


def test_weights_whose_sums_would_overflow_are_refused_naming_the_sample(tmp_path, ids):
    """Finite weights of 1e308 gave exit 0 and wrong numbers (micro blank): the running total
    passes MAX_TOTAL at the third sample here."""
    path = write_weights(tmp_path / "weights.csv", ids, [1.0, 1.0] + [1e308] * (len(ids) - 2))
    with pytest.raises(DataError, match=re.escape(
        f"{path}: the weights add up to more than 9.75e+288 at sample {ids[2]!r} (weight 1e+308), so the run's sums "
        "could overflow; divide every weight by the same factor (no ratio changes)"
    )):
        evalkit.run(config(str(path)))
    third = re.escape(repr(ids[2]))
    with pytest.raises(DataError, match=rf"sample_weight: the weights add up to more than .* at sample {third}"):
        evalkit.Evaluator().update(pd.read_csv(REFERENCE, index_col=0), pd.read_csv(SYSTEM, index_col=0),
                                   sample_weight=[1.0, 1.0] + [1e308] * (len(ids) - 2))


def test_weights_adding_up_to_the_limit_give_the_numbers_of_weights_of_one(tmp_path, ids):
    """Every ratio is the same under weights scaled by one factor: at the largest total allowed,
    no sum overflows, with bootstrap counts too (rel=1e-12: the scaled sums round differently in the last bits)."""
    most = np.full(len(ids), MAX_TOTAL / len(ids) * (1 - 1e-9))  # a hair below, for the sum's rounding
    statistics = {"statistics": {"bootstrap": {"resamples": 20, "method": "percentile"}}}
    largest = evalkit.run(config(str(write_weights(tmp_path / "most.csv", ids, most)), **statistics))
    ones = evalkit.run(config(str(write_weights(tmp_path / "ones.csv", ids, np.ones(len(ids)))), **statistics))
    for big, one in zip(largest.rows, ones.rows):
        assert (big.measure, big.value, big.ci_low, big.ci_high) == pytest.approx(
            (one.measure, one.value, one.ci_low, one.ci_high), rel=1e-12, nan_ok=True), one


def test_weights_without_ids_beside_a_reference_with_ids_are_refused(tmp_path, ids):
    with pytest.raises(DataError, match="no sample ids, but .* has them"):
        evalkit.run(config([1.0] * len(ids)))


def test_a_missing_weights_file_is_an_error_at_its_key(tmp_path):
    with pytest.raises(DataError, match="data.weights: no such data file"):
        evalkit.run(config(str(tmp_path / "nowhere.csv")))


# ------------------------------------------- sample_weight= from Python: evaluate() and the Evaluator (issue 23)

RNG = np.random.default_rng(23)
REF, PRED = RNG.random((6, 3)), RNG.random((6, 3))
WEIGHTS = RNG.random(6) * 2


def doors():
    """Every Python door that takes ``sample_weight=``: each call scores (REF, PRED)."""
    return {
        "evaluate": lambda **kw: evalkit.evaluate(REF, PRED, **kw),
        "Evaluator.update": lambda **kw: evalkit.Evaluator().update(REF, PRED, **kw).values(),
        "DataFrames with ids": lambda **kw: evalkit.evaluate(
            pd.DataFrame(REF, index=list("abcdef")), pd.DataFrame(PRED, index=list("abcdef")), **kw),
    }


def with_one(value, at=2):
    weights = WEIGHTS.copy()
    weights[at] = value
    return weights


@pytest.mark.parametrize("door", sorted(doors()))
@pytest.mark.parametrize(("weights", "message"), [
    # A 2-D array of the right total size was flattened without a word.
    (WEIGHTS[:, None], r"^sample_weight: expected a 1-D array of one weight per sample, got an array of shape \(6, 1\); "
                       r"pass np.ravel\(sample_weight\) if it holds one weight per sample in their order$"),
    (WEIGHTS.reshape(2, 3), r"got an array of shape \(2, 3\); pass np.ravel\(sample_weight\)"),
    # Complex weights lost their imaginary part with only numpy's ComplexWarning.
    (WEIGHTS + 1j, r"^sample_weight: complex data not supported \(complex128\); .* pass np.real\(x\) or np.abs\(x\)"),
    (WEIGHTS.astype(np.complex64), r"^sample_weight: complex data not supported \(complex64\)"),
    # A scalar read as "1 weights for 6 samples".
    (2.0, r"^sample_weight: expected an array of one weight per sample, got the scalar 2$"),
    (list("abcdef"), r"^sample_weight: expected one number per sample$"),
    (WEIGHTS[:5], r"^sample_weight: 5 weights for 6 samples; give one weight per sample$"),
    # NaN, ±inf and negative weights were refused without saying where.
    (with_one(np.nan), r"the weight of sample {where} is nan; weights must be finite numbers >= 0 \(1 are not\)$"),
    (with_one(np.inf), r"the weight of sample {where} is inf; weights must be finite numbers >= 0"),
    (with_one(-np.inf), r"the weight of sample {where} is -inf; weights must be finite numbers >= 0"),
    (with_one(-0.5), r"the weight of sample {where} is -0.5; weights must be finite numbers >= 0"),
])
def test_a_bad_sample_weight_from_python_is_one_data_error_naming_it(door, weights, message):
    """Each refusal names ``sample_weight``, what is wrong and the sample (its id where the data
    has ids, else its index) or the fix; none is preceded by a numpy warning."""
    where = "'c'" if door == "DataFrames with ids" else "at index 2"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning here would be the cast this refusal replaces
        with pytest.raises(DataError, match=message.replace("{where}", where)):
            doors()[door](sample_weight=weights)


@pytest.mark.parametrize("door", sorted(doors()))
def test_weights_as_lists_booleans_integers_and_float32_read_as_float64(door):
    """What is read: a list, booleans (0/1, as scikit-learn reads them), integers, float32 and
    an object array of numbers all give the values of the same weights as float64, bit for bit
    (the same float64 input, the same code)."""
    call = doors()[door]
    counts = np.array([0, 1, 2, 3, 1, 0])
    expected = call(sample_weight=counts.astype(np.float64))
    for weights in (counts.tolist(), counts.astype(np.uint8), counts.astype(np.int64), counts.astype(np.float32),
                    counts.astype(object)):
        assert call(sample_weight=weights) == expected, type(weights)
    assert call(sample_weight=counts > 0) == call(sample_weight=(counts > 0).astype(np.float64))


def test_a_refused_weight_leaves_the_evaluator_as_it_was():
    ev = evalkit.Evaluator().update(REF, PRED, sample_weight=WEIGHTS)
    before = ev.values()
    for weights in (WEIGHTS[:, None], WEIGHTS + 1j, with_one(np.nan), WEIGHTS[:5]):
        with pytest.raises(DataError, match="^sample_weight: "):
            ev.update(REF, PRED, sample_weight=weights)
    assert ev.values() == before  # the same state, read twice: the same floats


def test_all_zero_weights_are_refused_by_evaluate_and_add_nothing_to_an_evaluator():
    """evaluate() sees all the data: weights that are all 0 gave zero_division's value without a
    word, where a config's weights and scikit-learn refuse them. A batch of weight 0 in an
    Evaluator's stream (a padded last batch) adds nothing: the values of the other batches
    (1e-12 relative: the batches are summed in one chunk, in another grouping)."""
    zeros = np.zeros(6)
    for call in doors()["evaluate"], doors()["DataFrames with ids"]:
        with pytest.raises(DataError, match=r"^sample_weight: every weight is 0, so no sample would count; give some "
                                            r"sample a weight > 0$"):
            call(sample_weight=zeros)
    alone = evalkit.Evaluator().update(REF, PRED, sample_weight=WEIGHTS).values()
    padded = evalkit.Evaluator().update(PRED, REF, sample_weight=zeros).update(REF, PRED, sample_weight=WEIGHTS).values()
    assert padded == pytest.approx(alone, rel=1e-12)


def test_a_weight_series_indexed_by_sample_id_is_matched_by_id():
    """A pandas Series of weights indexed by sample id was applied by position: shuffled, it
    weighed other samples. It is matched to the reference's samples by id, as a weights file is
    (the same float64 weights in the same order as the array: the same values, bit for bit); a
    Series with pandas' default index is read by position, as an array is."""
    ids = list("abcdef")
    ref, pred = pd.DataFrame(REF, index=ids), pd.DataFrame(PRED, index=ids)
    series = pd.Series(WEIGHTS, index=ids)
    by_position = evalkit.evaluate(ref, pred, sample_weight=WEIGHTS)
    for seed in range(3):
        shuffled = series.sample(frac=1, random_state=seed)
        assert evalkit.evaluate(ref, pred, sample_weight=shuffled) == by_position
        assert evalkit.Evaluator().update(ref, pred, sample_weight=shuffled.to_frame("w")).values() == \
            evalkit.Evaluator().update(ref, pred, sample_weight=WEIGHTS).values()
    assert evalkit.evaluate(ref, pred, sample_weight=pd.Series(WEIGHTS)) == by_position
    nan = series.copy()
    nan["d"] = np.nan
    cases = [
        (series.drop("a").iloc[::-1], r"^sample_weight: missing 1 reference id\(s\): 'a'$"),
        (series.rename(index={"b": "x"}), r"^sample_weight: missing 1 reference id\(s\): 'b'; 1 id\(s\) not in the "
                                          r"reference: 'x'"),
        (nan.iloc[::-1], r"^sample_weight: the weight of sample 'd' is nan; weights must be finite numbers >= 0"),
        (series.to_frame().assign(other=1.0), r"^sample_weight: sample weights take one value column"),
    ]
    for weights, message in cases:
        with pytest.raises(DataError, match=message):
            evalkit.evaluate(ref, pred, sample_weight=weights)
    with pytest.raises(DataError, match=r"^reference: no sample ids, but sample_weight has them, so rows cannot be "
                                        r"matched by name"):
        evalkit.evaluate(REF, PRED, sample_weight=series)


def test_a_weights_file_missing_a_sample_is_not_told_to_set_missing_empty(tmp_path):
    """`missing: empty` makes an absent prediction empty; a weight has no empty value, so the
    advice led nowhere (the run still failed)."""
    path = tmp_path / "weights.csv"
    path.write_text("segment,weight\ncafe01_000,1\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"weights.csv: missing \d+ reference id\(s\): .* \(reference: ") as caught:
        evalkit.run(config(str(path)))
    assert "missing: empty" not in str(caught.value)
