"""Fuzzy F1 as a Hugging Face ``evaluate`` module (see :mod:`evalkit.hf`)."""

from evalkit import hf


class FuzzyF1(hf.EvalkitModule):
    metrics = ("f1",)
    description = hf.FUZZY.format(what="F1, 2 |G ∩ P| / (|G| + |P|): the harmonic mean of precision and recall")
