"""What every component is, and the kinds that need nothing but arrays (T-norms, similarities,
set metrics): the leaf of the core's types, which the data types build on.

:mod:`evalkit.protocols` holds every kind's protocol; plugins import all of it from
:mod:`evalkit.plugin`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np
from numpy.typing import NDArray
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationInfo

from evalkit.loading import special_file

Array = NDArray[np.floating]


class NoParams(BaseModel):
    """The parameter model of a component that takes none."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


def _against_config(path: Path, info: ValidationInfo) -> Path:
    if "\0" in str(path):
        raise ValueError("a path cannot contain a NUL character")
    if any(len(part.encode("utf-8", "surrogateescape")) > 255 for part in path.parts):
        raise ValueError("a file or folder name in the path is over 255 bytes, which no common file system allows")
    base = (info.context or {}).get("base")
    path = path.expanduser()
    path = base / path if base is not None and not path.is_absolute() else path
    what = special_file(path)
    if what is not None:
        raise ValueError(f"{path} is {what}, not a regular file; save it to a file and name that")
    return path


#: A parameter that is a file: a relative path is taken relative to the config file's folder
#: (from Python, the working directory).
ConfigPath = Annotated[Path, AfterValidator(_against_config)]


#: The parameter model of a component (its ``Params``).
P = TypeVar("P", bound=BaseModel)


class BaseComponent(Generic[P]):
    """An optional base for components: keeps the validated ``params`` (``NoParams`` unless a
    subclass sets ``Params``). Nothing requires it; it only saves writing ``__init__``.

    It is generic over the parameter model, so that ``self.params.p`` is typed:
    ``class Hamacher(BaseComponent[HamacherParams]): Params = HamacherParams``.
    """

    Params: ClassVar[type[BaseModel]] = NoParams

    def __init__(self, params: P) -> None:
        self.params = params


def describe(component: Any) -> str:
    """``name(key=value, ...)`` of a component, for failure messages.

    Args:
        component: a component instance; its parameters are read from ``component.params``
            when it keeps them (as the built-in plugins do).

    Returns:
        The component's name, followed by its parameters if it has any.
    """
    name = getattr(component, "name", type(component).__name__)
    params: Any = getattr(component, "params", None)
    values = params.model_dump() if hasattr(params, "model_dump") else {}
    if not values:
        return str(name)
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in values.items())})"


@runtime_checkable
class Component(Protocol):
    name: ClassVar[str]
    Params: ClassVar[type[BaseModel]]


@runtime_checkable
class TNorm(Component, Protocol):
    """A fuzzy intersection T: [0,1]² → [0,1], commutative, associative, monotone, T(a,1)=a."""

    def __call__(self, a: Array, b: Array) -> Array: ...


@runtime_checkable
class Similarity(Component, Protocol):
    """A similarity in [0, 1] between items, computed for whole lists at once.

    ``matrix(xs, ys)`` is the (len(xs), len(ys)) matrix. The optional ``pairs``, ``check`` and
    ``symmetric`` (:data:`OPTIONAL`) make it faster or stricter.
    """

    def matrix(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array: ...


@runtime_checkable
class SetMetric(Component, Protocol):
    """A set ratio: returns (numerator, denominator) arrays from |G|, |P| and |G ∩ P|.

    Optional: ``reads_cardinalities`` (:data:`OPTIONAL`).
    """

    def ratio(self, ref: Array, pred: Array, inter: Array) -> tuple[Array, Array]: ...
