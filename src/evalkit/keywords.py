"""Unknown keyword arguments of the Python API answered with the keyword meant.

People arrive with scikit-learn's, torchmetrics' or Hugging Face's names in their fingers (``average=``,
``y_true=``); Python's own message ("unexpected keyword argument") does not say what to write.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

#: Other libraries' names for evalkit's keywords.
ALIASES = {
    "average": "averaging", "y_true": "reference", "y_pred": "prediction", "target": "reference",
    "preds": "prediction", "metric": "metrics", "t_norm": "tnorm", "weights": "sample_weight",
    # Hugging Face evaluate's (evalkit.hf has its modules)
    "references": "reference", "predictions": "prediction",
}

F = TypeVar("F", bound=Callable[..., Any])


def suggest_keywords(func: F) -> F:
    """``func``, raising a TypeError that names the closest keyword for an unknown one."""
    signature = inspect.signature(func)
    known = [name for name, p in signature.parameters.items()
             if p.kind is not p.VAR_POSITIONAL and name != "self" and not name.startswith("_")]
    shown = func.__qualname__.replace(".__init__", "")

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        for key in kwargs:
            if key not in signature.parameters:
                meant = ALIASES.get(key) if ALIASES.get(key) in known else None
                close = meant or next(iter(difflib.get_close_matches(key, known, 1)), None)
                raise TypeError(
                    f"{shown}() got an unexpected keyword argument {key!r}"
                    + (f"; did you mean {close!r}?" if close else "")
                    + f" It takes: {', '.join(known)}"
                )
        return func(*args, **kwargs)

    return call  # type: ignore[return-value]
