"""Event-based matching with collars, as sed_eval's ``EventBasedMetrics`` counts events.

Mesaros, Heittola & Virtanen, "Metrics for polyphonic sound event detection" (2016), §2.2: a
system event is correct when its label is the reference event's and its onset is within
``t_collar`` of the reference onset (and, when offsets count, its offset within
max(``t_collar``, ``percentage_of_length`` × the reference event's length) of the reference
offset). With ``time_decimals``, |distance| − collar is rounded before the comparison, as
sed_scores_eval's collar-based metrics compare it (Ebbers et al., "Threshold independent
evaluation of sound event detection scores", 2022). Events are matched one to one, as many as
possible (a maximum bipartite matching per file and class). |G| and |P| are the numbers of
reference and system events of a (file, class) cell, |G ∩ P| the number matched. Events are
counted as listed: overlapping events of one class are not merged here.

Substitutions (for the error rates): among the events left unmatched in a file, a reference
event and a system event of different labels whose times match, paired in list order as
sed_eval pairs them.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import BaseComponent, CardinalityTable, ItemSets, Similarity, TNorm
from evalkit_segments.intervals import THRESHOLD, cell_intervals


class EventBasedParams(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    t_collar: float = Field(0.2, ge=0, allow_inf_nan=False, description="seconds an onset (or offset) may be off")
    percentage_of_length: float = Field(
        0.5, ge=0, allow_inf_nan=False,
        description="an offset may be off by this share of the reference event's length, when more than t_collar",
    )
    evaluate_onset: bool = Field(True, description="onsets must match")
    evaluate_offset: bool = Field(True, description="offsets must match")
    time_decimals: int | None = Field(
        None, ge=0, le=15,
        description="round |distance| − collar to this many decimals before comparing it with 0, as "
        "sed_scores_eval's collar-based metrics do (6 there), so a distance a rounding error past the collar "
        "still matches (none: compare exactly, as sed_eval does)",
    )
    threshold: float | None = THRESHOLD


class EventBased(BaseComponent[EventBasedParams]):
    """Events matched one to one when labels agree and onsets (and offsets) fall within the
    collars: sed_eval's event-based counts (Nref, Nsys, Ntp) per file and class."""

    name = "event_based"
    uses: ClassVar[frozenset[str]] = frozenset()
    data = "items"
    Params = EventBasedParams

    def cardinalities(
        self, reference: ItemSets, prediction: ItemSets, *, tnorm: TNorm | None, similarity: Similarity | None
    ) -> CardinalityTable:
        shape = (len(reference), len(reference.classes))
        n = shape[0] * shape[1]
        ref, sys = cell_intervals(reference), cell_intervals(prediction, self.params.threshold)
        ref_i, sys_i = self._pairs(ref, sys, ref[0], sys[0])
        matched = maximum_matching(ref_i, sys_i, len(ref[0]), len(sys[0]))
        counts = (np.bincount(ref[0], minlength=n), np.bincount(sys[0], minlength=n),
                  np.bincount(ref[0][matched >= 0], minlength=n))
        card_ref, card_pred, inter = (c.astype(np.float64).reshape(shape) for c in counts)
        return CardinalityTable(  # substitutions made only when an error rate asks for them
            card_ref, card_pred, inter, substitutions=lambda: self._substitutions(ref, sys, matched, shape),
        )

    def _pairs(self, ref: tuple, sys: tuple, ref_key: np.ndarray, sys_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every (reference, system) pair of events with the same key whose times match, in
        reference then system list order."""
        order = np.argsort(sys_key, kind="stable")
        low, high = np.searchsorted(sys_key[order], ref_key, "left"), np.searchsorted(sys_key[order], ref_key, "right")
        count = high - low
        ref_i = np.repeat(np.arange(len(ref_key)), count)
        starts = np.repeat(low - (np.cumsum(count) - count), count)
        sys_i = order[np.arange(count.sum()) + starts]
        keep = self._times_match(ref[1][ref_i], ref[2][ref_i], sys[1][sys_i], sys[2][sys_i])
        return ref_i[keep], sys_i[keep]

    def _times_match(self, ref_on: Any, ref_off: Any, sys_on: Any, sys_off: Any) -> np.ndarray:
        p = self.params
        ok = np.ones(len(ref_on), dtype=bool)
        if p.evaluate_onset:
            ok &= self._within(np.abs(ref_on - sys_on), p.t_collar)
        if p.evaluate_offset:
            ok &= self._within(np.abs(ref_off - sys_off), np.maximum(p.t_collar, p.percentage_of_length * (ref_off - ref_on)))
        return ok

    def _within(self, distance: np.ndarray, collar: Any) -> np.ndarray:
        """distance − collar ≤ 0, which is distance ≤ collar exactly (IEEE subtraction keeps the
        sign), or rounded to ``time_decimals`` first (sed_scores_eval's
        ``round(|dist| - collar, time_decimals) <= 0``)."""
        beyond = distance - collar
        if self.params.time_decimals is not None:
            beyond = np.round(beyond, self.params.time_decimals)
        return beyond <= 0

    def _substitutions(self, ref: tuple, sys: tuple, matched: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
        """Per file, unmatched reference events paired in list order with the first unmatched
        system event (any label) whose times match, each system event once."""
        left_ref = np.flatnonzero(matched < 0)
        used = np.zeros(len(sys[0]), dtype=bool)
        used[matched[matched >= 0]] = True
        left_sys = np.flatnonzero(~used)
        sub_ref = (ref[0][left_ref], ref[1][left_ref], ref[2][left_ref])
        sub_sys = (sys[0][left_sys], sys[1][left_sys], sys[2][left_sys])
        ref_i, sys_i = self._pairs(sub_ref, sub_sys, sub_ref[0] // shape[1], sub_sys[0] // shape[1])
        taken_ref, taken_sys = set(), set()
        for r, s in zip(ref_i.tolist(), sys_i.tolist()):  # in list order: a greedy pairing, as sed_eval's
            if r not in taken_ref and s not in taken_sys:
                taken_ref.add(r)
                taken_sys.add(s)
        files = sub_ref[0][sorted(taken_ref)] // shape[1] if taken_ref else np.zeros(0, np.int64)
        return np.bincount(files, minlength=shape[0]).astype(np.float64)


def maximum_matching(ref_i: np.ndarray, sys_i: np.ndarray, n_ref: int, n_sys: int) -> np.ndarray:
    """For each reference event, the system event it is matched to (-1: none), in a maximum
    one-to-one matching of the candidate pairs (Hopcroft–Karp, scipy)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    if not len(ref_i):
        return np.full(n_ref, -1, dtype=np.int64)
    graph = csr_matrix((np.ones(len(ref_i)), (ref_i, sys_i)), shape=(n_ref, n_sys))
    return np.asarray(maximum_bipartite_matching(graph, perm_type="column"), dtype=np.int64)
