"""Data files: nothing silent, every error names its file (issue 12).

One test per reproducer: each input that used to change the numbers without a word, or to end
in "a bug in the plugin", now gives the right number or a clear error naming the file and line.
The property-based side of the same promise is ``tests/test_fuzz_data.py``.
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from allocation import allocation_peak
from hypothesis import given, settings
from hypothesis import strategies as st
from in_process import evalkit_cli
from run_depth import examples

import evalkit
import evalkit.api
import evalkit.discovery
import evalkit.plugin
from evalkit import budget
from evalkit.data import LabelMatrix, align
from evalkit.errors import DataError, PluginError
from evalkit.items import ItemSets
from evalkit.loading import unique_ids
from evalkit.testing import plugin_registry
from evalkit_loaders import _DECIMAL, PLAIN_BYTES, DelimitedLoader, DelimitedParams, _plain, _read

REF = "id,speech,birds\na,0.9,0.1\nb,0.2,0.8\nc,1.0,0.0\n"


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def run(reference: Any, system: Any, representation: str = "fuzzy", registry: Any = None, **data: Any) -> Any:
    config = {
        "data": {"reference": str(reference), "systems": {"s": str(system) if isinstance(system, Path) else system}, **data},
        "representation": representation, "averaging": "micro", "metrics": ["precision"],
    }
    return evalkit.run(config, registry=registry)


def precision(reference: Any, system: Any, representation: str = "fuzzy", **data: Any) -> float:
    return run(reference, system, representation, **data).rows[0].value


# --- 1. nothing silent ---------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["same", "reversed"])
def test_a_repeated_sample_id_is_an_error_whatever_the_other_sides_order(tmp_path, order):
    """The check used to run only when the orders differed (precision 0.862 -> 0.667)."""
    twice = "id,speech,birds\na,0.9,0.1\nb,0.2,0.8\na,0.1,0.9\n"
    system = twice if order == "same" else "id,speech,birds\na,0.1,0.9\nb,0.2,0.8\na,0.9,0.1\n"
    ref, sys_ = write(tmp_path, "ref.csv", twice), write(tmp_path, "sys.csv", system)
    with pytest.raises(DataError, match=r"ref\.csv:4: sample id 'a' appears twice \(first on line 2\); each sample "
                                        r"needs its own id: merge the rows or rename one"):
        run(ref, sys_)


def test_a_repeated_id_in_a_system_alone_is_an_error(tmp_path):
    ref = write(tmp_path, "ref.csv", REF)
    system = write(tmp_path, "sys.csv", "id,speech,birds\na,0.9,0.1\nb,0.2,0.8\nb,1.0,0.0\n")
    with pytest.raises(DataError, match=r"sys\.csv:4: sample id 'b' appears twice \(first on line 3\)"):
        run(ref, system)


def test_align_checks_the_ids_of_every_side_even_in_the_same_order():
    """Data from Python or a third-party loader has no lines: the rows are named."""
    ref = LabelMatrix(np.eye(2), ("x", "y"), ("a", "a"), "reference")
    with pytest.raises(DataError, match=r"reference: row 2: sample id 'a' appears twice \(first on row 1\)"):
        align(ref, LabelMatrix(np.eye(2), ("x", "y"), ("a", "a"), "prediction"))


class SameHash(str):
    """Ids whose hashes all collide: the duplicate check must then compare the ids themselves."""

    def __hash__(self) -> int:
        return 0


@pytest.mark.parametrize(("ids", "distinct"), [(["a", "b", "c"], True), (["a", "b", "a"], False)])
def test_the_duplicate_check_survives_colliding_hashes(ids, distinct):
    colliding = [SameHash(i) for i in ids]
    if distinct:
        unique_ids(colliding, "f.csv")
    else:
        with pytest.raises(DataError, match="f.csv: row 3: sample id 'a' appears twice"):
            unique_ids(colliding, "f.csv")


def test_a_numeric_id_or_time_column_under_an_unknown_header_is_refused(tmp_path):
    """(A header named like a time, `start`, is refused by its name whatever its values: below.)"""
    times = "t,speech,birds\n0,0.9,0.1\n2.5,0.2,0.8\n5,1.0,0.0\n"
    ref, system = write(tmp_path, "ref.csv", times), write(tmp_path, "sys.csv", times)
    with pytest.raises(DataError) as info:
        run(ref, system, clip=True)  # with clip: true it used to be scored as a class, clipped to 1
    assert str(info.value) == (
        f"{ref}:1: the first column 't' looks like sample ids or times (strictly increasing, 0 to 5), not "
        "the memberships of a class. Say which it is: `{path: ref.csv, loader: {name: csv, id_column: t}}` "
        "reads it as the sample ids; `loader: {name: csv, id_column: false}` as a class"
    )


def test_the_id_column_option_names_the_ids_or_says_there_are_none(tmp_path):
    times = "start,speech,birds\n0,0.9,0.1\n2.5,0.2,0.8\n5,1.0,0.0\n"
    named = "id,speech,birds\n0,0.9,0.1\n2.5,0.2,0.8\n5,1.0,0.0\n"
    ref = write(tmp_path, "ref.csv", named)
    system = {"path": str(write(tmp_path, "sys.csv", times)), "loader": {"name": "csv", "id_column": "start"}}
    assert run(ref, system).rows[0].value == precision(ref, ref)  # aligned, the same values: the same computation
    # the id column may be anywhere, and its name is matched like every header: stripped
    moved = write(tmp_path, "moved.csv", "speech, start ,birds\n0.2,2.5,0.8\n0.9,0,0.1\n1.0,5,0.0\n")
    assert run(ref, {"path": str(moved), "loader": {"name": "csv", "id_column": "start"}}).rows[0].value == precision(ref, ref)
    # no id column: every column is a class; against a reference with ids, that is an error
    plain = write(tmp_path, "plain.csv", "speech,birds\n0.9,0.1\n0.2,0.8\n1.0,0.0\n")
    with pytest.raises(DataError, match=r"plain\.csv: no sample ids, but .*ref\.csv has them, so rows cannot be matched"):
        run(ref, {"path": str(plain), "loader": {"name": "csv", "id_column": False}})
    with pytest.raises(DataError, match=r"sys\.csv:1: no column 'strat' \(the loader's `id_column`\); did you mean "
                                        r"'start'\? The header has: 'start', 'speech', 'birds'"):
        run(ref, {"path": str(tmp_path / "sys.csv"), "loader": {"name": "csv", "id_column": "strat"}})


def test_increasing_memberships_are_not_mistaken_for_ids(tmp_path):
    """Values within [0, 1] are memberships, however ordered; the check only refuses values above 1."""
    rising = write(tmp_path, "rising.csv", "speech,birds\n0.1,0.5\n0.4,0.2\n0.9,0.7\n")
    assert precision(rising, rising) == 1.0  # min(x, x) = x: the same sum over itself


def test_a_class_twice_in_a_header_is_an_error_naming_both_columns(tmp_path):
    ref = write(tmp_path, "ref.csv", "id,speech,birds,speech\na,0.9,0.1,0.0\nb,0.2,0.8,1.0\n")
    with pytest.raises(DataError, match=r"ref\.csv:1: columns 2 and 4 are both named 'speech'; one would silently "
                                        r"replace the other: rename or remove one"):
        run(ref, ref)
    unnamed = write(tmp_path, "unnamed.csv", "id,speech,\na,0.9,0.1\n")
    with pytest.raises(DataError, match=r"unnamed\.csv:1: column 3 has no name; name every column"):
        run(unnamed, unnamed)


def test_a_key_twice_in_a_json_lines_object_is_an_error(tmp_path):
    ref = write(tmp_path, "ref.jsonl", '{"id": "a", "items": ["x"]}\n')
    system = write(tmp_path, "sys.jsonl", '{"id": "a", "items": ["x"], "items": ["y"]}\n')
    with pytest.raises(DataError, match=r"sys\.jsonl:1: key 'items' appears twice in one object; the second would "
                                        r"silently replace the first: remove or rename one"):
        run(ref, system, "exact_match")


@pytest.mark.parametrize("row,problem", [
    ("b,z,extra\n", r"sys\.csv:3: 3 fields, but the header has 2"),
    ("b,\n", r"sys\.csv:3: an empty item; remove it, or write the item \(an empty set is no items\)"),
    ("b,   \n", r"sys\.csv:3: an empty item"),
    (",z\n", r"sys\.csv:3: empty sample id; give every sample an id"),
])
def test_csv_items_rows_with_an_extra_field_or_an_empty_item_are_errors(tmp_path, row, problem):
    ref = write(tmp_path, "ref.csv", "id,item\na,x\nb,z\n")
    system = write(tmp_path, "sys.csv", "id,item\na,x\n" + row)
    with pytest.raises(DataError, match=problem):
        run(ref, system, "exact_match")


def test_csv_items_with_a_class_column_name_every_rows_class(tmp_path):
    ref = write(tmp_path, "ref.csv", "id,item,class\na,x,k\n")
    with pytest.raises(DataError, match=r"sys\.csv:2: empty class; with a class column, every row names its class"):
        run(ref, write(tmp_path, "sys.csv", "id,item,class\na,x,\n"), "exact_match")


def test_a_node_link_ontology_linking_to_an_undeclared_node_is_an_error(tmp_path):
    from evalkit_ontology import load_ontology

    graph = {"directed": True, "nodes": [{"id": "a"}, {"id": "b"}],
             "links": [{"source": "a", "target": "b"}, {"source": "a", "target": "c"}]}
    path = write(tmp_path, "graph.json", json.dumps(graph))
    with pytest.raises(DataError) as info:
        load_ontology(path)
    assert str(info.value) == (
        f"ontology {str(path)!r}: 1 node(s) in 'links' but not in 'nodes', first 'c' (in {{'source': 'a', "
        "'target': 'c'}); declare every node under 'nodes', or fix the link"
    )


def test_item_and_id_files_are_stripped_by_one_rule(tmp_path):
    """JSON Lines items with surrounding spaces used to be other strings than the same items in CSV."""
    ref = write(tmp_path, "ref.jsonl", '{"id": "a", "items": ["x", "y"]}\n{"id": "b", "items": ["z"]}\n')
    spaced = write(tmp_path, "spaced.jsonl", '{"id": " a ", "items": [" x", "y "]}\n{"id": "b", "items": ["z\\t"]}\n')
    assert precision(ref, spaced, "exact_match") == precision(ref, ref, "exact_match") == 1.0
    rows = write(tmp_path, "rows.csv", "id,item\n a , x \na,y\nb,z \n")
    assert precision(ref, rows, "exact_match") == 1.0
    empty = write(tmp_path, "empty.jsonl", '{"id": "a", "items": ["x", " "]}\n{"id": "b", "items": ["z"]}\n')
    with pytest.raises(DataError, match=r"empty\.jsonl:1: an empty item"):
        run(ref, empty, "exact_match")


@pytest.mark.parametrize("suffix", [".npy", ".npz"])
def test_complex_values_are_refused(tmp_path, suffix):
    """Converting them to float dropped the imaginary part with one numpy warning."""
    values = np.array([[0.5 + 0.5j, 0.0], [1.0, 0.2j]])
    path = tmp_path / f"complex{suffix}"
    np.save(path, values) if suffix == ".npy" else np.savez(path, values=values)
    where = r"complex\.npy" if suffix == ".npy" else r"complex\.npz \(member 'values\.npy'\)"
    with pytest.raises(DataError, match=where + r": values have dtype complex128; expected real numbers"):
        run(path, path)


def test_alignment_by_position_is_announced(tmp_path):
    ref = write(tmp_path, "ref.csv", "speech,birds\n0.9,0.1\n0.2,0.8\n")
    system = write(tmp_path, "sys.csv", "speech,birds\n0.2,0.8\n0.9,0.1\n")
    results = run(ref, system)
    note = "s: rows aligned with the reference by position: neither file has sample ids"
    assert results.notes == [note]
    assert json.loads(evalkit.plugin.create_component("report_writer", "json").render(results))["notes"] == [note]
    assert not run(write(tmp_path, "ids.csv", REF), write(tmp_path, "ids2.csv", REF)).notes
    inline = evalkit.run({"data": {"reference": [[0.9, 0.1]], "systems": {"s": [[0.9, 0.1]]}}, "representation": "fuzzy",
                          "averaging": "micro", "metrics": ["precision"]})
    assert not inline.notes  # rows written side by side in a config are positional by nature


# --- 2. data errors name their file ---------------------------------------------------------------

NOT_UTF8 = b"\xff\xfe"


@pytest.mark.parametrize("name,content,representation,line", [
    ("bad.csv", b"id,speech,birds\na,0.9,0.1\nb,0.2,0.8\xff\n", "fuzzy", 3),
    ("bad.tsv", b"id\tspeech\tbirds\na\t0.9\t0.1\n\xe9\t0.2\t0.8\n", "fuzzy", 3),
    ("bad.jsonl", b'{"id": "a", "items": ["x"]}\n{"id": "b", "items": ["caf\xe9"]}\n', "exact_match", 2),
    ("bad_items.csv", b"id,item\na,x\nb,caf\xe9\n", "exact_match", 3),
    ("events.tsv", b"a.wav\t0\t1\tdog\nb.wav\t0\t1\t\xff\xfe\n", "segments", 2),
])
def test_text_that_is_not_utf8_is_a_data_error_naming_the_file_and_line(tmp_path, name, content, representation, line):
    path = write(tmp_path, name, content)
    with pytest.raises(DataError, match=rf"{name}: not UTF-8 text \(line {line}: byte 0x[0-9a-f]{{2}} at offset \d+\); "
                                        "save it as UTF-8") as info:
        run(path, path, representation)
    assert not isinstance(info.value, PluginError)


def test_a_maestro_file_that_is_not_utf8_is_named(tmp_path):
    folder = tmp_path / "maestro"
    folder.mkdir()
    write(folder, "a.txt", "0\t1\tdog\t0.5\n")
    write(folder, "b.txt", b"0\t1\tdog\t0.5\n1\t2\tc\xe2t\t0.5\n")
    with pytest.raises(DataError, match=r"maestro/b\.txt: not UTF-8 text \(line 2: byte 0xe2 at offset 17\)"):
        run(folder, folder)


def test_a_csv_field_over_128_kib_is_a_data_error_with_its_line(tmp_path):
    ref = write(tmp_path, "ref.csv", "id,item\na,x\n")
    system = write(tmp_path, "sys.csv", 'id,item\na,x\nb,"' + "y" * 140_000 + "\n")
    with pytest.raises(DataError, match=r"sys\.csv:3: not valid CSV \(field larger than field limit \(131072\): a field "
                                        r"over 128 KiB, often a quote that is never closed\)"):
        run(ref, system, "exact_match")


def test_truncated_or_corrupt_numpy_files_are_data_errors(tmp_path):
    np.save(tmp_path / "good.npy", np.eye(3))
    data = (tmp_path / "good.npy").read_bytes()
    cases = {
        "short.npy": (data[:-8], r"short\.npy: the header promises 72 bytes \(float64, shape \(3, 3\)\) but 64 follow it; "
                                 "the file is truncated or corrupt"),
        "long.npy": (data + b"\0" * 8, r"long\.npy: the header promises 72 bytes .* but 80 follow it"),
        "header.npy": (data[:40], r"header\.npy: cannot be read: it is truncated, corrupt or not in the format its "
                                  r"loader reads \(ValueError: EOF: reading array header"),
        "magic.npy": (b"\x93NUMPX" + data[6:], r"magic\.npy: cannot be read: .*magic string"),
        "empty.npy": (b"", r"empty\.npy: cannot be read: .*magic string"),
    }
    for name, (content, problem) in cases.items():
        path = write(tmp_path, name, content)
        with pytest.raises(DataError, match=problem):
            run(path, path)


def test_corrupt_npz_archives_name_the_file_and_member(tmp_path):
    buffer = io.BytesIO()
    np.savez(buffer, values=np.eye(3), classes=np.array(["a", "b", "c"]))
    data = buffer.getvalue()
    truncated = write(tmp_path, "truncated.npz", data[: len(data) // 2])
    with pytest.raises(DataError, match=r"truncated\.npz: cannot be read: .*BadZipFile: File is not a zip file"):
        run(truncated, truncated)
    flipped = bytearray(data)
    flipped[data.index(b"\x93NUMPY") + 130] ^= 0xFF  # a byte of the values: the CRC no longer matches
    path = write(tmp_path, "flipped.npz", bytes(flipped))
    with pytest.raises(DataError, match=r"flipped\.npz \(member 'values\.npy'\): cannot be read: .*Bad CRC-32"):
        run(path, path)


def test_a_repeated_npz_class_or_id_is_an_error(tmp_path):
    path = tmp_path / "twice.npz"
    np.savez(path, values=np.eye(2), classes=np.array(["a", "a"]))
    with pytest.raises(DataError, match=r"twice\.npz \(member 'classes\.npy'\): classes 1 and 2 are both named 'a'"):
        run(path, path)
    np.savez(path, values=np.eye(2), ids=np.array([b"x", b"x"]))
    with pytest.raises(DataError, match=r"twice\.npz \(member 'ids\.npy'\): row 2: sample id 'x' appears twice"):
        run(path, path)


def test_an_npz_is_checked_against_the_memory_before_decompression(tmp_path, monkeypatch):
    """A small archive that inflates beyond the memory is refused at once, with both figures."""
    path = tmp_path / "bomb.npz"
    np.savez_compressed(path, values=np.zeros((1_000_000, 10)))  # 80 MB of zeros in about 80 KB
    assert path.stat().st_size < 200_000
    monkeypatch.setattr("evalkit.budget.available_memory", lambda: 64 * 2**20)

    def no_decompression(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("decompressed before the check")

    monkeypatch.setattr(zipfile.ZipFile, "open", no_decompression)
    with pytest.raises(DataError, match=rf"^{path}: its arrays, decompressed, would take 76.3 MiB of memory, but 64 MiB "
                                        "is available; use a smaller file, or a machine with more memory$"):
        run(path, path)


def test_an_object_array_is_not_unpickled(tmp_path):
    path = tmp_path / "objects.npy"
    np.save(path, np.array([[{"a": 1}]], dtype=object), allow_pickle=True)
    with pytest.raises(DataError, match=r"objects\.npy: holds Python objects, which evalkit does not unpickle"):
        run(path, path)


def test_harmless_variations_give_identical_numbers(tmp_path):
    """UTF-8 with a BOM, CRLF line ends, quoting, class column order and row order (with ids)."""
    system = "id,speech,birds\na,0.7,0.3\nb,0.1,0.6\nc,0.8,0.2\n"
    ref = write(tmp_path, "ref.csv", REF)
    expected = precision(ref, write(tmp_path, "plain.csv", system))
    variants = {
        "bom.csv": "\ufeff" + system,
        "crlf.csv": system.replace("\n", "\r\n"),
        "quoted.csv": '"id","speech","birds"\n"a","0.7","0.3"\n"b","0.1","0.6"\n"c","0.8","0.2"\n',
        "columns.csv": "id,birds,speech\na,0.3,0.7\nb,0.6,0.1\nc,0.2,0.8\n",
        "rows.csv": "id,speech,birds\nc,0.8,0.2\na,0.7,0.3\nb,0.1,0.6\n",
        "spaces.csv": "id , speech,birds \n a ,0.7, 0.3\nb,0.1,0.6\nc ,0.8,0.2\n\n",
        "tabs.tsv": system.replace(",", "\t"),
    }
    for name, text in variants.items():  # aligned by id and class name: the same arrays, bit for bit
        assert precision(ref, write(tmp_path, name, text)) == expected, name


#: Plain decimals of every form the pattern takes, and the shortest text of any finite double.
DECIMALS = st.from_regex(_DECIMAL, fullmatch=True) | st.floats(allow_nan=False, allow_infinity=False).map(repr)


@settings(max_examples=examples(200), deadline=None)
@given(rows=st.lists(st.tuples(DECIMALS, DECIMALS), max_size=12), ids=st.booleans())
def test_a_small_csv_is_read_without_pandas_to_the_same_bits(tmp_path_factory, rows, ids):
    """A small file of plain decimals is read by the csv module, not pandas (whose import costs
    more than the parse): each value is ``float`` of its text, as pandas' reader gives it."""
    names, id_index = ("id", "a", "b")[not ids:], 0 if ids else None
    lines = [names, *([f"x{i}", a, b][not ids:] for i, (a, b) in enumerate(rows))]
    path = tmp_path_factory.mktemp("plain") / "s.csv"
    path.write_text("".join(",".join(line) + "\n" for line in lines))
    read = _plain(path, ",", names, id_index)
    assert read is not None
    values, raw_ids = read
    expected = np.array([[float(a), float(b)] for a, b in rows]).reshape(len(rows), 2)
    np.testing.assert_array_equal(values.view(np.int64), expected.view(np.int64))  # read from text: the same bits, -0 too
    assert raw_ids == ([f"x{i}" for i in range(len(rows))] if ids else None)
    by_pandas = _read(path, ",", len(names), id_index)
    np.testing.assert_array_equal(by_pandas[0].view(np.int64), values.view(np.int64))
    assert by_pandas[1] == raw_ids


@pytest.mark.parametrize("text", [
    "a,b\n0.5, 0.5\n",  # a space: pandas' rules for it
    "a,b\n0.5,nan\n",  # not a plain decimal: pandas reads it, the loader's check names it
    "a,b\n0.5,inf\n",
    "a,b\n0.5,1_0\n",  # float() would read 10
    "a,b\n0.5\n",  # a short row: its message comes from the columnar reader's diagnosis
    '"a","b"\n0.5,0.5\n',  # quotes
    "a,b\n" + "0.5,0.5\n" * (PLAIN_BYTES // 8),  # too large to be worth the csv module
])
def test_other_csv_files_are_left_to_the_columnar_reader(tmp_path, text):
    assert _plain(write(tmp_path, "s.csv", text), ",", ("a", "b"), None) is None



@pytest.mark.parametrize("blank", ["", " \t ", "\f", "\v", "\x1c", "\x85", "\u2028", "\u00a0"])
def test_a_line_is_blank_to_the_small_file_reader_as_to_the_columnar_one(tmp_path, blank):
    """Only an empty line or one of spaces and tabs is skipped, by both readers; any other line
    that ``str.strip`` empties (a form feed, a no-break space, ...) is a short row, refused with
    its line by both (a review found the small-file reader skipping them)."""
    text = f"id,a,b\nx,0.5,0.5\n{blank}\ny,0.1,0.2\n"
    small = write(tmp_path, "small.csv", text)
    large = write(tmp_path, "large.csv", text + "".join(f"z{i},0.5,0.5\n" for i in range(PLAIN_BYTES // 10)))
    results = []
    for path in (small, large):
        try:
            results.append(DelimitedLoader(DelimitedParams()).load(path, "reference").values[:2].tolist())
        except DataError as exc:
            results.append(str(exc).replace(str(path), "FILE"))
    assert results[0] == results[1]
    skipped = blank.strip(" \t") == ""
    assert results[0] == ([[0.5, 0.5], [0.1, 0.2]] if skipped else
                          "FILE:3: 1 field, but the header has 3; a value is missing, or the line is not a row of values "
                          "(delete it)")

# --- the loader guard: I/O and decode errors are data errors, plugin bugs stay plugin bugs ---------


class _Raising:
    name = "raising"
    kind = "matrix"
    suffixes = (".raw",)
    Params = evalkit.plugin.NoParams
    error: Exception = UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    def __init__(self, params: Any) -> None:
        self.params = params

    def load(self, path: Path, role: str) -> Any:
        raise self.error


class _Plugin:
    @staticmethod
    @evalkit.plugin.hookimpl
    def evalkit_register_loaders(register):
        register(_Raising)


@pytest.mark.parametrize("error,expected", [
    (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"), DataError),
    (OSError(5, "Input/output error"), DataError),
    (EOFError("truncated"), DataError),
    (zipfile.BadZipFile("File is not a zip file"), DataError),
    (ZeroDivisionError("division by zero"), PluginError),
    (ValueError("a bug of the plugin's own"), PluginError),
])
def test_a_third_party_loaders_io_errors_are_data_errors_naming_the_file(tmp_path, monkeypatch, error, expected):
    monkeypatch.setattr(_Raising, "error", error)
    registry = plugin_registry({"evalkit-raising:raising": _Plugin})
    path = write(tmp_path, "data.raw", b"\xff\n")
    with pytest.raises(expected) as info:
        run(path, path, registry=registry)
    assert type(info.value) is expected
    if expected is DataError:
        assert str(info.value).startswith(f"{path}: ") and "bug in the plugin" not in str(info.value)
    else:
        assert "This is a bug in the plugin" in str(info.value)


def test_missing_empty_also_fills_samples_only_a_system_lists(tmp_path):
    """A sparse reference (only its active segments, as MAESTRO folders list them) against a
    system with every segment: under `missing: empty` the segments absent from the reference are
    empty there, and the numbers are those of the dense reference; the notes say how many."""
    ids = [f"rec@{k}" for k in range(6)]
    dense = np.array([[1.0, 0.0], [0.0, 0.0], [0.5, 1.0], [0.0, 0.0], [0.0, 0.3], [0.0, 0.0]])
    system = np.array([[0.8, 0.1], [0.2, 0.0], [0.4, 0.9], [0.0, 0.6], [0.1, 0.2], [0.7, 0.0]])
    active = dense.any(axis=1)
    config = {"name": "sparse", "representation": ["fuzzy", "crisp"], "averaging": ["micro", "macro", "samples"],
              "metrics": ["precision", "recall", "f1", "hamming_loss", "kld"]}

    def run(reference_rows, missing):
        data = {"reference": {"values": dense[reference_rows].tolist(), "classes": ["a", "b"],
                              "ids": [i for i, keep in zip(ids, reference_rows) if keep]},
                "systems": {"s": {"values": system.tolist(), "classes": ["a", "b"], "ids": ids}}, "missing": missing}
        return evalkit.run({**config, "data": data})

    with pytest.raises(DataError, match="3 id\\(s\\) not in the reference"):
        run(active, "error")
    sparse, full = run(active, "empty"), run(np.ones(6, bool), "error")
    assert [r.measure for r in sparse.rows] == [r.measure for r in full.rows]
    assert [r.value for r in sparse.rows] == pytest.approx([r.value for r in full.rows], rel=1e-12)  # rows in another order
    assert "3 sample(s) that only systems list are empty in the reference (missing: empty)" in sparse.notes


# --- issue 23: odd files ---------------------------------------------------------------------------


def special_path(folder: Path, kind: str) -> Path:
    """A real FIFO, or a real ``.csv`` link to ``/dev/zero``: reading either never ends."""
    path = folder / "system.csv"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize("folder", [False, True])
@pytest.mark.parametrize(("kind", "what"), [
    ("fifo", "is a FIFO (named pipe)"), ("dev-zero", "is a character device, a link to /dev/zero"),
])
def test_a_data_path_that_is_no_regular_file_is_refused_by_validate(tmp_path, kind, what, folder):
    """They passed `validate`, then `run` hung hashing them: now both refuse them in the plan,
    in a data folder too (where they were skipped without a word)."""
    (tmp_path / "folder").mkdir()
    special = special_path(tmp_path / "folder" if folder else tmp_path, kind)
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({
        "data": {"reference": str(write(tmp_path, "ref.csv", REF)), "systems": {"s": str(special.parent if folder else special)}},
        "representation": "fuzzy", "averaging": "micro", "metrics": ["precision"],
    }), encoding="utf-8")
    expected = (f"the data path '{special}' {what}, not a regular file; evalkit reads a data file more "
                "than once (to check, hash and load it): save the data to a file and name that")
    checked = evalkit_cli("validate", config)  # first: a `run` that reads the path would never end
    assert checked.returncode == 1 and expected in checked.stderr, checked.stderr
    ran = evalkit_cli("run", config)
    assert (ran.returncode, ran.stderr) == (1, checked.stderr)


@pytest.mark.parametrize("member", [None, "values"])
def test_a_zero_dimensional_array_is_a_data_error(tmp_path, member):
    """A 0-d .npy (or .npz member) was "a bug in the plugin" (IndexError)."""
    path = tmp_path / ("one.npy" if member is None else "one.npz")
    np.save(path, np.array(0.5)) if member is None else np.savez(path, values=np.array(0.5))
    where = str(path) + ("" if member is None else " (member 'values.npy')")
    with pytest.raises(DataError, match=re.escape(f"{where}: a single number (a 0-d array); expected a 2-D (samples x "
                                                  "classes) matrix, or 1-D for one class")):
        run(path, path)


@pytest.mark.parametrize("representation", ["threshold_match", "soft_cardinality", "exact_match"])
def test_item_representations_fill_an_empty_table_for_no_classes(representation):
    """`threshold_match` with no classes was "a bug in the plugin" (the cells' offsets assumed one
    cell); a config refuses `classes: []` (tests/test_plan.py), the API gets the empty table."""
    registry = evalkit.discovery.default_registry()
    items = ItemSets.from_python([{"a": ["x", "y"]}, {"a": ["z"]}]).select([])
    table = registry.create("representation", representation).cardinalities(
        items, items, tnorm=None, similarity=registry.create("similarity", "levenshtein"),
    )
    assert [a.shape for a in (table.ref, table.pred, table.inter)] == [(2, 0)] * 3


TIMED = "start,speech,birds\n0,0.9,0.1\n0.5,0.2,0.8\n1.0,1.0,0.0\n"  # REF's classes after a column of times
TIMED_SYSTEM = "start,speech,birds\n0,0.7,0.3\n0.5,0.1,0.6\n1.0,0.8,0.2\n"


@pytest.mark.parametrize("stream", [False, True])
def test_a_column_named_like_a_time_is_never_a_class_unless_classes_names_it(tmp_path, stream):
    """``start`` holding 0, 0.5, 1.0 passed the increasing-above-1 check and was scored as a class
    (micro precision 0.909 where the real classes give 0.862)."""
    ref, system = write(tmp_path, "ref.csv", TIMED), write(tmp_path, "sys.csv", TIMED_SYSTEM)
    with pytest.raises(DataError, match=re.escape(
        f"{ref}: column 'start' is named like a time or a sample id, so evalkit does not score it as a class. List the "
        "classes to score, `data: classes: [speech, birds, ...]` (with 'start' among them to score it too), or, if it "
        "holds the sample ids, make it the id column (CSV: `loader: {name: csv, id_column: start}`)"
    )):
        run(ref, system, stream=stream)
    without = precision(write(tmp_path, "r.csv", "speech,birds\n0.9,0.1\n0.2,0.8\n1.0,0.0\n"),
                        write(tmp_path, "s.csv", "speech,birds\n0.7,0.3\n0.1,0.6\n0.8,0.2\n"))
    assert precision(ref, system, classes=["speech", "birds"], stream=stream) == without
    with_times = precision(write(tmp_path, "rt.csv", TIMED.replace("start", "t")),
                           write(tmp_path, "st.csv", TIMED_SYSTEM.replace("start", "t")))
    assert precision(ref, system, classes=["start", "speech", "birds"], stream=stream) == with_times
    assert without != with_times  # the column does change the numbers: 0.862 vs 0.909


@pytest.mark.parametrize(("extra", "expected"), [
    ({"classes": np.array(["a", "b", "c"])}, ": 'values' has 10 columns but 'classes' has 3 class names"),
    ({"ids": np.array(["x", "y"])}, ": 'values' has 1,000,000 rows but 'ids' has 2 ids"),
    ({"classes": np.array([["a"] * 10])}, " (member 'classes.npy'): shape (1, 10); expected a 1-D array of names"),
])
def test_npz_members_that_do_not_fit_together_are_refused_before_inflating(tmp_path, extra, expected):
    """An archive inflating to gigabytes was read whole (27 s for 3.1 GB) before its classes
    were found not to fit: the members' headers are compared first. Its 76 MiB of values are
    never allocated (traced)."""
    path = tmp_path / "big.npz"
    np.savez_compressed(path, values=np.zeros((1_000_000, 10)), **extra)
    with allocation_peak() as peak, pytest.raises(DataError, match=re.escape(f"{path}{expected}")):
        run(path, path)
    assert peak.mib < 16, peak.mib


def test_a_parquet_file_is_checked_against_the_memory_before_reading(tmp_path, monkeypatch):
    """Its pages say nothing of the memory (10,000,000 zeros fit in 8 KB): the footer's row
    counts times the columns' widths do, plus the float64 matrix they become. Under a limit the
    file read as "not a readable Parquet file (malloc failed)"."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "zeros.parquet"
    rows, columns = 1_000_000, 10
    pq.write_table(pa.table({f"c{i}": np.zeros(rows) for i in range(columns)}), path, compression="zstd")
    assert path.stat().st_size < 1_000_000
    monkeypatch.setattr("evalkit.budget.available_memory", lambda: 64 * 2**20)
    needed = budget.human(rows * columns * 8 * 2)  # the columns as read, then the matrix
    with pytest.raises(DataError, match=re.escape(f"{path}: its columns, decompressed, and their float64 matrix, would "
                                                  f"take {needed} of memory, but 64 MiB is available")):
        run(path, path)


def test_a_system_declaring_other_classes_is_refused_before_its_values_are_read(tmp_path):
    """The plan compares the classes files declare in their headers (a CSV header, an .npz's
    `classes`): `validate` refuses what aligning would, and `run` refuses it before 76 MiB of
    values are inflated, with the same message."""
    ref = write(tmp_path, "ref.csv", "id,speech,birds\n" + "".join(f"s{i},0.5,0.5\n" for i in range(3)))
    path = tmp_path / "system.npz"
    np.savez_compressed(path, values=np.zeros((1_000_000, 2)), classes=np.array(["speech", "cars"]),
                        ids=np.array([f"s{i}" for i in range(1_000_000)]))
    expected = (f"{path}: classes differ from the reference {ref}: missing 'birds'; not in the reference 'cars'. "
                "Select common classes with `classes:` under `data:`")
    with pytest.raises(DataError, match=f"^{re.escape(expected)}$"):
        evalkit.api.plan({"data": {"reference": str(ref), "systems": {"s": str(path)}},
                          "representation": "fuzzy", "averaging": "micro", "metrics": ["precision"]})
    with allocation_peak() as peak, pytest.raises(DataError, match=f"^{re.escape(expected)}$"):
        run(ref, path)
    assert peak.mib < 16, peak.mib


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_config_or_component_file_that_is_no_regular_file_is_refused(tmp_path, kind):
    """The same for the config itself (reading it never ended) and for a component's file."""
    special = special_path(tmp_path, kind)
    what = "a FIFO (named pipe)" if kind == "fifo" else "a character device, a link to /dev/zero"
    checked = evalkit_cli("validate", special)
    assert (checked.returncode, checked.stderr) == (
        1, f"error: {special}: the config is {what}, not a regular file; save it to a file and name that\n")
    config = tmp_path / "config.yaml"
    config.write_text(json.dumps({
        "data": {"reference": [["a"]], "systems": {"s": [["b"]]}}, "representation": "soft_cardinality",
        "similarity": {"name": "ontology", "ontology": "system.csv"}, "averaging": "micro", "metrics": ["f1"],
    }), encoding="utf-8")
    checked = evalkit_cli("validate", config)
    assert checked.returncode == 1, checked.stderr
    assert f"parameter 'ontology': Value error, {special} is {what}, not a regular file" in checked.stderr


def test_a_parquet_system_declaring_other_classes_is_refused_in_the_plan(tmp_path):
    """A wide Parquet table declares its classes in its schema; a long one only in its values."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ref = write(tmp_path, "ref.csv", REF)
    wide, long = tmp_path / "wide.parquet", tmp_path / "long.parquet"
    pq.write_table(pa.table({"id": ["a", "b", "c"], "speech": [0.1] * 3, "cars": [0.2] * 3}), wide)
    pq.write_table(pa.table({"id": ["a", "b"], "class": ["speech", "cars"], "value": [0.1, 0.2]}), long)
    config = {"data": {"reference": str(ref), "systems": {"s": str(wide)}},
              "representation": "fuzzy", "averaging": "micro", "metrics": ["precision"]}
    with pytest.raises(DataError, match=re.escape(f"{wide}: classes differ from the reference {ref}: missing 'birds'; "
                                                  "not in the reference 'cars'")):
        evalkit.api.plan(config)
    config["data"]["systems"]["s"] = str(long)
    evalkit.api.plan(config)  # known once its values are read
    with pytest.raises(DataError, match=re.escape(f"{long}: classes differ from the reference {ref}")):
        run(ref, long)
