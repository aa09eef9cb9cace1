"""Parquet item lists (keywords): one item per row or a list per row, with or without classes,
give the item sets of the same lists as CSV (the loader rules shared); mistakes name the row;
a Parquet event list and a Parquet item list are told apart by their columns."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalkit
from evalkit.discovery import default_registry
from evalkit.errors import DataError

ROWS = [  # id, class, item: samples and classes in first-seen order, items in file order
    ("doc2", "topic", " pizza "), ("doc1", "topic", "café"), ("doc2", "place", "rome"),
    ("doc1", "topic", "hotel"), ("doc2", "topic", "pizza"), ("doc3", "place", "paris"),
]


def load(path, loader="parquet_items"):
    return default_registry().create("loader", loader).load(path, "reference")


def test_one_item_per_row_equals_the_csv_item_list(tmp_path):
    ids, classes, items = zip(*ROWS)
    pq.write_table(pa.table({"id": ids, "class": classes, "item": items}), tmp_path / "k.parquet")
    (tmp_path / "k.csv").write_text("id,class,item\n" + "".join(f"{i},{c},{t}\n" for i, c, t in ROWS), encoding="utf-8")
    from_parquet, from_csv = load(tmp_path / "k.parquet"), load(tmp_path / "k.csv", "csv_items")
    assert (from_parquet.samples, from_parquet.classes, from_parquet.ids) == (from_csv.samples, from_csv.classes, from_csv.ids)
    assert from_parquet.ids == ("doc2", "doc1", "doc3") and from_parquet.classes == ("topic", "place")
    assert from_parquet.samples[0] == (("pizza", "pizza"), ("rome",))  # stripped, repeats kept, file order


def test_a_list_per_row_equals_one_item_per_row(tmp_path):
    lists = {"id": ["doc2", "doc1", "doc2", "doc3", "doc4"], "class": ["topic", "topic", "place", "place", "topic"],
             "items": [[" pizza ", "pizza"], ["café", "hotel"], ["rome"], ["paris"], []]}
    pq.write_table(pa.table(lists), tmp_path / "lists.parquet")
    loaded = load(tmp_path / "lists.parquet")
    assert loaded.ids == ("doc2", "doc1", "doc3", "doc4")
    assert loaded.samples == ((("pizza", "pizza"), ("rome",)), (("café", "hotel"), ()), ((), ("paris",)), ((), ()))


def test_without_a_class_column_items_have_the_default_class(tmp_path):
    pq.write_table(pa.table({"id": ["a", "b", "a"], "item": ["x", "y", "z"]}), tmp_path / "k.parquet")
    loaded = load(tmp_path / "k.parquet")
    assert loaded.classes == ("items",) and loaded.samples == ((("x", "z"),), (("y",),))


@pytest.mark.parametrize(("table", "message"), [
    ({"id": ["a", None], "item": ["x", "y"]}, "column 'id': row 2 has no sample id"),
    ({"id": ["a", "b"], "item": ["x", None]}, "row 2 has no item"),
    ({"id": ["a", "b"], "item": ["x", "  "]}, "row 2: an empty item"),
    ({"id": ["a", "b"], "class": ["c", ""], "item": ["x", "y"]}, "row 2 has an empty class"),
    ({"id": ["a", "b"], "item": [1, 2]}, "column 'item' holds int64; items are text"),
    ({"id": ["a", "b"], "items": ["x", "y"]}, "column 'items' holds string; write a list of items per row"),
])
def test_mistakes_name_the_row_or_column(tmp_path, table, message):
    path = tmp_path / "k.parquet"
    pq.write_table(pa.table(table), path)
    with pytest.raises(DataError, match=message):
        load(path)


def test_runs_tell_item_lists_from_event_lists_by_their_columns(tmp_path):
    pq.write_table(pa.table({"id": ["d1", "d2"], "items": [["café", "pizza"], ["gray"]]}), tmp_path / "ref.parquet")
    pq.write_table(pa.table({"id": ["d2", "d1"], "items": [["grey"], ["cafe", "pizza"]]}), tmp_path / "sys.parquet")
    results = evalkit.run({
        "name": "k", "data": {"reference": str(tmp_path / "ref.parquet"), "systems": {"s": str(tmp_path / "sys.parquet")}},
        "representation": "soft_cardinality", "similarity": {"name": "levenshtein"}, "averaging": "micro",
        "metrics": ["f1"],
    })
    inline = evalkit.run({
        "name": "k", "data": {"reference": {"items": [["café", "pizza"], ["gray"]], "ids": ["d1", "d2"]},
                              "systems": {"s": {"items": [["cafe", "pizza"], ["grey"]], "ids": ["d1", "d2"]}}},
        "representation": "soft_cardinality", "similarity": {"name": "levenshtein"}, "averaging": "micro",
        "metrics": ["f1"],
    })
    assert [r.value for r in results.rows] == [r.value for r in inline.rows]  # the same items: the same computation
    events = tmp_path / "events.parquet"
    pq.write_table(pa.table({"filename": ["a.wav"], "onset": [0.0], "offset": [1.0], "event_label": ["dog"]}), events)
    from evalkit.sources import find_loader

    assert find_loader(events, tmp_path, "here", default_registry(), "items")[0].name == "parquet_events"
    assert find_loader(tmp_path / "ref.parquet", tmp_path, "here", default_registry(), "items")[0].name == "parquet_items"


def test_a_parquet_file_no_items_loader_recognises_says_which_to_name(tmp_path):
    pq.write_table(pa.table({"doc": ["a"], "words": [["x"]]}), tmp_path / "k.parquet")
    from evalkit.sources import find_loader

    with pytest.raises(DataError, match="none of the loaders of '.parquet' files for items data \\(.*parquet_items.*\\) "
                                        "recognises k.parquet .*loader: parquet"):
        find_loader(tmp_path / "k.parquet", tmp_path, "here", default_registry(), "items")
