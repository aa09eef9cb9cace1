"""What a report says before its tables: the best system per measure and where the measures
disagree, whether rank agreement can say anything, which values lie outside [0, 1] and why.

The HTML and Markdown reports both render these, so they say the same things.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evalkit.glossary import glossary
from evalkit.measures import Measure
from evalkit.results import Results, Row

#: Set metrics that are ratios of cardinalities, in [0, 1] for crisp and fuzzy sets, segments
#: and a bounded soft cardinality, but not for soft cardinality itself (docs/faq.md).
RATIOS = frozenset({"precision", "recall", "f1", "fbeta", "jaccard"})

#: Set metrics that are sizes, not qualities: no system is "best" on them.
SIZES = frozenset({"card_ref", "card_pred", "card_union", "card_inter"})

#: How many measures a summary names where they disagree (the tables hold every one).
MAX_NAMED = 12

FAQ = "docs/faq.md, “Why can a soft cardinality exceed the crisp size, and precision exceed 1?”"


def alpha(results: Results) -> float:
    """The significance level that matches the run's confidence level (1 − level)."""
    stats = results.config.get("statistics") if isinstance(results.config, dict) else None
    level = stats.get("level") if isinstance(stats, dict) else None
    return 1.0 - level if isinstance(level, float) and 0 < level < 1 else 0.05


# --- best system per measure ------------------------------------------------------------------

@dataclass
class BestSystems:
    """Which system is best on how many measures, and the measures that pick another."""

    measures: int  # single-number measures that rank at least two systems
    wins: dict[str, list[Measure]] = field(default_factory=dict)  # system -> measures it is best on
    ties: list[tuple[Measure, list[str]]] = field(default_factory=list)

    @property
    def leader(self) -> str | None:
        return max(self.wins, key=lambda s: len(self.wins[s])) if self.wins else None

    def dissent(self) -> list[tuple[str, Measure]]:
        """(system, measure) for each measure whose best system is not the leader's."""
        return [(s, m) for s, found in self.wins.items() if s != self.leader for m in found]


def best_systems(results: Results) -> BestSystems | None:
    """The best system of every single-number measure (oriented: a loss is best lowest; sizes
    such as ``card_inter`` rank nothing), or None when no measure has two systems."""
    lower = set(results.lower_is_better)
    by_measure: dict[Measure, dict[str, float]] = {}
    for r in results.rows:
        if r.measure.single and not math.isnan(r.value) and bare(r.metric) not in SIZES:
            by_measure.setdefault(r.measure, {})[r.system] = -r.value if r.metric in lower else r.value
    ranked = {m: v for m, v in by_measure.items() if len(v) >= 2}
    if not ranked:
        return None
    out = BestSystems(len(ranked))
    for measure, values in ranked.items():
        best = max(values.values())
        # equal up to rounding is a tie (as the statistics take it), so a summary does not name a
        # winner on one CPU and a tie on another
        top = [s for s, v in values.items() if math.isclose(v, best, rel_tol=1e-9, abs_tol=1e-12)]
        if len(top) == 1:
            out.wins.setdefault(top[0], []).append(measure)
        else:
            out.ties.append((measure, top))
    return out


def best_systems_lines(found: BestSystems) -> list[str]:
    """The best systems as sentences (plain text; the writers escape it)."""
    if found.leader is not None and len(found.wins[found.leader]) == found.measures:
        return [f"{found.leader} is best on every measure ({found.measures})."]
    lines = [f"{system} is best on {len(measures)} of {found.measures} measures."
             for system, measures in sorted(found.wins.items(), key=lambda item: -len(item[1]))]
    dissent = found.dissent()
    if dissent:
        named = "; ".join(f"{m.label()} → {s}" for s, m in dissent[:MAX_NAMED])
        more = f"; and {len(dissent) - MAX_NAMED} more (see the tables)" if len(dissent) > MAX_NAMED else ""
        lines.append(f"The measures disagree about the best system: where {found.leader} is not best, "
                     f"{named}{more}.")
    if found.ties:
        named = "; ".join(f"{m.label()} ({' = '.join(s)})" for m, s in found.ties[:MAX_NAMED])
        more = f"; and {len(found.ties) - MAX_NAMED} more" if len(found.ties) > MAX_NAMED else ""
        lines.append(f"Tied for best on {len(found.ties)} measures: {named}{more}.")
    return lines


def comparison_lines(results: Results) -> list[str]:
    """One sentence per system compared with another: on how many measures the difference is
    clear, and whether the system is better or worse there, each measure oriented by its
    direction (a difference below 0 is better on a loss such as ``kld``)."""
    level, lower = alpha(results), set(results.lower_is_better)
    lines = []
    for (system, against), tests in _by_pair(results).items():
        significant = sum(1 for c in tests if c.p_value < level)
        text = f"{system} against {against}: p < {level:.2g} on {significant} of {len(tests)} measures"
        known = [c for c in tests if c.ci_low is not None and c.ci_high is not None]
        if known:
            clear = [(c.ci_low > 0) != (c.metric in lower) for c in known if c.ci_low > 0 or c.ci_high < 0]
            text += f"; the difference's {1 - level:.0%} interval excludes 0 on {len(clear)}"
            if clear:
                text += f": {system} is {_better_or_worse(sum(clear), len(clear))}"
        lines.append(text + ".")
    return lines


def _better_or_worse(better: int, clear: int) -> str:
    """``worse on all 46``, ``better on 1``, ``better on 3 and worse on 2``."""
    if better in (0, clear):
        return f"{'better' if better else 'worse'} on {'all ' if clear > 1 else ''}{clear}"
    return f"better on {better} and worse on {clear - better}"


def opening_lines(results: Results) -> list[str]:
    """What both reports open with: the best system per measure, where the measures disagree,
    and each paired comparison in one sentence."""
    found = best_systems(results)
    return [*(best_systems_lines(found) if found else []), *comparison_lines(results)]


def glossary_of(results: Results) -> dict[str, str]:
    """One line for each unfamiliar metric or averaging the results name (evalkit.plugin.glossary)."""
    return glossary(dict.fromkeys(n for r in results.rows for n in (r.metric, r.averaging) if n is not None))


def _by_pair(results: Results) -> dict[tuple[str, str], list]:
    pairs: dict[tuple[str, str], list] = {}
    for c in results.comparisons:
        pairs.setdefault((c.system, c.baseline), []).append(c)
    return pairs


def floor_note(results: Results) -> str | None:
    """Said when some p-values sit at 1/(1 + resamples), the smallest the resamples can give."""
    floors = sorted({c.resamples for c in results.comparisons if c.p_at_floor})
    if not floors:
        return None
    at = sum(1 for c in results.comparisons if c.p_at_floor)
    bounds = ", ".join(f"1/({r:,} + 1) = {1 / (r + 1):.2g}" for r in floors)
    return (f"{at} of {len(results.comparisons)} p-values sit at their floor, shown as “≤”: p ≤ {bounds}. "
            "The true p may be far smaller: increase resamples to resolve smaller p.")


# --- rank agreement ---------------------------------------------------------------------------

def smallest_tau_p(n: int) -> float:
    """The smallest two-sided exact p-value Kendall's τ can reach over ``n`` untied systems:
    only the two orders τ = ±1 are that extreme, 2 of the n! equally likely under "no
    association", so p ≥ 2/n! (3 systems: 1/3; 4: 1/12; 5: 1/60)."""
    return min(1.0, 2.0 / math.factorial(n)) if n >= 1 else 1.0


def agreement_note(results: Results) -> str | None:
    """Why rank agreement is left out, or None where it can say something: with too few
    systems no τ can reach significance at the run's α, and when every pair of measures ranks
    the systems alike there is nothing to show but that."""
    pairs = results.agreement
    if not pairs:
        return None
    n = max(a.n_systems for a in pairs)
    floor, level = smallest_tau_p(n), alpha(results)
    if floor > level:
        return (f"Rank agreement is left out: with {n} systems Kendall's τ can take only a few values and its "
                f"smallest two-sided p-value is 2/{n}! = {floor:.3g}, above α = {level:.2g}, so no pair of measures "
                f"can be shown to agree or disagree (it needs at least {min_systems(level)} systems). "
                "The JSON report holds every τ.")
    taus = [a.tau for a in pairs if not math.isnan(a.tau)]
    if taus and min(taus) == 1.0:
        return (f"Rank agreement: all {len(pairs):,} pairs of measures rank the {n} systems in the same order "
                "(Kendall's τ = 1 for each).")
    return None


def min_systems(level: float) -> int:
    """The fewest systems whose τ can reach p ≤ ``level``."""
    n = 2
    while smallest_tau_p(n) > level:
        n += 1
    return n


# --- values outside [0, 1] --------------------------------------------------------------------

def bare(metric: str) -> str:
    """A metric's name without its parameters: ``fbeta(beta=2)`` is ``fbeta``."""
    return metric.split("(", 1)[0]


def outside_unit(row: Row) -> bool:
    """A ratio set metric (precision, recall, F, Jaccard) outside [0, 1] as the tables show it
    (to 4 decimals, so that the note counts the values marked)."""
    return row.averaging is not None and bare(row.metric) in RATIOS and not 0.0 <= round(row.value, 4) <= 1.0


def unit_note(rows: Sequence[Row]) -> str | None:
    """Why the values marked † are outside [0, 1], with the first of them; None when none is."""
    found = [r for r in rows if outside_unit(r)]
    if not found:
        return None
    first = found[0]
    example = f"{first.system} · {first.measure.label()} = {first.value:.4f}"
    count = f"{len(found)} values of precision, recall, F or Jaccard lie" if len(found) > 1 else \
        "1 value of precision, recall, F or Jaccard lies"
    text = f"† {count} outside [0, 1] ({example}). "
    if any(re.match(r"soft_cardinality\b", r.representation or "") for r in found):
        text += ("Under soft cardinality the intersection is not measured but derived, card(G ∩ P) = card(G) + "
                 "card(P) − card(G ⧺ P) (Fränti & Mariescu-Istodor, eq. 7), and soft cardinality is not monotone: "
                 "P > 1 exactly when card(G ⧺ P) < card(G), and R > 1 exactly when card(G ⧺ P) < card(P), e.g. a "
                 "prediction similar to several mutually dissimilar reference items. "
                 "`soft_cardinality` with `bound: true` caps both at 1. ")
    else:
        text += "The representation's intersection exceeded a set's cardinality. "
    return text + f"See {FAQ}."


MARK = " †"


def marked(table: Any) -> Any:
    """A table (:func:`evalkit.plugin.tables`) with :data:`MARK` after each shown value of a ratio
    metric outside [0, 1]; the metric is the row's ``metric`` column, or the title's ``metric: …``
    when every row has the same one."""
    if "metric" in table.header:
        column = table.header.index("metric")
        metrics = [row[column] for row in table.rows]
    else:
        named = re.search(r"\bmetric: ([^,]+)", table.title)
        if named is None:
            return table
        metrics = [named.group(1)] * len(table.rows)
    rows = []
    for metric, row in zip(metrics, table.rows):
        if bare(metric) in RATIOS:
            row = [cell + MARK if i >= table.n_index and _outside(cell) else cell for i, cell in enumerate(row)]
        rows.append(row)
    return replace(table, rows=rows)


def _outside(cell: str) -> bool:
    try:
        value = float(cell.split(" ", 1)[0])
    except ValueError:  # "undefined", "—", an empty cell
        return False
    return not 0.0 <= value <= 1.0
