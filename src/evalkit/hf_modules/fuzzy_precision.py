"""Fuzzy precision as a Hugging Face ``evaluate`` module (see :mod:`evalkit.hf`)."""

from evalkit import hf


class FuzzyPrecision(hf.EvalkitModule):
    metrics = ("precision",)
    description = hf.FUZZY.format(what="Precision, |G ∩ P| / |P|: how much of the prediction is in the reference")
