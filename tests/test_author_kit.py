"""The plugin author kit (evalkit.testing): every built-in passes, and each check catches a
component that breaks its property, with a message naming it."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.discovery import default_registry
from evalkit.errors import DataError
from evalkit.items import ItemSets
from evalkit.protocols import BaseComponent, optional
from evalkit.table import CardinalityTable, Summary
from evalkit.testing import check_averaging, check_data_metric, check_metric, check_representation

REGISTRY = default_registry()
RNG = np.random.default_rng(0)
REF, PRED = RNG.random((30, 4)), RNG.random((30, 4))
WORDS_REF = ItemSets.from_python([["cafe", "coffee"], ["tea"], ["gray", "grey", "color"], []], source="ref")
WORDS_PRED = ItemSets.from_python([["café"], ["tea", "tee"], ["colour"], ["milk"]], source="pred")
EVENTS_REF = ItemSets.from_python([[(0.0, 1.0), (2.0, 3.5)], [(1.0, 2.0)], []], source="ref")
EVENTS_PRED = ItemSets.from_python([[(0.2, 1.1)], [(1.0, 2.0), (4.0, 5.0)], [(0.0, 0.5)]], source="pred")


def create(kind, spec):
    return REGISTRY.create(kind, spec)


@pytest.mark.parametrize("tnorm", REGISTRY.names("tnorm"))
def test_fuzzy_passes_with_every_tnorm(tnorm):
    check_representation(create("representation", "fuzzy"), REF, PRED, tnorm=create("tnorm", tnorm))


def test_crisp_passes_and_per_side_thresholds_need_symmetric_false():
    check_representation(create("representation", "crisp"), REF, PRED)
    one_sided = create("representation", {"name": "crisp", "reference_threshold": 0.3})
    with pytest.raises(
        AssertionError,
        match=r"^representation crisp\(.*reference_threshold=0.3.*\): the reference against itself has \|G\| != \|P\|",
    ):
        check_representation(one_sided, REF, PRED)
    check_representation(one_sided, REF, PRED, symmetric=False)


@pytest.mark.parametrize("name", ["soft_cardinality", "exact_match", "threshold_match", "fuzzy_pr"])
def test_item_representations_pass(name):
    check_representation(create("representation", name), WORDS_REF, WORDS_PRED,
                         similarity=create("similarity", "levenshtein"))


@pytest.mark.parametrize("spec", ["segments", "fuzzy_segments"])
def test_segment_representations_pass(spec):
    tnorm = create("tnorm", "product") if spec == "fuzzy_segments" else None
    check_representation(create("representation", spec), EVENTS_REF, EVENTS_PRED, tnorm=tnorm)


@pytest.mark.parametrize("name", REGISTRY.names("averaging"))
def test_every_builtin_averaging_passes(name):
    check_averaging(create("averaging", name))


@pytest.mark.parametrize("name", [n for n in REGISTRY.names("metric") if hasattr(REGISTRY.entry("metric", n).cls, "ratio")])
def test_every_builtin_set_metric_passes(name):
    metric = create("metric", name)  # cardinalities and error rates (insertions may pass N) are unbounded
    check_metric(metric, bounded=not name.startswith("card_") and not optional(metric, "substitutions"))


# ---------------------------------------------------------------------- broken components


class BatchNormalised(BaseComponent):
    """Divides by the batch total: rows are not independent."""

    name = "batch_normalised"
    uses = frozenset()
    data = "matrix"

    def cardinalities(self, reference, prediction, *, tnorm, similarity):
        scale = reference.sum()
        return CardinalityTable(reference / scale, prediction / scale, np.minimum(reference, prediction) / scale)


class ReferenceFirst(BaseComponent):
    """Intersection = the reference where the prediction is above 0.5: not symmetric."""

    name = "reference_first"
    uses = frozenset()
    data = "matrix"

    def cardinalities(self, reference, prediction, *, tnorm, similarity):
        return CardinalityTable(reference, prediction, reference * (prediction > 0.5))


def test_check_representation_catches_dependent_rows_and_asymmetry():
    with pytest.raises(AssertionError, match=r"^representation batch_normalised: the halves do not give the whole"):
        check_representation(BatchNormalised(BatchNormalised.Params()), REF, PRED)
    with pytest.raises(AssertionError, match=r"^representation reference_first: swapping the sides does not swap"):
        check_representation(ReferenceFirst(ReferenceFirst.Params()), REF, PRED)


class DiceWithoutTwo(BaseComponent):
    """|G ∩ P| / (|G| + |P|): a full overlap gives 1/2."""

    name = "half_dice"

    def ratio(self, ref, pred, inter):
        return inter, ref + pred


class Unbounded(BaseComponent):
    """|G ∩ P| / min(|G|, |P|)^2: above 1 for small sets."""

    name = "unbounded"

    def ratio(self, ref, pred, inter):
        return inter, np.minimum(ref, pred) ** 2


class UnionLoss(BaseComponent):
    """|G ∪ P| / cells, a Hamming loss without the second |G ∩ P|: a full overlap is not 0."""

    name = "union_loss"
    reads_cells = True
    lower_is_better = True

    def ratio(self, ref, pred, inter, cells):
        return ref + pred - inter, cells


def test_check_metric_catches_wrong_values():
    with pytest.raises(AssertionError, match=r"^metric union_loss: a full overlap .* gives \[0\.5, 0\.5, 0\.5\], not 0"):
        check_metric(UnionLoss(UnionLoss.Params()))
    with pytest.raises(AssertionError, match=r"^metric half_dice: a full overlap .* gives \[0\.5, 0\.5, 0\.5\], not 1"):
        check_metric(DiceWithoutTwo(DiceWithoutTwo.Params()))
    with pytest.raises(AssertionError, match=r"^metric unbounded: value outside \[0, 1\] at ref=.*inter="):
        check_metric(Unbounded(Unbounded.Params()))


class IgnoresZeroDivision(BaseComponent):
    """Micro averaging that answers 0 for 0/0 whatever zero_division says."""

    name = "stubborn_micro"

    def sample_metrics(self, metrics):
        return []

    def reduce(self, summary: Summary, metric, zero_division):
        num, den = metric.ratio(summary.ref.sum(), summary.pred.sum(), summary.inter.sum())
        return float(num / den) if den else 0.0


class FirstClassOnly(BaseComponent):
    """The value of class 0: changes when classes are permuted."""

    name = "first_class"

    def sample_metrics(self, metrics):
        return []

    def reduce(self, summary: Summary, metric, zero_division):
        return float(summary.value(metric, zero_division)[0])


def test_check_averaging_catches_zero_division_and_class_order():
    with pytest.raises(
        AssertionError, match=r"^averaging stubborn_micro: precision of an empty table is 0\.0 with zero_division=1\.0"
    ):
        check_averaging(IgnoresZeroDivision(IgnoresZeroDivision.Params()))
    with pytest.raises(AssertionError, match=r"^averaging first_class: precision changes when the classes are permuted"):
        check_averaging(FirstClassOnly(FirstClassOnly.Params()))


class OffByOneGroup:
    """Exact matching, whose batched ``matrices`` scores every group as the first items instead."""

    name = "off_by_one_group"

    def __init__(self, params=None):
        self.params = params

    def matrix(self, xs, ys):
        return np.array([[float(x == y) for y in ys] for x in xs]).reshape(len(xs), len(ys))

    def matrices(self, items, sizes):
        return np.concatenate([self.matrix(items[:k], items[:k]).ravel() for k in sizes])


def test_check_similarity_compares_batched_matrices_with_matrix():
    from evalkit.testing import check_similarity

    with pytest.raises(AssertionError, match=r"^similarity off_by_one_group: matrices\(\) gives 1\.0 where matrix\(\) "
                       r"of each group gives 0\.0"):
        check_similarity(OffByOneGroup(), ["a", "a", "b"])  # its group ["b", "a"] is scored as ["a", "a"]


# ---------------------------------------------------------------------------------------------
# Data metrics
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["kld", "exact_match_ratio", "map", "map_binned", "best_fscore", "auroc"])
def test_every_builtin_matrix_data_metric_passes(name):
    check_data_metric(create("metric", name))


def test_omap_passes_on_audioset_classes():
    from pathlib import Path

    audioset = Path(__file__).resolve().parent.parent / "configs" / "data" / "audioset"
    mids = [line.split(",")[1] for line in (audioset / "class_labels_indices.csv").read_text().splitlines()[1:9]]
    rng = np.random.default_rng(1)
    reference = (rng.random((50, len(mids))) < 0.3).astype(float)
    reference[np.arange(50), rng.integers(0, len(mids), 50)] = 1  # every clip labelled (OmAP needs it)
    prediction = rng.random(reference.shape)
    metric = create("metric", {"name": "omap", "ontology": str(audioset / "ontology.json")})
    with pytest.raises(DataError, match="class_0"):  # the default names are no AudioSet classes
        check_data_metric(metric, reference, prediction)
    check_data_metric(metric, reference, prediction, classes=mids)


class _Mean(BaseComponent):
    """A data metric that breaks one property at a time (``broken``)."""

    name = "mean_match"
    weighted = True
    glossary: dict[str, str] = {}

    def __init__(self, broken: str) -> None:
        self.broken = broken

    def update(self, reference, prediction, weights=None):
        match = (np.abs(reference - prediction) < 0.5).all(axis=1).astype(float)
        if self.broken == "modifies":
            prediction[:] = 0
        if self.broken == "counts chunks":  # the denominator counts chunks, not samples
            return np.array([match.sum(), 1.0])
        w = np.ones(len(match)) if weights is None or self.broken == "ignores weights" else weights
        return np.array([w @ match, w.sum()])

    def compute(self, state):
        value = state[0] / state[1]
        if self.broken == "bare array":
            return {"mean_match": np.array([value, value])}
        if self.broken == "no glossary":
            return {"mean_match": value, "mean_match_ratio": value}
        return value


@pytest.mark.parametrize("broken,message", [
    ("counts chunks", r"the states of 2 chunks merged by \+ \(in this order\) give mean_match = "),
    ("bare array", r"compute\(\) returned a bare array for 'mean_match'; wrap it in PerClass or PerLevel"),
    ("no glossary", r"result 'mean_match_ratio' has no glossary line"),
    ("ignores weights", r"integer weights \(against each sample repeated as many times; 0 left out\) give"),
    ("modifies", r"update\(\) modified its input arrays"),
])
def test_check_data_metric_catches_each_broken_property(broken, message):
    with pytest.raises(AssertionError, match=rf"^data metric mean_match: {message}"):
        check_data_metric(_Mean(broken))


def test_a_correct_weighted_data_metric_passes():
    check_data_metric(_Mean("nothing"))
