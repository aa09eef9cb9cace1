"""Derive four-point inputs for Table 1 of Harju & Mesaros (2023).

The paper ("Evaluating classification systems against soft labels with fuzzy
precision and recall", Table 1) prints, for three one-class, four-sample cases,
the hard P/R/F and the soft P/R/F (percent, one decimal) and the KLD (three
decimals), but the input values themselves are only drawn as bars.  This script
recovers inputs consistent with every printed number by an exhaustive search
over a 0.1 grid:

* every reference y and prediction y_hat is one of 0.0, 0.1, ..., 1.0;
* the four samples are interchangeable (all metrics are sums / means over the
  samples), so a case is a *multiset* of four (y, y_hat) pairs: with 121
  possible pairs that is C(121 + 3, 4) = 9,381,251 candidates instead of 11**8;
* hard metrics: both sides thresholded with value > 0.5, P = TP/PP, R = TP/RP,
  F = 2 TP / (PP + RP), 0 when a denominator is 0 (zero_division = 0);
* soft metrics with the minimum T-norm: P = sum min / sum y_hat,
  R = sum min / sum y, F = 2 sum min / (sum y_hat + sum y), 0 on a zero
  denominator;
* KLD = mean over the four cells of y ln(y / y_hat) + (1 - y) ln((1 - y) / (1 - y_hat)),
  both sides clipped to [1e-7, 1 - 1e-7], natural log.

A candidate fits a row when, for each printed percentage p, |100 x - p| <= 0.05
(evaluated exactly in integer arithmetic, since the grid values are tenths), and
|KLD - k| <= 0.0005 for the printed KLD k.

Textual constraints from Section 2.2 are then applied on top:

* "All three examples contain 50 % of positive references in the binarized
  case": exactly two references > 0.5;
* "For the first two examples the reference labels are the same": rows 1 and 2
  must share the multiset of reference values (so they can be drawn with the
  same reference bars);
* second case "both positive references are found": TP = 2 (implied by R = 100).

Run:  python tests/derive_table1.py
"""

from __future__ import annotations

import numpy as np

GRID = 11  # values 0..10 tenths
N_PAIRS = GRID * GRID  # pair index p -> (y, y_hat) = (p // 11, p % 11) tenths
N_POINTS = 4
EPS = 1e-7

# Table 1: (hard P, R, F), (soft P, R, F) in percent, KLD.
TABLE1 = {
    1: ((50.0, 50.0, 50.0), (66.7, 60.0, 63.2), 0.446),
    2: ((100.0, 100.0, 100.0), (85.0, 85.0, 85.0), 0.083),
    3: ((0.0, 0.0, 0.0), (88.9, 80.0, 84.2), 0.061),
}


def multisets(n_items: int, size: int) -> np.ndarray:
    """All non-decreasing index tuples (multisets) of ``size`` from ``range(n_items)``."""
    rows = np.arange(n_items, dtype=np.int16)[:, None]
    for _ in range(size - 1):
        last = rows[:, -1].astype(np.int64)
        counts = n_items - last
        rep = np.repeat(rows, counts, axis=0)
        starts = np.repeat(np.cumsum(counts) - counts, counts)
        nxt = np.arange(counts.sum()) - starts + np.repeat(last, counts)
        rows = np.hstack([rep, nxt[:, None].astype(np.int16)])
    return rows


def pair_tables():
    p = np.arange(N_PAIRS)
    y, yh = p // GRID, p % GRID  # tenths
    mn = np.minimum(y, yh)
    ref_pos = (y > 5).astype(np.int64)  # value > 0.5  <=>  tenths > 5
    pred_pos = (yh > 5).astype(np.int64)
    yc = np.clip(y / 10.0, EPS, 1 - EPS)
    yhc = np.clip(yh / 10.0, EPS, 1 - EPS)
    kld = yc * np.log(yc / yhc) + (1 - yc) * np.log((1 - yc) / (1 - yhc))
    return y, yh, mn, ref_pos, pred_pos, kld


def ratio_matches(num: np.ndarray, den: np.ndarray, printed: float) -> np.ndarray:
    """|100 num/den - printed| <= 0.05 exactly (0 when den == 0), integers only."""
    t = int(round(printed * 10))  # printed value in tenths of a percent
    ok = np.abs(2000 * num - 2 * t * den) <= den
    return np.where(den == 0, t == 0, ok)


def search():
    y, yh, mn, ref_pos, pred_pos, kld = pair_tables()
    combos = multisets(N_PAIRS, N_POINTS)
    s_y = y[combos].sum(1)
    s_yh = yh[combos].sum(1)
    s_mn = mn[combos].sum(1)
    rp = ref_pos[combos].sum(1)
    pp = pred_pos[combos].sum(1)
    tp = (ref_pos & pred_pos)[combos].sum(1)
    kl = kld[combos].mean(1)

    results = {}
    for row, (hard, soft, k) in TABLE1.items():
        m = ratio_matches(tp, pp, hard[0])
        m &= ratio_matches(tp, rp, hard[1])
        m &= ratio_matches(2 * tp, pp + rp, hard[2])
        m &= ratio_matches(s_mn, s_yh, soft[0])
        m &= ratio_matches(s_mn, s_y, soft[1])
        m &= ratio_matches(2 * s_mn, s_yh + s_y, soft[2])
        m &= np.abs(kl - k) <= 0.0005
        idx = np.flatnonzero(m)
        fits = [[(int(y[p]), int(yh[p])) for p in combos[i]] for i in idx]
        results[row] = {
            "all": fits,
            "half_positive": [f for f, i in zip(fits, idx) if rp[i] == 2],
        }
    return results


def refs(case):
    return tuple(sorted(r for r, _ in case))


def fmt(case):
    r = ", ".join(f"{a / 10:.1f}" for a, _ in case)
    p = ", ".join(f"{b / 10:.1f}" for _, b in case)
    return f"ref=[{r}]  pred=[{p}]"


def main():
    results = search()
    for row, res in results.items():
        print(f"Row {row}: {len(res['all'])} numeric fit(s), "
              f"{len(res['half_positive'])} with exactly 2 positive references")
        for case in res["all"]:
            flag = "" if case in res["half_positive"] else "   (violates 50% positive references)"
            print("   ", fmt(case) + flag)

    # Rows 1 and 2 must share the reference values.
    row1, row2 = results[1]["half_positive"], results[2]["half_positive"]
    shared = sorted({refs(c) for c in row1} & {refs(c) for c in row2})
    print(f"\nReference multisets shared by rows 1 and 2: {len(shared)}")
    for r in shared:
        a = [c for c in row1 if refs(c) == r]
        b = [c for c in row2 if refs(c) == r]
        print(f"  refs={[v / 10 for v in r]}: {len(a)} row-1 fit(s) x {len(b)} row-2 fit(s)")
        for c in a:
            print("    row 1:", fmt(c))
        for c in b:
            print("    row 2:", fmt(c))
    print(f"\nRow 3 fits with all textual constraints: {len(results[3]['half_positive'])}")
    for c in results[3]["half_positive"]:
        print("    row 3:", fmt(c), f"  max |v - 0.5| = {max_dist(c) / 10:.1f}")

    # Tie-breaks (the text cannot decide these):
    # * row 1 is unique once it must share its references with a row-2 fit;
    # * row 2: the two fits with those references give identical printed numbers (same
    #   sum of |y_hat - y| too), so the first in search order is taken;
    # * row 3: "the labels are close to the 0.5 threshold value" -> the fit whose values are
    #   all nearest 0.5 (smallest max |v - 0.5|); it is unique.
    row1_pick = [c for c in row1 if refs(c) in shared][0]
    row2_pick = [c for c in row2 if refs(c) == refs(row1_pick)][0]
    row3_pick = min(results[3]["half_positive"], key=max_dist)
    print("\nChosen inputs (order of the four points is arbitrary):")
    for row, case in ((1, row1_pick), (2, row2_pick), (3, row3_pick)):
        print(f"  row {row}:", fmt(case))


def max_dist(case):
    return max(abs(v - 5) for pair in case for v in pair)


if __name__ == "__main__":
    main()
