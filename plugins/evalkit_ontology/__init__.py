"""Labels that live in an ontology: graph distances as a similarity, so soft cardinality and
Crisp* work on label sets ("Laughter" for "Giggle" counts partly), and ontology-aware metrics.

Liu et al., "Ontology-aware learning and evaluation for audio tagging": distances are the
smallest number of edges between two classes, with the ontology taken as undirected.
"""

from __future__ import annotations

from evalkit import hookimpl
from evalkit_ontology.ontology import OntologySimilarity


@hookimpl
def evalkit_register_similarities(register):
    register(OntologySimilarity)
