"""Item sets: per sample and class, a list of items (keywords, labels, segments, ...).

The data of representations that compare items by a similarity (soft cardinality, exact and
thresholded matching) rather than memberships.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from evalkit.errors import DataError
from evalkit.loading import check_header, clean_ids, clean_items

Items = tuple[Any, ...]

#: The class of item lists that are not grouped by class.
DEFAULT_CLASS = "items"


@dataclass(frozen=True)
class ItemSets:
    """``samples[i][c]`` is the tuple of items of sample ``i`` in class ``classes[c]``."""

    samples: tuple[tuple[Items, ...], ...]
    classes: tuple[str, ...] = (DEFAULT_CLASS,)
    ids: tuple[str, ...] | None = None
    source: str = "<inline>"

    def __post_init__(self) -> None:
        if self.ids is not None and len(self.ids) != len(self.samples):
            raise DataError(f"{self.source}: {len(self.samples)} samples but {len(self.ids)} ids")
        check_header(self.classes, self.source, what="class")  # a class twice: one would hide the other

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, rows: slice) -> ItemSets:
        ids = self.ids[rows] if self.ids is not None else None
        return replace(self, samples=self.samples[rows], ids=ids)

    def take(self, rows: np.ndarray) -> ItemSets:
        """These samples, in this order; -1 is an empty sample. Ids are dropped (the caller
        knows the new ones)."""
        empty = tuple(() for _ in self.classes)
        return replace(self, samples=tuple(self.samples[r] if r >= 0 else empty for r in rows), ids=None)

    #: A class a system never mentions is an empty set for it, not an error (see evalkit.data.align).
    absent_class_is_empty = True

    def select(self, classes: Sequence[str], fill: bool = False) -> ItemSets:
        """Only ``classes``, in this order; with ``fill``, a class not here gets empty lists."""
        index = {c: i for i, c in enumerate(self.classes)}
        missing = [c for c in classes if c not in index]
        if missing and not fill:
            import difflib

            hints = [
                f"{m!r}" + (f" (did you mean {close[0]!r}?)" if (close := difflib.get_close_matches(m, self.classes, 1)) else "")
                for m in missing
            ]
            raise DataError(f"{self.source}: no class {', '.join(hints)}; it has: {', '.join(self.classes)}")
        rows = tuple(tuple(s[index[c]] if c in index else () for c in classes) for s in self.samples)
        return replace(self, samples=rows, classes=tuple(classes))

    def sample_name(self, row: int) -> str:
        return self.ids[row] if self.ids is not None else f"row {row + 1}"

    def by_sample(self, side: str) -> dict[str, list[Any]]:
        """``{"<side>:<sample>": all its items}``, for similarities that check their vocabulary."""
        return {f"{side}:{self.sample_name(i)}": [x for cell in s for x in cell] for i, s in enumerate(self.samples)}

    @classmethod
    def from_python(
        cls, samples: Any, *, ids: Sequence[Any] | None = None, classes: Sequence[str] | None = None,
        source: str = "<inline>", lines: Sequence[int] | None = None,
    ) -> ItemSets:
        """From a list of samples, each a list of items or a mapping class -> list of items.

        ``lines``, for data read from a file, is the line of each sample: errors name it, and
        the loader rules apply (:mod:`evalkit.loading`: ids and text items stripped, an empty
        item or id refused). Python objects and inline config data are taken as they are."""
        if not isinstance(samples, (list, tuple)):
            raise DataError(
                f"{source}: item data is a list of samples, each a list of items (or a mapping "
                f"class -> items); got {type(samples).__name__}"
            )

        def where(row: int) -> str:
            return f"{source}:{lines[row]}" if lines is not None else f"{source}: sample {row + 1}"

        grouped = any(isinstance(s, dict) for s in samples)
        if grouped:
            names = list(classes or dict.fromkeys(c for s in samples if isinstance(s, dict) for c in s))
            rows = []
            for i, sample in enumerate(samples):
                if not isinstance(sample, dict):
                    raise DataError(
                        f"{where(i)}: the sample is a {type(sample).__name__}; when some samples map classes to "
                        "items, all must"
                    )
                rows.append(tuple(_items(sample.get(c, ()), where(i), lines is not None) for c in names))
        else:
            names = list(classes or [DEFAULT_CLASS])
            if len(names) != 1:
                raise DataError(
                    f"{source}: samples are plain item lists (one class) but {len(names)} classes were given; "
                    "map each class to its items instead"
                )
            rows = [(_items(sample, where(i), lines is not None),) for i, sample in enumerate(samples)]
        if lines is None:
            return cls(tuple(rows), tuple(map(str, names)), None if ids is None else tuple(map(str, ids)), source)
        cleaned = None if ids is None else clean_ids(ids, source, lines)
        return cls(tuple(rows), check_header(names, source, what="class"), cleaned, source)


def _items(items: Any, where: str, rules: bool) -> Items:
    if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple)):
        raise DataError(
            f"{where}: expected a list of items, got {items!r}; write a single item as a one-element list"
        )
    return clean_items(items, where) if rules else tuple(items)
