"""Average precision, ontology-aware mAP (OmAP) and OBCE loss weights, in vectorized numpy.

Liu et al. (2023, "Ontology-aware learning and evaluation for audio tagging") re-weight the false
positives of each class's precision-recall curve by how far, in hops of the class ontology, the
false positive lies from the clip's true labels (eq. 3–6), at every "coarse-grained level"
λ = 0 … D_max, and train with an ontology-weighted BCE (Algorithm 1, OBCE). Their text leaves
several conventions open; :func:`omap` follows the authors' public implementation
(github haoheliu/ontology-aware-audio-tagging, ``loss_and_eval_metric.py``) as established on
synthetic inputs and written down in ``liu-2023-omap-reference-conventions.md``:

1. Levels λ ∈ {0, 1, …, ⌊D_max⌋}, D_max the largest distance (22 levels on AudioSet).
2. M^λ = D where D > λ, else 0; μ^λ = the mean of the **off-diagonal** cells of M^λ (the sum
   divided by C(C − 1)), recomputed at each level; W^λ = M^λ / μ^λ, or M^λ itself when
   μ^λ ≤ 1e-9 (then M^λ is all zero: the coarsest level).
3. w^λ[n, c] = min over the clip's labels k of W^λ[k, c] (0 for a positive, since D[c, c] = 0).
4. AP per class and level: scikit-learn's step sum Σ (R_t − R_{t−1}) P_t over one threshold per
   distinct score (tied scores form one group), TP unweighted, FP = Σ w^λ over the negatives
   scoring at or above the threshold, P = TP / (TP + FP), R = TP / (number of positives).
5. OmAP^λ = mean of the per-class AP over all C classes; OmAP = mean over the ⌊D_max⌋ + 1 levels
   (the paper's eq. 3 divides by D_max; the code, and evalkit, by the number of levels).

Consequences worth knowing: OmAP^0 is already distance-weighted (W^0 = D / mean(D)), so it is
not plain mAP; at the coarsest level every FP weight is 0 and each class with a positive gets
AP = 1.

Where the authors' code is undefined or broken, evalkit does this instead (each is tested):

* A class with no positive clip: AP = 0, scikit-learn >= 1.2's value (the code reads
  uninitialised memory, scikit-learn 1.1's bug); ``no_positive="skip"`` averages over the classes
  with at least one positive instead.
* A clip with no label: its FP weight (a minimum over an empty set) is undefined, so by default a
  ``ValueError`` names the clips; ``unlabeled="skip"`` drops them from every class.
* Non-binary targets, non-finite scores: ``ValueError`` (the code loops forever on them).
* Infinite distances (a disconnected ontology): ``ValueError`` by default;
  ``disconnected="max_plus_one"`` replaces every ∞ by (largest finite distance) + 1 and then
  applies the conventions unchanged to that matrix — as if the components were joined one hop
  beyond the farthest connected pair. D_max is then the finite maximum + 1: one level more than
  the finite distances give, at which only false positives in another component still count;
  the last level keeps its meaning "every FP weight is 0".
* Nothing is cached between calls (the code caches weights on disk keyed only by shape).

How it is fast (20,000 clips × 527 classes × 22 levels in 0.4 s on 2 cores, a third of the time
scikit-learn takes for plain macro mAP; see docs/benchmarks.md):

* Each class's score ordering is computed once (one argsort of the (C, N) transposed scores;
  unstable, since tied scores are grouped anyway) and shared by every level; precision is only
  needed at the ends of the tie groups that contain a positive ("queries", at most as many as
  positives).
* The per-clip minimum distance to the clip's labels is computed once, as an index into the
  sorted distinct distances u_0 = 0 < u_1 < … (min over labels of M^λ[k, c] is 0 if
  d_min[n, c] <= λ, else d_min[n, c]; so one (N, C) matrix d_min serves every level). It is
  gathered label slot by label slot: O(total labels × C).
* The negatives between consecutive queries of a class form a segment; one ``bincount`` counts,
  per segment, the negatives at each distinct distance. A cumulative sum of these (K × V) integer
  counts within each class and a product with the (V × L) matrix u_t · [u_t > λ] gives the FP
  numerator of every query at every level at once. Counts are exact integers, so the only
  rounding is that of a V-term dot product and one division by μ^λ.
* Clip weights (``weights``) replace the counts by sums of weights: the same steps, except that
  the cumulative sums within a class are a segmented scan (:func:`_class_cumsum`) rather than
  one running sum over all classes less each class's start, whose difference would carry the
  rounding of every class before (so each class's values do not depend on the other columns).
  Weights of 1 give bit for bit the unweighted values; a weight of 0 is a clip left out.

The OBCE weights (:func:`obce_weights`) implement the paper's Algorithm 1 literally; see there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypedDict

import numpy as np

__all__ = ["average_precision", "obce_weights", "omap"]

#: μ^λ at or below this is treated as zero (no division), as in the authors' ``mask_weight``.
MU_EPS = 1e-9

_MAX_LISTED = 10  # offending indices quoted in an error message


class OMAPResult(TypedDict):
    """What :func:`omap` returns (a dict), with the type of each entry."""

    omap: float
    omap_lambda0: float
    omap_per_level: np.ndarray
    ap_per_level: np.ndarray


# ------------------------------------------------------------------------------- validation


def _indices_text(index: np.ndarray) -> str:
    listed = ", ".join(str(int(i)) for i in index[:_MAX_LISTED])
    more = f", … ({index.size} in all)" if index.size > _MAX_LISTED else ""
    return listed + more


def _class_text(c: int, classes: Sequence[str] | None) -> str:
    return f"class {c}" if classes is None else f"class {c} ({classes[c]!r})"


def _check_targets(targets: object, classes: Sequence[str] | None = None) -> np.ndarray:
    """A boolean (N, C) copy of ``targets``; anything but 0/1 (or bool) values is an error.

    Why strict: a soft or multi-valued target silently changes what "positive" means, and the
    authors' code loops forever on one. ``classes`` names the columns in messages.
    """
    y = np.asarray(targets)
    if y.ndim != 2:
        raise ValueError(f"targets must be a 2-D (clips, classes) array, got shape {y.shape}")
    if 0 in y.shape:
        raise ValueError(f"targets must have at least one clip and one class, got shape {y.shape}")
    if y.dtype == bool:
        return y
    if not (np.issubdtype(y.dtype, np.number)):
        raise ValueError(f"targets must be binary (bool or 0/1 numbers), got dtype {y.dtype}")
    bad = ~((y == 0) | (y == 1))
    if bad.any():
        n, c = np.argwhere(bad)[0]
        raise ValueError(
            f"targets must be binary (0/1 or bool): {int(bad.sum())} cell(s) are neither 0 nor 1, "
            f"the first at clip {n}, {_class_text(c, classes)} (value {float(y[n, c]):g}); binarize soft "
            "labels first, e.g. targets >= 0.5"
        )
    return y == 1


def _check_scores(scores: object, shape: tuple[int, int], classes: Sequence[str] | None = None) -> np.ndarray:
    """``scores`` as a float array of the targets' shape; NaN or ±inf is an error.

    Why: scikit-learn rejects non-finite scores too, and a NaN has no place in a ranking.
    Floating inputs keep their dtype (a float32 matrix sorts twice as fast, and the ranking and
    ties are those of the values given); anything else becomes float64.
    """
    s = np.asarray(scores)
    if not np.issubdtype(s.dtype, np.floating):
        s = s.astype(np.float64)
    if s.shape != shape:
        raise ValueError(f"scores have shape {s.shape} but targets have shape {shape}")
    finite = np.isfinite(s)
    if not finite.all():
        n, c = np.argwhere(~finite)[0]
        raise ValueError(
            f"scores must be finite: {int((~finite).sum())} cell(s) are NaN or infinite, the first "
            f"at clip {n}, {_class_text(c, classes)} (value {float(s[n, c]):g})"
        )
    return s


def _check_weights(weights: object, n_clips: int) -> np.ndarray | None:
    """Clip weights as float64, one per clip, finite and >= 0 (None: every clip counts once)."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.shape != (n_clips,):
        raise ValueError(f"{w.size} weights for {n_clips} clips")
    if not (np.isfinite(w) & (w >= 0)).all():
        raise ValueError("clip weights must be finite and >= 0")
    return w


def _check_distances(
    distances: object, n_classes: int, disconnected: Literal["error", "max_plus_one"],
    classes: Sequence[str] | None = None,
) -> np.ndarray:
    """A float64 (C, C) hop-count matrix, validated, with ∞ handled per ``disconnected``.

    Why these checks: the conventions assume a symmetric matrix with a zero diagonal (the
    distance of a class to itself); an asymmetric one usually means a directed graph was
    traversed, which the paper's "smallest number of edges" in an undirected graph rules out.
    """
    d = np.array(distances, dtype=np.float64)  # a copy: ∞ may be replaced below
    if d.shape != (n_classes, n_classes):
        raise ValueError(
            f"distances must be a ({n_classes}, {n_classes}) matrix (one row and column per score "
            f"column), got shape {d.shape}"
        )
    if np.isnan(d).any():
        raise ValueError("distances contain NaN")
    if (d < 0).any():
        raise ValueError("distances must be non-negative hop counts")
    if np.diagonal(d).any():
        bad = np.flatnonzero(np.diagonal(d))
        raise ValueError(f"distances must have a zero diagonal; classes {_indices_text(bad)} do not")
    if not np.array_equal(d, d.T):
        i, j = np.argwhere(d != d.T)[0]
        raise ValueError(
            f"distances must be symmetric (hops in the undirected ontology graph); "
            f"D[{i}, {j}] = {d[i, j]} but D[{j}, {i}] = {d[j, i]}"
        )
    infinite = np.isinf(d)
    if infinite.any():
        if disconnected == "error":
            i, j = np.argwhere(infinite)[0]
            raise ValueError(
                f"distances contain inf ({int(infinite.sum()) // 2} class pair(s) in different "
                f"components of the ontology graph, e.g. {_class_text(i, classes)} and "
                f"{_class_text(j, classes)}); connect the graph "
                f"(e.g. add a root) or pass disconnected='max_plus_one' to treat them as one hop "
                f"farther than the farthest connected pair"
            )
        if disconnected != "max_plus_one":
            raise ValueError(f"disconnected must be 'error' or 'max_plus_one', got {disconnected!r}")
        d[infinite] = d[~infinite].max() + 1.0  # the diagonal is finite, so the max exists
    return d


def _label_incidence(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, counts): the labels as (clip, class) pairs sorted by clip, and labels per clip."""
    rows, cols = np.nonzero(y)
    counts = np.bincount(rows, minlength=y.shape[0])
    return rows, cols, counts


def _min_over_labels(rows: np.ndarray, cols: np.ndarray, n_clips: int, matrix: np.ndarray) -> np.ndarray:
    """out[n, c] = min over the labels k of clip n of matrix[k, c] (every clip has a label).

    Why label slots: with about two labels per clip, gathering one (C,) row of ``matrix`` per
    label and folding with ``np.minimum`` is O(total labels × C), while any dense formulation
    (masked min over all C candidate labels, or one product per distance level) costs
    O(N × C × C). Slot s holds the s-th label of every clip that has more than s labels, so the
    Python loop runs max(labels per clip) times, each step one vectorized gather.
    """
    starts = np.searchsorted(rows, np.arange(n_clips))
    slot = np.arange(rows.size) - starts[rows]
    first = slot == 0
    out = np.empty((n_clips, matrix.shape[1]), dtype=matrix.dtype)
    out[rows[first]] = matrix[cols[first]]
    for s in range(1, int(slot.max(initial=0)) + 1):
        sel = slot == s
        r = rows[sel]
        out[r] = np.minimum(out[r], matrix[cols[sel]])
    return out


# --------------------------------------------------------------------------------- ranking


class _Ranking:
    """Each class's descending score order and the tie groups that contain a positive.

    A threshold of the precision-recall curve is a distinct score; it admits every clip scoring
    at or above it, i.e. the sorted prefix up to the end of its tie group. Recall only moves at
    groups containing positives, so the step sum Σ (R_t − R_{t−1}) P_t has one non-zero term per
    such group ("query"), with R_t − R_{t−1} = (positives in the group) / n_pos.

    Attributes:
        order: (C, N) clip indices of each class in descending score order (stable).
        q_flat: (K,) flat index c·N + position of each query's group end in the (C, N) layout,
            ascending (by class, then position).
        q_class, q_pos: (K,) class and sorted position of each query's group end.
        q_tp: (K,) positives at or above the query's threshold (TP; their weight, when the
            clips are weighted).
        q_delta: (K,) positives in the query's tie group (their weight).
        n_pos: (C,) positives per class (their weight).
        admitted: (K,) clips at or above the query's threshold (their weight).
        class_start: (C + 1,) query offsets per class (queries of class c are
            class_start[c]:class_start[c + 1]).
    """

    def __init__(self, y: np.ndarray, s: np.ndarray, w: np.ndarray | None = None) -> None:
        n, c = s.shape
        st = np.ascontiguousarray(s.T)
        # One sort per class, shared by plain AP and every OmAP level. The order within a tie
        # group never matters (a threshold admits the whole group), so the unstable SIMD
        # quicksort is used: 5x faster than kind="stable" on 527 x 20,000 float64.
        self.order = np.argsort(-st, axis=1, kind="quicksort")
        s_sorted = np.take_along_axis(st, self.order, axis=1)
        y_sorted = np.take_along_axis(np.ascontiguousarray(y.T), self.order, axis=1)
        del st

        # Tie groups: a group starts where the sorted score changes (and at each row's start);
        # numbering the starts over the flattened (C, N) array gives a global group id, and the
        # flat index of each group's last element is that group's threshold position.
        change = np.empty((c, n), dtype=bool)
        change[:, 0] = True
        np.not_equal(s_sorted[:, 1:], s_sorted[:, :-1], out=change[:, 1:])
        del s_sorted
        group_end = np.flatnonzero(np.r_[change.ravel()[1:], True])  # (G,) last element of each group

        pos_flat = np.flatnonzero(y_sorted.ravel())  # positives, ascending
        id_dtype = np.int32 if change.size < 2**31 else np.int64
        group_of_pos = np.cumsum(change.ravel(), dtype=id_dtype)[pos_flat] - 1 if pos_flat.size else pos_flat
        del change
        ends, inverse, counts = np.unique(group_end[group_of_pos], return_inverse=True, return_counts=True)

        self.n_clips, self.n_classes = n, c
        self.q_flat = ends
        self.q_class = ends // n
        self.q_pos = ends % n
        self.admitted: np.ndarray = self.q_pos + 1
        if w is not None:  # sums of clip weights where there were counts
            w_sorted = w[self.order]
            counts = np.bincount(inverse, weights=w_sorted.ravel()[pos_flat], minlength=ends.size)
            self.admitted = np.cumsum(w_sorted, axis=1).ravel()[ends]
            del w_sorted
        self.q_delta = counts
        self.n_pos = np.bincount(self.q_class, weights=counts, minlength=c)
        if w is None:
            self.n_pos = self.n_pos.astype(np.int64)
        self.class_start = np.r_[0, np.cumsum(np.bincount(self.q_class, minlength=c))]
        # TP at each query = cumulative positives within the class: exact integer counts, a
        # running sum over all classes less each class's start; sums of weights, which that
        # would round by the weight of every class before, restart at each class instead.
        if w is None:
            cum = np.cumsum(counts)
            self.q_tp = cum - np.repeat(np.r_[0, cum][self.class_start[:-1]], np.diff(self.class_start))
        else:
            self.q_tp = _class_cumsum(counts, self.q_class)

    def per_class_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum (K, ...) query values into (C, ...) per class; 0 for a class without queries."""
        out = np.zeros((self.n_classes,) + values.shape[1:], dtype=np.float64)
        has = np.diff(self.class_start) > 0
        if has.any():
            out[has] = np.add.reduceat(values, self.class_start[:-1][has], axis=0)
        return out


def _class_cumsum(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Cumulative sums of the (K, ...) float ``values`` along axis 0, restarting where the sorted
    (K,) ``group`` changes (a segmented scan).

    Why not one running sum less each group's start: with float weights that difference keeps
    the rounding of every earlier group (a rare class after common ones lost 1e-11 relative, and
    a class of small weights after classes of large ones everything). Here only values of the
    same group are ever added: a Hillis-Steele scan, ⌈log2(longest group)⌉ vectorized steps, each
    adding to every element the partial sum 2^j places up when that is still in its group. Its
    rounding is a tree sum's (at most log2 of the group's length additions deep); integer
    values stay exact.
    """
    out = np.array(values, dtype=np.float64)
    shift = 1
    while shift < out.shape[0]:
        same = group[shift:] == group[:-shift]
        if not same.any():
            break
        same = same.reshape(same.shape + (1,) * (out.ndim - 1))
        out[shift:] += np.where(same, out[:-shift], 0.0)  # the right side is computed first: old values
        shift *= 2
    return out


def _ap_from_fp(rank: _Ranking, fp: np.ndarray) -> np.ndarray:
    """Per-class AP (Σ delta · TP / (TP + FP)) / n_pos from the FP at each query ((K,) or (K, L)).

    Dividing by n_pos once, after the sum, rather than summing delta / n_pos: a perfect ranking
    then gives exactly 1.0, and since every P <= 1 and rounding is monotone the result never
    exceeds 1 (the per-term form can give 1 + 2e-16). It differs from scikit-learn only by
    rounding (~1e-16).
    """
    tp = rank.q_tp.astype(np.float64)
    delta = rank.q_delta.astype(np.float64)
    n_pos = np.where(rank.n_pos > 0, rank.n_pos, 1).astype(np.float64)  # no positive: the sum is 0 anyway
    if fp.ndim == 2:
        tp, delta, n_pos = tp[:, None], delta[:, None], n_pos[:, None]
    # TP >= 1 at a query of counts; with weights a query's positives may weigh 0 (so may delta)
    precision = np.divide(tp, tp + fp, out=np.zeros(np.broadcast(tp, fp).shape), where=tp + fp > 0)
    return rank.per_class_sum(delta * precision) / n_pos


# ------------------------------------------------------------------------------- public API


def average_precision(
    targets: np.ndarray, scores: np.ndarray, *, classes: Sequence[str] | None = None,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Per-class average precision, equal to scikit-learn's ``average_precision_score``.

    AP = Σ_t (R_t − R_{t−1}) P_t over one threshold t per distinct score in the class's column
    (tied scores enter together; no interpolation), which is what scikit-learn computes and
    what OmAP generalises, so mAP and OmAP here share one implementation of the curve.

    Args:
        targets: (N, C) binary (bool or 0/1) relevance of each clip to each class.
        scores: (N, C) finite scores; higher means more likely.
        classes: The names of the C columns, for error messages only.
        weights: (N,) clip weights >= 0 (scikit-learn's ``sample_weight``): TP and FP are sums
            of weights, so a weight of k counts a clip k times.

    Returns:
        (C,) float64 AP per class. A class with no positive clip gets 0, as scikit-learn >= 1.2
        returns (recall is then undefined; 1.1 returned an arbitrary value). Its macro mean
        equals ``average_precision_score(targets, scores, average="macro")``.

    Raises:
        ValueError: non-binary targets, non-finite scores or mismatched shapes.
    """
    y = _check_targets(targets, classes)
    s = _check_scores(scores, y.shape, classes)
    rank = _Ranking(y, s, _check_weights(weights, y.shape[0]))
    fp = (rank.admitted - rank.q_tp).astype(np.float64)  # negatives in the admitted prefix
    return _ap_from_fp(rank, fp)


def omap(
    targets: np.ndarray,
    scores: np.ndarray,
    distances: np.ndarray,
    *,
    no_positive: Literal["zero", "skip"] = "zero",
    unlabeled: Literal["error", "skip"] = "error",
    disconnected: Literal["error", "max_plus_one"] = "error",
    classes: Sequence[str] | None = None,
    weights: np.ndarray | None = None,
) -> OMAPResult:
    """Ontology-aware mean average precision (Liu et al. 2023), as the authors' code computes it.

    See the module docstring for the five conventions (levels, M^λ, μ^λ over off-diagonal cells,
    minimum over labels, step-sum AP with unweighted TP) and how they are evaluated at once for
    all levels. Summary: a false positive of class c on clip n costs
    w^λ[n, c] = min_k M^λ[k, c] / μ^λ instead of 1, so predicting a class that is close to the
    clip's labels in the ontology hurts less, and not at all once the level λ reaches its
    distance.

    Args:
        targets: (N, C) binary clip labels; column c is the class of row/column c of
            ``distances``.
        scores: (N, C) finite scores.
        distances: (C, C) hop counts in the undirected ontology graph: symmetric, zero diagonal,
            non-negative. Non-integer values are accepted (levels stay the integers
            0 … ⌊D_max⌋, as in the authors' code). ``np.inf`` marks classes in different
            components; see ``disconnected``.
        no_positive: A class with no positive clip has AP 0 at every level (``"zero"``,
            scikit-learn >= 1.2, the mean is over all C classes) or is left out of the means
            (``"skip"``; its ``ap_per_level`` column is NaN).
        unlabeled: A clip without any label has no defined FP weight. ``"error"`` raises a
            ValueError naming the clips; ``"skip"`` drops those clips from every class first.
        disconnected: ``"error"`` rejects infinite distances; ``"max_plus_one"`` replaces them
            by (largest finite distance) + 1 and applies the conventions to that matrix (one
            more level than the finite maximum gives).
        classes: The names of the C columns, for error messages only.
        weights: (N,) clip weights >= 0: TP and the weighted FP are sums over clips of their
            weight times what they count, so a weight of k counts a clip k times; a clip of
            weight 0 is left out before anything else (an unlabeled one is then no error).

    Returns:
        A dict with ``"omap"`` (float, mean over levels), ``"omap_lambda0"`` (float, level 0),
        ``"omap_per_level"`` ((L,) float64, L = ⌊D_max⌋ + 1) and ``"ap_per_level"`` ((L, C)
        float64, the AP of each class at each level).

    Raises:
        ValueError: non-binary targets, non-finite scores, shapes that do not match, an invalid
            distance matrix, unlabeled clips (with ``unlabeled="error"``), no clip left, or an
            unknown option.
    """
    if no_positive not in ("zero", "skip"):
        raise ValueError(f"no_positive must be 'zero' or 'skip', got {no_positive!r}")
    if unlabeled not in ("error", "skip"):
        raise ValueError(f"unlabeled must be 'error' or 'skip', got {unlabeled!r}")
    y = _check_targets(targets, classes)
    s = _check_scores(scores, y.shape, classes)
    n_clips, n_classes = y.shape
    w = _check_weights(weights, n_clips)
    d = _check_distances(distances, n_classes, disconnected, classes)

    rows_given = None  # the given row of each clip kept, when clips of weight 0 are left out
    if w is not None and not w.all():  # a weight of 0 is a clip left out, labels or not
        rows_given = np.flatnonzero(w)
        y, s, w = y[rows_given], s[rows_given], w[rows_given]
        n_clips = y.shape[0]
    has_label = y.any(axis=1)
    if not has_label.all():
        missing = np.flatnonzero(~has_label)
        if unlabeled == "error":
            listed = _indices_text(missing if rows_given is None else rows_given[missing])
            raise ValueError(
                f"{missing.size} clip(s) have no label (0-based rows {listed}): their "
                f"false-positive weight, a minimum distance to an empty label set, is undefined "
                f"(evaluating a subset of the classes can leave clips without labels); "
                f"remove them or pass unlabeled='skip' to drop them from every class"
            )
        y, s = y[has_label], s[has_label]
        w = None if w is None else w[has_label]
        n_clips = y.shape[0]
    if n_clips == 0:
        raise ValueError("no clip to evaluate (none given, none of weight > 0, or none with a label)")

    # Distinct distances u (u[0] = 0: the diagonal) and every cell as an index into them; the
    # index order is the distance order, so minima can be taken on the small integer indices.
    u, inverse = np.unique(d, return_inverse=True)
    n_values = u.size
    index_dtype = np.uint8 if n_values <= 255 else np.uint16 if n_values <= 65535 else np.int64
    d_index = inverse.reshape(d.shape).astype(index_dtype)

    levels = np.arange(int(np.floor(u[-1])) + 1, dtype=np.float64)
    # kept[t, λ] = u_t if u_t > λ else 0: the value M^λ takes on a cell at distance u_t.
    kept = np.where(u[:, None] > levels[None, :], u[:, None], 0.0)  # (V, L)

    # μ^λ = Σ_{off-diagonal cells} M^λ / (C(C − 1)), from the counts of each distinct value.
    cell_counts = np.bincount(d_index.ravel(), minlength=n_values).astype(np.float64)
    cell_counts[0] -= n_classes  # the diagonal (value 0, contributes nothing anyway)
    pairs = n_classes * (n_classes - 1)
    mu = (cell_counts @ kept) / pairs if pairs else np.zeros(levels.size)
    scale = np.where(mu > MU_EPS, mu, 1.0)  # W = M / μ, or M itself when μ ≈ 0

    rank = _Ranking(y, s, w)
    rows, cols, _ = _label_incidence(y)
    # d_min[n, c] = min over clip n's labels of D[k, c], as a distance index; in each class's
    # sorted order. Positives get index 0 (D[c, c] = 0), hence weight 0 at every level.
    d_min = _min_over_labels(rows, cols, n_clips, d_index)
    d_sorted = np.take_along_axis(np.ascontiguousarray(d_min.T), rank.order, axis=1)
    del d_min

    # Segment of each element: the first query at or after it (in flat (C, N) order); elements
    # after their class's last query never enter a threshold and go to a dump segment K.
    k = rank.q_flat.size
    marker = np.zeros(n_classes * n_clips + 1, dtype=np.int32)
    np.add.at(marker, rank.q_flat + 1, 1)  # q_flat is unique; add.at is cheap for K items
    seg_dtype = np.int32 if (k + 1) * n_values < 2**31 else np.int64
    segment = np.cumsum(marker[:-1], dtype=seg_dtype).reshape(n_classes, n_clips)
    del marker
    last_pos = np.full(n_classes, -1)
    has_query = np.diff(rank.class_start) > 0
    last_pos[has_query] = rank.q_pos[rank.class_start[1:][has_query] - 1]
    beyond = np.arange(n_clips)[None, :] > last_pos[:, None]
    segment[beyond] = k
    segment *= n_values
    segment += d_sorted
    clip_weights = None if w is None else w[rank.order].ravel()  # each element's clip's weight
    hist = np.bincount(segment.ravel(), weights=clip_weights, minlength=(k + 1) * n_values)
    hist = hist.reshape(k + 1, n_values)[:k]
    del segment, d_sorted, beyond, clip_weights

    # Negatives at each distinct distance at or above each query's threshold: exact integer
    # cumulative counts within each class; then the FP numerator at every level in one product.
    if w is None:
        cum = np.cumsum(hist, axis=0)
        base = np.vstack([np.zeros((1, n_values), dtype=cum.dtype), cum])[rank.class_start[:-1]]
        cum -= np.repeat(base, np.diff(rank.class_start), axis=0)
    else:  # sums of weights: restarted per class, not differences of one running sum (see there)
        cum = _class_cumsum(hist, rank.q_class)
    fp = (cum.astype(np.float64) @ kept) / scale[None, :]  # (K, L)

    ap = _ap_from_fp(rank, fp).T  # (L, C)
    if no_positive == "skip":
        positive = rank.n_pos > 0
        ap[:, ~positive] = np.nan
        per_level = ap[:, positive].mean(axis=1)
    else:
        per_level = ap.mean(axis=1)
    return {
        "omap": float(per_level.mean()),
        "omap_lambda0": float(per_level[0]),
        "omap_per_level": per_level,
        "ap_per_level": ap,
    }


def obce_weights(
    targets: np.ndarray,
    distances: np.ndarray,
    beta: float = 1.0,
    *,
    unlabeled: Literal["error", "uniform"] = "error",
    disconnected: Literal["error", "max_plus_one"] = "error",
) -> np.ndarray:
    """Per-clip, per-class loss weights r of the OBCE loss (the paper's Algorithm 1).

    OBCE = mean(r ⊙ BCE) down-weights the loss on classes close to a clip's labels (likely
    missing labels or near-synonyms) and up-weights far ones. Algorithm 1, for each clip n with
    label set L_n, as implemented here:

    1. r_c = min{ d^β : d = D[k, c], k ∈ L_n } — the distance from class c to the nearest label,
       raised to the power factor β. For a label c itself d = 0, so r_c = 0 (β > 0); with β = 0
       every d^β is 1 (numpy's 0^0 = 1), so all weights become 1 and OBCE is plain BCE, as the
       paper states. Since x ↦ x^β is increasing, this equals (min_k D[k, c])^β.
    2. r ← r / max(r): the farthest class gets weight 1.
    3. r_k ← 1 for k ∈ L_n: "target labels have the highest weight".
    4. r ← r / mean(r): the mean weight of each clip is 1, "for a fair comparison with the BCE
       loss".

    Conventions where the paper is vague (and how the authors' training code differs):

    * Step 4 is written as a loop r_c ← r_c / mean(r) over c. Read literally, the mean would
      change after every update; the comment "let mean r̄ = 1" shows the intent, so all c are
      divided by the same mean (the one before the loop) and each row has mean exactly 1. The
      authors' ``ontology_loss_weight`` instead divides by the mean over the whole batch (N × C),
      so its rows do not each average 1; multiply by ``row_mean / batch_mean`` to get that.
    * Step 1 for a label class: the paper's formula includes k = c (d = 0). The authors' code
      excludes zero distances from the minimum, so a label class gets the distance to the
      nearest *other* label, which can enter max(r) in step 2 (step 3 overwrites its own value).
      evalkit follows the paper. The code also normalises D by its global maximum before the
      power; that cancels in step 2.
    * max(r) = 0 in step 2 (every class is a label, or all distances are 0): r is left at 0
      (no division), then step 3 and 4 apply.
    * β must be finite and >= 0; a negative power would give the labels (d = 0) infinite weight.
    * Infinite distances: as in :func:`omap`, an error by default, or (``"max_plus_one"``)
      replaced by the largest finite distance + 1.

    Args:
        targets: (N, C) binary labels.
        distances: (C, C) symmetric hop counts with a zero diagonal.
        beta: Distance power factor β (the paper uses 1.0; larger values stress far classes).
        unlabeled: A clip without labels has no distances to take a minimum over: ``"error"``
            raises; ``"uniform"`` gives it weight 1 on every class (plain BCE for that clip).
        disconnected: ``"error"`` or ``"max_plus_one"``, as in :func:`omap`.

    Returns:
        (N, C) float64 weights, each row with mean 1, label cells the row's step-3 value 1
        divided by the row mean.

    Raises:
        ValueError: non-binary targets, an invalid distance matrix or β, or unlabeled clips with
            ``unlabeled="error"``.
    """
    if unlabeled not in ("error", "uniform"):
        raise ValueError(f"unlabeled must be 'error' or 'uniform', got {unlabeled!r}")
    beta = float(beta)
    if not np.isfinite(beta) or beta < 0:
        raise ValueError(f"beta must be a finite number >= 0, got {beta}")
    y = _check_targets(targets)
    n_clips, n_classes = y.shape
    d = _check_distances(distances, n_classes, disconnected)

    has_label = y.any(axis=1)
    if not has_label.all() and unlabeled == "error":
        missing = np.flatnonzero(~has_label)
        raise ValueError(
            f"{missing.size} clip(s) have no label (0-based rows {_indices_text(missing)}): OBCE "
            f"weights are distances to the labels; pass unlabeled='uniform' to give them weight 1"
        )
    r = np.ones((n_clips, n_classes), dtype=np.float64)
    lab = np.flatnonzero(has_label)
    if lab.size:
        yl = y[lab]
        rows, cols, _ = _label_incidence(yl)
        w = np.power(_min_over_labels(rows, cols, lab.size, d), beta)  # step 1
        top = w.max(axis=1, keepdims=True)
        np.divide(w, top, out=w, where=top > 0)  # step 2 (rows with max 0 stay 0)
        w[yl] = 1.0  # step 3
        w /= w.mean(axis=1, keepdims=True)  # step 4: mean >= 1/C > 0 thanks to step 3
        r[lab] = w
    return r
