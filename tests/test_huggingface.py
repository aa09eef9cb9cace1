"""evalkit's Hugging Face ``evaluate`` modules, loaded offline from the package by the real
``evaluate``: batch by batch, sample by sample and in one call they give the Evaluator's values."""

from __future__ import annotations

from pathlib import Path

import evaluate
import numpy as np
import pytest
from sklearn.metrics import average_precision_score, precision_recall_fscore_support

import evalkit
import evalkit.hf
from evalkit.errors import ConfigError, DataError

ROOT = Path(__file__).resolve().parent.parent
ONTOLOGY = str(ROOT / "configs" / "data" / "audioset" / "ontology.json")


@pytest.fixture
def load(tmp_path):
    """A shipped module loaded by path (no hub); its Arrow buffer under tmp_path."""
    return lambda name: evaluate.load(evalkit.hf.module(name), cache_dir=str(tmp_path))


def data(seed: int, n: int = 60, classes: int = 4) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ref = rng.random((n, classes))
    ref[rng.random((n, classes)) < 0.3] = 0.0  # exact zeros: empty classes and samples happen
    return ref, rng.random((n, classes))


def evaluator_values(batches, **settings) -> dict:
    """The Evaluator's values after one update per batch, shaped as the modules return them."""
    ev = evalkit.Evaluator(**settings)
    for ref, pred in batches:
        ev.update(ref, pred)
    out: dict = {}
    for measure, value in ev.values().items():
        if measure.single:
            out[measure.metric] = value
        else:
            out.setdefault(measure.metric, {})[measure.class_ if measure.class_ is not None else measure.level] = value
    return out


def assert_close(got: dict, want: dict) -> None:
    # sums over a different grouping of the same samples: equal to float64 rounding
    assert got.keys() == want.keys()
    for key, value in want.items():
        if isinstance(value, dict):
            assert got[key].keys() == value.keys(), key
            assert list(got[key].values()) == pytest.approx(list(value.values()), rel=1e-12), key
        else:
            assert got[key] == pytest.approx(value, rel=1e-12), key


def test_the_helper_names_every_shipped_module_and_refuses_others():
    assert evalkit.hf.names() == ["error_rates", "fuzzy_f1", "fuzzy_precision", "fuzzy_recall", "map", "omap"]
    for name in evalkit.hf.names():
        assert Path(evalkit.hf.module(name)).is_file()
    with pytest.raises(ConfigError, match=r"no evaluate module 'fuzzy_f'; did you mean 'fuzzy_f1'\? The modules: error_rates"):
        evalkit.hf.module("fuzzy_f")


SETTINGS = [
    {}, {"tnorm": "product", "averaging": "macro"}, {"tnorm": {"name": "hamacher", "p": 0.5}, "averaging": "samples"},
    {"tnorm": "lukasiewicz", "averaging": "weighted"}, {"representation": "crisp", "averaging": "macro"},
    {"averaging": "none", "classes": ["speech", "music", "birds", "car"]},
]


@pytest.mark.parametrize("settings", SETTINGS, ids=str)
@pytest.mark.parametrize(("name", "metrics"), [
    ("fuzzy_precision", ["precision"]), ("fuzzy_recall", ["recall"]), ("fuzzy_f1", ["f1"]),
    ("error_rates", ["error_rate", "substitution_rate", "deletion_rate", "insertion_rate"]),
])
def test_batch_by_batch_equals_one_call_equals_the_evaluator(load, name, metrics, settings):
    ref, pred = data(SETTINGS.index(settings))
    if "substitution_rate" in metrics and settings.get("averaging") in ("macro", "weighted", "none"):
        metrics = metrics[:1] + metrics[2:]  # a class alone has no substitutions
        settings = {**settings, "metrics": metrics}
    batches = [(ref[:20], pred[:20]), (ref[20:45], pred[20:45]), (ref[45:], pred[45:])]
    module = load(name)
    for r, p in batches:
        module.add_batch(predictions=p.tolist(), references=r.tolist())
    batched = module.compute(**settings)
    whole = load(name).compute(predictions=pred, references=ref, **settings)
    want = evaluator_values(batches, **{"metrics": metrics, **settings})
    assert list(batched) == metrics
    assert_close(batched, want)
    assert_close(whole, want)


def test_the_error_rates_under_class_wise_averaging_leave_out_the_substitution_rate_when_told(load):
    ref, pred = data(12)
    with pytest.raises(ConfigError, match="substitution_rate has no value under the averaging of this run"):
        load("error_rates").compute(predictions=pred, references=ref, averaging="macro")
    with pytest.raises(ConfigError, match=r"error_rates: metrics=\['f1'\]: give some of 'error_rate', 'substitution_rate'"):
        load("error_rates").compute(predictions=pred, references=ref, metrics=["f1"])
    got = load("error_rates").compute(predictions=pred, references=ref, averaging="macro", metrics="error_rate")
    assert_close(got, evaluator_values([(ref, pred)], metrics=["error_rate"], averaging="macro"))


def test_sample_by_sample_with_add(load):
    ref, pred = data(7, n=25)
    module = load("fuzzy_f1")
    for r, p in zip(ref, pred):
        module.add(prediction=p, reference=r)
    assert_close(module.compute(tnorm="product"), evaluator_values([(ref, pred)], metrics=["f1"], tnorm="product"))


def test_one_class_as_a_float_per_sample(load):
    ref, pred = data(8, classes=1)
    got = load("fuzzy_f1").compute(predictions=pred[:, 0].tolist(), references=ref[:, 0].tolist())
    assert_close(got, evaluator_values([(ref, pred)], metrics=["f1"]))


@pytest.mark.parametrize("average", ["micro", "macro", "weighted", "samples"])
def test_crisp_labels_give_scikit_learns_values(load, average):
    rng = np.random.default_rng(9)
    ref, pred = rng.integers(0, 2, (50, 5)), rng.integers(0, 2, (50, 5))
    p, r, f, _ = precision_recall_fscore_support(ref, pred, average=average, zero_division=0)
    combined = evaluate.combine([load("fuzzy_precision"), load("fuzzy_recall"), load("fuzzy_f1")])
    for a, b in zip(np.array_split(ref, 3), np.array_split(pred, 3)):
        combined.add_batch(predictions=b, references=a)
    got = combined.compute(averaging=average)
    # scikit-learn sums the same integer counts in another order
    assert got == pytest.approx({"precision": p, "recall": r, "f1": f}, rel=1e-12)


def test_combine_merges_the_modules_results(load):
    """evaluate.combine with another module. evaluate's own "accuracy" is a hub module (the
    package ships none: evaluate.load("accuracy") offline is a FileNotFoundError), so the second
    module here is another of evalkit's."""
    ref, pred = data(10)
    combined = evaluate.combine([load("fuzzy_f1"), load("error_rates")])
    for a, b in zip(np.array_split(ref, 3), np.array_split(pred, 3)):
        combined.add_batch(predictions=b, references=a)
    got = combined.compute(tnorm="product", averaging="samples")  # compute()'s keywords go to every module
    metrics = ["f1", "error_rate", "substitution_rate", "deletion_rate", "insertion_rate"]
    assert_close(got, evaluator_values([(ref, pred)], metrics=metrics, tnorm="product", averaging="samples"))


def test_map_and_omap_on_scores(load):
    rng = np.random.default_rng(11)
    classes = ["/m/09x0r", "/m/05zppz", "/m/02zsn", "/m/0ytgt", "/m/01h8n0"]  # the first AudioSet classes
    y = (rng.random((80, 5)) < 0.3).astype(float)
    y[np.arange(80), rng.integers(0, 5, 80)] = 1  # every clip has a label (OmAP's weights need one)
    s = np.round(rng.normal(size=y.shape) + 1.5 * y, 2)  # scores, not memberships; rounded: ties
    module = load("map")
    for a, b in zip(np.array_split(y, 3), np.array_split(s, 3)):
        module.add_batch(predictions=b, references=a)
    assert module.compute() == pytest.approx({"map": average_precision_score(y, s, average="macro")}, rel=1e-12)
    omap = load("omap")
    for a, b in zip(np.array_split(y, 3), np.array_split(s, 3)):
        omap.add_batch(predictions=b, references=a)
    got = omap.compute(ontology=ONTOLOGY, classes=classes)
    want = evaluator_values([(y, s)], metrics=[{"name": "omap", "ontology": ONTOLOGY}], classes=classes)
    assert set(got) == {"omap", "omap_lambda0", "omap_per_level"}
    assert_close(got, want)


def test_the_model_card_text(load):
    module = load("fuzzy_f1")
    assert module.name == "fuzzy_f1"
    assert module.description.startswith("F1, 2 |G ∩ P| / (|G| + |P|)")
    assert "Evaluating classification systems against soft labels with fuzzy precision and recall" in module.citation
    assert "tnorm:" in module.inputs_description and module.inputs_description in module.compute.__doc__
    assert "Metrics for Polyphonic Sound Event Detection" in load("error_rates").citation
    assert "Ontology-aware learning and evaluation for audio tagging" in load("omap").citation


def test_bad_input_gets_evalkits_messages(load):
    module = load("fuzzy_f1")
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'average'; did you mean 'averaging'\?"):
        module.compute(predictions=[[0.5, 0.2]], references=[[1.0, 0.0]], average="macro")
    with pytest.raises(DataError, match=r"outside \[0, 1\]"):
        load("fuzzy_f1").compute(predictions=[[1.5, 0.2]], references=[[1.0, 0.0]])
    ragged = load("fuzzy_f1")  # batches of different widths: evaluate buffers them; evalkit refuses them
    ragged.add_batch(predictions=[[0.5, 0.2]], references=[[1.0, 0.0]])
    ragged.add_batch(predictions=[[0.5, 0.2, 0.1]], references=[[1.0, 0.0, 0.3]])
    with pytest.raises(DataError, match="rows of equal length .*; row 2 has 3 values, row 1 has 2"):
        ragged.compute()
    with pytest.raises(ConfigError, match="unknown tnorm 'minimun'. Did you mean 'minimum'"):
        load("fuzzy_f1").compute(predictions=[[0.5, 0.2]], references=[[1.0, 0.0]], tnorm="minimun")


def test_evaluate_with_hugging_faces_plural_keywords_names_evalkits():
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'predictions'; did you mean 'prediction'\?"):
        evalkit.evaluate(predictions=[[0.5]], references=[[1.0]])
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'references'; did you mean 'reference'\?"):
        evalkit.evaluate(references=[[1.0]])
