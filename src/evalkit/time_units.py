"""A system's event times in another unit than the reference's (milliseconds beside seconds,
frames beside seconds) overlap nothing and score near zero without any error: this notices.

The check compares the latest event time of each side: when one is more than
:data:`UNIT_RATIO` times the other, the note asks whether the units differ. A real system does
not predict events a hundred times past the end of the longest reference file.
"""

from __future__ import annotations

import numpy as np

from evalkit.items import Intervals, ItemSets
from evalkit.score_series import ScoreSeries

#: How many times later than the other side's latest event one side's latest may be.
UNIT_RATIO = 100.0


def latest_time(data: ItemSets) -> float | None:
    """The latest offset among the segments (``(onset, offset)`` pairs) of ``data``; None when
    it holds no segments (keywords, labels)."""
    if isinstance(data.samples, (Intervals, ScoreSeries)):
        return data.samples.latest_end()
    first = next((item for sample in data.samples for items in sample for item in items), None)
    if not (isinstance(first, tuple) and len(first) == 2):  # keywords, labels: no times (a sample's items are of a kind)
        return None
    offsets = [
        item[1]
        for sample in data.samples
        for items in sample
        for item in items
        if isinstance(item, tuple) and len(item) == 2
    ]
    if not offsets:
        return None
    try:
        return float(np.max(np.asarray(offsets, dtype=np.float64)))
    except (TypeError, ValueError):  # pairs of strings, not times
        return None


def time_unit_note(ref: float | None, pred: float | None, system: str) -> str | None:
    """A note when ``system``'s event times look like another unit than the reference's, from
    the latest event end of each (:func:`latest_time`, over all the data)."""
    if ref is None or pred is None or ref <= 0 or pred <= 0:
        return None
    if pred > UNIT_RATIO * ref:
        direction = f"reach {pred:g}, more than {UNIT_RATIO:g}× the reference's latest event end ({ref:g})"
    elif ref > UNIT_RATIO * pred:
        direction = f"end by {pred:g}, less than 1/{UNIT_RATIO:g} of the reference's latest event end ({ref:g})"
    else:
        return None
    return (
        f"{system}: event times {direction}; are they in another unit (milliseconds or frames, not "
        "seconds)? Events in different units hardly overlap"
    )
