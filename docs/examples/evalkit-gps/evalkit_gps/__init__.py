"""evalkit-gps: GPS routes as items of soft precision and recall, compared on a grid.

A third-party evalkit plugin, the worked example of the plugin author guide. It registers one
similarity, ``route_grid`` (:class:`evalkit_gps.route_grid.RouteGrid`), through the ``evalkit``
entry-point group, exactly as evalkit's built-in plugins register theirs.
"""

from __future__ import annotations

from evalkit.plugin import hookimpl
from evalkit_gps.route_grid import RouteGrid, grid_cells, project, read_routes

__all__ = ["RouteGrid", "grid_cells", "project", "read_routes"]


@hookimpl
def evalkit_register_similarities(register):
    register(RouteGrid)
