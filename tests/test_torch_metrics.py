"""evalkit's torchmetrics classes: the values of the Evaluator on the same data, whatever the
batches, merged states or processes (a real two-process gloo group on loopback)."""

from __future__ import annotations

import os
import pickle
import re
import socket
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from hypothesis import event, given, settings
from hypothesis import strategies as st
from run_depth import examples

import evalkit
from evalkit.errors import ConfigError, DataError
from evalkit.torch_metrics import (
    EvalkitMetric,
    FuzzyExactMatch,
    FuzzyF1Score,
    FuzzyFBetaScore,
    FuzzyHammingDistance,
    FuzzyHammingLoss,
    FuzzyJaccardIndex,
    FuzzyPrecision,
    FuzzyRecall,
)

AVERAGINGS = ["micro", "macro", "weighted", "samples", "none", "macro_pr", "samples_pr"]
METRICS = ["precision", "recall", "f1", {"name": "fbeta", "beta": 2.0}, "jaccard", "hamming_loss", "kld", "exact_match_ratio"]


def data(seed: int, n: int = 120, classes: int = 5):
    rng = np.random.default_rng(seed)
    ref = rng.random((n, classes))
    ref[rng.random((n, classes)) < 0.3] = 0.0  # exact zeros: empty classes and samples happen
    return ref, rng.random((n, classes))


def expected(ref, pred, **settings):
    """{metric: value or per-class array} of one Evaluator call."""
    out = {}
    for measure, value in evalkit.Evaluator(**settings).update(ref, pred).values().items():
        out.setdefault(measure.metric, []).append(value)
    return {k: np.array(v[0] if len(v) == 1 else v) for k, v in out.items()}


def assert_close(got, want):
    assert got.keys() == want.keys()
    for key, value in want.items():
        np.testing.assert_allclose(got[key].numpy(), value, rtol=1e-12, atol=1e-15, err_msg=key)


TNORMS = ["minimum", "product", "lukasiewicz", {"name": "hamacher", "p": 0.5}]


@pytest.mark.parametrize("averaging", AVERAGINGS)
@pytest.mark.parametrize("tnorm", TNORMS)
def test_random_batches_give_the_evaluators_values(averaging, tnorm):
    seed = 100 * AVERAGINGS.index(averaging) + TNORMS.index(tnorm)
    ref, pred = data(seed)
    metric = EvalkitMetric(classes=5, tnorm=tnorm, averaging=averaging, metrics=METRICS)
    cuts = np.sort(np.random.default_rng(seed).choice(np.arange(1, 120), 6, replace=False))
    for r, p in zip(np.split(ref, cuts), np.split(pred, cuts)):
        metric.update(torch.tensor(p), torch.tensor(r))  # predictions first, as in torchmetrics
    assert_close(metric.compute(), expected(ref, pred, tnorm=tnorm, averaging=averaging, metrics=METRICS))


def test_merge_state_and_reset():
    ref, pred = data(2)
    a, b = FuzzyF1Score(classes=5, averaging="macro"), FuzzyF1Score(classes=5, averaging="macro")
    a.update(torch.tensor(pred[:50]), torch.tensor(ref[:50]))
    b.update(torch.tensor(pred[50:]), torch.tensor(ref[50:]))
    a.merge_state(b)
    want = evalkit.evaluate(ref, pred, averaging="macro")["f1"]
    assert a.compute().item() == pytest.approx(want, rel=1e-12)
    a.reset()
    a.update(torch.tensor(pred[:50]), torch.tensor(ref[:50]))
    assert a.compute().item() == pytest.approx(evalkit.evaluate(ref[:50], pred[:50], averaging="macro")["f1"], rel=1e-12)


def test_tensors_with_gradients_in_float32_and_sample_weights():
    ref, pred = data(3)
    weights = np.random.default_rng(3).random(120)
    logits = torch.tensor(np.log(pred / (1 - pred)), dtype=torch.float32, requires_grad=True)
    probabilities = logits.sigmoid()
    metric = FuzzyPrecision(classes=["a", "b", "c", "d", "e"], averaging="samples")
    metric.update(probabilities, torch.tensor(ref, dtype=torch.float32), sample_weight=torch.tensor(weights))
    # The float32 numbers, summed in float64: the Evaluator's values on them to float64 rounding.
    want = evalkit.evaluate(
        ref.astype(np.float32).astype(np.float64), probabilities.detach().numpy().astype(np.float64),
        averaging="samples", metrics=["precision"], sample_weight=weights,
    )["precision"]
    assert metric.compute().item() == pytest.approx(want, rel=1e-12)
    assert logits.grad is None and probabilities.requires_grad  # nothing flowed back, nothing was changed


def test_integer_and_boolean_targets():
    ref, pred = data(7)
    metric = FuzzyRecall(classes=5, averaging="weighted")
    metric.update(torch.tensor(pred), torch.tensor(ref > 0.5))
    metric.update(torch.tensor(pred), torch.tensor((ref > 0.5).astype(np.int64)))
    both = np.concatenate([ref > 0.5] * 2).astype(float)
    want = evalkit.evaluate(both, np.concatenate([pred] * 2), averaging="weighted", metrics=["recall"])["recall"]
    assert metric.compute().item() == pytest.approx(want, rel=1e-12)


def test_complex_tensors_and_bad_weights_are_refused_as_the_evaluator_refuses_them():
    """A complex tensor was cast by torch to float64, keeping its real part with a UserWarning.
    Complex preds, target or weights, and weights in a 2-D tensor (flattened before), of another
    length or with NaN, are refused with the message the Evaluator gives for the same arrays,
    and the metric's sums stay as they were."""
    ref, pred = data(9)
    weights = np.random.default_rng(9).random(120)
    metric = FuzzyF1Score(classes=5)
    metric.update(torch.tensor(pred), torch.tensor(ref))
    before = metric.compute().item()
    nan_weight = weights.copy()
    nan_weight[7] = np.nan
    cases = [  # (preds, target, sample_weight) as NumPy arrays, given as tensors
        (pred.astype(np.complex64), ref, None),
        (pred, ref + 1j, None),
        (pred, ref, weights[:, None]),
        (pred, ref, weights.astype(np.complex128)),
        (pred, ref, weights[:100]),
        (pred, ref, nan_weight),
    ]
    for preds, target, sample_weight in cases:
        with pytest.raises(DataError) as evaluators:
            evalkit.Evaluator().update(target, preds, sample_weight=sample_weight)
        tensor_weight = None if sample_weight is None else torch.from_numpy(sample_weight)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # torch's complex-to-real warning would be the cast refused here
            with pytest.raises(DataError) as metrics:
                metric.update(torch.from_numpy(preds), torch.from_numpy(target), sample_weight=tensor_weight)
        assert str(metrics.value) == str(evaluators.value)
    assert metric.compute().item() == before  # the same sums, computed twice: the same float


def test_named_metrics_and_what_is_refused():
    ref, pred = data(4)
    beta = FuzzyFBetaScore(classes=5, beta=0.5)
    loss = FuzzyHammingLoss(classes=5)
    jaccard = FuzzyJaccardIndex(classes=5, averaging="none", tnorm="product")
    for metric in (beta, loss, jaccard):
        metric.update(torch.tensor(pred), torch.tensor(ref))
    got = evalkit.evaluate(ref, pred, metrics=[{"name": "fbeta", "beta": 0.5}, "hamming_loss"])
    assert beta.compute().item() == pytest.approx(got["fbeta(beta=0.5)"], rel=1e-12)
    assert loss.compute().item() == pytest.approx(got["hamming_loss"], rel=1e-12)
    want = expected(ref, pred, averaging="none", tnorm="product", metrics=["jaccard"])["jaccard"]
    np.testing.assert_allclose(jaccard.compute().numpy(), want, rtol=1e-12)
    assert jaccard.compute().shape == (5,) and jaccard.compute().dtype == torch.float64
    assert loss.higher_is_better is False and beta.higher_is_better is True
    assert loss.clone().compute().item() == loss.compute().item()
    for wrong, message in [
        (dict(tnorm=["minimum", "product"]), "tnorm takes one component, not a list.*one metric per combination"),
        (dict(averaging=("micro", "macro")), "averaging takes one component"),
        (dict(classes="abc"), "classes takes the class names"),
        (dict(classes=0), "at least one class"),
        (dict(representation="segments"), "reads items, not membership matrices"),
        (dict(metrics=["map"]), "metric 'map' keeps more than sums of a fixed size"),
    ]:
        with pytest.raises(ConfigError, match=message):
            EvalkitMetric(**{"classes": 5, **wrong})
    with pytest.raises(ConfigError, match="computes 'f1'"):
        FuzzyF1Score(classes=5, metrics=["recall"])


def test_states_are_named_float64_sums_and_the_metric_pickles():
    ref, pred = data(8)
    metric = EvalkitMetric(classes=5, averaging="samples", metrics=["f1", "kld"])
    assert {name: tuple(t.shape) for name, t in metric.metric_state.items()} == {
        "sum_n_samples": (), "sum_summary_ref": (5,), "sum_summary_pred": (5,), "sum_summary_inter": (5,),
        "sum_summary_n_samples": (), "sum_summary_sample_sums_f1": (2,), "sum_data_kld": (2,),
    }
    assert all(t.dtype == torch.float64 for t in metric.metric_state.values())
    metric.update(torch.tensor(pred[:70]), torch.tensor(ref[:70]))
    copy = pickle.loads(pickle.dumps(metric))  # checkpoints, spawned workers
    copy.update(torch.tensor(pred[70:]), torch.tensor(ref[70:]))
    assert_close(copy.compute(), expected(ref, pred, averaging="samples", metrics=["f1", "kld"]))


def test_forward_gives_the_batch_value_and_accumulates():
    ref, pred = data(9)
    metric = FuzzyF1Score(classes=5, averaging="macro")
    first = metric(torch.tensor(pred[:40]), torch.tensor(ref[:40]))
    metric(torch.tensor(pred[40:]), torch.tensor(ref[40:]))
    assert first.item() == pytest.approx(evalkit.evaluate(ref[:40], pred[:40], averaging="macro")["f1"], rel=1e-12)
    assert metric.compute().item() == pytest.approx(evalkit.evaluate(ref, pred, averaging="macro")["f1"], rel=1e-12)


def test_importing_evalkit_does_not_import_torch():
    code = "import sys, evalkit; evalkit.Evaluator().update([[0.5]], [[0.5]]); assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------------ distributed sync


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(rank: int, world: int, port: int, results: dict) -> None:
    """One process of the group: half of the data, then a compute() that syncs by summing."""
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        ref, pred = data(5)
        metric = EvalkitMetric(classes=5, averaging="samples", metrics=["f1", "kld"])
        part = slice(rank * 60, (rank + 1) * 60)
        metric.update(torch.tensor(pred[part]), torch.tensor(ref[part]))
        results[rank] = {k: v.item() for k, v in metric.compute().items()}
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
def test_two_processes_sync_to_the_values_of_all_the_data():
    port = _free_port()
    with mp.Manager() as manager:
        results = manager.dict()
        mp.spawn(_rank_main, args=(2, port, results), nprocs=2, join=True)
        got = dict(results)
    ref, pred = data(5)
    want = evalkit.evaluate(ref, pred, averaging="samples", metrics=["f1", "kld"])
    for rank in (0, 1):
        assert got[rank] == pytest.approx(want, rel=1e-12), rank


def test_the_per_epoch_example_of_the_docs_prints_what_the_page_shows(capsys):
    page = (Path(__file__).resolve().parent.parent / "docs" / "torch.md").read_text(encoding="utf-8")
    (example,) = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "for epoch" in b]
    shown = re.search(r"It prints.*?```text\n(.*?)```", page, re.S)
    assert shown, "the page shows what the example prints"
    exec(compile(example, "docs/torch.md", "exec"), {})

    def scores(text: str) -> list[float]:
        return [float(v) for v in re.findall(r"fuzzy macro F1 ([0-9.]+)", text)]

    printed = scores(capsys.readouterr().out)
    assert len(printed) == 5 and printed == sorted(printed) and printed[-1] > printed[0]
    assert printed == pytest.approx(scores(shown[1]), abs=2e-3)  # the same torch; another CPU may round apart


def test_the_binned_map_is_a_torchmetrics_sum_state():
    ref, pred = data(6)
    targets = (ref > 0.5).astype(float)
    spec = {"name": "map_binned", "bins": 20}
    metric = EvalkitMetric(classes=5, metrics=[spec])
    for part in np.array_split(np.arange(120), 4):
        metric.update(torch.tensor(pred[part]), torch.tensor(targets[part]))
    assert_close(metric.compute(), expected(targets, pred, metrics=[spec]))


# ------------------------------------------------------------ merge_state refuses unlike states (issue 23)


def _refusal(call):
    """The DataError message of ``call()``, or None when it goes through."""
    try:
        call()
    except DataError as exc:
        return str(exc)
    return None


SETTINGS = {
    "tnorm": st.sampled_from(["minimum", "product"]),
    "averaging": st.sampled_from(["micro", "macro"]),
    "classes": st.sampled_from([3, 2, ["speech", "birds", "car"], ["car", "speech", "birds"], ["a", "b", "c"]]),
}


@settings(max_examples=examples(40), deadline=None)
@given(mine=st.fixed_dictionaries(SETTINGS), other=st.none() | st.fixed_dictionaries(SETTINGS), seed=st.integers(0, 2**32 - 1))
def test_merge_state_refuses_what_evaluator_merge_refuses_with_the_same_message(mine, other, seed):
    """Two metrics of drawn T-norms, averagings and classes (the same settings, drawn as None,
    half the time): merge_state refuses exactly the pairs whose Evaluator states Evaluator.merge
    refuses, with the same message; a merge it takes gives the Evaluator's value on both
    batches (1e-12 relative: sums in another order)."""
    other = other or mine
    event("same settings" if other == mine else "other settings")
    rng = np.random.default_rng(seed)
    data = {}
    for key, spec in (("mine", mine), ("other", other)):
        width = spec["classes"] if isinstance(spec["classes"], int) else len(spec["classes"])
        data[key] = rng.random((6, width)), rng.random((6, width))
    metric, incoming = FuzzyF1Score(**mine), FuzzyF1Score(**other)
    metric.update(torch.tensor(data["mine"][1]), torch.tensor(data["mine"][0]))
    incoming.update(torch.tensor(data["other"][1]), torch.tensor(data["other"][0]))

    def evaluator(spec):  # the Evaluator of a metric's settings, its classes named as the metric names them
        classes = spec["classes"] if not isinstance(spec["classes"], int) else [f"class {i}" for i in range(spec["classes"])]
        return evalkit.Evaluator(tnorm=spec["tnorm"], averaging=spec["averaging"], metrics=["f1"], classes=classes)

    state = evaluator(other).update(*data["other"]).state()
    expected = _refusal(lambda: evaluator(mine).update(*data["mine"]).merge(state))
    assert _refusal(lambda: metric.merge_state(incoming)) == expected
    if expected is None:
        both = [np.concatenate(side) for side in zip(data["mine"], data["other"])]
        want = evalkit.Evaluator(tnorm=mine["tnorm"], averaging=mine["averaging"], metrics=["f1"]).update(*both).values()
        assert metric.compute().item() == pytest.approx(next(iter(want.values())), rel=1e-12)


def test_merge_state_of_the_issue_is_refused():
    """A minimum-T-norm metric merged with a product one summed both (0.546 where minimum alone
    gave 0.614 in the issue); another metric of other class names was added column by column."""
    ref, pred = data(13)
    minimum, product = FuzzyPrecision(classes=5), FuzzyPrecision(classes=5, tnorm="product")
    for metric in (minimum, product):
        metric.update(torch.tensor(pred), torch.tensor(ref))
    alone = minimum.compute().item()
    with pytest.raises(DataError, match="^cannot merge evaluation states of different components or settings: "
                                        "tnorm: 'minimum' and 'product'$"):
        minimum.merge_state(product)
    names = FuzzyPrecision(classes=["a", "b", "c", "d", "e"])
    with pytest.raises(DataError, match=r"^the state merged in has 5 classes \('a', 'b', 'c', 'd', 'e'\), but the "
                                        r"evaluation state it joins has 5 classes \('class 0', "):
        minimum.merge_state(names)
    assert minimum.compute().item() == alone  # refused before anything was added: the same float


def test_merge_state_of_a_dict_needs_this_metrics_states_and_shapes():
    ref, pred = data(14)
    five, three = FuzzyRecall(classes=5), FuzzyRecall(classes=3)
    five.update(torch.tensor(pred), torch.tensor(ref))
    three.update(torch.tensor(pred[:, :3]), torch.tensor(ref[:, :3]))
    with pytest.raises(DataError, match=r"FuzzyRecall.merge_state\(\): the state 'sum_summary_ref' is of shape \(3,\), "
                                        r"where this metric's is a tensor of shape \(5,\) \(5 classes"):
        five.merge_state(three.metric_state)
    with pytest.raises(DataError, match="the state 'sum_n_samples' is NoneType"):
        five.merge_state({})
    again = FuzzyRecall(classes=5)
    again.update(torch.tensor(pred), torch.tensor(ref))
    five.merge_state(again.metric_state)  # a dict of this metric's layout is summed, as torchmetrics does
    both = np.concatenate([ref, ref]), np.concatenate([pred, pred])
    assert five.compute().item() == pytest.approx(evalkit.evaluate(*both, metrics=["recall"])["recall"], rel=1e-12)


@settings(max_examples=examples(40), deadline=None)
@given(classes=st.sampled_from([3, ["speech", "birds", "car"]]), widths=st.lists(st.integers(1, 5), min_size=1, max_size=4),
       seed=st.integers(0, 2**32 - 1))
def test_torch_batches_of_other_widths_are_refused_as_the_evaluator_refuses_them(classes, widths, seed):
    """Batches of drawn widths into a torch metric: each is refused exactly when an Evaluator of
    the same classes refuses it, with the same message, and leaves the metric as it was; what
    is taken gives the Evaluator's value on the batches taken (1e-12 relative)."""
    rng = np.random.default_rng(seed)
    metric = FuzzyF1Score(classes=classes, averaging="macro")
    names = classes if not isinstance(classes, int) else [f"class {i}" for i in range(classes)]
    evaluator = evalkit.Evaluator(averaging="macro", metrics=["f1"], classes=names)
    taken = []
    for width in widths:
        ref, pred = rng.random((4, width)), rng.random((4, width))
        event("refused" if width != len(names) else "taken")
        refusal = _refusal(lambda: evaluator.update(ref, pred))  # noqa: B023 (called at once)
        assert _refusal(lambda: metric.update(torch.tensor(pred), torch.tensor(ref))) == refusal  # noqa: B023
        if refusal is None:
            taken.append((ref, pred))
    if taken:
        both = [np.concatenate(side) for side in zip(*taken)]
        want = evalkit.Evaluator(averaging="macro", metrics=["f1"]).update(*both).values()
        assert metric.compute().item() == pytest.approx(next(iter(want.values())), rel=1e-12)


# ------------------------------------------------------------ torchmetrics conventions (issue 27, item 3)

#: every one-metric class, with the Evaluator's spec of its metric
CLASSES = [
    (FuzzyPrecision, {}, "precision"), (FuzzyRecall, {}, "recall"), (FuzzyF1Score, {}, "f1"),
    (FuzzyFBetaScore, {"beta": 2.0}, {"name": "fbeta", "beta": 2.0}), (FuzzyJaccardIndex, {}, "jaccard"),
    (FuzzyHammingLoss, {}, "hamming_loss"), (FuzzyHammingDistance, {}, "hamming_loss"),
    (FuzzyExactMatch, {}, "exact_match_ratio"),
]


def one_value(ref, pred, spec, **settings) -> float:
    (value,) = expected(ref, pred, metrics=[spec], **settings).values()
    return float(value)


@pytest.mark.parametrize("average", ["micro", "macro", "samples"])
def test_exact_match_and_hamming_distance_are_scikit_learns_on_crisp_labels(average):
    from sklearn.metrics import accuracy_score, hamming_loss

    rng = np.random.default_rng(20)
    ref, pred = rng.integers(0, 2, (90, 4)), rng.integers(0, 2, (90, 4))
    ref[:10] = pred[:10]  # exact matches happen
    exact, hamming = FuzzyExactMatch(classes=4, averaging=average), FuzzyHammingDistance(classes=4, averaging=average)
    for part in np.array_split(np.arange(90), 3):
        exact.update(torch.tensor(pred[part]), torch.tensor(ref[part]))
        hamming.update(torch.tensor(pred[part]), torch.tensor(ref[part]))
    # a mean of 0/1 over 90 samples and a count over 360 cells: scikit-learn rounds the same ratio
    assert exact.compute().item() == pytest.approx(accuracy_score(ref, pred), rel=1e-12)
    assert hamming.compute().item() == pytest.approx(hamming_loss(ref, pred), rel=1e-12)
    assert not hamming.higher_is_better and exact.higher_is_better


def test_exact_match_and_hamming_distance_on_soft_labels_are_the_evaluators():
    ref, pred = data(21)
    for cls, spec in ((FuzzyExactMatch, "exact_match_ratio"), (FuzzyHammingDistance, "hamming_loss")):
        metric = cls(classes=5, tnorm="product")
        for part in np.array_split(np.arange(120), 4):
            metric.update(torch.tensor(pred[part]), torch.tensor(ref[part]))
        assert metric.compute().item() == pytest.approx(one_value(ref, pred, spec, tnorm="product"), rel=1e-12)


def test_every_class_in_a_metric_collection_forward_clone_and_pickle():
    """A MetricCollection of every class: forward() gives each batch's values, compute() those of
    all the batches; a clone() and a pickled copy carry on from the same states."""
    from torchmetrics import MetricCollection

    ref, pred = data(22)
    collection = MetricCollection({cls.__name__: cls(classes=5, averaging="macro", **kw) for cls, kw, _ in CLASSES})
    parts = np.array_split(np.arange(120), 3)
    for part in parts[:2]:
        batch = collection(torch.tensor(pred[part]), torch.tensor(ref[part]))
        for cls, _, spec in CLASSES:  # each batch alone (the Evaluator on it)
            want = one_value(ref[part], pred[part], spec, averaging="macro")
            assert batch[cls.__name__].item() == pytest.approx(want, rel=1e-12)
    for copy in (collection.clone(), pickle.loads(pickle.dumps(collection)), collection):
        copy.update(torch.tensor(pred[parts[2]]), torch.tensor(ref[parts[2]]))
        values = copy.compute()
        for cls, _, spec in CLASSES:
            assert values[cls.__name__].item() == pytest.approx(one_value(ref, pred, spec, averaging="macro"), rel=1e-12)


def test_plot_draws_a_value_steps_and_classes_with_torchmetrics_helper():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ref, pred = data(23)
    f1 = FuzzyF1Score(classes=5)
    steps = [f1(torch.tensor(pred[part]), torch.tensor(ref[part])) for part in np.array_split(np.arange(120), 4)]
    fig, ax = f1.plot()  # the value now: one point
    assert isinstance(fig, matplotlib.figure.Figure) and isinstance(ax, matplotlib.axes.Axes)
    (line,) = [line for line in ax.get_lines() if len(line.get_ydata()) == 1]
    assert line.get_ydata()[0] == f1.compute().item()  # the value drawn is the value computed
    assert ax.get_ylabel() == "FuzzyF1Score" and ax.get_ylim() == pytest.approx((-0.1, 1.1))  # a share's bounds
    _, ax = f1.plot(steps)  # a sequence: one line over the steps
    assert [list(line.get_ydata()) for line in ax.get_lines() if len(line.get_ydata()) == 4] == [[s.item() for s in steps]]
    names = ["speech", "music", "birds", "car", "dog"]
    per_class = FuzzyRecall(classes=names, averaging="none")
    per_class.update(torch.tensor(pred), torch.tensor(ref))
    fig, ax = per_class.plot()  # one point per class, named by class
    assert [t.get_text() for t in ax.get_legend().get_texts()] == names
    drawn = [line.get_ydata()[0] for line in ax.get_lines() if line.get_label() in {str(i) for i in range(5)}]
    assert drawn == list(per_class.compute().numpy())
    _, ax = plt.subplots()
    assert per_class.plot([per_class.compute()] * 3, ax=ax)[1] is ax  # on the caller's axes
    assert [t.get_text() for t in ax.get_legend().get_texts()] == names
    several = EvalkitMetric(classes=5, metrics=["precision", "kld"])
    several.update(torch.tensor(pred), torch.tensor(ref))
    _, ax = several.plot()  # {metric: value}: one point per metric
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["precision", "kld"]
    plt.close("all")
