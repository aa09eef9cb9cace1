"""Set metrics as ratios of the three cardinalities, and data metrics on the raw memberships
(KL divergence, exact match): the metric components a config names. (:mod:`evalkit.metrics`
is another thing: scikit-learn-shaped functions for Python callers.)

Precision, recall and F as in Harju & Mesaros, "Evaluating classification systems against soft
labels with fuzzy precision and recall", eq. 1; Jaccard = |G∩P| / (|G| + |P| − |G∩P|); the
Hamming loss = |G △ P| / cells with the fuzzy symmetric difference |G| + |P| − 2|G∩P|.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import Array, BaseComponent, hookimpl


@hookimpl
def evalkit_register_metrics(register):
    for cls in (Precision, Recall, F1, FBeta, Jaccard, HammingLoss, KLDivergence, ExactMatch, *CARDINALITIES, *ERROR_RATES):
        register(cls)


class Precision(BaseComponent):
    """|G ∩ P| / |P|: how much of the prediction is in the reference."""

    name = "precision"

    def ratio(self, ref: Array, pred: Array, inter: Array) -> tuple[Array, Array]:
        return inter, pred


class Recall(BaseComponent):
    """|G ∩ P| / |G|: how much of the reference is predicted."""

    name = "recall"

    def ratio(self, ref: Array, pred: Array, inter: Array) -> tuple[Array, Array]:
        return inter, ref


class F1(BaseComponent):
    """2 |G ∩ P| / (|G| + |P|): the harmonic mean of precision and recall."""

    name = "f1"

    def ratio(self, ref: Array, pred: Array, inter: Array) -> tuple[Array, Array]:
        return 2 * inter, ref + pred


class FBetaParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    beta: float = Field(
        1.0, gt=0, le=1e6, allow_inf_nan=False,
        description="weight of recall over precision; F tends to recall as beta grows (at 1e6 they agree to 12 digits), "
        "and beyond it beta squared times the counts would overflow",
    )


class FBeta(BaseComponent[FBetaParams]):
    """(1 + β²) |G ∩ P| / (β² |G| + |P|): recall weighted β times as much as precision."""

    name = "fbeta"
    Params = FBetaParams

    def ratio(self, ref: Array, pred: Array, inter: Array) -> tuple[Array, Array]:
        beta2 = self.params.beta**2
        return (1 + beta2) * inter, beta2 * ref + pred


class Jaccard(BaseComponent):
    """|G ∩ P| / (|G| + |P| − |G ∩ P|): intersection over union."""

    name = "jaccard"

    def ratio(self, ref: Array, pred: Array, inter: Array) -> tuple[Array, Array]:
        # Clipped at 0: rounding may leave |G| + |P| − |G∩P| a hair below zero when all are ~0.
        return inter, np.maximum(ref + pred - inter, 0)


class HammingLoss(BaseComponent):
    """(|G| + |P| − 2|G ∩ P|) / cells: the share of (sample, class) cells where the sets differ.

    |G| + |P| − 2|G ∩ P| is the (fuzzy) symmetric difference; on binary memberships it counts
    the cells that differ (scikit-learn's ``hamming_loss``), with the minimum T-norm it is
    Σ |μG − μP|. Lower is better.
    """

    name = "hamming_loss"
    reads_cells = True
    lower_is_better = True

    def ratio(self, ref: Array, pred: Array, inter: Array, cells: Array) -> tuple[Array, Array]:
        # Clipped at 0: rounding may leave the difference a hair below zero when the sets agree.
        return np.maximum(ref + pred - 2 * inter, 0), cells


def _cardinality(name: str, summary: str, value) -> type:
    """A metric that reports a cardinality itself (as the ratio value / 1)."""

    def ratio(self, ref: Array, pred: Array, inter: Array) -> tuple[Array, Array]:
        return value(ref, pred, inter), np.ones_like(ref)

    doc = (
        f"{summary}, summed over the averaging's unit: the whole data (micro), a class (macro, "
        "none) or a sample (samples), then averaged as usual."
    )
    attributes = {"name": name, "__doc__": doc, "ratio": ratio, "reads_cardinalities": True}
    return type(name.title().replace("_", ""), (BaseComponent,), attributes)


#: The cardinalities themselves, e.g. to check a paper's table: card(G), card(P), card(G ∪ P),
#: card(G ∩ P); with one sample and one class they are exactly that sample's values.
CARDINALITIES = (
    _cardinality("card_ref", "|G|, the reference's cardinality", lambda ref, pred, inter: ref),
    _cardinality("card_pred", "|P|, the prediction's cardinality", lambda ref, pred, inter: pred),
    _cardinality("card_union", "|G ∪ P| = |G| + |P| − |G ∩ P|", lambda ref, pred, inter: ref + pred - inter),
    _cardinality("card_inter", "|G ∩ P|, the intersection's cardinality", lambda ref, pred, inter: inter),
)


class KLDParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    eps: float = Field(1e-7, gt=0, lt=0.5, description="both sides are clipped to [eps, 1 - eps]")


class KLDivergence(BaseComponent[KLDParams]):
    """Mean binary KL(y ‖ ŷ) over all cells, reference first, natural log.

    KL = y ln(y/ŷ) + (1−y) ln((1−y)/(1−ŷ)) with y and ŷ clipped to [eps, 1−eps] (eps = 1e-7),
    as Harju & Mesaros report beside soft F. Lower is better; it ignores T-norm and averaging.
    """

    name = "kld"
    Params = KLDParams
    lower_is_better = True  # rank agreement orients it against the set metrics
    weighted = True

    def update(self, reference: Array, prediction: Array, weights: Array | None = None) -> Array:
        eps = self.params.eps
        y = np.clip(reference, eps, 1 - eps, dtype=np.float64)
        p = np.clip(prediction, eps, 1 - eps, dtype=np.float64)
        kl = y * np.log(y / p) + (1 - y) * np.log((1 - y) / (1 - p))
        if weights is None:
            return np.array([kl.sum(), kl.size], dtype=np.float64)
        return np.array([weights @ kl.sum(axis=1), weights.sum() * kl.shape[1]], dtype=np.float64)

    def compute(self, state: Array) -> float:
        total, count = state
        return float(total / count) if count else float("nan")


class ExactMatch(BaseComponent):
    """The share of samples whose memberships all agree (the exact match ratio), fuzzily: the
    mean over samples of min over classes of 1 − |μG − μP|.

    1 − |μG − μP| is the Łukasiewicz equivalence of the two memberships (1 when equal) and the
    minimum is the Gödel "for every class", so a sample scores its worst class; on binary
    memberships this is 1 for a sample that matches exactly, else 0 (scikit-learn's
    ``accuracy_score`` on multi-label data). It ignores T-norm and averaging.
    """

    name = "exact_match_ratio"
    weighted = True

    def update(self, reference: Array, prediction: Array, weights: Array | None = None) -> Array:
        gap = np.abs(np.asarray(reference, dtype=np.float64) - np.asarray(prediction, dtype=np.float64))
        match = 1 - gap.max(axis=1, initial=0.0)
        if weights is None:
            return np.array([match.sum(), len(match)], dtype=np.float64)
        return np.array([weights @ match, weights.sum()], dtype=np.float64)

    def compute(self, state: Array) -> float:
        total, count = state
        return float(total / count) if count else float("nan")


def _error_rate(name: str, summary: str, coefficient: int, value) -> type:
    """An error rate of Mesaros, Heittola & Virtanen, "Metrics for polyphonic sound event
    detection" (2016): a count over the reference's cardinality, with ``coefficient`` times the
    substitutions S in its numerator (see the optional member ``substitutions``)."""

    def ratio(self, ref: Array, pred: Array, inter: Array) -> tuple[Array, Array]:
        # Clipped at 0: rounding may leave |G| − |G ∩ P| a hair below zero.
        return value(np.maximum(ref - inter, 0), np.maximum(pred - inter, 0)), ref

    doc = (
        f"{summary}, over |G|. With FN = |G| − |G ∩ P|, FP = |P| − |G ∩ P| and a sample's "
        "substitutions S = min(FN, FP) over its classes (or the unit the representation gives: one "
        "segment of sed_eval's grid), summed: micro and samples averagings take S as sed_eval's "
        "overall rates do; per class (macro, weighted, none, macro_pr) there are none, as in sed_eval's "
        "class-wise rates, so the substitution rate has no value there. Soft under fuzzy representations; "
        "on binary data equal to the hard rate. Lower is better."
    )
    attributes = {
        "name": name, "__doc__": doc, "ratio": ratio, "substitutions": coefficient, "reads_cardinalities": True,
        "lower_is_better": True,
    }
    return type(name.title().replace("_", ""), (BaseComponent,), attributes)


#: ER = (S + D + I) / N and its parts: S = min(FN, FP), D = FN − S, I = FP − S per unit.
ERROR_RATES = (
    _error_rate("error_rate", "ER = (S + D + I) = FN + FP − S", -1, lambda fn, fp: fn + fp),
    _error_rate("substitution_rate", "S, the substitutions (none within a class, so no class-wise value)", 1,
                lambda fn, fp: np.zeros_like(fn)),
    _error_rate("deletion_rate", "D = FN − S, the deletions", -1, lambda fn, fp: fn),
    _error_rate("insertion_rate", "I = FP − S, the insertions", -1, lambda fn, fp: fp),
)
