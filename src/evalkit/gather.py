"""Samples held as columns (one entry per event or frame, tagged with its sample): taking some
samples, in a new order, each as often as asked (a bootstrap resample repeats samples)."""

from __future__ import annotations

import numpy as np


def gather(sample: np.ndarray, n_samples: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(entries, new sample of each) for the samples ``rows`` (-1: an empty sample), each
    sample's entries in their order."""
    rows = np.asarray(rows, np.int64)
    order = np.argsort(sample, kind="stable")  # entries grouped by sample, in order within one
    counts = np.bincount(sample, minlength=n_samples)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    lengths = np.where(rows >= 0, counts[np.maximum(rows, 0)] if n_samples else 0, 0)
    new_sample = np.repeat(np.arange(len(rows)), lengths)
    first = np.repeat(np.where(rows >= 0, starts[np.maximum(rows, 0)] if n_samples else 0, 0), lengths)
    within = np.arange(len(new_sample)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return order[first + within], new_sample
