"""The glossary: one line per unfamiliar metric or averaging, from the components' own words."""

from __future__ import annotations

import numpy as np

import evalkit
from evalkit.discovery import build_registry, default_registry, make_plugin_manager
from evalkit.glossary import WELL_KNOWN, glossary
from evalkit.protocols import NoParams
from evalkit.registry import summary_of


def test_a_summary_is_the_first_sentence_on_one_line_without_markup():
    doc = """OmAP (Liu et al., "Ontology-aware", eq. 3–6): AP with
    weights, over :class:`evalkit.plugin.ScoreSeries` and ``psds``. A second sentence.

    A second paragraph."""
    assert summary_of(doc) == 'OmAP (Liu et al., "Ontology-aware", eq. 3–6): AP with weights, over ScoreSeries and psds.'
    assert summary_of("") == ""


def test_names_are_explained_by_their_components_and_the_well_known_are_not():
    registry = default_registry()
    labels = ["precision", "card_inter", "macro(undefined=skip)", "fuzzy · hamacher(p=0.5) · macro_pr · f1", "kld"]
    lines = glossary(labels, registry)
    assert list(lines) == ["card_inter", "macro_pr", "kld"]  # in order; T-norms name themselves on purpose
    assert lines["card_inter"] == registry.entry("metric", "card_inter").summary
    assert lines["macro_pr"] == registry.entry("averaging", "macro_pr").summary
    assert not WELL_KNOWN & set(glossary(WELL_KNOWN, registry))


def test_a_report_comparing_t_norms_and_averagings_explains_each_one_it_names():
    registry = default_registry()
    labels = ["minimum", "hamacher(p=0.5)", "micro", "macro(undefined=skip)", "kld"]
    lines = glossary(labels, registry, kinds=("tnorm", "averaging"), well_known=frozenset())
    assert lines == {"minimum": registry.entry("tnorm", "minimum").summary,
                     "hamacher": registry.entry("tnorm", "hamacher").summary,
                     "micro": registry.entry("averaging", "micro").summary,
                     "macro": registry.entry("averaging", "macro").summary}  # in order; kld is a metric: not asked


def test_a_data_metrics_results_are_explained_by_its_glossary_or_its_summary():
    registry = default_registry()
    lines = glossary(["omap_lambda0", "omap_per_level", "map_binned_upper", "auroc_per_class", "psds"], registry)
    omap = registry.entry("metric", "omap").cls
    assert lines["omap_lambda0"] == omap.glossary["omap_lambda0"]
    assert lines["map_binned_upper"].startswith("The most the exact mAP can be")
    assert lines["psds"] == registry.entry("metric", "psds").cls.glossary["psds"]
    assert "unknown_result" not in glossary(["unknown_result"], registry)


class Surprise:
    """A third party's metric: the share of surprises. Details follow."""

    name = "surprise"
    Params = NoParams
    glossary = {"surprise_per_class": "Each class's share of surprises."}

    def __init__(self, params):
        self.params = params

    def update(self, reference, prediction):
        return np.zeros(1)

    def compute(self, state):
        return {"surprise": 0.0}


def _registry_with(metric: type):
    class Plugin:
        __name__ = "surprise_plugin"

        @evalkit.hookimpl
        def evalkit_register_metrics(self, register):
            register(metric)

    registry = build_registry(*make_plugin_manager(extra={"evalkit-surprise:surprise": Plugin()}))
    return registry


def test_a_plugins_metric_is_explained_like_a_builtin():
    registry = _registry_with(Surprise)
    assert glossary(["surprise", "surprise_per_class"], registry) == {
        "surprise": "A third party's metric: the share of surprises.",
        "surprise_per_class": "Each class's share of surprises.",
    }


def test_a_glossary_that_is_not_text_is_refused_at_registration():
    class Garbled(Surprise):
        glossary = {"surprise": 3}  # type: ignore[dict-item]

    registry = _registry_with(Garbled)
    assert ("metric", "surprise") not in registry.entries
    (failure,) = registry.failures
    assert "registering metric Garbled: `glossary` must map result names to one-line explanations" in str(failure)
