"""Loaders of sound-event data: sed_eval / DCASE event lists and MAESTRO soft segment labels."""

from __future__ import annotations

import importlib.util
import math
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

import evalkit
from evalkit import hookimpl
from evalkit.discovery import build_registry, default_registry, make_plugin_manager
from evalkit.errors import DataError
from evalkit.items import Intervals
from evalkit.sources import find_loader
from evalkit_loaders import DelimitedItems
from evalkit_segments.loaders import EventListLoader, MaestroSoftLabels, _layout

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "configs" / "data"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def events(tmp_path: Path, text: str, name: str = "events.tsv", **params):
    return EventListLoader(EventListLoader.Params(**params)).load(write(tmp_path / name, text), "reference")


def maestro(folder: Path, **params):
    return MaestroSoftLabels(MaestroSoftLabels.Params(**params)).load(folder, "reference")


def cells(data) -> dict[str, dict[str, tuple]]:
    return {i: dict(zip(data.classes, sample)) for i, sample in zip(data.ids, data.samples)}


# --- event lists: formats ------------------------------------------------------------------------


def test_tab_separated_with_header(tmp_path):
    data = events(tmp_path, (
        "filename\tonset\toffset\tevent_label\n"
        "b.wav\t1.5\t2.5\tspeech\n"
        "a.wav\t0\t1\tdog\n"
        "b.wav\t3\t4.25\tdog\n"
    ))
    # Ids in first-seen order (b before a); classes sorted (dog < speech), not in order of appearance.
    assert data.ids == ("b.wav", "a.wav")
    assert data.classes == ("dog", "speech")
    assert cells(data) == {
        "b.wav": {"dog": ((3.0, 4.25),), "speech": ((1.5, 2.5),)},
        "a.wav": {"dog": ((0.0, 1.0),), "speech": ()},
    }
    assert all(type(t) is float for s in data.samples for c in s for i in c for t in i)
    assert data.source == str(tmp_path / "events.tsv")


@pytest.mark.parametrize("name", ["events.tsv", "events.txt"])
def test_tab_separated_without_header(tmp_path, name):
    # .txt is tab-separated like .tsv; the first row has numeric onset/offset, so it is data.
    data = events(tmp_path, "a.wav\t0.5\t1.5\tcar horn\na.wav\t2\t3\tcar horn\n", name)
    assert data.ids == ("a.wav",)
    assert data.classes == ("car horn",)  # split on tabs only: the space stays in the label
    assert data.samples == (((( 0.5, 1.5), (2.0, 3.0)),),)


def test_comma_separated_with_header_aliases_in_any_order_and_quoting(tmp_path):
    # Header names are matched case-insensitively to the columns, in any order:
    # label -> event_label, File -> filename, event_offset/event_onset -> offset/onset.
    data = events(tmp_path, (
        'label,File,event_offset,event_onset\n'
        '"car, passing",a.wav,9,7.5\n'
        'dog , a.wav , 1 , 0.25 \n'  # fields are stripped
    ), "events.csv")
    assert data.ids == ("a.wav",)
    assert data.classes == ("car, passing", "dog")
    assert data.samples == ((((7.5, 9.0),), ((0.25, 1.0),)),)


def test_comma_separated_without_header(tmp_path):
    data = events(tmp_path, "a.wav,0,1,dog\r\nb.wav,2,3,cat\r\n", "events.csv")  # CRLF too
    assert cells(data) == {"a.wav": {"cat": (), "dog": ((0.0, 1.0),)}, "b.wav": {"cat": ((2.0, 3.0),), "dog": ()}}


def test_filename_only_rows_are_files_without_events(tmp_path):
    data = events(tmp_path, (
        "\n"                      # blank lines are skipped
        "silent.wav\n"            # one field
        "a.wav\t1\t2\tdog\n"
        "empty.wav\t\t\t\n"       # four fields, onset/offset/label empty
        "trailing.wav\t\n"        # a stray trailing tab
        "silent.wav\n"            # listed twice: still one file, still no events
    ))
    assert data.ids == ("silent.wav", "a.wav", "empty.wav", "trailing.wav")
    assert data.classes == ("dog",)
    assert [sample for sample in data.samples] == [((),), (((1.0, 2.0),),), ((),), ((),)]


def test_a_first_row_with_empty_fields_is_a_file_without_events_not_a_header(tmp_path):
    # Four fields with empty onset/offset/label: not a header (a header has four names).
    data = events(tmp_path, "silent.wav\t\t\t\na.wav\t1\t2\tdog\n")
    assert data.ids == ("silent.wav", "a.wav") and data.samples == (((),), (((1.0, 2.0),),))


def test_a_file_with_events_and_a_filename_only_row_keeps_its_events(tmp_path):
    data = events(tmp_path, "a.wav\na.wav\t1\t2\tdog\n")
    assert data.samples == ((((1.0, 2.0),),),)


def test_only_filename_rows_give_no_classes(tmp_path):
    data = events(tmp_path, "a.wav\nb.wav\n")
    assert data.ids == ("a.wav", "b.wav") and data.classes == () and data.samples == ((), ())


# --- event lists: merging ------------------------------------------------------------------------


def test_overlapping_and_touching_intervals_of_one_class_are_merged(tmp_path):
    data = events(tmp_path, (
        "a.wav\t5\t6\tdog\n"
        "a.wav\t0\t2\tdog\n"
        "a.wav\t1\t3\tdog\n"      # overlaps [0, 2]: [0, 3]
        "a.wav\t3\t4\tdog\n"      # touches [0, 3] (offset 3 == onset 3): [0, 4]
        "a.wav\t5.2\t5.5\tdog\n"  # inside [5, 6]: absorbed
        "a.wav\t6.5\t7\tdog\n"    # gap of 0.5 after 6: kept apart
        "a.wav\t1\t8\tcat\n"      # another class: not merged with dog
        "b.wav\t3.5\t5\tdog\n"    # another file: not merged with a.wav's dog
        "a.wav\t2\t2\tcat\n"      # zero length, inside [1, 8]
    ))
    assert cells(data) == {
        "a.wav": {"cat": ((1.0, 8.0),), "dog": ((0.0, 4.0), (5.0, 6.0), (6.5, 7.0))},
        "b.wav": {"cat": (), "dog": ((3.5, 5.0),)},
    }


def test_events_held_as_columns_are_sorted_and_merged_when_read_as_items():
    """Raw events (in file order, overlapping, touching) read as items: sorted, merged intervals."""
    def items(pairs):
        onset, offset = zip(*pairs) if pairs else ((), ())
        return Intervals(np.zeros(len(pairs), np.int64), np.zeros(len(pairs), np.int64), np.array(onset, float),
                         np.array(offset, float), 1, 1)[0][0]

    assert items([]) == ()
    assert items([(4, 5), (0, 1), (1, 2), (1.5, 1.7)]) == ((0, 2), (4, 5))
    assert items([(0, 10), (2, 3), (9, 12)]) == ((0, 12),)


# --- event lists: errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("a.wav\t0\t1\tdog\na.wav\t3.4\t1.2\tdog\n", 2, "offset 1.2 is before onset 3.4"),
        ("a.wav\t-1\t1\tdog\n", 1, "onset -1 is negative"),
        ("a.wav\t0\t-0.5\tdog\n", 1, "offset -0.5 is negative"),
        ("filename\tonset\toffset\tevent_label\na.wav\tnan\t1\tdog\n", 2, "onset nan is not a finite time"),
        ("a.wav\t0\tinf\tdog\n", 1, "offset inf is not a finite time"),
        ("a.wav\t0\t1\tdog\na.wav\t0\t1s\tdog\n", 2, "offset '1s' is not a number"),
        ("a.wav\t0\t1\tdog\na.wav\t\t1\tdog\n", 2, "onset '' is not a number"),
        ("a.wav\t0\t1\tdog\n\na.wav\t0\t1\n", 3, "3 fields; expected 4"),
        ("a.wav\t0\t1\tdog\textra\tmore\n", 1, "6 fields; expected 4"),
        ("a.wav\t0\t1\tdog\tid1\nb.wav\t0\t1\tdog\n", 2, "4 fields; expected 5"),
        ("a.wav\t0\t1\t\n", 1, "empty event label"),
        ("a.wav\t0\t1\tdog\n\t0\t1\tdog\n", 2, "empty filename"),
        ("a.wav 0 1 dog\n", 1, "the file was read as tab-separated: separate every field that way"),
        ("name\tstart\tend\tclass\n", 1, "looks like a header"),
    ],
)
def test_bad_rows_are_errors_naming_file_and_line(tmp_path, text, line, message):
    with pytest.raises(DataError) as info:
        events(tmp_path, text)
    assert f"{tmp_path / 'events.tsv'}:{line}: " in str(info.value)
    assert message in str(info.value)


def test_space_separated_csv_row_is_an_error(tmp_path):
    with pytest.raises(DataError, match=r"events\.csv:1: .*read as comma-separated"):
        events(tmp_path, "a.wav 0 1 dog\n", "events.csv")


def test_a_tab_separated_csv_reads_as_its_tsv_twin(tmp_path):
    """DCASE 2023 task 4B's gt_dev.csv is tab-separated: a .csv whose first line has more tabs
    than commas is read with tabs, by both readers, to the same item sets as the .tsv."""
    text = "filename\tonset\toffset\tevent_label\na.wav\t0.5\t1.5\tdog, barking\nb.wav\t2\t3\tcat\n"
    (tmp_path / "gt_dev.csv").write_text(text, encoding="utf-8")
    (tmp_path / "gt_dev.tsv").write_text(text, encoding="utf-8")
    loader = EventListLoader(EventListLoader.Params())
    as_csv, as_tsv = loader.load(tmp_path / "gt_dev.csv", "reference"), loader.load(tmp_path / "gt_dev.tsv", "reference")
    assert (as_csv.samples, as_csv.classes, as_csv.ids) == (as_tsv.samples, as_tsv.classes, as_tsv.ids)
    assert as_csv.classes == ("cat", "dog, barking")
    order, header, *_ = _layout(tmp_path / "gt_dev.csv")
    rows = loader._load_rows(tmp_path / "gt_dev.csv", order, header)
    assert rows.samples == tuple(as_csv.samples) and rows.ids == as_csv.ids
    (tmp_path / "mixed.csv").write_text("a.wav\t0.5\t1.5\tdog\nb.wav 2 3 cat\n", encoding="utf-8")
    with pytest.raises(DataError, match="mixed.csv:2: .*read as tab-separated \\(its first line has more tabs than commas\\)"):
        loader.load(tmp_path / "mixed.csv", "reference")


def test_a_file_that_is_not_utf8_is_an_error(tmp_path):
    (tmp_path / "events.tsv").write_bytes(b"a.wav\t0\t1\tdog\nb.wav\t0\t1\t\xff\xfe\n")
    with pytest.raises(DataError, match=r"events\.tsv: not UTF-8 text"):
        EventListLoader(EventListLoader.Params()).load(tmp_path / "events.tsv", "reference")


def test_a_file_without_rows_is_an_error(tmp_path):
    with pytest.raises(DataError, match=r"events\.tsv: no rows"):
        events(tmp_path, "filename\tonset\toffset\tevent_label\n\n")


def test_labels_parameter_rejects_unknown_labels_and_keeps_absent_classes(tmp_path):
    data = events(tmp_path, "a.wav\t0\t1\tdog\n", labels=["speech", "dog", "alarm"])
    # The given order, and classes without events ("speech", "alarm") are kept, empty.
    assert data.classes == ("speech", "dog", "alarm")
    assert data.samples == (((), ((0.0, 1.0),), ()),)
    with pytest.raises(DataError, match=r"events\.tsv:2: unknown label 'dgo' \(did you mean 'dog'\?\)"):
        events(tmp_path, "a.wav\t0\t1\tdog\na.wav\t1\t2\tdgo\n", labels=["dog", "speech"])


# --- sniffing: events vs id,item -----------------------------------------------------------------


@pytest.mark.parametrize(
    "name, text, ours",
    [
        ("e.tsv", "a.wav\t0\t1\tdog\n", True),                        # 4 fields, numeric onset/offset
        ("e.tsv", "\nfilename\tonset\toffset\tevent_label\n", True),   # an events header after a blank line
        ("e.csv", "audio_filename,event_onset,event_offset,label\n", True),
        ("e.tsv", "silent.wav\na.wav\t0\t1\tdog\n", True),            # 1 field: a file without events
        ("e.tsv", "silent.wav\t\t\t\n", True),                          # the same with empty fields
        ("e.tsv", "id\titem\nd1\tcat\n", False),                      # csv_items' header
        ("e.csv", "id,item,class\nd1,cat,animal\n", False),           # 3 fields
        ("e.tsv", "id\titem\tclass\textra\n", False),                 # 4 fields, not numeric, not events names
        ("e.tsv", "", False),                                         # empty
    ],
)
def test_sniff(tmp_path, name, text, ours):
    path = write(tmp_path / name, text)
    assert EventListLoader(EventListLoader.Params()).sniff(path) is ours


def test_csv_items_does_not_claim_event_lists(tmp_path):
    path = write(tmp_path / "e.tsv", "filename\tonset\toffset\tevent_label\na.wav\t0\t1\tdog\n")
    assert not DelimitedItems(DelimitedItems.Params()).sniff(path)


class SegmentLoaders:
    @hookimpl
    def evalkit_register_loaders(self, register):
        register(EventListLoader)
        register(MaestroSoftLabels)


@pytest.fixture(scope="module")
def registry():
    """The installed plugins, plus these loaders until the segments plugin registers them."""
    registry = default_registry()
    if "events" in registry.names("loader"):
        return registry
    return build_registry(*make_plugin_manager(extra={"evalkit-test:segment_loaders": SegmentLoaders()}))


def test_find_loader_tells_event_lists_from_item_lists(tmp_path, registry):
    write(tmp_path / "events.tsv", "a.wav\t0\t1\tdog\n")
    write(tmp_path / "header.csv", "filename,onset,offset,event_label\na.wav,0,1,dog\n")
    write(tmp_path / "events.txt", "a.wav\t0\t1\tdog\n")  # .txt: only the events loader reads it
    write(tmp_path / "items.tsv", "id\titem\nd1\tcat\n")
    write(tmp_path / "soft" / "rec.txt", "0\t1\tdog\t0.5\n")

    def chosen(name, kind="items"):
        return find_loader(name, tmp_path, "test", registry, kind)[0].name

    assert chosen("events.tsv") == chosen("header.csv") == chosen("events.txt") == "events"
    assert chosen("items.tsv") == "csv_items"
    assert chosen("soft", "matrix") == "maestro"


# --- MAESTRO soft labels -------------------------------------------------------------------------


def test_maestro_folder_becomes_a_matrix_on_the_segment_grid(tmp_path):
    write(tmp_path / "street_b.txt", (
        "1.0\t2.0\tpeople talking\t0.4\n"    # rows out of order: sorted by onset
        "0.0\t1.0\tdoor opens/closes\t0.75\n"
        "0.0\t1.0\tpeople talking\t1\n"
    ))
    write(tmp_path / "cafe_a.tsv", (
        "0\t1\tfootsteps\t0.2\n"
        "\n"
        "1\t2\tcar\t0.6\n"
    ))
    write(tmp_path / "notes.md", "not a label file\n")  # ignored: not .txt/.tsv
    data = maestro(tmp_path)
    # Rows by recording (stem, sorted) then onset; ids "<stem>@<onset:g>-<offset:g>".
    assert data.ids == ("cafe_a@0-1", "cafe_a@1-2", "street_b@0-1", "street_b@1-2")
    # Classes: every label in the folder, sorted; spaces and "/" kept (split on tabs only).
    assert data.classes == ("car", "door opens/closes", "footsteps", "people talking")
    # A class without a row for a segment is 0 there.
    np.testing.assert_array_equal(data.values, [
        [0.0, 0.0, 0.2, 0.0],   # cafe_a 0-1: footsteps 0.2
        [0.6, 0.0, 0.0, 0.0],   # cafe_a 1-2: car 0.6
        [0.0, 0.75, 0.0, 1.0],  # street_b 0-1: door 0.75, talking 1
        [0.0, 0.0, 0.0, 0.4],   # street_b 1-2: talking 0.4
    ])
    assert data.source == str(tmp_path)


def test_maestro_ids_print_fractional_times(tmp_path):
    write(tmp_path / "r.txt", "0.5\t1.5\tx\t0.1\n10\t11.25\tx\t0.2\n")
    assert maestro(tmp_path).ids == ("r@0.5-1.5", "r@10-11.25")


def test_maestro_labels_parameter(tmp_path):
    write(tmp_path / "r.txt", "0\t1\tdog\t0.5\n")
    data = maestro(tmp_path, labels=["speech", "dog"])
    assert data.classes == ("speech", "dog")
    np.testing.assert_array_equal(data.values, [[0.0, 0.5]])
    with pytest.raises(DataError, match=r"r\.txt:1: unknown label 'dog'"):
        maestro(tmp_path, labels=["speech"])


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("0\t1\tdog\t0.5\n1\t2\tdog\tnan\n", 2, "soft value 'nan' of 'dog' is not a finite number"),
        ("0\t1\tdog\thigh\n", 1, "soft value 'high' of 'dog' is not a number"),
        ("0\t1\tdog\t0.5\n0 1 dog 0.5\n", 2, "1 tab-separated fields; expected 4"),
        ("onset\toffset\tlabel\tvalue\n", 1, "onset 'onset' is not a number"),
        ("2\t1\tdog\t0.5\n", 1, "offset 1 is before onset 2"),
        ("0\t1\t\t0.5\n", 1, "empty event label"),
        ("0\t1\tdog\t0.5\n0\t1\tcat\t0\n0\t1\tdog\t0.2\n", 3, "a second value for 'dog' in segment 0-1 (the first is on line 1)"),
    ],
)
def test_maestro_bad_rows_are_errors_naming_file_and_line(tmp_path, text, line, message):
    write(tmp_path / "rec.txt", text)
    with pytest.raises(DataError) as info:
        maestro(tmp_path)
    assert f"{tmp_path / 'rec.txt'}:{line}: " in str(info.value)
    assert message in str(info.value)


def test_maestro_folder_errors(tmp_path):
    with pytest.raises(DataError, match="no .txt or .tsv files"):
        maestro(tmp_path)
    write(tmp_path / "r.txt", "0\t1\tdog\t0.5\n")
    write(tmp_path / "r.tsv", "0\t1\tdog\t0.5\n")
    with pytest.raises(DataError, match="two files for recording 'r'"):
        maestro(tmp_path)


def test_maestro_values_outside_0_1_are_left_to_the_core_check(tmp_path):
    write(tmp_path / "r.txt", "0\t1\tdog\t0.5\n1\t2\tdog\t1.5\n")
    data = maestro(tmp_path)  # loads
    with pytest.raises(DataError, match=r"1\.5 at sample 'r@1-2' \(row 2\), class 'dog'"):
        data.check_memberships()


# --- the bundled data and its generator ----------------------------------------------------------


def test_bundled_event_lists_load():
    loader = EventListLoader(EventListLoader.Params())
    files = ("street_01.wav", "street_02.wav", "park_01.wav", "park_02.wav",
             "home_01.wav", "home_02.wav", "office_01.wav", "office_02.wav")
    loaded = {n: loader.load(DATA / "events" / f"{n}.tsv", "reference") for n in ("reference", "good", "poor")}
    for data in loaded.values():
        assert data.ids == files
        assert data.classes == ("alarm", "car", "dog", "speech")
        for sample in data.samples:
            for intervals in sample:
                assert all(0 <= on <= off <= 30 for on, off in intervals)
                assert all(a[1] < b[0] for a, b in pairwise(intervals))  # merged: disjoint
    reference = loaded["reference"]
    assert reference.samples[files.index("park_02.wav")] == ((), (), (), ())  # the file without events
    assert (DATA / "events" / "reference.tsv").read_text().startswith("filename\tonset\toffset\tevent_label\n")
    for name in ("good", "poor"):
        assert loader.sniff(DATA / "events" / f"{name}.tsv")


def test_bundled_maestro_folders_load_on_one_grid():
    reference, system = maestro(DATA / "maestro" / "reference"), maestro(DATA / "maestro" / "system")
    assert reference.ids == system.ids and len(reference.ids) == 3 * 20
    assert reference.ids[:2] == ("cafe_restaurant_01@0-1", "cafe_restaurant_01@1-2")
    assert reference.classes == system.classes == (
        "car", "cutlery and dishes", "door opens/closes", "footsteps", "people talking"
    )
    for data in (reference, system):
        data.check_memberships()  # within [0, 1]
    # Omitted rows are zeros: "car" does not occur in the cafe recording at all.
    cafe = [i for i, sample in enumerate(reference.ids) if sample.startswith("cafe")]
    assert not reference.values[cafe, 0].any()


def test_generator_is_deterministic(tmp_path):
    spec = importlib.util.spec_from_file_location("make_events", DATA / "make_events.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert [str(p) for p in made] == [
        "events/good.tsv", "events/poor.tsv", "events/reference.tsv",
        *(f"maestro/{side}/{rec}.txt" for side in ("reference", "system")
          for rec in ("cafe_restaurant_01", "indoor_01", "residential_area_01")),
    ]
    for relative in made:
        assert (tmp_path / relative).read_bytes() == (DATA / relative).read_bytes(), relative
        assert (tmp_path / relative).stat().st_size < 4096


# --- through the core: alignment by ids ----------------------------------------------------------


def test_bundled_events_score_with_the_segments_representation(registry):
    def f1(system):
        return evalkit.evaluate(
            {"path": str(DATA / "events" / "reference.tsv")}, {"path": str(DATA / "events" / f"{system}.tsv")},
            representation="segments", metrics=["f1"], registry=registry,
        )["f1"]

    good, poor = f1("good"), f1("poor")
    assert 0 < poor < good < 1
    assert f1("reference") == 1.0


def test_maestro_recording_missing_from_a_system_is_an_error_or_zeros(tmp_path, registry):
    write(tmp_path / "ref" / "a.txt", "0\t1\tdog\t1\n1\t2\tdog\t0.5\n")
    write(tmp_path / "ref" / "b.txt", "0\t1\tdog\t1\n")
    write(tmp_path / "sys" / "a.txt", "0\t1\tdog\t1\n1\t2\tdog\t0.5\n")  # no b.txt

    def recall(**kwargs):
        return evalkit.evaluate(str(tmp_path / "ref"), str(tmp_path / "sys"), metrics=["recall"],
                                registry=registry, **kwargs)["recall"]

    with pytest.raises(DataError, match=r"missing 1 reference id\(s\): 'b@0-1'"):
        recall()
    # With missing: empty, b@0-1 is all zeros: recall = (1 + 0.5) / (1 + 0.5 + 1) = 0.6 (micro, min).
    assert math.isclose(recall(missing="empty"), 0.6)


FOUR = "a.wav\t0.5\t1.5\tdog\na.wav\t2\t3\tcat\nb.wav\t1\t2\tdog\n"


@pytest.mark.parametrize("text", [
    "a.wav\tstreet\t0.5\t1.5\tdog\na.wav\tstreet\t2\t3\tcat\nb.wav\tpark\t1\t2\tdog\n",  # filename, scene label first
    "a.wav\t0.5\t1.5\tdog\tx1\na.wav\t2\t3\tcat\tx2\nb.wav\t1\t2\tdog\tx3\n",  # an identifier last
    "filename\tscene_label\tonset\toffset\tevent_label\na.wav\ts\t0.5\t1.5\tdog\na.wav\ts\t2\t3\tcat\nb.wav\ts\t1\t2\tdog\n",
    "event_label\tonset\toffset\tfilename\tidentifier\ndog\t0.5\t1.5\ta.wav\tx\ncat\t2\t3\ta.wav\tx\ndog\t1\t2\tb.wav\tx\n",
])
def test_five_column_lists_with_a_field_that_changes_no_event_read_as_four(tmp_path, text):
    """dcase_util's layouts with a scene label or an identifier: the same events."""
    expected = events(tmp_path, FOUR, "four.tsv")
    got = events(tmp_path, text)
    assert (got.ids, got.classes, cells(got)) == (expected.ids, expected.classes, cells(expected))


@pytest.mark.parametrize("text", [
    "a.wav\t0.5\t1.5\tdog\t0.9\na.wav\t2\t3\tcat\t0.3\nb.wav\t1\t2\tdog\t0.5\n",
    "filename\tonset\toffset\tevent_label\tscore\na.wav\t0.5\t1.5\tdog\t0.9\na.wav\t2\t3\tcat\t0.3\nb.wav\t1\t2\tdog\t0.5\n",
])
def test_a_score_column_must_say_which_events_count(tmp_path, text):
    with pytest.raises(DataError, match=r"column 5 holds event scores; say which events count: .*min_score: 0.5"):
        events(tmp_path, text)
    every = events(tmp_path, text, min_score=None)  # as sed_eval: the score is not used
    expected = events(tmp_path, FOUR, "four.tsv")
    assert cells(every) == cells(expected)
    kept = events(tmp_path, text, min_score=0.5)  # a.wav's cat scores 0.3: dropped, the file stays
    assert kept.ids == ("a.wav", "b.wav")
    assert cells(kept) == {"a.wav": {"dog": ((0.5, 1.5),), "cat": ()}, "b.wav": {"dog": ((1.0, 2.0),), "cat": ()}}


def test_a_score_that_is_no_number_is_named(tmp_path):
    with pytest.raises(DataError, match=r"events.tsv:2: event score 'high' is not a finite number"):
        events(tmp_path, "a.wav\t0.5\t1.5\tdog\t0.9\na.wav\t2\t3\tcat\thigh\n", min_score=0.5)


def test_merge_false_keeps_overlapping_events_as_listed(tmp_path):
    text = "a.wav\t0\t2\tdog\na.wav\t1\t3\tdog\na.wav\t3\t4\tdog\na.wav\t5\t6\tcat\n"
    assert cells(events(tmp_path, text)) == {"a.wav": {"cat": ((5.0, 6.0),), "dog": ((0.0, 4.0),)}}
    kept = events(tmp_path, text, merge=False)
    assert cells(kept) == {"a.wav": {"cat": ((5.0, 6.0),), "dog": ((0.0, 2.0), (1.0, 3.0), (3.0, 4.0))}}
    taken = kept.take(np.array([0, -1, 0])).samples  # a resample keeps them as listed too
    assert list(taken) == [kept.samples[0], ((), ()), kept.samples[0]]


def desed_predictions():
    import pandas as pd

    return pd.DataFrame({"event_label": ["Speech", "Dog", "Speech"], "onset": [0.5, 2.0, 6.25],
                         "offset": [1.75, 2.5, 9.0], "filename": ["a.wav", "a.wav", "b.wav"]})


@pytest.mark.parametrize(("name", "write_frame", "column", "label"), [
    # student_predictions0.5.csv: pandas' default index=True, tab-separated under a .csv name
    ("student_predictions0.5.csv", lambda f, p: f.to_csv(p, sep="\t"), 1, "unnamed"),
    # student_predictions_th_0.49.tsv: an index column named `index` after the others
    ("student_predictions_th_0.49.tsv", lambda f, p: f.assign(index=range(len(f))).to_csv(p, sep="\t", index=False),
     5, "'index'"),
    # reset_index(): `index` first, comma-separated
    ("predictions.csv", lambda f, p: f.reset_index().to_csv(p, index=False), 1, "'index'"),
])
def test_a_row_index_column_as_pandas_writes_it_is_ignored_with_a_note(tmp_path, name, write_frame, column, label):
    """DESED_task writes its predictions with pandas, often with its row index: the index is a
    column of its own, read as what it is (ignored, said in a note); the events equal those of
    the same list without it, in memory and streamed."""
    frame = desed_predictions()
    write_frame(frame, tmp_path / name)
    frame.to_csv(tmp_path / "plain.tsv", sep="\t", index=False)
    loader = EventListLoader(EventListLoader.Params())
    assert loader.sniff(tmp_path / name)
    got, plain = loader.load(tmp_path / name, "s"), loader.load(tmp_path / "plain.tsv", "s")
    assert (got.ids, got.classes, cells(got)) == (plain.ids, plain.classes, cells(plain))
    assert got.notes == (f"{tmp_path / name}: column {column} ({label}) is a row index, as pandas writes one; ignored",)
    assert plain.notes == ()
    chunks = list(loader.stream(tmp_path / name, "s", rows=1))
    assert [cells(c) for c in chunks] == [cells(c) for c in loader.stream(tmp_path / "plain.tsv", "s", rows=1)]
    assert {c.notes for c in chunks} == {got.notes}
    config = {"data": {"reference": str(tmp_path / "plain.tsv"), "systems": {"s": str(tmp_path / name)}},
              "representation": "segments", "metrics": ["f1"], "averaging": "micro"}
    results = evalkit.run(config, write_reports=False)
    assert got.notes[0] in results.notes
    (row,) = results.rows
    assert row.value == 1.0  # the system's events are the reference's


def test_a_file_a_system_leaves_out_is_explained_as_dcase_tools_read_it(tmp_path):
    """A system's event list lists the files where it detected something: the error for a file
    it leaves out says why evalkit asks, and `missing: empty` scores the file as one without
    detections (the reference's events there are all missed)."""
    reference = write(tmp_path / "ref.tsv", "filename\tonset\toffset\tevent_label\na.wav\t0\t1\tdog\nb.wav\t2\t3\tcat\n")
    system = write(tmp_path / "sys.tsv", "filename\tonset\toffset\tevent_label\na.wav\t0\t1\tdog\n")
    config = {"data": {"reference": str(reference), "systems": {"s": str(system)}}, "representation": "segments",
              "metrics": ["recall"], "averaging": "micro"}
    with pytest.raises(DataError) as error:
        evalkit.run(config, write_reports=False)
    assert str(error.value) == (
        f"{system}: missing 1 reference id(s): 'b.wav' (a system's event list often leaves out the files where it "
        "detected nothing: set `missing: empty` under `data:` to score them as files without detections, as DCASE "
        f"tools do; evalkit asks first, so that a list cut short is not scored as silence) (reference: {reference})"
    )
    (row,) = evalkit.run({**config, "data": {**config["data"], "missing": "empty"}}, write_reports=False).rows
    assert row.value == 0.5  # two 1-s segments in the reference, the one in b.wav missed
