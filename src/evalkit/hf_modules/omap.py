"""Ontology-aware mAP (OmAP) as a Hugging Face ``evaluate`` module (see :mod:`evalkit.hf`)."""

from evalkit import hf


class Omap(hf.EvalkitModule):
    metrics = ("omap",)
    parameters = ("ontology", "format", "cache_dir", "no_positive", "unlabeled", "disconnected", "per_class")
    cite = ("liu",)
    description = (
        "OmAP (Liu et al., 'Ontology-aware learning and evaluation for audio tagging', eq. 3-6): average precision "
        "with each false positive weighted by its class's distance in an ontology to the sample's nearest reference "
        "label, at every coarse level (lambda = 0 ... D_max), averaged over the levels. compute() needs ontology= (an "
        "AudioSet ontology JSON, an edge list, GraphML or node-link JSON) and classes= (the ontology's ids or names, "
        "one per column). The predictions are scores, the references 0/1 labels."
    )
