"""Parquet matrices, wide and long: the numbers of the same data as CSV, to the last bit, rows
and columns in any order; and clear errors for what a Parquet table can hold wrongly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.errors import DataError

CLASSES = ["speech", "birds", "car"]


def frames(seed=0, n=30):
    rng = np.random.default_rng(seed)
    ids = pd.Index([f"clip{i:02d}" for i in range(n)], name="id")
    return (pd.DataFrame(rng.random((n, 3)).round(4), columns=CLASSES, index=ids),
            pd.DataFrame(rng.random((n, 3)).round(4), columns=CLASSES, index=ids))


def run(tmp_path, reference, systems):
    results = evalkit.run({
        "name": "parquet", "data": {"reference": str(reference), "systems": {k: str(v) for k, v in systems.items()}},
        "averaging": ["micro", "macro", "samples"], "metrics": ["precision", "recall", "f1", "kld"],
    })
    return {(r.system, r.averaging, r.metric): r.value for r in results.rows}, results.notes


def test_wide_long_and_csv_give_the_same_numbers(tmp_path):
    ref, pred = frames()
    ref.to_csv(tmp_path / "ref.csv")
    pred.to_csv(tmp_path / "pred.csv")
    ref.to_parquet(tmp_path / "ref.parquet")
    pred.sample(frac=1, random_state=1)[CLASSES[::-1]].to_parquet(tmp_path / "wide.parquet")  # index kept
    pred.reset_index().to_parquet(tmp_path / "column.parquet", index=False)  # ids in a column
    long = pred.reset_index().melt(id_vars="id", var_name="class", value_name="value")
    long.sample(frac=1, random_state=2).to_parquet(tmp_path / "long.parquet", index=False)
    csv, _ = run(tmp_path, tmp_path / "ref.csv", {"s": tmp_path / "pred.csv"})
    got, notes = run(tmp_path, tmp_path / "ref.parquet", {
        "s": tmp_path / "wide.parquet", "t": tmp_path / "column.parquet", "u": tmp_path / "long.parquet",
    })
    assert not notes
    for (system, averaging, metric), value in got.items():  # aligned: the CSV's arrays, the same computation
        assert value == csv[("s", averaging, metric)], (system, averaging, metric)


def test_a_long_table_without_a_pair_reads_it_as_zero(tmp_path):
    long = pd.DataFrame({"id": ["a", "a", "b"], "class": ["x", "y", "x"], "value": [0.5, 1.0, 0.25]})
    long.to_parquet(tmp_path / "long.parquet", index=False)
    prediction = pd.DataFrame({"x": [0.25, 0.5], "y": [0.0, 1.0]}, index=["b", "a"])
    got = evalkit.evaluate(str(tmp_path / "long.parquet"), prediction, metrics=["card_ref", "f1"])
    assert got == {"card_ref": 1.75, "f1": 1.0}  # b's y is 0 on both sides; quarters add up exactly


def test_rows_without_ids_are_matched_by_position_with_a_note(tmp_path):
    ref, pred = frames()
    ref.reset_index(drop=True).to_parquet(tmp_path / "ref.parquet", index=False)
    pred.reset_index(drop=True).to_parquet(tmp_path / "pred.parquet", index=False)
    _, notes = run(tmp_path, tmp_path / "ref.parquet", {"s": tmp_path / "pred.parquet"})
    assert notes == ["s: rows aligned with the reference by position: neither file has sample ids"]


@pytest.mark.parametrize(
    ("frame", "index", "message"),
    [
        (pd.DataFrame({"id": ["a", "b"], "speech": ["x", "y"]}), False, r"column\(s\) 'speech' are not numbers"),
        (pd.DataFrame({"id": ["a", "a"], "speech": [0.1, 0.2]}), False, "sample id 'a' appears twice"),
        (pd.DataFrame({"id": ["a", None], "speech": [0.1, 0.2]}), False, "column 'id': row 2 has no sample id"),
        (pd.DataFrame({"id": ["a", "a"], "class": ["x", "x"], "value": [0.1, 0.2]}), False,
         "sample 'a', class 'x' has two rows"),
        (pd.DataFrame({"id": ["a", "b"], "class": ["x", "y"], "value": ["p", "q"]}), False, "the value column holds"),
    ],
)
def test_bad_tables_are_errors_naming_the_file(tmp_path, frame, index, message):
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path, index=index)
    with pytest.raises(DataError, match=message) as caught:
        evalkit.evaluate(str(path), np.zeros((len(frame), 1)))
    assert str(path) in str(caught.value)


def test_a_file_that_is_not_parquet_is_an_error_naming_it(tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"PAR1 this is not a parquet file PAR1")
    with pytest.raises(DataError, match="broken.parquet: not a readable Parquet file"):
        evalkit.evaluate(str(path), np.zeros((1, 1)))


def test_a_nested_column_is_sized_by_its_leaves_and_named(tmp_path):
    """A struct column has two leaf columns in the footer but one field in the schema: sizing the
    footer's columns by the schema's fields ran past its end (IndexError, an internal error).
    Each leaf is sized by its own type; the struct is then named as a column that is no number."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from evalkit.loading import _inflated

    path = tmp_path / "nested.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "s": pa.array([{"x": 1.0, "y": 2.0}] * 2), "speech": [0.1, 0.2]}), path)
    meta = pq.read_metadata(path)
    group = meta.row_group(0)
    leaves = [group.column(c) for c in range(group.num_columns)]
    assert [c.path_in_schema for c in leaves] == ["id", "s.x", "s.y", "speech"]
    # fixed width only for the top-level double; the text and the struct's leaves by their pages
    pages = sum(c.total_uncompressed_size + 8 * 2 for c in leaves[:3])
    assert _inflated(meta) == pages + 2 * 8
    with pytest.raises(DataError, match=rf"^{path}: column\(s\) 's' are not numbers"):
        evalkit.evaluate(path, path)
