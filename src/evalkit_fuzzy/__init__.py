"""Soft labels as fuzzy sets, and their thresholded (crisp) counterpart.

Harju & Mesaros, "Evaluating classification systems against soft labels with fuzzy precision
and recall", eq. 2–3: μ_G is the reference, μ_P the prediction, |A| = Σ μ_A and
|G ∩ P| = Σ T(μ_G, μ_P) for a T-norm T (the paper uses the minimum).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import Array, BaseComponent, CardinalityTable, Similarity, TNorm, hookimpl


@hookimpl
def evalkit_register_set_representations(register):
    register(Fuzzy)
    register(Crisp)


class Fuzzy(BaseComponent):
    """Memberships as fuzzy sets: |A| = Σ μ, |G ∩ P| = Σ T(μ_G, μ_P)."""

    name = "fuzzy"
    uses = frozenset({"tnorm"})
    data = "matrix"

    def cardinalities(
        self, reference: Array, prediction: Array, *, tnorm: TNorm | None, similarity: Similarity | None
    ) -> CardinalityTable:
        assert tnorm is not None, "fuzzy uses a T-norm, so evalkit always passes one"
        return CardinalityTable(reference, prediction, tnorm(reference, prediction))


class CrispParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    threshold: float = Field(0.5, description="a value counts as present when above it")
    reference_threshold: float | None = Field(None, description="overrides threshold for the reference")
    prediction_threshold: float | None = Field(None, description="overrides threshold for the prediction")
    inclusive: bool = Field(False, description="use >= instead of >")


class Crisp(BaseComponent[CrispParams]):
    """Hard labels: both sides thresholded (value > 0.5 by default), then counted."""

    name = "crisp"
    uses: ClassVar[frozenset[str]] = frozenset()
    data = "matrix"
    Params = CrispParams

    def __init__(self, params: CrispParams) -> None:
        super().__init__(params)
        self.compare = np.greater_equal if params.inclusive else np.greater

    def binarize(self, values: Array, threshold: float | None) -> Array:
        chosen = self.params.threshold if threshold is None else threshold
        return self.compare(values, chosen).astype(values.dtype)

    def cardinalities(
        self, reference: Array, prediction: Array, *, tnorm: TNorm | None, similarity: Similarity | None
    ) -> CardinalityTable:
        ref = self.binarize(reference, self.params.reference_threshold)
        pred = self.binarize(prediction, self.params.prediction_threshold)
        return CardinalityTable(ref, pred, ref * pred)
