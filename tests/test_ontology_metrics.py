"""mAP and OmAP as metrics of a run: evaluate(), YAML configs, the CLI and their errors."""

from __future__ import annotations

import csv
import importlib.util
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from in_process import evalkit_cli
from sklearn.metrics import average_precision_score

import evalkit
import evalkit.table
from evalkit.errors import DataError
from evalkit_ontology import load_ontology, omap

ROOT = Path(__file__).resolve().parent.parent
AUDIOSET = ROOT / "configs" / "data" / "audioset"
ONTOLOGY = str(AUDIOSET / "ontology.json")
OMAP = {"name": "omap", "ontology": ONTOLOGY}

with (AUDIOSET / "class_labels_indices.csv").open(newline="", encoding="utf-8") as _handle:
    _ROWS = list(csv.DictReader(_handle))
MIDS = [row["mid"] for row in _ROWS]
NAMES = [row["display_name"] for row in _ROWS]


def tagging(seed: int, n_clips: int = 400, n_classes: int = 60) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Targets with 1..3 labels per clip over the first ``n_classes`` AudioSet classes, and
    correlated scores (rounded: ties)."""
    rng = np.random.default_rng(seed)
    y = np.zeros((n_clips, n_classes))
    for n in range(n_clips):
        y[n, rng.choice(n_classes, rng.integers(1, 4), replace=False)] = 1
    s = np.round(rng.normal(size=y.shape) + 1.5 * y, 2)
    return y, s, MIDS[:n_classes]


def sklearn_ap(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # classes without positives
        return np.array([average_precision_score(y[:, c], s[:, c]) for c in range(y.shape[1])])


def test_evaluate_returns_map_and_omap_as_the_issue_shows():
    y, s, classes = tagging(0)
    out = evalkit.evaluate(y, s, metrics=["map", OMAP], classes=classes)
    assert set(out) == {"map", "omap", "omap_lambda0", "omap_per_level"}
    assert out["map"] == pytest.approx(average_precision_score(y, s, average="macro"), abs=1e-12)
    expected = omap(y, s, load_ontology(ONTOLOGY).distances(classes))
    assert out["omap"] == pytest.approx(expected["omap"], abs=1e-15)
    assert out["omap_lambda0"] == pytest.approx(expected["omap_lambda0"], abs=1e-15)
    np.testing.assert_allclose(out["omap_per_level"], expected["omap_per_level"], rtol=0, atol=1e-15)
    assert ((out["omap_per_level"] >= 0) & (out["omap_per_level"] <= 1)).all()


def test_scores_may_be_any_finite_numbers_for_ranking_metrics():
    y, s, classes = tagging(1)
    probabilities = 1 / (1 + np.exp(-s))  # same ranking as the logits s
    logits = evalkit.evaluate(y, s, metrics=["map", OMAP], classes=classes)
    probs = evalkit.evaluate(y, probabilities, metrics=["map", OMAP], classes=classes)
    assert logits["map"] == pytest.approx(probs["map"], abs=1e-12)
    assert logits["omap"] == pytest.approx(probs["omap"], abs=1e-12)
    # A set metric beside them reads memberships, so out-of-range scores are an error again.
    with pytest.raises(DataError, match=r"outside \[0, 1\]"):
        evalkit.evaluate(y, s, metrics=["map", "f1"], classes=classes)
    s[4, 2] = np.nan
    with pytest.raises(DataError, match=r"NaN or infinite, first at row 5, class '/m/"):
        evalkit.evaluate(y, s, metrics=["map"], classes=classes)


def test_classes_by_name_give_the_same_values_as_by_id():
    y, s, classes = tagging(2, n_classes=30)
    by_id = evalkit.evaluate(y, s, metrics=[OMAP], classes=classes)
    by_name = evalkit.evaluate(y, s, metrics=[OMAP], classes=NAMES[:30])
    assert by_name["omap"] == by_id["omap"]  # the names resolve to the same nodes: the same computation


def test_per_class_values_on_request():
    y, s, classes = tagging(3)
    out = evalkit.evaluate(y, s, metrics=[{"name": "map", "per_class": True}, {**OMAP, "per_class": True}],
                           classes=classes)
    np.testing.assert_allclose(out["map_per_class"], sklearn_ap(y, s), rtol=0, atol=1e-12)
    ap_levels = omap(y, s, load_ontology(ONTOLOGY).distances(classes))["ap_per_level"]
    np.testing.assert_allclose(out["omap_per_class"], ap_levels.mean(axis=0), rtol=0, atol=1e-15)
    assert out["omap"] == pytest.approx(out["omap_per_class"].mean(), abs=1e-12)


@pytest.mark.filterwarnings("ignore:No positive class found")  # scikit-learn's, for the two classes
def test_classes_without_positives_count_as_zero_or_are_skipped():
    y, s, classes = tagging(4, n_classes=20)
    y[:, [5, 9]] = 0
    y[y.sum(axis=1) == 0, 0] = 1  # every clip keeps a label
    zero = evalkit.evaluate(y, s, metrics=["map", OMAP], classes=classes)
    skip = evalkit.evaluate(y, s, metrics=[{"name": "map", "no_positive": "skip"}, {**OMAP, "no_positive": "skip"}],
                            classes=classes)
    # scikit-learn >= 1.2 gives such a class AP 0 and averages over all 20.
    assert zero["map"] == pytest.approx(average_precision_score(y, s, average="macro"), abs=1e-12)
    assert skip["map"] == pytest.approx(zero["map"] * 20 / 18, abs=1e-12)
    assert skip["omap"] == pytest.approx(zero["omap"] * 20 / 18, abs=1e-12)
    per_class = evalkit.evaluate(y, s, metrics=[{"name": "map", "no_positive": "skip", "per_class": True}],
                                 classes=classes)["map_per_class"]
    per_class = per_class.to_numpy()
    assert np.isnan(per_class[[5, 9]]).all() and not np.isnan(np.delete(per_class, [5, 9])).any()


def test_many_chunks_give_the_values_of_one(monkeypatch):
    y, s, classes = tagging(5, n_clips=101)
    whole = evalkit.evaluate(y, s, metrics=["map", OMAP], classes=classes)
    monkeypatch.setattr(evalkit.table, "MAX_CHUNK_ROWS", 7)  # 15 chunks, concatenated in order
    chunked = evalkit.evaluate(y, s, metrics=["map", OMAP], classes=classes)
    assert chunked["map"] == whole["map"] and chunked["omap"] == whole["omap"]  # the same arrays, ranked once


# ----------------------------------------------------------------------------------- errors


def test_unknown_class_suggests_close_names():
    y, s, classes = tagging(6, n_classes=10)
    with pytest.raises(DataError, match=r"metric 'omap', data classes: 1 label.*'Speach' — did you mean 'Speech'"):
        evalkit.evaluate(y, s, metrics=[OMAP], classes=[*classes[:9], "Speach"])


def test_class_list_that_does_not_match_the_score_matrix():
    y, s, classes = tagging(7, n_classes=10)
    with pytest.raises(DataError, match=r"10 unnamed columns but 9 names in `classes`"):
        evalkit.evaluate(y, s, metrics=["map"], classes=classes[:9])


def test_unlabeled_clips_are_an_error_or_skipped():
    y, s, classes = tagging(8)
    y[[3, 17]] = 0
    with pytest.raises(DataError, match=r"metric 'omap': 2 clip\(s\) have no label \(0-based rows 3, 17\).*unlabeled='skip'"):
        evalkit.evaluate(y, s, metrics=[OMAP], classes=classes)
    skipped = evalkit.evaluate(y, s, metrics=[{**OMAP, "unlabeled": "skip"}], classes=classes)
    keep = np.ones(len(y), bool)
    keep[[3, 17]] = False
    # skipping selects the same rows: the same computation
    assert skipped["omap"] == evalkit.evaluate(y[keep], s[keep], metrics=[OMAP], classes=classes)["omap"]


def test_soft_targets_are_an_error_naming_the_class():
    y, s, classes = tagging(9)
    y[10, 4] = 0.6
    with pytest.raises(
        DataError, match=rf"metric 'map': targets must be binary.*clip 10, class 4 \('{classes[4]}'\) \(value 0.6\)"
    ):
        evalkit.evaluate(y, s, metrics=["map"], classes=classes)


def test_disconnected_ontology_is_an_error_or_one_hop_beyond(tmp_path):
    # Two trees: r - a - a1 and q - b; classes a1, a and b.
    (tmp_path / "two.edgelist").write_text("r a\na a1\nq b\n")
    y = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]])
    s = np.array([[0.9, 0.8, 0.1], [0.2, 0.7, 0.6], [0.3, 0.1, 0.8], [0.6, 0.5, 0.7]])
    spec = {"name": "omap", "ontology": str(tmp_path / "two.edgelist")}
    with pytest.raises(DataError, match=r"class 0 \('a1'\) and class 2 \('b'\).*disconnected='max_plus_one'"):
        evalkit.evaluate(y, s, metrics=[spec], classes=["a1", "a", "b"])
    out = evalkit.evaluate(y, s, metrics=[{**spec, "disconnected": "max_plus_one"}], classes=["a1", "a", "b"])
    joined = np.array([[0, 1, 2], [1, 0, 2], [2, 2, 0]], float)  # largest finite distance 1, plus one
    assert out["omap"] == omap(y, s, joined)["omap"]  # the same matrix: the same computation
    assert out["omap_per_level"].shape == (3,)


def test_unknown_omap_parameter_names_the_plugin():
    y, s, classes = tagging(10, n_classes=5)
    with pytest.raises(evalkit.errors.ConfigError, match=r"omap.*no_positives"):
        evalkit.evaluate(y, s, metrics=[{**OMAP, "no_positives": "skip"}], classes=classes)


# ----------------------------------------------------------------------- the bundled config


def test_taggers_config_from_the_cli(root: Path, tmp_path: Path):
    done = evalkit_cli("run", root / "configs" / "taggers.yaml", "--format", "json", "--no-report", check=True)
    rows = json.loads(done.stdout)["rows"]
    value = {(r["system"], r["metric"], r["level"]): r["value"] for r in rows}
    for system in ("near_miss", "far_miss"):
        assert value[(system, "omap_lambda0", None)] == value[(system, "omap_per_level", 0)]
        levels = [value[(system, "omap_per_level", lam)] for lam in range(22)]  # λ = 0 … 21 on AudioSet
        assert value[(system, "omap", None)] == pytest.approx(np.mean(levels), abs=1e-12)
        assert levels[-1] == 1.0  # every class has a positive in this data; no FP costs: n_pos / n_pos
    # The two taggers rank about equally well, but near_miss's mistakes lie close in the ontology.
    assert abs(value[("near_miss", "map", None)] - value[("far_miss", "map", None)]) < 0.02
    assert value[("near_miss", "omap", None)] > value[("far_miss", "omap", None)] + 0.03
    # The terminal table has the per-level difference (Liu et al.'s Figure 3) as a column.
    table = evalkit_cli("run", root / "configs" / "taggers.yaml", "--quiet", "--no-report", check=True).stdout
    assert "far_miss − near_miss" in table


def test_taggers_data_equal_their_generator(root: Path, tmp_path: Path):
    script = root / "configs" / "data" / "make_taggers.py"
    spec = importlib.util.spec_from_file_location("make_taggers", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main([str(tmp_path)])
    committed = root / "configs" / "data" / "taggers"
    for name in ("targets.npz", "near_miss.npz", "far_miss.npz"):
        with np.load(tmp_path / name) as made, np.load(committed / name) as kept:
            assert sorted(made.files) == sorted(kept.files) == ["classes", "ids", "values"]
            for key in made.files:
                np.testing.assert_array_equal(made[key], kept[key], err_msg=f"{name}: {key}")


def test_a_missing_ontology_file_is_reported_by_validate(tmp_path: Path):
    config = tmp_path / "omap.yaml"
    config.write_text(
        "data: {reference: [[1, 0], [0, 1]], systems: {a: [[0.9, 0.2], [0.1, 0.8]]}, classes: [Speech, Music]}\n"
        "metrics: [{name: omap, ontology: no_such_ontology.json}]\n"
    )
    done = evalkit_cli("validate", config)
    assert done.returncode == 1
    assert "no_such_ontology.json" in done.stderr and "does not exist" in done.stderr


@pytest.mark.parametrize("seed", [8, 9])
def test_integer_clip_weights_equal_repeated_clips(seed):
    """A weight of k counts a clip k times, for mAP and OmAP (weight 0 leaves it out)."""
    y, s, classes = tagging(seed, n_clips=120, n_classes=25)
    counts = np.random.default_rng(seed).integers(0, 4, len(y))
    metrics = [{"name": "map", "per_class": True}, {**OMAP, "per_class": True, "unlabeled": "skip"}]
    weighted = evalkit.evaluate(y, s, metrics=metrics, classes=classes, sample_weight=counts)
    repeated = evalkit.evaluate(np.repeat(y, counts, axis=0), np.repeat(s, counts, axis=0), metrics=metrics, classes=classes)
    for key, value in repeated.items():
        np.testing.assert_allclose(np.asarray(weighted[key]), np.asarray(value), rtol=1e-12, atol=1e-15, err_msg=key)


def test_weighted_map_equals_sklearn():
    y, s, classes = tagging(10)
    weights = np.random.default_rng(10).random(len(y)) * 2
    got = evalkit.evaluate(y, s, metrics=["map"], classes=classes, sample_weight=weights)["map"]
    assert got == pytest.approx(average_precision_score(y, s, average="macro", sample_weight=weights), rel=1e-12)
