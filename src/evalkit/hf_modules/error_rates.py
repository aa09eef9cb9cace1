"""The DCASE error rates as a Hugging Face ``evaluate`` module (see :mod:`evalkit.hf`)."""

from evalkit import hf


class ErrorRates(hf.EvalkitModule):
    metrics = ("error_rate", "substitution_rate", "deletion_rate", "insertion_rate")
    cite = ("mesaros", "harju")
    description = hf.FUZZY.format(
        what="The error rate ER = (S + D + I) / |G| of Mesaros, Heittola & Virtanen, and its substitution, deletion "
        "and insertion rates (within each sample: S = min(FN, FP), D = FN − S, I = FP − S)"
    )
