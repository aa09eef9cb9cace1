"""The plugin author kit (evalkit.testing): every built-in passes, and each check catches a
component that breaks its property, with a message naming it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.data import LabelMatrix
from evalkit.discovery import default_registry
from evalkit.errors import DataError
from evalkit.items import ItemSets
from evalkit.protocols import BaseComponent, optional
from evalkit.table import CardinalityTable, Summary
from evalkit.testing import (
    check_averaging,
    check_data_metric,
    check_loader,
    check_metric,
    check_report_writer,
    check_representation,
)

REGISTRY = default_registry()
RNG = np.random.default_rng(0)
REF, PRED = RNG.random((30, 4)), RNG.random((30, 4))
WORDS_REF = ItemSets.from_python([["cafe", "coffee"], ["tea"], ["gray", "grey", "color"], []], source="ref")
WORDS_PRED = ItemSets.from_python([["café"], ["tea", "tee"], ["colour"], ["milk"]], source="pred")
EVENTS_REF = ItemSets.from_python([[(0.0, 1.0), (2.0, 3.5)], [(1.0, 2.0)], []], source="ref")
EVENTS_PRED = ItemSets.from_python([[(0.2, 1.1)], [(1.0, 2.0), (4.0, 5.0)], [(0.0, 0.5)]], source="pred")


def create(kind, spec):
    return REGISTRY.create(kind, spec)


@pytest.mark.parametrize("tnorm", REGISTRY.names("tnorm"))
def test_fuzzy_passes_with_every_tnorm(tnorm):
    check_representation(create("representation", "fuzzy"), REF, PRED, tnorm=create("tnorm", tnorm))


def test_crisp_passes_and_per_side_thresholds_need_symmetric_false():
    check_representation(create("representation", "crisp"), REF, PRED)
    one_sided = create("representation", {"name": "crisp", "reference_threshold": 0.3})
    with pytest.raises(
        AssertionError,
        match=r"^representation crisp\(.*reference_threshold=0.3.*\): the reference against itself has \|G\| != \|P\|",
    ):
        check_representation(one_sided, REF, PRED)
    check_representation(one_sided, REF, PRED, symmetric=False)


@pytest.mark.parametrize("name", ["soft_cardinality", "exact_match", "threshold_match", "fuzzy_pr"])
def test_item_representations_pass(name):
    check_representation(create("representation", name), WORDS_REF, WORDS_PRED,
                         similarity=create("similarity", "levenshtein"))


@pytest.mark.parametrize("spec", ["segments", "fuzzy_segments"])
def test_segment_representations_pass(spec):
    tnorm = create("tnorm", "product") if spec == "fuzzy_segments" else None
    check_representation(create("representation", spec), EVENTS_REF, EVENTS_PRED, tnorm=tnorm)


@pytest.mark.parametrize("name", REGISTRY.names("averaging"))
def test_every_builtin_averaging_passes(name):
    check_averaging(create("averaging", name))


@pytest.mark.parametrize("name", [n for n in REGISTRY.names("metric") if hasattr(REGISTRY.entry("metric", n).cls, "ratio")])
def test_every_builtin_set_metric_passes(name):
    metric = create("metric", name)  # cardinalities and error rates (insertions may pass N) are unbounded
    check_metric(metric, bounded=not name.startswith("card_") and not optional(metric, "substitutions"))


# ---------------------------------------------------------------------- broken components


class BatchNormalised(BaseComponent):
    """Divides by the batch total: rows are not independent."""

    name = "batch_normalised"
    uses = frozenset()
    data = "matrix"

    def cardinalities(self, reference, prediction, *, tnorm, similarity):
        scale = reference.sum()
        return CardinalityTable(reference / scale, prediction / scale, np.minimum(reference, prediction) / scale)


class ReferenceFirst(BaseComponent):
    """Intersection = the reference where the prediction is above 0.5: not symmetric."""

    name = "reference_first"
    uses = frozenset()
    data = "matrix"

    def cardinalities(self, reference, prediction, *, tnorm, similarity):
        return CardinalityTable(reference, prediction, reference * (prediction > 0.5))


def test_check_representation_catches_dependent_rows_and_asymmetry():
    with pytest.raises(AssertionError, match=r"^representation batch_normalised: the halves do not give the whole"):
        check_representation(BatchNormalised(BatchNormalised.Params()), REF, PRED)
    with pytest.raises(AssertionError, match=r"^representation reference_first: swapping the sides does not swap"):
        check_representation(ReferenceFirst(ReferenceFirst.Params()), REF, PRED)


class DiceWithoutTwo(BaseComponent):
    """|G ∩ P| / (|G| + |P|): a full overlap gives 1/2."""

    name = "half_dice"

    def ratio(self, ref, pred, inter):
        return inter, ref + pred


class Unbounded(BaseComponent):
    """|G ∩ P| / min(|G|, |P|)^2: above 1 for small sets."""

    name = "unbounded"

    def ratio(self, ref, pred, inter):
        return inter, np.minimum(ref, pred) ** 2


class UnionLoss(BaseComponent):
    """|G ∪ P| / cells, a Hamming loss without the second |G ∩ P|: a full overlap is not 0."""

    name = "union_loss"
    reads_cells = True
    lower_is_better = True

    def ratio(self, ref, pred, inter, cells):
        return ref + pred - inter, cells


def test_check_metric_catches_wrong_values():
    with pytest.raises(AssertionError, match=r"^metric union_loss: a full overlap .* gives \[0\.5, 0\.5, 0\.5\], not 0"):
        check_metric(UnionLoss(UnionLoss.Params()))
    with pytest.raises(AssertionError, match=r"^metric half_dice: a full overlap .* gives \[0\.5, 0\.5, 0\.5\], not 1"):
        check_metric(DiceWithoutTwo(DiceWithoutTwo.Params()))
    with pytest.raises(AssertionError, match=r"^metric unbounded: value outside \[0, 1\] at ref=.*inter="):
        check_metric(Unbounded(Unbounded.Params()))


class IgnoresZeroDivision(BaseComponent):
    """Micro averaging that answers 0 for 0/0 whatever zero_division says."""

    name = "stubborn_micro"

    def sample_metrics(self, metrics):
        return []

    def reduce(self, summary: Summary, metric, zero_division):
        num, den = metric.ratio(summary.ref.sum(), summary.pred.sum(), summary.inter.sum())
        return float(num / den) if den else 0.0


class FirstClassOnly(BaseComponent):
    """The value of class 0: changes when classes are permuted."""

    name = "first_class"

    def sample_metrics(self, metrics):
        return []

    def reduce(self, summary: Summary, metric, zero_division):
        return float(summary.value(metric, zero_division)[0])


def test_check_averaging_catches_zero_division_and_class_order():
    with pytest.raises(
        AssertionError, match=r"^averaging stubborn_micro: precision of an empty table is 0\.0 with zero_division=1\.0"
    ):
        check_averaging(IgnoresZeroDivision(IgnoresZeroDivision.Params()))
    with pytest.raises(AssertionError, match=r"^averaging first_class: precision changes when the classes are permuted"):
        check_averaging(FirstClassOnly(FirstClassOnly.Params()))


class OffByOneGroup:
    """Exact matching, whose batched ``matrices`` scores every group as the first items instead."""

    name = "off_by_one_group"

    def __init__(self, params=None):
        self.params = params

    def matrix(self, xs, ys):
        return np.array([[float(x == y) for y in ys] for x in xs]).reshape(len(xs), len(ys))

    def matrices(self, items, sizes):
        return np.concatenate([self.matrix(items[:k], items[:k]).ravel() for k in sizes])


def test_check_similarity_compares_batched_matrices_with_matrix():
    from evalkit.testing import check_similarity

    with pytest.raises(AssertionError, match=r"^similarity off_by_one_group: matrices\(\) gives 1\.0 where matrix\(\) "
                       r"of each group gives 0\.0"):
        check_similarity(OffByOneGroup(), ["a", "a", "b"])  # its group ["b", "a"] is scored as ["a", "a"]


# ---------------------------------------------------------------------------------------------
# Data metrics
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["kld", "exact_match_ratio", "map", "map_binned", "best_fscore", "auroc"])
def test_every_builtin_matrix_data_metric_passes(name):
    check_data_metric(create("metric", name))


def test_omap_passes_on_audioset_classes():
    audioset = Path(__file__).resolve().parent.parent / "configs" / "data" / "audioset"
    mids = [line.split(",")[1] for line in (audioset / "class_labels_indices.csv").read_text().splitlines()[1:9]]
    rng = np.random.default_rng(1)
    reference = (rng.random((50, len(mids))) < 0.3).astype(float)
    reference[np.arange(50), rng.integers(0, len(mids), 50)] = 1  # every clip labelled (OmAP needs it)
    prediction = rng.random(reference.shape)
    metric = create("metric", {"name": "omap", "ontology": str(audioset / "ontology.json")})
    with pytest.raises(DataError, match="class_0"):  # the default names are no AudioSet classes
        check_data_metric(metric, reference, prediction)
    check_data_metric(metric, reference, prediction, classes=mids)


class _Mean(BaseComponent):
    """A data metric that breaks one property at a time (``broken``)."""

    name = "mean_match"
    weighted = True
    glossary: dict[str, str] = {}

    def __init__(self, broken: str) -> None:
        self.broken = broken

    def update(self, reference, prediction, weights=None):
        match = (np.abs(reference - prediction) < 0.5).all(axis=1).astype(float)
        if self.broken == "modifies":
            prediction[:] = 0
        if self.broken == "counts chunks":  # the denominator counts chunks, not samples
            return np.array([match.sum(), 1.0])
        w = np.ones(len(match)) if weights is None or self.broken == "ignores weights" else weights
        return np.array([w @ match, w.sum()])

    def compute(self, state):
        value = state[0] / state[1]
        if self.broken == "bare array":
            return {"mean_match": np.array([value, value])}
        if self.broken == "no glossary":
            return {"mean_match": value, "mean_match_ratio": value}
        return value


@pytest.mark.parametrize("broken,message", [
    ("counts chunks", r"the states of 2 chunks merged by \+ \(in this order\) give mean_match = "),
    ("bare array", r"compute\(\) returned a bare array for 'mean_match'; wrap it in PerClass or PerLevel"),
    ("no glossary", r"result 'mean_match_ratio' has no glossary line"),
    ("ignores weights", r"integer weights \(against each sample repeated as many times; 0 left out\) give"),
    ("modifies", r"update\(\) modified its input arrays"),
])
def test_check_data_metric_catches_each_broken_property(broken, message):
    with pytest.raises(AssertionError, match=rf"^data metric mean_match: {message}"):
        check_data_metric(_Mean(broken))


def test_a_correct_weighted_data_metric_passes():
    check_data_metric(_Mean("nothing"))


# ---------------------------------------------------------------------------------------------
# Loaders and report writers
# ---------------------------------------------------------------------------------------------

DATA = Path(__file__).resolve().parent.parent / "configs" / "data"


def loader_files(tmp_path: Path) -> dict[str, list[Path]]:
    """Files each built-in loader reads: the bundled data, and the same written in other formats."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    matrix = pd.read_csv(DATA / "quickstart" / "reference.csv")
    np.save(tmp_path / "reference.npy", matrix.iloc[:, 1:].to_numpy())
    pq.write_table(pa.Table.from_pandas(matrix, preserve_index=False), tmp_path / "reference.parquet")
    events = pd.read_csv(DATA / "events" / "reference.tsv", sep="\t")
    pq.write_table(pa.Table.from_pandas(events, preserve_index=False), tmp_path / "events.parquet")
    items = pd.DataFrame({"id": ["a", "a", "b", "c"], "item": ["café", "pizza", "gray", "tea"]})
    items.to_csv(tmp_path / "items.csv", index=False)
    pq.write_table(pa.Table.from_pandas(items, preserve_index=False), tmp_path / "items.parquet")
    return {
        "csv": [DATA / "quickstart" / "reference.csv", DATA / "quickstart" / "tiny.csv"],
        "csv_items": [tmp_path / "items.csv"],
        "events": [DATA / "events" / "reference.tsv", DATA / "desed" / "reference.tsv"],
        "jsonl": [DATA / "countries" / "reference.jsonl"],
        "maestro": [DATA / "maestro" / "reference"],
        "npy": [tmp_path / "reference.npy"],
        "npz": [DATA / "taggers" / "targets.npz"],
        "parquet": [tmp_path / "reference.parquet"],
        "parquet_events": [tmp_path / "events.parquet"],
        "parquet_items": [tmp_path / "items.parquet"],
        "sed_scores": [DATA / "desed" / "baseline"],
    }


def test_every_builtin_loader_is_given_files(tmp_path):
    assert set(loader_files(tmp_path)) == set(REGISTRY.names("loader"))


@pytest.mark.parametrize("name", REGISTRY.names("loader"))
def test_every_builtin_loader_passes(tmp_path, name):
    check_loader(create("loader", name), loader_files(tmp_path)[name])


@pytest.mark.parametrize("name", REGISTRY.names("report_writer"))
def test_every_builtin_report_writer_passes(name):
    check_report_writer(create("report_writer", name))


class _Csv(BaseComponent):
    """A small CSV matrix loader (id column, then classes) that breaks one property at a time."""

    name = "tiny_csv"
    kind = "matrix"
    suffixes = (".csv",)

    def __init__(self, broken: str = "") -> None:
        self.broken = broken

    def load(self, path, role):
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        if not lines:
            raise DataError(f"{path}: empty" if self.broken != "unnamed errors" else "empty")
        header = lines[0].split(",")
        rows = [line.split(",") for line in lines[1:]]
        for number, row in enumerate(rows, 2):
            if len(row) != len(header):
                if self.broken == "a traceback":
                    raise ValueError("ragged")
                raise DataError(f"{path}:{number}: {len(row)} fields, the header has {len(header)}")
        try:
            values = np.array([[float(x) for x in row[1:]] for row in rows], dtype=np.float64).reshape(len(rows), -1)
        except ValueError:
            raise DataError(f"{path}: a value that is no number") from None
        if self.broken == "drops a row":
            values, rows = values[:-1], rows[:-1]
        return LabelMatrix(values, tuple(header[1:]), tuple(r[0] for r in rows), str(path))

    def sample_ids(self, path):
        ids = [line.split(",", 1)[0] for line in Path(path).read_text(encoding="utf-8").splitlines()[1:]]
        return tuple(ids[::-1] if self.broken == "lists other ids" else ids)

    def stream(self, path, role, rows, start):
        whole = self.load(path, role)
        stop = len(whole) - (1 if self.broken == "streams short" else 0)
        for at in range(start, stop, rows):
            yield whole[at: min(at + rows, stop)]


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.csv"
    path.write_text("id,a,b\nx,0.5,1\ny,0,0.25\nz,1,0\n")
    return path


def test_a_correct_loader_passes(tiny):
    check_loader(_Csv(), [tiny])


@pytest.mark.parametrize("broken,message", [
    ("a traceback", r".*ragged\.csv raised PluginError: .*expected a DataError naming the file"),
    ("unnamed errors", r"the error for .*empty\.csv does not name the file: empty"),
    ("streams short", r"stream\(.*tiny\.csv, rows=1, start=0\) joined: 2 rows"),
    ("lists other ids", r"sample_ids\(\) of .*tiny\.csv are not the ids load\(\) gives, in its order"),
])
def test_check_loader_catches_each_broken_property(tiny, broken, message):
    ragged = tiny.with_name("ragged.csv")
    ragged.write_text("id,a,b\nx,0.5\n")
    with pytest.raises(AssertionError, match=rf"^loader tiny_csv: {message}"):
        check_loader(_Csv(broken), [tiny], bad_files=[ragged])


def test_check_loader_refuses_a_bad_file_that_loads(tiny, tmp_path):
    with pytest.raises(AssertionError, match=r"tiny\.csv loaded; it is one of the bad files it must refuse"):
        check_loader(_Csv(), [tiny], bad_files=[tiny])


class _Text(BaseComponent):
    """A one-file report writer that breaks one property at a time."""

    name = "tiny_text"
    suffix = ".md"

    def __init__(self, broken: str = "") -> None:
        self.broken = broken

    def render(self, results):
        shown = [f"{r.system} {r.class_} {r.value}" for r in results.rows]
        text = "\n".join(shown if self.broken == "raw names" else [s.encode("unicode_escape").decode() for s in shown])
        return text.replace("<", "&lt;") if self.broken != "raw names" else text


class _Pages(_Text):
    """Writes two files itself; ``broken``: with open(), not atomic_write."""

    def write(self, results, out):
        from evalkit.reporting import atomic_write

        paths = [out.with_name(f"{out.name}-{part}{self.suffix}") for part in ("a", "b")]
        for path in paths:
            if self.broken == "not atomic":
                path.write_text(self.render(results) + results.name)
            else:
                atomic_write(path, self.render(results) + results.name)
        return paths


def test_correct_report_writers_pass():
    check_report_writer(_Text())
    check_report_writer(_Pages())


@pytest.mark.parametrize("writer,message", [
    (_Text("raw names"), r"report\.md holds the control character '\\x1b' raw"),
    (_Pages("not atomic"), r"a failed write changed \['report-a\.md'\] and left \[\]: write each file with "
                           r"evalkit\.plugin\.atomic_write"),
])
def test_check_report_writer_catches_each_broken_property(writer, message):
    with pytest.raises(AssertionError, match=rf"^report writer tiny_text: {message}"):
        check_report_writer(writer)
