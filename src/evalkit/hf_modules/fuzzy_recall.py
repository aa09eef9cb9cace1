"""Fuzzy recall as a Hugging Face ``evaluate`` module (see :mod:`evalkit.hf`)."""

from evalkit import hf


class FuzzyRecall(hf.EvalkitModule):
    metrics = ("recall",)
    description = hf.FUZZY.format(what="Recall, |G ∩ P| / |G|: how much of the reference is predicted")
