"""Labels that live in an ontology: graph distances as a similarity, so soft cardinality and
Crisp* work on label sets ("Laughter" for "Giggle" counts partly), and ontology-aware metrics:
mAP (exact, or binned with a bound) and OmAP on score matrices (and the OBCE loss weights, :func:`evalkit_ontology.obce_weights`).

Liu et al., "Ontology-aware learning and evaluation for audio tagging": distances are the
smallest number of edges between two classes, with the ontology taken as undirected.
"""

from __future__ import annotations

from evalkit.plugin import hookimpl
from evalkit_ontology.metrics import BinnedMAP, MeanAveragePrecision, OntologyMAP
from evalkit_ontology.omap import average_precision, obce_weights, omap
from evalkit_ontology.ontology import Ontology, OntologySimilarity, load_ontology
from evalkit_ontology.thresholds import AUROC, BestFScore

__all__ = ["Ontology", "average_precision", "load_ontology", "obce_weights", "omap"]


@hookimpl
def evalkit_register_similarities(register):
    register(OntologySimilarity)


@hookimpl
def evalkit_register_metrics(register):
    register(MeanAveragePrecision)
    register(BinnedMAP)
    register(OntologyMAP)
    register(BestFScore)
    register(AUROC)
