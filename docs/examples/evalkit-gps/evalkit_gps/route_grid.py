"""The ``route_grid`` similarity: GPS routes compared by the grid cells they pass through.

After C-SIM (Mariescu-Istodor & Fränti, "Grid-based method for GPS route analysis for
retrieval", ACM TSAS 3(3), 2017; used for route search in "Gesture input for GPS route search",
S+SSPR 2016, reference [9] of Fränti & Mariescu-Istodor, "Soft precision and recall", 2023,
Section 4.6): each route is drawn onto a square grid, and two routes are as similar as the
cells they visit are shared.

Items are **route ids** (text), resolved through a routes file, as the ``ontology`` similarity
resolves labels through its ontology file. The item data stays small and hashable, and exact
matching compares recordings by id.

**Routes file.** GeoJSON (``.geojson``/``.json``): a FeatureCollection of LineString features,
each with a text ``properties.id``; positions are ``[longitude, latitude]`` (an altitude is
ignored). Or CSV (``.csv``): a header naming the columns ``route,lat,lon`` (others are ignored),
one row per point, the rows of a route together and in order.

**Grid.** Points are projected to metres with a local equirectangular projection around the
mean latitude φ̄ (and mean longitude) of all points in the file: x = R·cos φ̄·Δλ, y = R·Δφ
(radians, R = 6,371,008.8 m). This is accurate to a fraction of a percent over a few tens of
kilometres; it is meant for routes in one region, not across the antimeridian or near a pole.
The grid (square cells of ``cell`` metres) is fixed by the whole file, so similarities are
comparable within one file; adding routes to the file moves the grid slightly.

**Cells of a route.** Every cell that a segment between consecutive points passes through
(a proper grid traversal: points far apart skip no cell), plus the cell of every point (so a
one-point route has one cell). A segment that only touches a cell at a corner or along an edge
does not visit it.

**Similarity** of routes A and B with cell sets C_A and C_B:

- ``neighbourhood: 0``: the Jaccard index |C_A ∩ C_B| / |C_A ∪ C_B|;
- ``neighbourhood: 1``: (|C_A ∩ C_B| + ½·|N|) / |C_A ∪ C_B|, where N is the set of cells that
  only one route visits but the other route passes next to (it visits one of the cell's 8
  neighbours). A cell off by one counts half a shared cell: two parallel tracks one cell apart
  score 0.5, not 0. This is a tolerance in the spirit of C-SIM's neighbourhood, not claimed to
  be identical to it.

Both are symmetric, in [0, 1], 1 exactly for routes with the same cells (identical routes) and
0 for routes more than one cell apart.
"""

from __future__ import annotations

import csv
import difflib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalkit.plugin import Array, BaseComponent, ConfigError, ConfigPath, DataError

if TYPE_CHECKING:
    from scipy import sparse

#: The mean Earth radius (IUGG), in metres.
EARTH_RADIUS = 6_371_008.8

#: A cell (ix, iy) is coded as ix·2³² + iy: one int64, and a neighbour is the code plus an offset.
SHIFT = np.int64(1) << np.int64(32)
NEIGHBOURS = np.array([dx * SHIFT + dy for dx in (-1, 0, 1) for dy in (-1, 0, 1)], dtype=np.int64)

#: Unknown route ids listed (with suggestions) in one error message.
MAX_LISTED = 20

#: A segment must cross a cell for more than this many cell widths to visit it (rounding).
TOUCH = 1e-9


# ---------------------------------------------------------------------------------------------
# Reading routes
# ---------------------------------------------------------------------------------------------


def read_routes(path: Path) -> dict[str, np.ndarray]:
    """The routes of a GeoJSON or CSV file: id -> (n, 2) float64 array of (lat, lon) degrees.

    Raises:
        ConfigError: the file does not exist or has an unknown suffix.
        DataError: the file is malformed, naming the line or feature and how to fix it.
    """
    if not path.is_file():
        what = "is a directory, not a file" if path.is_dir() else "does not exist"
        raise ConfigError(
            f"routes file {str(path)!r} {what}; `routes:` is relative to the config file's folder"
        )
    suffix = path.suffix.lower()
    if suffix not in (".geojson", ".json", ".csv"):
        raise ConfigError(
            f"routes file {str(path)!r}: unknown suffix {path.suffix!r}; use GeoJSON (.geojson, "
            ".json) or CSV (.csv with columns route,lat,lon)"
        )
    try:
        routes = _read_csv(path) if suffix == ".csv" else _read_geojson(path)
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not routes:
        raise DataError(f"{path}: the file has no routes")
    return routes


def _read_geojson(path: Path) -> dict[str, np.ndarray]:
    try:
        collection = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None
    if not isinstance(collection, dict) or collection.get("type") != "FeatureCollection":
        raise DataError(
            f"{path}: expected a GeoJSON FeatureCollection ({{\"type\": \"FeatureCollection\", "
            "\"features\": [...]}), one LineString feature per route"
        )
    features = collection.get("features")
    if not isinstance(features, list):
        raise DataError(f"{path}: the FeatureCollection has no list of `features`")
    routes: dict[str, np.ndarray] = {}
    first: dict[str, int] = {}
    for k, feature in enumerate(features):
        where = f"{path}: features[{k}]"
        if not isinstance(feature, dict) or feature.get("type") != "Feature":
            raise DataError(f"{where} is not a GeoJSON Feature object")
        properties = feature.get("properties")
        route = properties.get("id") if isinstance(properties, dict) else None
        if not isinstance(route, str) or not route:
            got = "no properties.id" if route is None else f"properties.id {route!r}, not text"
            raise DataError(f"{where} has {got}; give every feature a unique text id in "
                            "\"properties\": {\"id\": \"...\"}")
        where += f" (id {route!r})"
        if route in first:
            raise DataError(f"{where}: the id is already used by features[{first[route]}]; "
                            "route ids must be unique")
        geometry = feature.get("geometry")
        kind = geometry.get("type") if isinstance(geometry, dict) else geometry
        if kind != "LineString":
            raise DataError(f"{where}: the geometry is {kind!r}, not a LineString; a route is a "
                            "LineString of [lon, lat] positions")
        try:
            lonlat = np.array(geometry.get("coordinates"), dtype=np.float64)
        except (TypeError, ValueError):
            lonlat = np.empty((0, 0))
        if lonlat.shape == (0,):
            raise DataError(f"{where}: the route has no points; give it at least one [lon, lat]")
        if lonlat.ndim != 2 or lonlat.shape[1] not in (2, 3):
            raise DataError(f"{where}: the coordinates are not a list of [lon, lat] number pairs")
        latlon = lonlat[:, 1::-1]
        bad = _bad_points(latlon)
        if bad is not None:
            i, problem = bad
            raise DataError(f"{where}, position {i}: {problem} (GeoJSON positions are "
                            "[longitude, latitude], in degrees)")
        routes[route], first[route] = latlon, k
    return routes


def _read_csv(path: Path) -> dict[str, np.ndarray]:
    routes: dict[str, list[tuple[float, float]]] = {}
    last = None
    with path.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        columns = reader.fieldnames or []
        if not {"route", "lat", "lon"} <= set(columns):
            raise DataError(f"{path}:1: the header must name the columns route,lat,lon "
                            f"(got {','.join(columns) or 'nothing'})")
        for row in reader:
            where = f"{path}:{reader.line_num}"
            route = row["route"]
            if not route:
                raise DataError(f"{where}: the route id is empty; every row names its route")
            values = []
            for column in ("lat", "lon"):
                try:
                    values.append(float(row[column]))
                except (TypeError, ValueError):
                    raise DataError(f"{where}: {column} {row[column]!r} is not a number "
                                    "(decimal degrees, e.g. 62.6010)") from None
            bad = _bad_points(np.array([values]))
            if bad is not None:
                raise DataError(f"{where}: {bad[1]}")
            if route != last and route in routes:
                raise DataError(f"{where}: route {route!r} continues after other routes' rows; keep "
                                "the rows of a route together (or give each recording its own id)")
            routes.setdefault(route, []).append((values[0], values[1]))
            last = route
    return {route: np.array(points, dtype=np.float64) for route, points in routes.items()}


def _bad_points(latlon: np.ndarray) -> tuple[int, str] | None:
    """(index, problem) of the first point that is not a finite (lat, lon) in range, or None."""
    lat, lon = latlon[:, 0], latlon[:, 1]
    for values, name, limit in ((lat, "latitude", 90), (lon, "longitude", 180)):
        bad = np.flatnonzero(~(np.abs(values) <= limit))
        if bad.size:
            return int(bad[0]), f"{name} {float(values[bad[0]])!r} is outside [-{limit}, {limit}]"
    return None


# ---------------------------------------------------------------------------------------------
# Rasterising
# ---------------------------------------------------------------------------------------------


def project(latlon: np.ndarray, origin: tuple[float, float]) -> np.ndarray:
    """(n, 2) metres (x east, y north) of (lat, lon) degrees: equirectangular around ``origin``
    (lat, lon), whose latitude sets the east-west scale."""
    lat0, lon0 = np.radians(origin)
    lat, lon = np.radians(latlon[:, 0]), np.radians(latlon[:, 1])
    return np.column_stack([EARTH_RADIUS * np.cos(lat0) * (lon - lon0), EARTH_RADIUS * (lat - lat0)])


def grid_cells(xy: np.ndarray) -> np.ndarray:
    """The sorted unique codes (ix·2³² + iy) of the cells a polyline visits; ``xy`` is (n, 2) in
    cell widths, so cell (ix, iy) is [ix, ix+1) × [iy, iy+1).

    Every segment is cut where it crosses a grid line; the midpoint of each piece lies inside
    one visited cell. All segments are cut at once: no loop over points or cells.
    """
    p0, d = xy[:-1], np.diff(xy, axis=0)
    start = np.floor(p0).astype(np.int64)
    crossings = np.abs(np.floor(xy[1:]).astype(np.int64) - start)
    # Cut points as (segment, t), t in [0, 1] along the segment: both ends, then every crossing.
    segments, cuts = [np.arange(len(d))] * 2, [np.zeros(len(d)), np.ones(len(d))]
    for axis in (0, 1):
        count = crossings[:, axis]
        seg = np.repeat(np.arange(len(d)), count)
        j = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
        rising = d[seg, axis] > 0  # lines start+1, start+2, ... going up; start, start-1, ... down
        line = start[seg, axis] + np.where(rising, j + 1, -j)
        segments.append(seg)
        cuts.append((line - p0[seg, axis]) / d[seg, axis])
    seg, t = np.concatenate(segments), np.concatenate(cuts)
    order = np.lexsort((t, seg))
    seg, t = seg[order], t[order]
    length = np.hypot(d[:, 0], d[:, 1])
    piece = (seg[1:] == seg[:-1]) & ((t[1:] - t[:-1]) * length[seg[:-1]] > TOUCH)
    s, mid = seg[:-1][piece], (t[1:][piece] + t[:-1][piece]) / 2
    cells = np.floor(np.concatenate([xy, p0[s] + mid[:, None] * d[s]])).astype(np.int64)
    return np.unique(cells[:, 0] * SHIFT + cells[:, 1])


# ---------------------------------------------------------------------------------------------
# The similarity
# ---------------------------------------------------------------------------------------------


class RouteGridParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    routes: ConfigPath = Field(
        description="The routes file: GeoJSON (a FeatureCollection of LineString features with a "
        "text properties.id; positions [lon, lat]) or CSV (columns route,lat,lon; a route's rows "
        "together, in order). A relative path is taken relative to the config file.",
    )
    cell: float = Field(
        25.0, ge=0.1, allow_inf_nan=False,
        description="The grid cell size in metres (at least 0.1, so cell indices fit in 32 bits). "
        "Larger cells tolerate more GPS noise and tell nearby paths apart less.",
    )
    neighbourhood: Literal[0, 1] = Field(
        0,
        description="0: Jaccard index of the visited cells. 1: a cell that only one route visits "
        "but the other passes next to (one of its 8 neighbours) counts half a shared cell.",
    )


class RouteGrid(BaseComponent[RouteGridParams]):
    """Route similarity from the grid cells two routes visit (after C-SIM): the Jaccard index of
    the cell sets, with ``neighbourhood: 1`` half credit for cells off by one. Items are route
    ids in the ``routes`` file. See the module docstring for the exact definition.
    """

    name = "route_grid"
    symmetric = True
    Params = RouteGridParams

    def __init__(self, params: RouteGridParams) -> None:
        super().__init__(params)
        # Read now, so that a bad file is reported before any work; rasterise lazily, once.
        self.points = read_routes(params.routes)
        every = np.concatenate(list(self.points.values()))
        self.origin = (float(every[:, 0].mean()), float(every[:, 1].mean()))
        self._cells: dict[str, np.ndarray] = {}
        self._near: dict[str, np.ndarray] = {}

    @property
    def who(self) -> str:
        return "similarity 'route_grid'"

    def cells(self, route: str) -> np.ndarray:
        """The sorted unique int64 codes of the cells ``route`` visits (computed once)."""
        codes = self._cells.get(route)
        if codes is None:
            xy = project(self.points[route], self.origin) / self.params.cell
            codes = self._cells[route] = grid_cells(xy)
        return codes

    def near(self, route: str) -> np.ndarray:
        """The codes of the cells ``route`` visits and of their 8 neighbours (computed once)."""
        codes = self._near.get(route)
        if codes is None:
            codes = self._near[route] = np.unique(self.cells(route)[:, None] + NEIGHBOURS)
        return codes

    # -- the Similarity protocol ---------------------------------------------------------------

    def check(self, samples: Mapping[Any, Sequence[Any]]) -> None:
        """Reject every item that is not a route id of the file, listing the samples it occurs
        in and close ids."""
        missing: dict[str, dict[str, None]] = {}
        for sample, items in samples.items():
            for item in items:
                if not self._known(item):
                    missing.setdefault(_shown(item), {})[str(sample)] = None
        if missing:
            raise self._unknown({item: list(where) for item, where in missing.items()})

    def matrix(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        """The (len(xs), len(ys)) similarities: shared cells of all pairs from sparse products
        of one-hot route × cell matrices, over the distinct routes only."""
        (rows, row_of), (cols, col_of) = self._distinct(xs), self._distinct(ys)
        if not rows or not cols:
            return np.zeros((len(xs), len(ys)))
        vocabulary = self._vocabulary(rows + cols)
        x, y = self._onehot(rows, vocabulary), self._onehot(cols, vocabulary)
        shared = (x @ y.T).toarray()
        size_x, size_y = np.diff(x.indptr), np.diff(y.indptr)
        if self.params.neighbourhood:
            near_x = self._onehot(rows, vocabulary, near=True)
            near_y = self._onehot(cols, vocabulary, near=True)
            next_to = (x @ near_y.T).toarray() + (near_x @ y.T).toarray() - 2 * shared
        else:
            next_to = 0
        sim = (shared + next_to / 2) / (size_x[:, None] + size_y[None, :] - shared)
        return sim[np.ix_(row_of, col_of)]

    def pairs(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        """Element-wise similarities sim(xs[i], ys[i]), shape (len(xs),): row-wise products of
        the pairs' one-hot rows."""
        if len(xs) != len(ys):
            raise ValueError(f"{self.who}: pairs() needs lists of one length, got {len(xs)} and {len(ys)}")
        if not len(xs):
            return np.zeros(0)
        routes, index = self._distinct([*xs, *ys])
        i, j = index[: len(xs)], index[len(xs) :]
        vocabulary = self._vocabulary(routes)
        onehot = self._onehot(routes, vocabulary)
        x, y = onehot[i], onehot[j]
        shared = _rowdot(x, y)
        if self.params.neighbourhood:
            near = self._onehot(routes, vocabulary, near=True)
            next_to = _rowdot(x, near[j]) + _rowdot(near[i], y) - 2 * shared
        else:
            next_to = 0
        size = np.diff(onehot.indptr)
        return (shared + next_to / 2) / (size[i] + size[j] - shared)

    # -- helpers -------------------------------------------------------------------------------

    def _known(self, item: Any) -> bool:
        return isinstance(item, str) and item in self.points

    def _distinct(self, items: Sequence[Any]) -> tuple[list[str], np.ndarray]:
        """The distinct route ids of ``items`` and each item's index among them."""
        unknown = {_shown(item): [] for item in items if not self._known(item)}
        if unknown:
            raise self._unknown(unknown)
        index: dict[str, int] = {}
        position = [index.setdefault(item, len(index)) for item in items]
        return list(index), np.array(position, dtype=np.intp)

    def _vocabulary(self, routes: list[str]) -> np.ndarray:
        """The sorted codes of every cell the routes visit (or pass next to)."""
        cells = self.near if self.params.neighbourhood else self.cells
        return np.unique(np.concatenate([cells(route) for route in routes]))

    def _onehot(self, routes: list[str], vocabulary: np.ndarray, near: bool = False) -> sparse.csr_array:
        """The (len(routes), len(vocabulary)) 0/1 matrix of the cells each route visits (or, with
        ``near``, visits or passes next to)."""
        # scipy is imported here, not with the module: evalkit imports every plugin to build its
        # registry (`evalkit plugins`), and scipy would make that several times slower.
        from scipy import sparse

        codes = [(self.near if near else self.cells)(route) for route in routes]
        indptr = np.concatenate([[0], np.cumsum([len(c) for c in codes])])
        indices = np.searchsorted(vocabulary, np.concatenate(codes))
        data = np.ones(len(indices))
        return sparse.csr_array((data, indices, indptr), shape=(len(routes), len(vocabulary)))

    def _unknown(self, missing: Mapping[str, Sequence[str]]) -> DataError:
        """The error for unknown items (as :func:`_shown`), each with the samples it occurs in
        (possibly none) and close ids."""
        ids = [repr(route) for route in self.points]
        parts = []
        for item, where in list(missing.items())[:MAX_LISTED]:
            text = item
            if where:
                shown = ", ".join(where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
                text += f" (sample{'s' if len(where) > 1 else ''} {shown})"
            close = difflib.get_close_matches(item, ids, n=3, cutoff=0.6)
            if close:
                text += " — did you mean " + " or ".join(close) + "?"
            parts.append(text)
        if len(missing) > MAX_LISTED:
            parts.append(f"... and {len(missing) - MAX_LISTED} more")
        count = len(missing)
        return DataError(
            f"{self.who}: {count} item{'s are' if count != 1 else ' is'} not a route id of "
            f"{str(self.params.routes)!r} ({len(self.points)} routes; an item is the text id of "
            "a route: properties.id in GeoJSON, the route column in CSV): " + "; ".join(parts)
        )


def _shown(item: Any) -> str:
    """An unknown item as listed in an error: its repr, and its type unless it is text."""
    return repr(item) if isinstance(item, str) else f"{item!r} ({type(item).__name__}, not text)"


def _rowdot(a: sparse.csr_array, b: sparse.csr_array) -> np.ndarray:
    """The dot product of each row of ``a`` with the same row of ``b``."""
    return np.asarray(a.multiply(b).sum(axis=1)).ravel()
