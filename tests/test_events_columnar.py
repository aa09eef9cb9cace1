"""The columnar event-list reader gives exactly the item sets of the row-by-row reader, on
random event lists written every way the format allows; and anything it does not take goes to
the row-by-row reader, whose errors name the line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.errors import DataError
from evalkit_segments.columnar import read_events
from evalkit_segments.loaders import EventListLoader, _layout, separator

LABELS = ["speech", "dog bark", "car", "alarm/bell"]
FILES = ["a.wav", "b.wav", "dir/c.wav", "d e.wav"]
TIMES = st.sampled_from([0.0, 0.5, 1.0, 1.25, 2.0, 3.5, 10.0]) | st.floats(0, 60, allow_nan=False).map(lambda t: round(t, 3))


@st.composite
def event_lists(draw):
    """Rows of (file, onset, offset, label), overlapping, touching and repeated ones included."""
    rows = []
    for _ in range(draw(st.integers(1, 30))):
        onset = draw(TIMES)
        rows.append((draw(st.sampled_from(FILES)), onset, onset + draw(TIMES), draw(st.sampled_from(LABELS))))
    return rows


def write(path: Path, rows, *, header: bool, csv: bool, crlf: bool, bom: bool, spaces: bool, permute: bool) -> Path:
    sep = "," if csv else "\t"
    names = ["filename", "onset", "offset", "event_label"]
    order = [3, 1, 0, 2] if permute and header else [0, 1, 2, 3]
    lines = [sep.join(names[i] for i in order)] if header else []
    for row in rows:
        fields = [str(v) for v in row]
        if spaces:
            fields = [f" {f} " for f in fields]
        if csv and "/" in fields[3]:
            fields[3] = f'"{fields[3]}"'
        lines.append(sep.join(fields[i] for i in order))
    text = ("\r\n" if crlf else "\n").join(lines) + "\n"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=event_lists(), header=st.booleans(), csv=st.booleans(), crlf=st.booleans(), bom=st.booleans(),
       spaces=st.booleans(), permute=st.booleans(), labels=st.booleans())
def test_the_columnar_reader_equals_the_row_reader(tmp_path, rows, header, csv, crlf, bom, spaces, permute, labels):
    path = write(tmp_path / ("events.csv" if csv else "events.tsv"), rows, header=header, csv=csv, crlf=crlf,
                 bom=bom, spaces=spaces, permute=permute)
    given_labels = LABELS[::-1] if labels else None
    order, header_line, *_ = _layout(path)
    columnar = read_events(path, order, header_line, given_labels, separator(path))
    assert columnar is not None, path.read_text(encoding="utf-8-sig")
    loader = EventListLoader(EventListLoader.Params(labels=given_labels))
    assert columnar == loader._load_rows(path, order, header_line)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a.wav\t1\t2\tdog\nb.wav\tx\t3\tdog\n", "events.tsv:2: onset 'x' is not a number"),
        ("a.wav\t1\t2\tdog\nb.wav\t4\t3\tdog\n", "events.tsv:2: offset 3 is before onset 4"),
        ("a.wav\t1\t2\tdog\n\nb.wav\t-1\t3\tdog\n", "events.tsv:3: onset -1 is negative"),
        ("a.wav\t1\t2\tdog\nb.wav\t1\t2\t\n", "events.tsv:2: empty event label"),
        ("a.wav\t1\t2\tdog\nb.wav\t1\t2\tdog\textra\n", "events.tsv:2: 5 fields"),
        ("a.wav\t1\t2\tdog\nb.wav\tnan\t2\tdog\n", "events.tsv:2: onset nan is not a finite time"),
        ("a.wav\t1\t2\tdog\nb.wav\t1\tinf\tdog\n", "events.tsv:2: offset inf is not a finite time"),
    ],
)
def test_what_the_columnar_reader_leaves_gets_the_row_readers_error(tmp_path, text, message):
    path = tmp_path / "events.tsv"
    path.write_text(text, encoding="utf-8")
    assert read_events(path, [0, 1, 2, 3], 0, None, "\t") is None
    with pytest.raises(DataError, match=message):
        EventListLoader(EventListLoader.Params()).load(path, "reference")


def test_files_without_events_take_the_row_reader(tmp_path):
    path = tmp_path / "events.tsv"
    path.write_text("a.wav\t1\t2\tdog\nb.wav\n", encoding="utf-8")
    assert read_events(path, [0, 1, 2, 3], 0, None, "\t") is None
    loaded = EventListLoader(EventListLoader.Params()).load(path, "reference")
    assert loaded.ids == ("a.wav", "b.wav") and loaded.samples[1] == ((),)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(times=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**20), st.integers(-30, 5)), min_size=1, max_size=40))
def test_times_are_read_to_the_last_bit_as_python_reads_them(tmp_path, times):
    """Onsets of up to 27 digits with exponents: the columnar parse equals float(text)."""
    texts = [f"{whole}.{frac}e{exp}" for whole, frac, exp in times]
    path = tmp_path / "events.tsv"
    path.write_text("".join(f"f{i}.wav\t{t}\t{t}\tdog\n" for i, t in enumerate(texts)), encoding="utf-8")
    columnar = read_events(path, [0, 1, 2, 3], 0, None, "\t")
    assert columnar is not None
    assert [sample[0][0][0] for sample in columnar.samples] == [float(t) for t in texts]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=event_lists(), data=st.data())
def test_events_held_as_columns_reorder_cut_and_select_as_tuples_do(tmp_path, rows, data):
    """Intervals (the columnar reader's samples) under take, slices and select equal the same
    operations on the row reader's tuples: alignment and chunking never see the difference."""
    path = write(tmp_path / "events.tsv", rows, header=False, csv=False, crlf=False, bom=False, spaces=False,
                 permute=False)
    columnar = read_events(path, [0, 1, 2, 3], 0, None, "\t")
    tuples = EventListLoader(EventListLoader.Params())._load_rows(path, [0, 1, 2, 3], 0)
    assert columnar is not None and columnar == tuples
    n = len(tuples)
    order = data.draw(st.permutations(list(range(n)) + [-1]))  # -1: an empty sample
    order += data.draw(st.lists(st.integers(-1, n - 1), max_size=4))  # repeats: a bootstrap resample
    assert columnar.take(order).samples == tuples.take(order).samples
    start, stop = data.draw(st.integers(0, n)), data.draw(st.integers(0, n))
    assert columnar[start:stop].samples == tuples[start:stop].samples
    classes = data.draw(st.lists(st.sampled_from([*LABELS, "new"]), unique=True, min_size=1))
    assert columnar.select(classes, fill=True).samples == tuples.select(classes, fill=True).samples
    cells = columnar.samples.cells()
    assert len(cells[0]) == len(rows)  # every event, not merged


def test_overlapping_events_are_merged_where_time_is_measured(tmp_path):
    """Event lists keep their events as listed; the representations that measure time (segments,
    fuzzy_segments) merge a class's overlapping events first, so a file gives the numbers of the
    same events merged by hand (fuzzy_segments once saw them unmerged, and its ramps overlapped)."""
    import evalkit

    (tmp_path / "ref.tsv").write_text("a.wav\t0\t2\tdog\na.wav\t1\t3\tdog\na.wav\t5\t6\tcat\n", encoding="utf-8")
    (tmp_path / "sys.tsv").write_text("a.wav\t0.5\t0.9\tdog\na.wav\t0.6\t2.5\tdog\na.wav\t5.2\t6.5\tcat\n",
                                      encoding="utf-8")
    merged = {"items": [{"cat": [(5.0, 6.0)], "dog": [(0.0, 3.0)]}], "ids": ["a.wav"]}
    system = {"items": [{"cat": [(5.2, 6.5)], "dog": [(0.5, 2.5)]}], "ids": ["a.wav"]}  # the two dogs merged
    for representation in ("segments", {"name": "fuzzy_segments", "ramp": 0.5}):
        config = {"name": "m", "representation": representation, "averaging": "micro", "metrics": ["precision", "recall"]}
        from_files = evalkit.run({**config, "data": {"reference": str(tmp_path / "ref.tsv"),
                                                     "systems": {"s": str(tmp_path / "sys.tsv")}}})
        by_hand = evalkit.run({**config, "data": {"reference": merged, "systems": {"s": system}}})
        assert [r.value for r in from_files.rows] == pytest.approx([r.value for r in by_hand.rows], rel=1e-12)
