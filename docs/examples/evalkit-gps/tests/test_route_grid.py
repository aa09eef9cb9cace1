"""Tests of the route_grid similarity: its definition on routes small enough to work out by hand,
the protocol checks of evalkit's plugin kit on the example's real routes, its errors, and the
example config end to end.

Run from anywhere once the plugin is installed: ``pytest docs/examples/evalkit-gps/tests``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import evalkit
from evalkit.plugin import ConfigError, DataError
from evalkit.testing import check_similarity, plugin_registry
from evalkit_gps.route_grid import EARTH_RADIUS, SHIFT, RouteGrid, RouteGridParams, grid_cells

EXAMPLE = Path(__file__).resolve().parents[1]
ROUTES = EXAMPLE / "routes.geojson"
CENTRE = (62.6, 29.76)  # (lat, lon) of the tiny hand-made routes


def decode(codes: np.ndarray) -> set[tuple[int, int]]:
    """The (ix, iy) cells of codes ix·2³² + iy."""
    ix = (codes + (SHIFT >> 1)) >> 32
    return set(zip(ix.tolist(), (codes - ix * SHIFT).tolist()))


def write_routes(folder: Path, routes: dict[str, list[tuple[float, float]]]) -> Path:
    """A GeoJSON file of routes given in metres (x east, y north) from ``CENTRE``.

    The plugin's grid is centred on the mean of all points, so a one-point route "balance" is
    added at minus the sum of all the others: the mean is then exactly ``CENTRE``, and the
    grid lines fall at multiples of the cell size from it, where the tests expect them.
    """
    total = np.sum([p for points in routes.values() for p in points], axis=0)
    routes = {**routes, "balance": [tuple(-total)]}
    scale = np.degrees(1 / EARTH_RADIUS)
    features = [
        {
            "type": "Feature",
            "properties": {"id": route},
            "geometry": {
                "type": "LineString",
                "coordinates": [
                    [CENTRE[1] + x * scale / np.cos(np.radians(CENTRE[0])), CENTRE[0] + y * scale]
                    for x, y in points
                ],
            },
        }
        for route, points in routes.items()
    ]
    path = folder / "tiny.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "features": features}))
    return path


def grid(routes: Path, cell: float = 10, neighbourhood: int = 0) -> RouteGrid:
    return RouteGrid(RouteGridParams(routes=routes, cell=cell, neighbourhood=neighbourhood))


# A 10 m grid around CENTRE; cell (ix, iy) spans x in [10 ix, 10 ix + 10), y likewise.
TINY = {
    # west to east along y = 5 from x = -45 to 45: cells ix = -5..4 of row iy = 0, 10 cells,
    # from two points only (90 m apart: the cells between must not be skipped)
    "east": [(-45, 5), (45, 5)],
    # its first half, x = -45 to -5: cells ix = -5..-1 of row 0, 5 cells, every 1 m
    "half": [(x, 5) for x in range(-45, -4)],
    # the same line as "east", sampled every 2 m (another recording of the same path)
    "east_dense": [(x, 5) for x in range(-45, 46, 2)],
    # parallel to "east" one row north (y = 15, row 1) and two rows north (y = 25, row 2)
    "north": [(-45, 15), (45, 15)],
    "far_north": [(-45, 25), (45, 25)],
    # a diagonal from (5, 5) to (35, 25), i.e. (0.5, 0.5) to (3.5, 2.5) in cells
    "diagonal": [(5, 5), (35, 25)],
    # far away from all the others
    "elsewhere": [(2000, 2000), (2010, 2003)],
}


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    return write_routes(tmp_path, TINY)


# -- the definition, by hand ----------------------------------------------------------------------


def test_a_straight_route_visits_exactly_its_cells(tiny):
    sim = grid(tiny)
    assert decode(sim.cells("east")) == {(ix, 0) for ix in range(-5, 5)}
    assert decode(sim.cells("half")) == {(ix, 0) for ix in range(-5, 0)}


def test_jaccard_of_a_route_and_its_first_half(tiny):
    # "half" visits 5 of the 10 cells of "east" and no other: 5 shared / 10 in either = 0.5.
    assert grid(tiny).matrix(["east"], ["half"])[0, 0] == 0.5
    # With the neighbourhood, the cells only "east" visits are ix = 0..4; of these only ix = 0
    # is next to a cell of "half" (ix = -1): (5 + 1/2) / 10 = 0.55.
    assert grid(tiny, neighbourhood=1).matrix(["east"], ["half"])[0, 0] == pytest.approx(0.55)


def test_points_far_apart_skip_no_cell(tiny):
    # Two points 90 m apart on a 10 m grid visit the same 10 cells as a point every 2 m.
    sim = grid(tiny)
    assert np.array_equal(sim.cells("east"), sim.cells("east_dense"))
    assert sim.matrix(["east"], ["east_dense"])[0, 0] == 1.0


def test_a_diagonal_visits_every_cell_it_crosses():
    # y = 0.5 + 2/3 (x - 0.5): enters (1, 0) at x = 1, (1, 1) at y = 1 (x = 1.25), (2, 1) at
    # x = 2, (2, 2) at y = 2 (x = 2.75), (3, 2) at x = 3.
    cells = grid_cells(np.array([[0.5, 0.5], [3.5, 2.5]]))
    assert decode(cells) == {(0, 0), (1, 0), (1, 1), (2, 1), (2, 2), (3, 2)}
    # Through grid corners exactly: a corner is only touched, the cells beside it not visited.
    assert decode(grid_cells(np.array([[0.5, 0.5], [2.5, 2.5]]))) == {(0, 0), (1, 1), (2, 2)}
    # Westwards and southwards, into negative cells: slope 1/2 from (-0.5, -0.5), entering
    # (-2, -1) at x = -1, (-2, -2) at y = -1 (x = -1.5) and (-3, -2) at x = -2.
    cells = grid_cells(np.array([[-0.5, -0.5], [-2.5, -1.5]]))
    assert decode(cells) == {(-1, -1), (-2, -1), (-2, -2), (-3, -2)}


def test_one_point_and_repeated_points_visit_their_cell():
    assert decode(grid_cells(np.array([[0.5, 0.5]]))) == {(0, 0)}
    assert decode(grid_cells(np.array([[1.5, -0.5], [1.5, -0.5]]))) == {(1, -1)}


def test_diagonal_route_through_the_similarity(tiny):
    # The same diagonal as above, in metres on the 10 m grid.
    assert decode(grid(tiny).cells("diagonal")) == {(0, 0), (1, 0), (1, 1), (2, 1), (2, 2), (3, 2)}


def test_identical_is_one_and_disjoint_is_zero(tiny):
    for neighbourhood in (0, 1):
        sim = grid(tiny, neighbourhood=neighbourhood)
        m = sim.matrix(["east", "elsewhere"], ["east", "elsewhere", "far_north"])
        assert m[0, 0] == 1.0 and m[1, 1] == 1.0  # exactly
        assert m[0, 1] == 0.0 and m[1, 0] == 0.0 and m[0, 2] == 0.0


def test_neighbourhood_gives_half_credit_one_cell_off(tiny):
    # "north" runs one row above "east": no shared cell, so Jaccard 0. With the neighbourhood
    # each of the 20 cells is next to the other route: (0 + 20/2) / 20 = 0.5. Two rows apart,
    # no cell is next to the other route: 0.
    assert grid(tiny).matrix(["east"], ["north"])[0, 0] == 0.0
    m = grid(tiny, neighbourhood=1).matrix(["east"], ["north", "far_north"])
    assert m[0, 0] == 0.5 and m[0, 1] == 0.0


def test_the_neighbourhood_never_lowers_the_similarity():
    ids = _example_ids()
    plain = grid(ROUTES, cell=25).matrix(ids, ids)
    near = grid(ROUTES, cell=25, neighbourhood=1).matrix(ids, ids)
    assert (near >= plain).all() and (near > plain).any()


# -- the Similarity protocol, on the example's routes ----------------------------------------


def _example_ids() -> list[str]:
    return [f["properties"]["id"] for f in json.loads(ROUTES.read_text())["features"]]


@pytest.mark.parametrize("neighbourhood", [0, 1])
@pytest.mark.parametrize("cell", [10, 25, 60])
def test_check_similarity_on_real_routes(cell, neighbourhood):
    ids = _example_ids()
    check_similarity(grid(ROUTES, cell, neighbourhood), ids + ids[:3])


def test_check_similarity_on_tiny_routes(tiny):
    check_similarity(grid(tiny, neighbourhood=1), list(TINY) + ["east"])


def test_csv_and_geojson_give_the_same_similarities(tmp_path):
    features = json.loads(ROUTES.read_text())["features"]
    rows = ["route,lat,lon"] + [
        f"{f['properties']['id']},{lat},{lon}" for f in features for lon, lat in f["geometry"]["coordinates"]
    ]
    csv = tmp_path / "routes.csv"
    csv.write_text("\n".join(rows) + "\n")
    ids = _example_ids()
    assert np.array_equal(grid(csv, 25, 1).matrix(ids, ids), grid(ROUTES, 25, 1).matrix(ids, ids))


def test_full_tours_score_high_and_the_others_low():
    # What the example config's threshold 0.7 relies on (see routes.yaml).
    ids = _example_ids()
    truth, found = ids[:6], ids[6:]
    m = grid(ROUTES, 25, 1).matrix(truth, found)
    assert m[:5, :5].min() > 0.8  # full tours, each pair of recordings
    assert m[5, :].max() < 0.65  # the east-side variant
    assert m[:, 5].max() < 0.6  # the partial tour


# -- errors ------------------------------------------------------------------------------------


def test_unknown_ids_are_listed_with_samples_and_close_ids():
    sim = grid(ROUTES, 25)
    with pytest.raises(DataError) as error:
        sim.check({
            "reference:query": ["kaltimo-2014-06-08", "kaltimo-2041-06-08"],
            "search:query": ["kaltimo-2041-06-08", 7],
        })
    text = str(error.value)
    assert "similarity 'route_grid'" in text and "2 items are not a route id" in text
    assert "'kaltimo-2041-06-08' (samples reference:query, search:query)" in text
    assert "did you mean 'kaltimo-2014-06-08'" in text
    assert "7 (int, not text) (sample search:query)" in text
    assert "routes.geojson" in text


def test_matrix_and_pairs_reject_unknown_ids():
    sim = grid(ROUTES, 25)
    for call in (sim.matrix, sim.pairs):
        with pytest.raises(DataError, match="1 item is not a route id .*: 'nope'$"):
            call(["kaltimo-2014-06-08"], ["nope"])


def test_bad_parameters_name_the_plugin():
    for params in ({"cell": 0}, {"neighbourhood": 2}, {"grid": 5}):
        with pytest.raises(ConfigError, match="route_grid"):
            evalkit.evaluate([["a"]], [["a"]], representation="soft_cardinality",
                             similarity={"name": "route_grid", "routes": str(ROUTES), **params})


FEATURE = {"type": "Feature", "properties": {"id": "a"},
           "geometry": {"type": "LineString", "coordinates": [[29.76, 62.6], [29.77, 62.6]]}}


def _collection(*features) -> str:
    return json.dumps({"type": "FeatureCollection", "features": list(features)})


@pytest.mark.parametrize(
    ("name", "content", "error", "expected"),
    [
        ("bad.geojson", '{"type": "FeatureCollection",\n "features": [}', DataError,
         [":2:15: not valid JSON"]),
        ("list.geojson", "[]", DataError, ["expected a GeoJSON FeatureCollection"]),
        ("noid.geojson", _collection(FEATURE, {**FEATURE, "properties": {}}), DataError,
         ["features[1] has no properties.id", "unique text id"]),
        ("numid.geojson", _collection({**FEATURE, "properties": {"id": 3}}), DataError,
         ["features[0] has properties.id 3, not text"]),
        ("dup.geojson", _collection(FEATURE, FEATURE), DataError,
         ["features[1] (id 'a')", "already used by features[0]", "must be unique"]),
        ("point.geojson", _collection({**FEATURE, "geometry": {"type": "Point", "coordinates": [1, 2]}}),
         DataError, ["features[0] (id 'a')", "'Point', not a LineString"]),
        ("empty.geojson", _collection({**FEATURE, "geometry": {"type": "LineString", "coordinates": []}}),
         DataError, ["features[0] (id 'a')", "no points"]),
        ("swapped.geojson",
         _collection({**FEATURE, "geometry": {"type": "LineString",
                                              "coordinates": [[62.6, 29.76], [62.6, 95.0]]}}),
         DataError, ["features[0] (id 'a'), position 1", "latitude 95.0 is outside [-90, 90]",
                     "[longitude, latitude]"]),
        ("none.geojson", _collection(), DataError, ["has no routes"]),
        ("binary.geojson", b"\x89PNG\r\n\x1a\n", DataError, ["not UTF-8 text"]),
        ("header.csv", "id,lat,lon\na,62.6,29.7\n", DataError, [":1:", "route,lat,lon"]),
        ("text.csv", "route,lat,lon\na,62.6,29.7\na,62.6,east\n", DataError,
         [":3:", "lon 'east' is not a number"]),
        ("range.csv", "route,lat,lon\na,62.6,29.7\nb,-91,29.7\n", DataError,
         [":3:", "latitude -91.0 is outside [-90, 90]"]),
        ("noroute.csv", "route,lat,lon\n,62.6,29.7\n", DataError, [":2:", "route id is empty"]),
        ("split.csv", "route,lat,lon\na,62.6,29.7\nb,62.6,29.7\na,62.7,29.7\n", DataError,
         [":4:", "route 'a' continues after other routes' rows"]),
        ("routes.txt", "route,lat,lon\n", ConfigError, ["unknown suffix '.txt'", ".geojson", ".csv"]),
    ],
)
def test_malformed_files_say_where_and_how_to_fix(tmp_path, name, content, error, expected):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(error) as raised:
        grid(path)
    text = str(raised.value)
    assert name in text
    for fragment in expected:
        assert fragment in text


def test_a_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"routes file '.*nowhere\.geojson' does not exist"):
        grid(tmp_path / "nowhere.geojson")


# -- the plugin in evalkit ---------------------------------------------------------------------


def test_the_plugin_is_discovered_through_its_entry_point():
    entry = plugin_registry().entry("similarity", "route_grid")
    assert entry.distribution == "evalkit-gps"
    assert entry.cls is RouteGrid


def test_the_example_config_runs():
    values = {(row.representation.split("(")[0], row.metric): row.value
              for row in evalkit.run(EXAMPLE / "routes.yaml").rows}
    for metric in ("precision", "recall", "f1"):
        assert values[("exact_match", metric)] == 0  # different recordings, different ids
        assert values[("threshold_match", metric)] == pytest.approx(5 / 6)  # as expected
        assert values[("soft_cardinality", metric)] > 0.9  # near 1, as the paper's Soft
