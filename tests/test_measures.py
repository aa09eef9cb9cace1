"""Values carry their own names: Measure from the engine to the rows, and data metrics that say
what their arrays are (PerClass, PerLevel) instead of a name suffix."""

from __future__ import annotations

import numpy as np
import pytest

import evalkit
from evalkit.discovery import build_registry, make_plugin_manager
from evalkit.errors import PluginContractError
from evalkit.measures import Measure
from evalkit.plugin import BaseComponent, PerClass, PerLevel

REF = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.5]])
PRED = np.array([[0.8, 0.1, 0.5], [0.2, 0.6, 0.4]])


class Shaped(BaseComponent):
    """A data metric whose result has the shape its test asks for."""

    name = "shaped"
    result: object = None

    def update(self, reference, prediction):
        return np.array([float(len(reference))])

    def compute(self, state):
        return type(self).result


class ShapedPlugin:
    @evalkit.hookimpl
    def evalkit_register_metrics(self, register):
        register(Shaped)


@pytest.fixture
def registry():
    return build_registry(*make_plugin_manager(extra={"evalkit-shaped:s": ShapedPlugin()}))


def run_with(registry, result):
    Shaped.result = result
    config = {"data": {"reference": {"values": REF.tolist(), "classes": ["a", "b", "c"]},
                       "systems": {"s": {"values": PRED.tolist(), "classes": ["a", "b", "c"]}}},
              "metrics": ["f1", "shaped"], "averaging": ["micro", "none"]}
    return evalkit.run(config, registry=registry, write_reports=False)


def test_per_class_and_per_level_results_become_rows_with_their_class_and_level(registry):
    rows = run_with(registry, {"total": 2.0, "by_class": PerClass([0.1, 0.2, 0.3]), "by_level": PerLevel([0.5, 0.6])}).rows
    shaped = [(r.metric, r.class_, r.level, r.value) for r in rows if r.averaging is None]
    assert shaped == [("total", None, None, 2.0), ("by_class", "a", None, 0.1), ("by_class", "b", None, 0.2),
                      ("by_class", "c", None, 0.3), ("by_level", None, 0, 0.5), ("by_level", None, 1, 0.6)]
    per_class_f1 = [(r.class_, r.measure) for r in rows if r.averaging == "none"]
    assert [c for c, _ in per_class_f1] == ["a", "b", "c"]
    assert per_class_f1[0][1] == Measure("set", "f1", "fuzzy", None, "minimum", "none", class_="a")


def test_a_bare_array_is_refused_with_what_to_return_instead(registry):
    with pytest.raises(PluginContractError, match=r"returned an array for 'x'; wrap it as PerClass\(values\) or PerLevel"):
        run_with(registry, {"x": np.zeros(3)})


def test_per_class_values_must_match_the_classes(registry):
    with pytest.raises(PluginContractError, match="2 per-class values for 3 classes"):
        run_with(registry, {"x": PerClass([1.0, 2.0])})


def test_measure_labels_and_parts():
    m = Measure("set", "f1", "fuzzy", None, "hamacher(p=0.5)", "micro", sweep="offset", sweep_value=0.25)
    assert m.label() == "fuzzy · hamacher(p=0.5) · micro · f1 · offset=0.25"
    assert m.label(sweep=False) == "fuzzy · hamacher(p=0.5) · micro · f1"
    assert Measure("data", "omap_per_level", level=3).label() == "omap_per_level · λ=3"
    assert m.single and not m.at(class_="a").single
    assert {m: 1}[m.at()] == 1  # hashable, equal by value


def test_per_class_values_of_data_metrics_are_not_shown_as_the_systems():
    """A data metric's per-class values belong in the per-class table; the data-metrics table once
    showed one class's value under `map_per_class` as if it were the system's."""
    import evalkit
    from evalkit.pivot import tables

    results = evalkit.run({"name": "d", "metrics": [{"name": "map", "per_class": True}],
                           "data": {"reference": [[1, 0], [0, 1], [1, 1]], "systems": {"s": [[0.9, 0.2], [0.3, 0.8], [0.6, 0.4]]},
                                    "classes": ["a", "b"]}})
    by_title = {t.title: t for t in tables(results)}
    assert by_title["Data metrics"].header == ["system", "map"]
    assert by_title["Per class — system: s, metric: map_per_class"].header == ["a", "b"]
