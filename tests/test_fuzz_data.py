"""The data fuzz suite: mutated files for every loader, and the numbers' invariance.

Two properties, with hypothesis:

- **A clean error or success.** A valid file of each format (every registered loader, and the
  ontology formats) is mutated — bytes flipped, the file truncated, hostile bytes and strings
  inserted (invalid UTF-8, NUL, a byte-order mark, CRLF, NaN and inf, quotes, separators, a
  field over 128 KiB), lines and columns duplicated or dropped — and read through the real path
  (the loader the plan finds for it, then :func:`evalkit.sources.load_source`, alignment and the
  membership checks). It loads, or raises a DataError or ConfigError whose message names the
  file: never another exception, never a PluginError (a decode or I/O problem is no plugin bug),
  never unbounded work (a memory budget per example, traced, so the same on every machine).
- **Nothing silent.** Harmless variations of a valid file (CRLF, a byte-order mark, quoting,
  class column order, row order, spaces around ids and items, TSV for CSV) load to identical
  data, so identical numbers; harmful ones (a repeated id, a repeated class column, an id column
  under a header that is not an id name) are errors.

Profiles: ``ci`` (the default: a fixed, derandomized budget of a few seconds in all) and
``long`` (``EVALKIT_FUZZ=long python -m pytest tests/test_fuzz_data.py``: thousands of examples
per loader, random seeds, minutes).
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from allocation import allocation_peak
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.data import LabelMatrix, align
from evalkit.discovery import default_registry
from evalkit.errors import DataError, EvalkitError, PluginError
from evalkit.items import ItemSets
from evalkit.plan import plan_source
from evalkit.sources import load_source

settings.register_profile(
    "evalkit-fuzz-ci", max_examples=20, derandomize=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "evalkit-fuzz-long", max_examples=2000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = os.environ.get("EVALKIT_FUZZ", "ci")
#: Bytes reading one mutated file may allocate (the files hold a few KiB, a field at most 128 KiB).
MEMORY_BUDGET = 64 * 2**20
FUZZ = settings.get_profile(f"evalkit-fuzz-{PROFILE}")


# --- loading through the real path ---------------------------------------------------------------


def load(path: Path, kind: str) -> LabelMatrix | ItemSets:
    """A data file as a run reads it: the loader the plan finds (suffix, sniffing), the source
    loaded, aligned with itself (repeated ids) and, for memberships, checked."""
    source = plan_source(str(path), "reference", None, "fuzz", path.parent, default_registry(), kind)
    data = load_source(source.value, where="fuzz", kind=kind, loader=source.loader, full=source.full)
    data = align(data, data)
    return data.check_memberships()[0] if isinstance(data, LabelMatrix) else data


def read_ontology(path: Path) -> Any:
    from evalkit_ontology.ontology import read_ontology

    return read_ontology(path)


def _npy(values: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, values)
    return buffer.getvalue()


def _npz(compressed: bool) -> bytes:
    buffer = io.BytesIO()
    save = np.savez_compressed if compressed else np.savez
    save(buffer, values=np.array([[0.9, 0.1], [0.2, 0.8], [1.0, 0.0]]), classes=np.array(["speech", "birds"]),
         ids=np.array(["a", "b", "c"]))
    return buffer.getvalue()


def _parquet(long: bool) -> bytes:
    import pandas as pd

    frame = pd.DataFrame({"speech": [0.9, 0.2], "birds": [0.1, 0.8]}, index=pd.Index(["a", "b"], name="id"))
    if long:
        frame = frame.reset_index().melt(id_vars="id", var_name="class", value_name="value")
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=not long)
    return buffer.getvalue()


def _parquet_events() -> bytes:
    import pandas as pd

    frame = pd.DataFrame({"filename": ["a.wav", "a.wav", "b.wav"], "onset": [0.0, 2.0, 0.5],
                          "offset": [1.5, 3.0, 0.75], "event_label": ["dog", "cat", "dog"]})
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _parquet_items(lists: bool) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if lists:
        table = pa.table({"id": ["a", "b"], "class": ["k", "m"], "items": [["x", "y"], ["z"]]})
    else:
        table = pa.table({"id": ["a", "a", "b"], "item": ["x", "y", "z"]})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def _graphml() -> bytes:
    import networkx as nx

    graph = nx.DiGraph([("a", "b"), ("a", "c"), ("c", "d")])
    nx.set_node_attributes(graph, {"a": "Animal", "b": "Bird", "c": "Cat", "d": "Kitten"}, "name")
    buffer = io.BytesIO()
    nx.write_graphml(graph, buffer)
    return buffer.getvalue()


MAESTRO = b"0\t1\tdog\t0.5\n0\t1\tcat\t0.25\n1\t2\tdog\t1\n1\t2\tcat\t0\n"

#: name -> (file name, valid content, reader); a folder (MAESTRO) is a dict of files
#: A score file as sed_scores_eval writes it (the second seed drops its last frame).
SCORES = b"onset\toffset\tdog\tcat\n0.0\t0.64\t0.1\t0.9\n0.64\t1.28\t0.5\t0.25\n1.28\t1.92\t0.0\t1.0\n"
SEEDS: dict[str, tuple[str, Any, Callable[[Path], Any]]] = {
    "csv": ("data.csv", b"id,speech,birds,car\na,0.9,0.1,0.0\nb,0.2,0.8,0.5\nc,1.0,0.0,0.25\n",
            lambda p: load(p, "matrix")),
    "tsv": ("data.tsv", b"segment\tspeech\tbirds\na\t0.9\t0.1\nb\t0.2\t0.8\n", lambda p: load(p, "matrix")),
    "npy": ("data.npy", _npy(np.array([[0.9, 0.1], [0.2, 0.8], [1.0, 0.0]])), lambda p: load(p, "matrix")),
    "npz": ("data.npz", _npz(compressed=False), lambda p: load(p, "matrix")),
    "npz_compressed": ("data.npz", _npz(compressed=True), lambda p: load(p, "matrix")),
    "parquet": ("data.parquet", _parquet(long=False), lambda p: load(p, "matrix")),
    "parquet_long": ("data.parquet", _parquet(long=True), lambda p: load(p, "matrix")),
    "parquet_events": ("events.parquet", _parquet_events(), lambda p: load(p, "items")),
    "parquet_items": ("items.parquet", _parquet_items(lists=False), lambda p: load(p, "items")),
    "parquet_items_lists": ("items.parquet", _parquet_items(lists=True), lambda p: load(p, "items")),
    "jsonl": ("data.jsonl", b'{"id": "a", "items": ["x", "y"]}\n{"id": "b", "items": {"k": ["z"]}}\n'
                            b'{"id": "c", "reference": ["q"], "prediction": ["r"]}\n', lambda p: load(p, "items")),
    "csv_items": ("data.csv", b"id,item,class\na,x,k\na,y,k\nb,z,m\n", lambda p: load(p, "items")),
    "events_tsv": ("events.tsv", b"filename\tonset\toffset\tevent_label\na.wav\t0.0\t1.5\tdog\n"
                                 b"a.wav\t2\t3\tcat\nb.wav\n", lambda p: load(p, "items")),
    "events_csv": ("events.csv", b"a.wav,0.0,1.5,dog\na.wav,2,3,cat\n\"b.wav\",0.5,0.75,dog\n",
                   lambda p: load(p, "items")),
    "maestro": ("recordings", {"street_01.txt": MAESTRO, "cafe_01.tsv": MAESTRO}, lambda p: load(p, "matrix")),
    "sed_scores": ("scores", {"a.tsv": SCORES, "b.tsv": SCORES.rsplit(b"1.28", 1)[0]}, lambda p: load(p, "items")),
    "audioset": ("ontology.json", json.dumps([
        {"id": "/m/a", "name": "Animal", "child_ids": ["/m/b", "/m/c"]},
        {"id": "/m/b", "name": "Bird", "child_ids": []}, {"id": "/m/c", "name": "Cat", "child_ids": []},
    ]).encode(), read_ontology),
    "node_link": ("graph.json", json.dumps({
        "directed": True, "nodes": [{"id": "a", "name": "Animal"}, {"id": "b"}, {"id": "c"}],
        "links": [{"source": "a", "target": "b"}, {"source": "a", "target": "c"}],
    }).encode(), read_ontology),
    "edgelist": ("graph.tsv", b"# parent\tchild\na\tb\na\tc\nc\td\n", read_ontology),
    "graphml": ("graph.graphml", _graphml(), read_ontology),
}

HOSTILE = [
    b"\xff", b"\xfe\xff", b"\xc3", b"\xe2\x82", b"\x00", b"\xef\xbb\xbf", b"\r\n", b"\r", b"\n", b'"', b"'", b",",
    b"\t", b";", b" ", b"#", b"nan", b"NaN", b"inf", b"-inf", b"1e400", b"-1", b"2", b"{", b"}", b"[", b"]", b":",
    b'"id"', b"\\", b"\x1b[31m", "é".encode(), "\u2028".encode(), b"<", b"&",
]
HUGE = [b"9" * 140_000, b'"' + b"x" * 140_000, b"a" * 140_000]


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` after one to three mutations."""
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        how = draw(st.sampled_from(["flip", "truncate", "insert", "bytes", "huge", "duplicate", "drop", "column"]))
        lines = data.splitlines(keepends=True) or [b""]
        line = draw(st.integers(0, len(lines) - 1))
        if how == "flip" and at < len(data):
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:]
        elif how == "truncate":
            data = data[:at]
        elif how == "insert":
            data = data[:at] + draw(st.sampled_from(HOSTILE)) + data[at:]
        elif how == "bytes":
            data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
        elif how == "huge":
            data = data[:at] + draw(st.sampled_from(HUGE)) + data[at:]
        elif how == "duplicate":
            data = b"".join(lines[: line + 1] + lines[line:])
        elif how == "drop":
            data = b"".join(lines[:line] + lines[line + 1:])
        elif how == "column":
            separator = b"\t" if b"\t" in data else b","
            column = draw(st.integers(0, 3))
            data = b"".join(_duplicate_field(text, separator, column) for text in lines)
    return data


def _duplicate_field(line: bytes, separator: bytes, column: int) -> bytes:
    fields = line.rstrip(b"\r\n").split(separator)
    end = line[len(line.rstrip(b"\r\n")):]
    if column < len(fields):
        fields.insert(column, fields[column])
    return separator.join(fields) + end


@pytest.mark.parametrize("name", sorted(SEEDS))
@FUZZ
@given(data=st.data())
def test_a_mutated_file_loads_or_gives_an_error_naming_it(name, data):
    file_name, content, read = SEEDS[name]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / file_name
        if isinstance(content, dict):  # a folder: one of its files mutated
            path.mkdir()
            target = data.draw(st.sampled_from(sorted(content)))
            for member, text in content.items():
                (path / member).write_bytes(data.draw(mutated(text)) if member == target else text)
        else:
            path.write_bytes(data.draw(mutated(content)))
        with allocation_peak() as peak:
            try:
                read(path)
            except PluginError as exc:
                pytest.fail(f"a data problem reported as a plugin bug: {exc}")
            except EvalkitError as exc:
                assert str(path) in str(exc), f"the error does not name {path}: {exc}"
        assert peak.bytes < MEMORY_BUDGET, f"{peak.mib:.0f} MiB allocated to read a file of a few KiB"


def test_every_registered_loader_is_fuzzed():
    registry = default_registry()
    builtin = {n for n in registry.names("loader") if registry.entry("loader", n).distribution == "evalkit"}
    fuzzed = {"csv", "npy", "npz", "parquet", "jsonl", "csv_items", "events", "parquet_events", "parquet_items",
              "maestro", "sed_scores"}
    assert builtin == fuzzed, "add a seed file for each new loader to SEEDS"
    for name, (file_name, _, read) in SEEDS.items():
        assert name in {"audioset", "node_link", "edgelist", "graphml"} or read is not read_ontology, file_name


# --- nothing silent --------------------------------------------------------------------------------

NAMES = st.text("abcdefghij", min_size=1, max_size=4).filter(lambda name: name != "id")  # "id" names the ids


@st.composite
def tables(draw: st.DrawFn, min_rows: int = 1) -> tuple[list[str], list[str], np.ndarray]:
    """Sample ids, class names and memberships with three decimals."""
    classes = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    ids = draw(st.lists(st.text("xyz_0123456789", min_size=1, max_size=4), min_size=min_rows, max_size=6, unique=True))
    values = draw(st.lists(st.lists(st.integers(0, 1000), min_size=len(classes), max_size=len(classes)),
                           min_size=len(ids), max_size=len(ids)))
    return ids, classes, np.array(values, dtype=np.float64).reshape(len(ids), len(classes)) / 1000


def write_table(ids: list[str], classes: list[str], values: np.ndarray, *, sep: str = ",", quote: bool = False,
                pad: bool = False, id_header: str = "id", newline: str = "\n", bom: bool = False,
                digits: bool = False) -> bytes:
    def cell(text: str) -> str:
        return f'"{text}"' if quote else text

    lines = [sep.join(cell(c) for c in [id_header, *classes])]
    for sample, row in zip(ids, values):
        shown = [f"{v:.3f}" if digits else repr(float(v)) for v in row]
        lines.append(sep.join(cell(c) for c in [f"  {sample} " if pad else sample, *shown]))
    return (("\ufeff" if bom else "") + newline.join(lines) + newline).encode()


HARMLESS = ["crlf", "bom", "quote", "columns", "rows", "pad", "tsv", "digits", "blank_line"]


@FUZZ
@given(table=tables(), variations=st.sets(st.sampled_from(HARMLESS)), seed=st.integers(0, 2**16))
def test_harmless_variations_of_a_csv_load_identical_data(table, variations, seed):
    ids, classes, values = table
    rng = np.random.default_rng(seed)
    columns = rng.permutation(len(classes)) if "columns" in variations else np.arange(len(classes))
    rows = rng.permutation(len(ids)) if "rows" in variations else np.arange(len(ids))
    text = write_table(
        [ids[r] for r in rows], [classes[c] for c in columns], values[rows][:, columns],
        sep="\t" if "tsv" in variations else ",", quote="quote" in variations, pad="pad" in variations,
        newline="\r\n" if "crlf" in variations else "\n", bom="bom" in variations, digits="digits" in variations,
    ) + (b"\n" if "blank_line" in variations else b"")
    with tempfile.TemporaryDirectory() as folder:
        plain = Path(folder) / "plain.csv"
        plain.write_bytes(write_table(ids, classes, values))
        varied = Path(folder) / ("varied.tsv" if "tsv" in variations else "varied.csv")
        varied.write_bytes(text)
        reference, other = load(plain, "matrix"), load(varied, "matrix")
    aligned = align(reference, other)
    assert aligned.ids == reference.ids and aligned.classes == reference.classes
    assert np.array_equal(aligned.values, reference.values)


@FUZZ
@given(table=tables(min_rows=2), harm=st.sampled_from(["id", "column", "times"]), seed=st.integers(0, 2**16))
def test_harmful_variations_of_a_csv_are_errors(table, harm, seed):
    ids, classes, values = table
    rng = np.random.default_rng(seed)
    if harm == "id":  # a sample twice, perhaps with other values
        row = int(rng.integers(len(ids)))
        ids, values = [*ids, ids[row]], np.vstack([values, values[::-1][row]])
        text, problem = write_table(ids, classes, values), "appears twice"
    elif harm == "column":  # a class column twice: the last would win
        column = int(rng.integers(len(classes)))
        classes, values = [*classes, classes[column]], np.hstack([values, values[:, [column]]])
        text, problem = write_table(ids, classes, values), "are both named"
    else:  # numeric sample ids or times under a header that is no id name
        ids = [str(2 * i + 1) for i in range(len(ids))]
        text, problem = write_table(ids, classes, values, id_header="start"), "looks like sample ids or times"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "harmful.csv"
        path.write_bytes(text)
        with pytest.raises(DataError, match=problem) as info:
            load(path, "matrix")
    assert str(path) in str(info.value)


@st.composite
def item_sets(draw: st.DrawFn) -> dict[str, list[str]]:
    ids = draw(st.lists(st.text("xyz_0123456789", min_size=1, max_size=4), min_size=1, max_size=5, unique=True))
    return {i: draw(st.lists(NAMES, min_size=1, max_size=4)) for i in ids}


@FUZZ
@given(samples=item_sets(), variations=st.sets(st.sampled_from(["crlf", "bom", "pad", "rows"])),
       form=st.sampled_from(["jsonl", "csv_items"]), seed=st.integers(0, 2**16))
def test_harmless_variations_of_item_files_load_identical_items(samples, variations, form, seed):
    def render(pad: bool, order: list[str], newline: str, bom: bool) -> bytes:
        def space(text: str) -> str:
            return f" {text}  " if pad else text

        if form == "jsonl":
            lines = [json.dumps({"id": space(i), "items": [space(x) for x in samples[i]]}) for i in order]
        else:
            lines = ["id,item"] + [f"{space(i)},{space(x)}" for i in order for x in samples[i]]
        return (("\ufeff" if bom else "") + newline.join(lines) + newline).encode()

    order = list(samples)
    if "rows" in variations:
        order = [order[i] for i in np.random.default_rng(seed).permutation(len(order))]
    suffix = ".jsonl" if form == "jsonl" else ".csv"
    with tempfile.TemporaryDirectory() as folder:
        plain, varied = Path(folder) / f"plain{suffix}", Path(folder) / f"varied{suffix}"
        plain.write_bytes(render(False, list(samples), "\n", False))
        varied.write_bytes(render("pad" in variations, order, "\r\n" if "crlf" in variations else "\n", "bom" in variations))
        reference, other = load(plain, "items"), load(varied, "items")
    aligned = align(reference, other)
    assert aligned.ids == reference.ids and aligned.classes == reference.classes
    assert [[sorted(cell) for cell in s] for s in aligned.samples] == [[sorted(cell) for cell in s] for s in reference.samples]
