"""The collar similarity of two events: sed_eval's onset and offset collars, hard or graded.

Two events of one class match under sed_eval's event-based rule when their onsets are within
``t_collar`` and (with ``evaluate_offset``) their offsets within max(``t_collar``,
``percentage_of_length`` × the event's length). As a similarity that is 1 or 0. Graded
(``ramp`` > 0), the credit of each boundary falls linearly from 1 at the collar to 0 at the
collar plus ``ramp``, and the similarity is the smaller of the two credits (both boundaries
must hold: Gödel's "and"), so soft cardinality and Crisp* give partial credit to an event that
misses the collar by a little. The offset collar takes the longer event's length, which makes
the similarity symmetric (sed_eval takes the reference event's).
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import Array
from evalkit_segments.intervals import IntervalSimilarity


class CollarParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    t_collar: float = Field(0.2, ge=0, allow_inf_nan=False, description="seconds a boundary may be off for full credit")
    percentage_of_length: float = Field(
        0.5, ge=0, allow_inf_nan=False,
        description="an offset may be off by this share of the longer event's length, when more than t_collar",
    )
    evaluate_offset: bool = Field(True, description="offsets must match too")
    ramp: float = Field(
        0.0, ge=0, allow_inf_nan=False,
        description="seconds past the collar over which the credit falls from 1 to 0 (0: the hard collar, 1 or 0)",
    )


class Collar(IntervalSimilarity[CollarParams]):
    """Onset and offset collars as a similarity of two events (``(onset, offset)`` items)."""

    name = "collar"
    symmetric = True
    Params = CollarParams

    def _similarity(self, on_a: Array, off_a: Array, on_b: Array, off_b: Array) -> Array:
        p = self.params
        credit = self._credit(np.abs(on_a - on_b), p.t_collar)
        if p.evaluate_offset:
            longer = np.maximum(off_a - on_a, off_b - on_b)
            offset_collar = np.maximum(p.t_collar, p.percentage_of_length * longer)
            credit = np.minimum(credit, self._credit(np.abs(off_a - off_b), offset_collar))
        return credit

    def _credit(self, distance: Array, collar: Array | float) -> Array:
        """1 within the collar, then falling linearly to 0 over ``ramp`` (at once when 0)."""
        beyond = distance - collar
        if self.params.ramp == 0:
            return (beyond <= 0).astype(np.float64)
        with np.errstate(over="ignore"):  # a ramp of a few ulps overflows to -inf: no credit, as meant
            return np.clip(1 - beyond / self.params.ramp, 0.0, 1.0)
