"""The public evaluation state (issue 13): an Evaluator updated batch by batch, its state
pickled, written as JSON and merged in any tree, gives the values of one call on all the data;
data enters by name (DataFrame columns and index), never silently by position."""

from __future__ import annotations

import pickle
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from run_depth import examples
from sklearn.metrics import precision_recall_fscore_support

import evalkit
import evalkit.plugin
from evalkit.discovery import build_registry, make_plugin_manager
from evalkit.errors import ConfigError, DataError

AVERAGINGS = ["micro", "macro", "weighted", "samples", "none", "macro_pr", "samples_pr"]
METRICS = ["precision", "recall", "f1", {"name": "fbeta", "beta": 2}, "jaccard", "hamming_loss", "kld", "exact_match_ratio"]


def evaluator(**overrides):
    settings = {"tnorm": ["minimum", "product", "lukasiewicz"], "averaging": AVERAGINGS, "metrics": METRICS}
    return evalkit.Evaluator(**{**settings, **overrides})


def assert_values_close(got, expected, rtol=1e-12):
    """Equal measures, each value to ``rtol`` relative (1e-12 absolute near zero): sums taken in
    another order differ in the last bits."""
    assert got.keys() == expected.keys()
    for measure, value in expected.items():
        if np.isnan(value):
            assert np.isnan(got[measure]), measure
        else:
            assert got[measure] == pytest.approx(value, rel=rtol, abs=1e-12), measure


def merged_in_a_tree(states, draw_order):
    """Merge states pairwise, picking which two to merge by ``draw_order`` (a random tree)."""
    states = list(states)
    while len(states) > 1:
        i = draw_order(len(states) - 1)
        states[i : i + 2] = [states[i] + states[i + 1]]
    return states[0]


@settings(max_examples=25, deadline=None)
@given(
    data=st.data(),
    n=st.integers(1, 60),
    classes=st.integers(1, 5),
    zero_division=st.sampled_from([0.0, 1.0, "nan"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_any_split_in_any_tree_equals_one_call(data, n, classes, zero_division, seed):
    rng = np.random.default_rng(seed)
    # soft values with exact zeros and ones, so that 0/0 happens
    ref, pred = (np.where(rng.random((n, classes)) < 0.3, rng.integers(0, 2, (n, classes)), rng.random((n, classes)))
                 for _ in range(2))
    one_call = evaluator(zero_division=zero_division).update(ref, pred).values()
    cuts = sorted(data.draw(st.lists(st.integers(1, max(n - 1, 1)), max_size=6, unique=True)))
    order = data.draw(st.permutations(range(len(cuts) + 1)))
    bounds = list(zip([0, *cuts], [*cuts, n]))
    states = []
    for i in order:  # the batches in any order, each in its own evaluator (a process), pickled
        start, stop = bounds[i]
        if start < stop:
            batch = evaluator(zero_division=zero_division).update(ref[start:stop], pred[start:stop])
            states.append(pickle.loads(pickle.dumps(batch.state())))
    state = merged_in_a_tree(states, lambda k: data.draw(st.integers(0, k - 1)) if k > 0 else 0)
    state = evalkit.State.from_json(state.to_json())
    assert_values_close(evaluator(zero_division=zero_division).merge(state).values(), one_call)


def test_the_state_does_not_grow_with_the_samples():
    rng = np.random.default_rng(1)
    small, large = evaluator(), evaluator()
    small.update(rng.random((10, 4)), rng.random((10, 4)))
    for _ in range(20):
        large.update(rng.random((500, 4)), rng.random((500, 4)))
    # the same arrays; only the sample counts take a few more bytes
    assert abs(len(pickle.dumps(large.state())) - len(pickle.dumps(small.state()))) <= 16
    assert large.state().n_samples == 10_000


def test_a_json_round_trip_gives_the_same_numbers_to_the_bit():
    rng = np.random.default_rng(2)
    ev = evalkit.Evaluator(averaging=["samples", "macro"], metrics=["f1", "map"])
    ev.update(rng.integers(0, 2, (30, 3)), rng.random((30, 3)))
    state = ev.state()
    again = evalkit.State.from_json(state.to_json())
    fresh = evalkit.Evaluator(averaging=["samples", "macro"], metrics=["f1", "map"]).merge(again)
    assert fresh.values() == ev.values()


def test_ranking_metrics_merge_their_scores():
    rng = np.random.default_rng(3)
    ref, scores = rng.integers(0, 2, (40, 3)), rng.random((40, 3))
    whole = evalkit.Evaluator(metrics=["map"]).update(ref, scores).values()
    parts = [evalkit.Evaluator(metrics=["map"]).update(ref[s : s + 7], scores[s : s + 7]).state() for s in range(0, 40, 7)]
    # map keeps its rows: the merged state holds the same scores in the same order, ranked once
    assert evalkit.Evaluator(metrics=["map"]).merge(sum(parts[1:], parts[0])).values() == whole


@pytest.mark.parametrize("average", ["micro", "macro", "weighted", "samples"])
def test_sample_weights_equal_scikit_learn(average):
    rng = np.random.default_rng(4)
    y_true, y_pred = rng.integers(0, 2, (80, 5)), rng.integers(0, 2, (80, 5))
    weights = rng.random(80) * 3
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average=average, sample_weight=weights, zero_division=0)
    for representation in ("crisp", "fuzzy"):
        got = evalkit.evaluate(y_true, y_pred, representation=representation, averaging=average, sample_weight=weights)
        assert got == pytest.approx({"precision": p, "recall": r, "f1": f}, rel=1e-12)


def test_batches_with_weights_add_up():
    rng = np.random.default_rng(5)
    ref, pred, weights = rng.random((50, 3)), rng.random((50, 3)), rng.random(50)
    whole = evaluator().update(ref, pred, sample_weight=weights).values()
    ev = evaluator()
    for s in range(0, 50, 9):
        ev.update(ref[s : s + 9], pred[s : s + 9], sample_weight=weights[s : s + 9])
    assert_values_close(ev.values(), whole)
    # a weight of k is the sample k times: integer weights equal repeated rows, KL divergence included
    counts = rng.integers(0, 4, 50)
    repeated = evaluator().update(np.repeat(ref, counts, axis=0), np.repeat(pred, counts, axis=0)).values()
    assert_values_close(evaluator().update(ref, pred, sample_weight=counts).values(), repeated)
    with pytest.raises(DataError, match="metric\\(s\\) 'mean_gap' do not take sample weights"):
        evalkit.Evaluator(metrics=["f1", "mean_gap"], registry=UNWEIGHTED).update(ref, pred, sample_weight=weights)


class MeanGap(evalkit.plugin.BaseComponent):
    """A data metric that does not take weights: the mean |reference - prediction|."""

    name = "mean_gap"

    def update(self, reference, prediction):
        return np.array([np.abs(reference - prediction).sum(), reference.size])

    def compute(self, state):
        return state[0] / state[1]


class UnweightedPlugin:
    @evalkit.hookimpl
    def evalkit_register_metrics(self, register):
        register(MeanGap)


UNWEIGHTED = build_registry(*make_plugin_manager(extra={"unweighted": UnweightedPlugin()}))


def frames(seed=6, n=40):
    rng = np.random.default_rng(seed)
    columns = ["speech", "birds", "car", "dog"]
    ids = [f"clip{i:03d}" for i in range(n)]
    ref = pd.DataFrame(rng.random((n, 4)).round(3), columns=columns, index=ids)
    pred = pd.DataFrame(rng.random((n, 4)).round(3), columns=columns, index=ids)
    return ref, pred


def test_dataframes_are_aligned_by_column_and_index_names():
    ref, pred = frames()
    expected = evalkit.evaluate(ref.to_numpy(), pred.to_numpy())
    shuffled = pred.sample(frac=1, random_state=0)[["dog", "car", "speech", "birds"]]
    assert evalkit.evaluate(ref, shuffled) == pytest.approx(expected, rel=1e-12)
    assert evalkit.evaluate(ref, pred, classes=["car", "dog"]) == pytest.approx(
        evalkit.evaluate(ref.to_numpy()[:, 2:], pred.to_numpy()[:, 2:]), rel=1e-12
    )


def test_ids_on_one_side_only_are_an_error():
    ref, pred = frames()
    shuffled = pred.sample(frac=1, random_state=0).reset_index(drop=True)  # ids lost, rows shuffled
    with pytest.raises(DataError, match="prediction: no sample ids, but reference has them, so rows cannot be matched"):
        evalkit.evaluate(ref, shuffled)
    named = list(ref.columns)  # an array's columns are named by `classes`, never by the other side's
    with pytest.raises(DataError, match="no sample ids, but"):
        evalkit.evaluate(ref, pred.to_numpy(), classes=named)
    # both without ids: by position, as asked
    assert evalkit.evaluate(ref.reset_index(drop=True), pred.reset_index(drop=True)) == pytest.approx(
        evalkit.evaluate(ref.to_numpy(), pred.to_numpy())
    )
    # ids given for arrays name both sides' rows
    assert evalkit.Evaluator(classes=named).update(ref, pred.to_numpy(), ids=list(pred.index)).values() == pytest.approx(
        evalkit.Evaluator().update(ref, pred).values()
    )


def test_a_shuffled_csv_without_ids_against_a_reference_with_ids_is_an_error(tmp_path):
    ref, pred = frames()
    ref.to_csv(tmp_path / "ref.csv", index_label="id")
    pred.sample(frac=1, random_state=0).to_csv(tmp_path / "sys.csv", index=False)
    with pytest.raises(DataError, match=r"sys\.csv: no sample ids, but .*ref\.csv has them"):
        evalkit.evaluate(str(tmp_path / "ref.csv"), str(tmp_path / "sys.csv"))


class DLPackOnly:
    """An array exchanged only through DLPack, as a GPU framework's tensor would be."""

    def __init__(self, values):
        self.values = values

    def __dlpack__(self, **kwargs):
        return self.values.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.values.__dlpack_device__()


def test_dlpack_and_array_like_inputs_are_read():
    ref, pred = (np.random.default_rng(7).random((20, 3)) for _ in range(2))
    # the same numbers in: the same computation, bit for bit
    assert evalkit.evaluate(DLPackOnly(ref), DLPackOnly(pred)) == evalkit.evaluate(ref, pred)
    assert evalkit.evaluate(ref.tolist(), pred.tolist()) == evalkit.evaluate(ref, pred)


def test_call_site_mistakes_read_clearly():
    ref = np.random.default_rng(8).random((10, 3))
    assert evalkit.evaluate(ref, ref, metrics="f1") == {"f1": 1.0}  # min(x, x) = x: 2S / (S + S), exactly 1
    with pytest.raises(TypeError, match="unexpected keyword argument 'average'; did you mean 'averaging'"):
        evalkit.evaluate(ref, ref, average="macro")
    with pytest.raises(TypeError, match="did you mean 'averaging'"):
        evalkit.Evaluator(average="macro")
    with pytest.raises(DataError, match=r"shape \(3, 10\) looks transposed \(classes x samples\)"):
        evalkit.Evaluator(classes=["a", "b", "c"]).update(ref, ref.T)
    with pytest.raises(ConfigError, match="Evaluator\\(\\): zero_division"):
        evalkit.Evaluator(zero_division="sometimes")
    with pytest.raises(DataError, match="nothing to compute"):
        evalkit.Evaluator().compute()


def test_states_of_different_evaluations_do_not_merge():
    ref = np.random.default_rng(9).random((10, 3))
    a = evalkit.Evaluator().update(ref, ref).state()
    b = evalkit.Evaluator(tnorm="product").update(ref, ref).state()
    with pytest.raises(DataError, match="cannot merge evaluation states of different components or settings"):
        a + b
    with pytest.raises(DataError, match="the state merged in has 3 classes .* joins has 3 unnamed columns"):
        a + evalkit.Evaluator(classes=["x", "y", "z"]).update(ref, ref).state()
    with pytest.raises(DataError, match="of version 99"):
        evalkit.State.from_json(a.to_json().replace('"evalkit_state": 1', '"evalkit_state": 99'))


def test_compute_gives_the_rows_of_a_run():
    ref, pred = frames()
    results = evalkit.Evaluator(averaging=["micro", "none"], metrics=["f1"]).update(ref, pred).compute("mine")
    per_class = {r.class_: r.value for r in results.rows if r.averaging == "none"}
    assert list(per_class) == ["speech", "birds", "car", "dog"]
    assert {r.system for r in results.rows} == {"mine"}


def test_small_batches_gathered_into_chunks_keep_every_row():
    """Small batches are copied into a reused chunk buffer: states that keep rows (mAP) must not
    see them overwritten, and unweighted batches beside weighted ones count once each."""
    rng = np.random.default_rng(10)
    ref, scores, weights = rng.integers(0, 2, (3000, 3)), rng.random((3000, 3)), rng.random(3000)
    ev = evalkit.Evaluator(metrics=["map"])
    for s in range(0, 3000, 11):
        ev.update(ref[s : s + 11], scores[s : s + 11])
    assert ev.values() == evalkit.Evaluator(metrics=["map"]).update(ref, scores).values()  # the same rows, ranked once
    mixed = evalkit.Evaluator(averaging=["micro", "samples"])
    mixed.update(ref[:1000], scores[:1000])
    mixed.update(ref[1000:], scores[1000:], sample_weight=weights[1000:])
    expected = evalkit.Evaluator(averaging=["micro", "samples"]).update(
        ref, scores, sample_weight=np.concatenate([np.ones(1000), weights[1000:]])
    )
    assert_values_close(mixed.values(), expected.values())


def test_evaluate_names_per_class_values():
    ref, pred = frames()
    per_class = evalkit.evaluate(ref, pred, averaging="none", metrics=["f1"])["f1"]
    assert list(per_class.index) == list(ref.columns) and per_class.index.name == "class"
    for name in ref.columns:  # each value is that class's, whatever the order of the columns
        one = evalkit.evaluate(ref[[name]], pred[[name]], metrics=["f1"])["f1"]
        assert per_class[name] == pytest.approx(one, rel=1e-12)
    reordered = evalkit.evaluate(ref, pred[pred.columns[::-1]], averaging="none", metrics=["f1"])["f1"]
    pd.testing.assert_series_equal(reordered, per_class)


def test_zero_division_warn_points_to_the_sklearn_shaped_functions():
    with pytest.raises(ConfigError, match="'warn' is scikit-learn's setting .* evalkit.metrics take it"):
        evalkit.Evaluator(zero_division="warn")


def test_an_evaluator_deep_copies_into_an_independent_one():
    import copy

    ref, pred = frames()
    ev = evalkit.Evaluator(metrics=["f1", "kld"]).update(ref[:20], pred[:20])
    twin = copy.deepcopy(ev)
    twin.update(ref[20:], pred[20:])
    assert ev.values() == evalkit.Evaluator(metrics=["f1", "kld"]).update(ref[:20], pred[:20]).values()
    assert_values_close(twin.values(), evalkit.Evaluator(metrics=["f1", "kld"]).update(ref, pred).values())


# ------------------------------------------------ batches checked against the state they join (issue 23)


def test_a_batch_of_another_width_is_refused_at_update_and_changes_nothing():
    """A 1-column batch after 3-column ones was broadcast into every class, silently; a
    2-column one failed at compute() inside numpy."""
    rng = np.random.default_rng(11)
    ref, pred = rng.random((40, 3)), rng.random((40, 3))
    first_alone = evalkit.Evaluator(averaging="none", metrics=["precision"]).update(ref, pred).values()
    for width in (1, 2):
        ev = evalkit.Evaluator(averaging="none", metrics=["precision"]).update(ref, pred)
        with pytest.raises(DataError, match=rf"^reference has {width} unnamed columns?, but the evaluation state it "
                                            r"joins has 3 unnamed columns: a different number of classes"):
            ev.update(rng.random((10, width)), rng.random((10, width)))
        assert_values_close(ev.values(), first_alone)  # the refused batch left no trace
        given = evalkit.Evaluator(classes=["a", "b", "c"]).update(ref, pred)  # `classes` names unnamed columns
        with pytest.raises(DataError, match=rf"^reference: {width} unnamed columns? but 3 names in `classes`"):
            given.update(rng.random((10, width)), rng.random((10, width)))
    named_ref, named_pred = frames()
    three = ["speech", "birds", "car"]
    with pytest.raises(DataError, match=r"reference has 4 classes .* joins has 3 classes \('speech', 'birds', 'car'\)"):
        evalkit.Evaluator().update(named_ref[three], named_pred[three]).update(named_ref, named_pred)


def test_named_batches_are_matched_by_name_across_batches():
    ref, pred = frames()
    aligned = evalkit.Evaluator(averaging=["micro", "none"]).update(ref, pred).values()
    ev = evalkit.Evaluator(averaging=["micro", "none"]).update(ref[:15], pred[:15])
    order = ["car", "speech", "dog", "birds"]
    ev.update(ref[15:][order], pred[15:][order[::-1]])  # other orders, each side its own
    assert_values_close(ev.values(), aligned)  # sums taken batch by batch: last bits differ
    renamed = dict(zip(ref.columns, ["x", "y", "z", "w"]))
    with pytest.raises(DataError, match=r"reference has 4 classes \('x', 'y', 'z', 'w'\), but the evaluation state it "
                                        r"joins has 4 classes \('speech', 'birds', 'car', 'dog'\): different classes: "
                                        r"missing 'speech', 'birds', 'car', 'dog'; not in the state 'x', 'y', 'z', 'w'"):
        ev.update(ref.rename(columns=renamed), pred.rename(columns=renamed))


@pytest.mark.parametrize("first_named", [True, False])
@pytest.mark.parametrize("as_", ["float array", "list of rows"])
def test_named_and_unnamed_batches_do_not_mix(first_named, as_):
    ref, pred = frames()
    plain = (lambda f: f.to_numpy()) if as_ == "float array" else (lambda f: f.to_numpy().tolist())
    named, unnamed = (ref.reset_index(drop=True), pred.reset_index(drop=True)), (plain(ref), plain(pred))
    first, then = (named, unnamed) if first_named else (unnamed, named)
    ev = evalkit.Evaluator().update(*first)
    with pytest.raises(DataError, match="unnamed columns are never matched with named classes by position"):
        ev.update(*then)
    # `classes` names unnamed columns: then both kinds are the same classes, by name
    given = evalkit.Evaluator(classes=list(ref.columns)).update(*first).update(*then)
    assert_values_close(given.values(), evalkit.Evaluator().update(*named).update(*named).values())


def test_merge_refuses_what_update_refuses_with_the_same_message():
    ref, pred = frames()
    rng = np.random.default_rng(12)
    for other in (
        evalkit.Evaluator().update(rng.random((5, 2)), rng.random((5, 2))),  # another width
        evalkit.Evaluator().update(ref.to_numpy(), pred.to_numpy()),  # unnamed
        evalkit.Evaluator().update(ref[["dog", "car", "birds", "speech"]], pred),  # another order
        evalkit.Evaluator(classes=["speech", "birds"]).update(ref, pred),  # fewer
    ):
        with pytest.raises(DataError, match="^the state merged in has .*, but the evaluation state it joins has 4 classes"):
            evalkit.Evaluator().update(ref, pred).merge(other.state())
        # an evaluator that knows its classes (given) refuses before any batch
        with pytest.raises(DataError, match="^the state merged in has"):
            evalkit.Evaluator(classes=list(ref.columns)).merge(other.state())
    with pytest.raises(DataError, match="states merge column by column"):
        evalkit.Evaluator().update(ref, pred).merge(evalkit.Evaluator().update(ref[["dog", "car", "birds", "speech"]],
                                                                             pred).state())


def _batch(rng, columns, width, n):
    """A batch of ``n`` samples: DataFrames with ``columns`` (each side in its own order), or
    float arrays of ``width`` unnamed columns; and the same values as {class: column}."""
    ref, pred = rng.random((n, width)), rng.random((n, width))
    if columns is None:
        return (ref, pred), None
    frame_ref, frame_pred = pd.DataFrame(ref, columns=columns), pd.DataFrame(pred, columns=columns)
    return (frame_ref, frame_pred[columns[::-1]]), (frame_ref, frame_pred)


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_batches_of_other_widths_and_names_are_refused_or_scored_by_name(data, seed):
    """Any sequence of batches, unnamed ones of 1 to 4 columns and named ones of 1 to 4
    classes in any order: a batch joins when it has the first batch's classes (by name, or
    unnamed and as many), and the values are then those of one call on the accepted batches
    with their columns aligned by name (1e-12 relative: batch sums are added in another order);
    any other batch is a DataError at update() that names both, and changes nothing."""
    rng = np.random.default_rng(seed)
    pool = ["speech", "birds", "car", "dog"]
    columns = st.one_of(st.none(), st.lists(st.sampled_from(pool), min_size=1, max_size=4, unique=True))
    settings_ = dict(averaging=["micro", "none", "samples"], metrics=["precision", "f1", "kld"])
    ev = evalkit.Evaluator(**settings_)
    state_columns, state_width, accepted = None, None, []
    for _ in range(data.draw(st.integers(1, 5), label="batches")):
        names = data.draw(columns, label="columns")
        width = len(names) if names is not None else data.draw(st.integers(1, 4), label="width")
        batch, frames_ = _batch(rng, names, width, data.draw(st.integers(1, 12), label="samples"))
        fits = state_width is None or (
            (names is None and state_columns is None and width == state_width)
            or (names is not None and state_columns is not None and set(names) == set(state_columns))
        )
        event("joins" if fits else "refused")
        if fits:
            ev.update(*batch)
            if state_width is None:
                state_columns, state_width = names, width
            accepted.append(batch if names is None else tuple(f[state_columns].to_numpy() for f in frames_))
        else:
            kind = "unnamed column" if names is None else "class"
            with pytest.raises(DataError, match=rf"^reference has {width} {kind}.*, but the evaluation state it joins has "
                                                rf"{state_width} "):
                ev.update(*batch)
    ref, pred = (np.concatenate(side) for side in zip(*accepted))
    if state_columns is not None:
        ref, pred = pd.DataFrame(ref, columns=state_columns), pd.DataFrame(pred, columns=state_columns)
    assert_values_close(ev.values(), evalkit.Evaluator(**settings_).update(ref, pred).values())


def test_errors_raised_through_python_name_python_arguments():
    """The data messages a config run words as keys under `data:` name keyword arguments when
    the data came through evaluate() or an Evaluator (a config run's are in test_errors.py)."""
    ref, pred = frames()
    cases = [
        (lambda: evalkit.evaluate(ref, pred[:20]), 'set `missing="empty"` if an absent sample means an empty prediction'),
        (lambda: evalkit.evaluate(ref, pred * 2), "set `clip=True` to clip predictions"),
        (lambda: evalkit.evaluate(ref, pred.rename(columns={"dog": "cat"})), "Select common classes with `classes=[...]`"),
        (lambda: evalkit.evaluate(ref.reset_index(drop=True), pred.to_numpy()),
         "Unnamed columns are never matched with named classes by position: name them with `classes=[...]`"),
        (lambda: evalkit.Evaluator(missing="emtpy"), "Evaluator(): missing: 'error' or 'empty' (got 'emtpy')"),
        (lambda: evalkit.Evaluator(classes="abc"), "Evaluator(): classes: a valid list (got 'abc')"),
        (lambda: evalkit.evaluate(ref, pred, tnorm={"p": 0.5}), 'needs a `name`, e.g. {"name": "hamacher", "p": 0.5}'),
    ]
    for call, words in cases:
        with pytest.raises((DataError, ConfigError)) as info:
            call()
        message = str(info.value)
        assert words in message
        assert not any(yaml in message for yaml in ("under `data:`", "data.", "{name: ", ": true", ": empty"))


def test_item_batches_join_by_class_and_a_class_a_batch_never_mentions_is_empty():
    """Item data (a mapping class -> items per sample) has the classes its samples mention: a
    class one batch never mentions is empty in it, as a prediction's is within one batch (its
    one class was broadcast over the state's two). A class the first batch lacked is refused."""
    settings_ = dict(representation="soft_cardinality", similarity="levenshtein", averaging=["micro", "none"], metrics=["f1"])
    first = [{"a": ["cat"], "b": ["dog"]}], [{"a": ["cat"], "b": ["dot"]}]
    second = [{"a": ["bird"]}], [{"a": ["bard"]}]
    ev = evalkit.Evaluator(**settings_).update(*first).update(*second)
    written_out = [side + [{"a": [item], "b": []}] for side, item in zip(first, ["bird", "bard"])]
    assert_values_close(ev.values(), evalkit.Evaluator(**settings_).update(*written_out).values())
    with pytest.raises(DataError, match=r"^reference has 3 classes \('a', 'b', 'c'\), but the evaluation state it joins "
                                        r"has 2 classes \('a', 'b'\): a different number of classes"):
        ev.update([{"a": ["x"], "b": ["y"], "c": ["z"]}], [{"a": ["x"], "b": ["y"], "c": ["z"]}])


# ------------------------------------------------ what a batch's arrays may hold (issue 23)

REAL_DTYPES = [bool, np.uint8, np.int8, np.int64, np.uint64, np.float16, np.float64, object]
COMPLEX_DTYPES = [np.complex64, np.complex128]


def test_complex_memberships_are_refused_before_any_cast_naming_the_input():
    """Complex memberships or scores were cut to their real part with only numpy's
    ComplexWarning (an imaginary part of 1 changed nothing). Now each door refuses them before
    a cast, naming the side (and a DataFrame's column), and a refused batch changes nothing."""
    rng = np.random.default_rng(23)
    ref, pred = rng.random((8, 3)), rng.random((8, 3))
    ev = evalkit.Evaluator(metrics=["f1", "kld"]).update(ref, pred)
    before = ev.values()
    frame = pd.DataFrame(pred, columns=["a", "b", "c"]).astype({"b": np.complex128})
    cases = [
        (lambda: evalkit.evaluate(ref + 0j, pred), r"^reference: complex data not supported \(complex128\); labels are "
         r"real numbers or strings, memberships, scores and weights real numbers: pass np.real\(x\) or np.abs\(x\)"),
        (lambda: evalkit.evaluate(ref, (pred + 1j).astype(np.complex64)), r"^prediction: complex data not supported "
                                                                          r"\(complex64\)"),
        (lambda: ev.update(ref, pred + 1j), r"^prediction: complex data not supported \(complex128\)"),
        (lambda: ev.update(ref, pred * (1 + 0j)), r"^prediction: complex data not supported"),
        (lambda: evalkit.evaluate(pd.DataFrame(ref, columns=["a", "b", "c"]), frame),
         r"^prediction: column 'b': complex data not supported \(complex128\)"),
        (lambda: evalkit.evaluate(ref.tolist(), [[complex(v, 1) for v in row] for row in pred]),
         r"^prediction: inline values must be real numbers .*; row 1, class '0' holds \(0\.\d+\+1j\) \(complex\)$"),
    ]
    for call, message in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a ComplexWarning here would be the cast this refusal replaces
            with pytest.raises(DataError, match=message):
                call()
    assert ev.values() == before  # the same state read twice: the same floats


def test_cells_that_are_not_numbers_are_named():
    """Lists of rows and object arrays that are not a matrix of real numbers were refused with
    "check the row lengths and that every cell is a number": now the first short row or odd
    cell is named (its row from 1 and its class, as the NaN and [0, 1] messages name cells)."""
    ref = np.random.default_rng(25).random((3, 3))
    cases = [
        ([[0.5, 0, 0], [0, "a", 0], [0, 0, 0]], r"row 2, class '1' holds 'a' \(str\)$"),
        (np.array([[0.5, 0, 0], [0, 0, 0], [0, 0, {"p": 1}]], dtype=object), r"row 3, class '2' holds \{'p': 1\} \(dict\)$"),
        ([[0.5, 0, 0], [0, 0], [0, 0, 0]], r"row 2 has 2 values, row 1 has 3$"),
        ([[10**400, 0, 0], [0, 0, 0], [0, 0, 0]], r"row 1, class '0' holds 1000.*\(321 more characters\) \(int\)$"),
        ({"values": [[0, "q", 0]] * 3, "classes": ["a", "b", "c"]}, r"row 1, class 'b' holds 'q' \(str\)$"),
        (object(), r"got <object object at .*> \(object\)$"),
    ]
    for prediction, where in cases:
        with pytest.raises(DataError, match=r"^prediction: inline values must be real numbers \(within the float64 "
                                            r"range\) in rows of equal length \(a list of lists\); " + where):
            evalkit.evaluate(ref, prediction)


@settings(max_examples=examples(80), deadline=None)
@given(n=st.integers(1, 12), k=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from(REAL_DTYPES + COMPLEX_DTYPES), side=st.sampled_from(["reference", "prediction"]),
       beyond=st.booleans())
def test_memberships_of_every_dtype_are_read_as_float64_or_refused_saying_where(n, k, seed, dtype, side, beyond):
    """0/1 memberships (and ranking scores) as booleans, integers of any width, float16, float64
    or Python numbers in an object array give the values of the same float64 array bit for bit
    (the same float64 input, the same code); a value beyond 1 (an integer type's largest, which
    no cast may wrap or saturate) is refused naming the side, the value and its cell; complex
    arrays are refused naming the side. No dtype is scored after a silent cast."""
    rng = np.random.default_rng(seed)
    ref, pred = rng.integers(0, 2, (n, k)).astype(np.float64), rng.integers(0, 2, (n, k)).astype(np.float64)
    settings_ = dict(tnorm=["minimum", "product"], averaging=["micro", "samples", "none"], metrics=["f1", "kld", "map"])
    expected = evalkit.Evaluator(**settings_).update(ref, pred).values()
    drawn = ref if side == "reference" else pred
    given_ = drawn.astype(dtype)
    if beyond and dtype is not bool and dtype not in COMPLEX_DTYPES:
        row, col = int(rng.integers(n)), int(rng.integers(k))
        largest = 10**30 if dtype is object else (np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else np.finfo(dtype)).max
        given_[row, col] = largest
        event("beyond 1")
        shown = re.escape(f"{float(largest):g}")
        message = rf"^{side}: 1 value\(s\) outside \[0, 1\], first {shown} at row {row + 1}, class '{col}'\."
    elif dtype in COMPLEX_DTYPES:
        message = rf"^{side}: complex data not supported \({np.dtype(dtype)}\)"
    else:
        message = None
    sides = (given_, pred) if side == "reference" else (ref, given_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if message is None:
            assert evalkit.Evaluator(**settings_).update(*sides).values() == expected
        else:
            with pytest.raises(DataError, match=message):
                evalkit.Evaluator(**settings_).update(*sides)


def test_an_empty_batch_is_refused_and_changes_nothing():
    """A batch of no samples (shape (0, k)) is refused at update, as it is in a first call,
    rather than adding nothing without a word; the state stays as it was."""
    rng = np.random.default_rng(24)
    ref, pred = rng.random((8, 3)), rng.random((8, 3))
    ev = evalkit.Evaluator().update(ref, pred)
    before = ev.values()
    for batch in (np.zeros((0, 3)), pd.DataFrame(np.zeros((0, 3)))):
        with pytest.raises(DataError, match=r"^reference: no data \(shape \(0, 3\)\); give at least one sample and one class"):
            ev.update(batch, batch)
    for batch in (np.zeros((0, 3)), [], pd.DataFrame(np.zeros((0, 3)))):
        with pytest.raises(DataError, match=r"^reference: no data \(shape \(0, \d\)\); give at least one sample"):
            evalkit.evaluate(batch, batch)
    assert ev.values() == before


def test_states_of_the_same_classes_in_another_order_do_not_merge():
    """A batch is aligned by name, but states add column by column: the same classes in another
    order are refused, saying so, not summed across classes."""
    rng = np.random.default_rng(5)
    ref, pred = rng.random((4, 3)), rng.random((4, 3))
    first = evalkit.Evaluator(classes=["a", "b", "c"]).update(ref, pred)
    other = evalkit.Evaluator(classes=["c", "a", "b"]).update(ref, pred).state()
    with pytest.raises(DataError, match=r"^the state merged in has 3 classes \('c', 'a', 'b'\), but the evaluation state "
                                        r"it joins has 3 classes \('a', 'b', 'c'\): the same classes in another order "
                                        r"\(states merge column by column\)\. "):
        first.merge(other)
