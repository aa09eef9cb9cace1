"""scikit-learn-shaped metric functions, for people who reach for ``sklearn.metrics`` first.

Each takes scikit-learn's arguments, in its order and with its defaults, returns its shapes and,
on crisp labels, its numbers, errors and warnings; on soft labels (memberships in [0, 1]) it
gives what the fuzzy-set view defines, or refuses them saying why (docs/sklearn.md). Three
modules, one idea each:

- :mod:`evalkit.metrics.sets`: the set metrics (precision, recall, F, Jaccard, Hamming loss,
  accuracy, average precision) and the reading of the input that every function shares;
- :mod:`evalkit.metrics.counts`: the metrics of the confusion matrix, whose cells are fuzzy
  cardinalities of soft labels;
- :mod:`evalkit.metrics.scores`: the metrics of scores and probabilities (ROC and precision-recall
  curves, ROC AUC, log loss, Brier score, top-k accuracy).
"""

from evalkit.metrics.counts import (
    balanced_accuracy_score,
    classification_report,
    confusion_matrix,
    matthews_corrcoef,
    multilabel_confusion_matrix,
    zero_one_loss,
)
from evalkit.metrics.scores import (
    brier_score_loss,
    log_loss,
    precision_recall_curve,
    roc_auc_score,
    roc_curve,
    top_k_accuracy_score,
)
from evalkit.metrics.sets import (
    InputTypeError,
    UndefinedMetricWarning,
    accuracy_score,
    average_precision_score,
    f1_score,
    fbeta_score,
    hamming_loss,
    jaccard_score,
    precision_recall_fscore_support,
    precision_score,
    recall_score,
)

__all__ = [
    "InputTypeError",
    "UndefinedMetricWarning",
    "accuracy_score",
    "average_precision_score",
    "balanced_accuracy_score",
    "brier_score_loss",
    "classification_report",
    "confusion_matrix",
    "f1_score",
    "fbeta_score",
    "hamming_loss",
    "jaccard_score",
    "log_loss",
    "matthews_corrcoef",
    "multilabel_confusion_matrix",
    "precision_recall_curve",
    "precision_recall_fscore_support",
    "precision_score",
    "recall_score",
    "roc_auc_score",
    "roc_curve",
    "top_k_accuracy_score",
    "zero_one_loss",
]
