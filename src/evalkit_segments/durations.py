"""Clip durations, as DCASE ships them (``durations.tsv``: columns filename and duration): where
each file's time axis ends, for the metrics that cut their grid there (sed_scores_eval's
``audio_durations``)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from evalkit.plugin import DataError


class Durations:
    """``{filename: seconds}`` read from a table with columns filename and duration; a file is
    found by its name or by its name without the extension on either side (``a.wav`` and ``a``),
    as sed_scores_eval keys files by the name without it."""

    def __init__(self, path: Any, who: str) -> None:
        self.source, self.who = str(path), who
        self.seconds = _read(path, who)
        stems: dict[str, float] = {}
        for name, seconds in self.seconds.items():
            stems.setdefault(_stem(name), seconds)
        self.by_stem = stems

    def of(self, names: Sequence[str]) -> np.ndarray:
        """The duration of each named file; a file without one is an error naming it."""
        found = np.empty(len(names))
        for row, name in enumerate(names):
            seconds = self.seconds.get(name, self.by_stem.get(_stem(name)))
            if seconds is None:
                raise DataError(
                    f"{self.who}: file {name!r} has no duration in {self.source}; add a row "
                    f"'{name}<TAB>seconds' there (every evaluated file needs one)"
                )
            found[row] = seconds
        return found


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0]


def _read(path: Any, who: str) -> dict[str, float]:
    import pandas as pd  # type: ignore[import-untyped]

    try:
        with open(path, encoding="utf-8-sig") as handle:
            header = handle.readline()
    except OSError as exc:
        raise DataError(f"{who} durations: cannot read {path} ({exc.strerror or exc})") from None
    try:
        with warnings.catch_warnings():  # a row of more fields than the header: an error, not a dropped field
            warnings.simplefilter("error", pd.errors.ParserWarning)
            table = pd.read_csv(path, sep="\t" if "\t" in header else ",", dtype=str, keep_default_na=False,
                                index_col=False, encoding="utf-8-sig")
    except (pd.errors.ParserError, pd.errors.ParserWarning, UnicodeDecodeError) as exc:
        raise DataError(f"{who} durations: {path} is not a table of filename and duration ({exc})") from None
    table.columns = [str(c).strip().lower() for c in table.columns]
    if not {"filename", "duration"} <= set(table.columns):
        raise DataError(f"{path}:1: columns {', '.join(table.columns)}; a durations table has the columns filename and duration")
    seconds = pd.to_numeric(table["duration"], errors="coerce").to_numpy(np.float64)
    bad = np.flatnonzero(~np.isfinite(seconds) | (seconds <= 0))
    if bad.size:
        k = bad[0]
        raise DataError(
            f"{path}:{k + 2}: duration {table['duration'].iloc[k].strip()!r} of {table['filename'].iloc[k].strip()!r} "
            "is not a positive number of seconds"
        )
    names = table["filename"].str.strip()
    twice = names[names.duplicated()]
    if len(twice):
        raise DataError(f"{path}:{twice.index[0] + 2}: {twice.iloc[0]!r} is listed twice")
    return dict(zip(names, seconds.tolist()))
