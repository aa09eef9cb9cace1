"""Make the Countries experiment data (Fränti & Mariescu-Istodor, "Soft precision and recall",
Section 4.4, Table 4): ten clusters of misspelt country names and four kinds of predictions.

Seeded (``numpy.random.default_rng(SEED)``), so re-running it reproduces the committed files
byte for byte::

    python configs/data/make_countries.py [OUT_DIR]     # default: configs/data/countries

Clusters (the paper's D6 of the Countries dataset, re-made here)
    For each of Cyprus, France, Greece, Latvia, Monaco, Norway, Poland, Russia, Serbia and
    Sweden, 50 distinct variants of the lowercase name, each made by k random character edits
    applied one after the other: add (a random letter a–z at a random position, ends
    included), remove (a random position) or substitute (a random position, by a different
    random letter), the operation uniform among the three. The edit count k is drawn with

        P(k = 1) = 0.45,  P(k = 2) = 0.35,  P(k = 3) = 0.2.

    Why this distribution: all ten names have six letters, so a variant at edit distance 1 has
    Levenshtein similarity 5/6 or 6/7 (≥ 0.8, i.e. Crisp* matches it) and one at distance 2 or
    3 has 4/6–6/8 or 3/6–6/9 (< 0.8). The paper's examples "oypmreus" (3 edits, similarity
    0.62), "cyprqs" (0.83), "cypcrus" (0.86) and "yprus" (0.83) are three one-edit variants out
    of four, and its Crisp* result for three correct predictions (0.48) says that about half
    of the variants are within one edit of the name; uniform k in {1, 2, 3} gives 37 %. With the
    distribution above, 47 % of the 500 variants are at distance 1 (a few two-edit variants
    collapse to distance 1, e.g. a letter substituted twice), 40 % at 2 and 13 % at 3, and the
    mean similarity to the name is 0.74 (the four examples: 0.79).
    A variant is rejected and redrawn if it is shorter than three letters, equals a country name,
    or is already in any cluster, so every variant belongs to exactly one cluster and differs
    from every name.

Ground truth: the country names themselves
    The paper's example reads "GT: Cyprys, France, Greece" while its text says "we select three
    countries as the ground truth". We take the (lowercase) names, "cyprus france greece", and
    read "Cyprys" as a typo: (1) with variants as the ground truth, a prediction would repeat a
    ground-truth string with probability 1/50 per item and Crisp would not be 0 everywhere as
    in Table 4; (2) two independent variants are rarely within one edit of each other, so
    Crisp* could not reach the reported 0.48.

The experiment: 100 repetitions
    Each repetition draws three distinct countries (the ground truth, in drawn order). Then,
    independently per prediction type, a "correct" item is a random variant from the cluster of
    a ground-truth country and an "incorrect" one a random variant of one of the seven other
    countries:

    1. all three correct (one variant of each ground-truth country);
    2. only two correct (two of the three countries, chosen at random);
    3. all three correct plus one incorrect;
    4. two correct plus one incorrect.

    Expected precision / recall: 1 / 1, 1 / 0.67, 0.75 / 1, 0.67 / 0.67.

Files (in OUT_DIR)
    clusters.json            {country: [50 variants]}
    reference.jsonl          100 lines {"id": "r000", "items": [3 names]}
    type1.jsonl … type4.jsonl 100 lines each, same ids, the predictions of that type
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

SEED = 20230404
COUNTRIES = ["Cyprus", "France", "Greece", "Latvia", "Monaco", "Norway", "Poland", "Russia", "Serbia", "Sweden"]
VARIANTS = 50
EDIT_COUNTS, EDIT_PROBS = (1, 2, 3), (0.45, 0.35, 0.2)
REPETITIONS = 100
LETTERS = "abcdefghijklmnopqrstuvwxyz"
OUT = Path(__file__).parent / "countries"


def edit(rng: np.random.Generator, word: str) -> str:
    """One random edit: add, remove or substitute a lowercase letter."""
    op = rng.integers(3)
    if op == 0:  # add
        at = int(rng.integers(len(word) + 1))
        return word[:at] + LETTERS[rng.integers(26)] + word[at:]
    at = int(rng.integers(len(word)))
    if op == 1:  # remove
        return word[:at] + word[at + 1 :]
    others = [c for c in LETTERS if c != word[at]]  # substitute by a different letter
    return word[:at] + others[rng.integers(25)] + word[at + 1 :]


def make_clusters(rng: np.random.Generator) -> dict[str, list[str]]:
    names = {c.lower() for c in COUNTRIES}
    seen: set[str] = set()
    clusters = {}
    for country in COUNTRIES:
        variants: list[str] = []
        while len(variants) < VARIANTS:
            word = country.lower()
            for _ in range(int(rng.choice(EDIT_COUNTS, p=EDIT_PROBS))):
                word = edit(rng, word)
            if len(word) < 3 or word in names or word in seen:
                continue
            seen.add(word)
            variants.append(word)
        clusters[country] = variants
    return clusters


def make_experiment(
    rng: np.random.Generator, clusters: dict[str, list[str]]
) -> tuple[list[list[str]], dict[str, list[list[str]]]]:
    """The ground truth of each repetition and the predictions of each type."""

    def variant(country: str) -> str:
        return clusters[country][rng.integers(VARIANTS)]

    def two(chosen: list[str]) -> list[str]:
        keep = sorted(rng.choice(3, size=2, replace=False))
        return [variant(chosen[k]) for k in keep]

    def wrong(others: list[str]) -> str:
        return variant(others[rng.integers(len(others))])

    reference: list[list[str]] = []
    types: dict[str, list[list[str]]] = {f"type{t}": [] for t in (1, 2, 3, 4)}
    for _ in range(REPETITIONS):
        chosen = [COUNTRIES[i] for i in rng.choice(len(COUNTRIES), size=3, replace=False)]
        others = [c for c in COUNTRIES if c not in chosen]
        reference.append([c.lower() for c in chosen])
        types["type1"].append([variant(c) for c in chosen])
        types["type2"].append(two(chosen))
        types["type3"].append([variant(c) for c in chosen] + [wrong(others)])
        types["type4"].append(two(chosen) + [wrong(others)])
    return reference, types


def write_jsonl(path: Path, documents: list[list[str]]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for i, items in enumerate(documents):
            handle.write(json.dumps({"id": f"r{i:03d}", "items": items}) + "\n")


def main(out: Path = OUT) -> None:
    rng = np.random.default_rng(SEED)
    clusters = make_clusters(rng)
    reference, types = make_experiment(rng, clusters)
    out.mkdir(parents=True, exist_ok=True)
    (out / "clusters.json").write_text(json.dumps(clusters, indent=1) + "\n", encoding="utf-8")
    write_jsonl(out / "reference.jsonl", reference)
    for name, documents in types.items():
        write_jsonl(out / f"{name}.jsonl", documents)
    print(f"wrote {len(clusters)} clusters x {VARIANTS} variants, {REPETITIONS} repetitions x "
          f"{len(types)} prediction types to {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
