"""Python objects as evalkit's data: NumPy arrays, lists, pandas objects, and anything with
``__array__`` or DLPack, torch tensors included.

A tensor that requires grad is detached and one on a GPU is copied to the host (one copy of
the batch, the only one evalkit makes of it) without the caller's help: evaluation never needs
gradients. A DataFrame's columns are its classes and its index its sample ids, so frames are
aligned by name like files; the default index pandas makes (0, 1, ..., n − 1) means no ids.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evalkit.data import LabelMatrix
from evalkit.errors import DataError


def host_array(value: Any, where: str) -> Any:
    """``value`` as something NumPy reads without copying twice: a torch-like tensor detached
    and on the host, a DLPack or ``__array__`` object as a NumPy array; other values as they are."""
    if callable(getattr(value, "detach", None)) and callable(getattr(value, "cpu", None)):
        value = value.detach().cpu()
        if str(getattr(value, "dtype", "")) == "torch.bfloat16":  # NumPy has no bfloat16
            value = value.float()
        return np.asarray(value.numpy())
    if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
        try:
            return np.from_dlpack(value)
        except (BufferError, TypeError, RuntimeError) as exc:
            raise DataError(
                f"{where}: cannot read this {type(value).__name__} through DLPack ({exc}); pass it as a NumPy array"
            ) from None
    return value


def check_real(dtype: Any, where: str, error: type[Exception] = DataError) -> None:
    """Refuse complex numbers before anything converts them to float, which keeps the real part
    with only NumPy's ComplexWarning. ``error`` is the exception raised (evalkit.metrics raises
    scikit-learn's ValueError)."""
    if dtype.kind == "c":
        raise error(
            f"{where}: complex data not supported ({dtype}); labels are real numbers or strings, memberships, "
            "scores and weights real numbers: pass np.real(x) or np.abs(x), whichever the numbers mean"
        )


def is_pandas(value: Any) -> bool:
    return type(value).__module__.split(".")[0] == "pandas" and hasattr(value, "index")


def from_pandas(value: Any, where: str) -> LabelMatrix:
    """A DataFrame (columns: classes, index: sample ids) or a Series (one class, its name) as a
    matrix; the default index (0 to n − 1) means the rows have no ids."""
    import pandas as pd  # type: ignore[import-untyped]

    frame = value.to_frame() if isinstance(value, pd.Series) else value
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"{where}: a pandas {type(value).__name__} is not data; pass a DataFrame (samples x classes)")
    numeric = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if numeric:
        raise DataError(
            f"{where}: column(s) {', '.join(map(repr, map(str, numeric[:5])))} of the DataFrame are not numbers; "
            "every column is a class (put sample ids in the index: frame.set_index('id'))"
        )
    for column, dtype in frame.dtypes.items():
        check_real(dtype, f"{where}: column {str(column)!r}")
    index = frame.index
    default = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
    ids = None if default else tuple(str(i).strip() for i in index)
    values = np.ascontiguousarray(frame.to_numpy(dtype=np.float64, na_value=np.nan))  # row-major, as files give
    return LabelMatrix(values, tuple(str(c).strip() for c in frame.columns), ids, where)
