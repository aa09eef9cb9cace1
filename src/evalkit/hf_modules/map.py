"""mAP as a Hugging Face ``evaluate`` module (see :mod:`evalkit.hf`)."""

from evalkit import hf


class Map(hf.EvalkitModule):
    metrics = ("map",)
    parameters = ("no_positive", "per_class")
    cite = ("liu",)
    description = (
        "mAP: the mean over classes of the average precision of each class's ranking of the samples by their "
        "predicted scores (scikit-learn's average_precision_score, macro). The predictions are scores (any finite "
        "numbers), the references 0/1 labels. A class without a positive sample counts as AP 0 "
        "(no_positive='zero', as scikit-learn >= 1.2) or is left out (no_positive='skip'). mAP keeps every score: "
        "add_batch buffers them, and compute ranks them all."
    )
