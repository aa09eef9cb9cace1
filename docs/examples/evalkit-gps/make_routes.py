"""Write routes.geojson: a synthetic lake-tour search mirroring Fränti & Mariescu-Istodor's GPS
experiment (Section 4.6, Fig. 11, Table 6 of "Soft precision and recall").

A hiking loop of about 5.8 km runs around a lake (like the Kaltimonkierto around lake Kaltimo;
the lake, its place and all recordings here are made up). The query asks for full tours of it:

- the ground truth: 6 tours, 5 following the loop and one that takes a different path on the
  east side (up to 300 m inland, for about 2 km), which the search misses;
- the search result: 6 other recordings, 5 full tours and one partial tour (half the loop,
  2.9 km), which should not have been returned.

So the expected precision and recall are both 5/6 ≈ 0.83. Each recording walks the path with a
small lateral wander, at its own speed, direction and sampling interval (5 s to 60 s, so 5 m to
100 m between points), and with correlated GPS noise of a few metres. Seeded: rerunning the
script rewrites the same file.

    python make_routes.py        # writes routes.geojson next to this script
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

SEED = 2023
CENTRE = (62.6012, 29.7636)  # (lat, lon) of the made-up lake
EARTH_RADIUS = 6_371_008.8  # metres, as in evalkit_gps.route_grid

# (id, path, sampling interval in seconds, clockwise)
GROUND_TRUTH = [
    ("kaltimo-2014-06-08", "loop", 5, False),
    ("kaltimo-2014-08-17", "loop", 10, True),
    ("kaltimo-2015-05-24", "loop", 15, False),
    ("kaltimo-2015-09-06", "loop", 30, False),
    ("kaltimo-2016-07-03", "loop", 60, True),
    ("kaltimo-2016-08-21-east", "east", 10, False),
]
SEARCH_RESULT = [
    ("kaltimo-2017-06-11", "loop", 5, True),
    ("kaltimo-2017-09-02", "loop", 10, False),
    ("kaltimo-2018-05-27", "loop", 20, False),
    ("kaltimo-2018-08-12", "loop", 30, True),
    ("kaltimo-2019-06-16", "loop", 60, False),
    ("kaltimo-2019-07-14-partial", "partial", 10, False),
]


def trail(path: str) -> np.ndarray:
    """(n, 2) metres east and north of the lake centre along a path, densely (about 1 m apart),
    starting from the parking place on the west shore."""
    theta = np.linspace(np.pi, 3 * np.pi, 20_000)  # once around, from the west
    r = 800 * (1 + 0.15 * np.cos(2 * theta - 0.5) + 0.07 * np.sin(3 * theta + 1.0))
    if path == "east":  # the east-side variant: a bump inland where |angle from east| < 0.8
        off = np.angle(np.exp(1j * theta))  # in (-π, π], 0 due east
        r = r + 250 * np.where(np.abs(off) < 0.8, np.cos(off * np.pi / 1.6) ** 2, 0)
    xy = np.column_stack([1.2 * r * np.cos(theta), r * np.sin(theta)])
    if path == "partial":  # half the loop: from the west shore round the south to the east
        xy = xy[theta <= 2 * np.pi]
    return xy


def record(xy: np.ndarray, interval: float, clockwise: bool, rng: np.random.Generator) -> np.ndarray:
    """A GPS recording of walking along ``xy``: (n, 2) metres, one point per ``interval`` s."""
    if clockwise:
        xy = xy[::-1]
    step = np.hypot(*np.diff(xy, axis=0).T)
    along = np.concatenate([[0], np.cumsum(step)])
    normal = np.gradient(xy, axis=0)[:, ::-1] * [1, -1] / np.maximum(np.gradient(along), 1e-9)[:, None]
    wander = sum(
        rng.normal(0, 1.2) * np.sin(along / rng.uniform(40, 300) + rng.uniform(0, 6.3)) for _ in range(3)
    )
    walked = xy + wander[:, None] * normal  # the walker keeps to one side of the path or the other
    speed = rng.uniform(1.1, 1.6)  # m/s
    s = np.arange(0, along[-1], speed * interval)
    if along[-1] - s[-1] > 1:
        s = np.append(s, along[-1])
    points = np.column_stack([np.interp(s, along, walked[:, k]) for k in (0, 1)])
    rho = np.exp(-interval / 60)  # GPS error drifts over about a minute
    noise = np.zeros_like(points)
    noise[0] = rng.normal(0, 3.5, 2)
    for k in range(1, len(points)):
        noise[k] = rho * noise[k - 1] + np.sqrt(1 - rho**2) * rng.normal(0, 3.5, 2)
    return points + noise + rng.normal(0, 1.0, points.shape)


def to_lonlat(xy: np.ndarray) -> list[list[float]]:
    """GeoJSON positions [lon, lat] of metres around ``CENTRE`` (the inverse of the plugin's
    equirectangular projection), rounded to 6 decimals (about 0.1 m)."""
    lat = CENTRE[0] + np.degrees(xy[:, 1] / EARTH_RADIUS)
    lon = CENTRE[1] + np.degrees(xy[:, 0] / (EARTH_RADIUS * np.cos(np.radians(CENTRE[0]))))
    return np.round(np.column_stack([lon, lat]), 6).tolist()


def main() -> None:
    rng = np.random.default_rng(SEED)
    features = []
    for role, routes in (("ground truth", GROUND_TRUTH), ("search result", SEARCH_RESULT)):
        for route, path, interval, clockwise in routes:
            points = record(trail(path), interval, clockwise, rng)
            features.append({
                "type": "Feature",
                "properties": {"id": route, "role": role, "path": path, "interval_s": interval},
                "geometry": {"type": "LineString", "coordinates": to_lonlat(points)},
            })
    out = Path(__file__).with_name("routes.geojson")
    lines = ",\n".join(json.dumps(f, separators=(",", ":")) for f in features)
    out.write_text(f'{{"type":"FeatureCollection","features":[\n{lines}\n]}}\n', encoding="utf-8")
    print(f"wrote {out} ({len(features)} routes)")


if __name__ == "__main__":
    main()
