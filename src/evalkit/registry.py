"""The registry: component classes by (kind, name), and their creation from config specs."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError
from pydantic.errors import PydanticUndefinedAnnotation, PydanticUserError

from evalkit.contracts import calling, guard
from evalkit.errors import ConfigError, PluginContractError, PluginLoadError, UnknownComponentError
from evalkit.protocols import KINDS, OPTIONAL, DataMetric, SetMetric, optional

NAME = re.compile(r"[a-z][a-z0-9_]*\Z")

#: How close (difflib's ratio) a public attribute's name may come to a member of its kind
#: before registration calls it a misspelling: one wrong, missing or extra letter in a name of
#: six letters or more (``symetric`` 0.94, ``pair`` 0.89, ``suffix`` for ``suffixes`` 0.86),
#: while helpers like ``checked`` (0.83 to ``check``) or ``parallel_pairs`` (0.53) pass.
NEAR_MISS = 0.85


class Register(Protocol):
    """The callback a registration hook receives: ``register(cls)`` registers a component class
    under its ``name`` (or ``name=``), and under each of ``aliases`` too."""

    def __call__(self, cls: type, *, name: str | None = None, aliases: tuple[str, ...] = ()) -> None: ...


@dataclass(frozen=True)
class Entry:
    """One registered component class and where it came from."""

    kind: str
    name: str
    cls: type[Any]  # a plugin's class, with what registration checked (name, Params, protocol)
    plugin: str
    distribution: str

    @property
    def summary(self) -> str:
        """The first sentence of the docstring, as plain text (``code`` and :role:`x` marks dropped)."""
        return summary_of(self.cls.__doc__ or "")

    def who(self, label: str | None = None) -> str:
        """How messages name this component: ``tnorm 'hamacher(p=0.5)' (from dist, plugin p)``."""
        shown = self.name if label is None else label
        return f"{self.kind} {shown!r} (from {self.distribution}, plugin {self.plugin})"

    @property
    def params(self) -> dict[str, Any]:
        """The JSON schema properties of the component's parameters."""
        return self.cls.Params.model_json_schema().get("properties", {})


#: Where a sentence ends: a full stop before a capital (``eq. 3`` and ``et al.,`` go on).
_SENTENCE_END = re.compile(r"(?<=\.)\s+(?=[A-Z])")
_ROLE = re.compile(r":[a-z]+:`~?(?:[^`<]*<)?([^`>]+)>?`")


def summary_of(doc: str) -> str:
    """A docstring's first sentence on one line, without reStructuredText marks."""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    plain = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], paragraph).replace("``", "")
    return _SENTENCE_END.split(plain, maxsplit=1)[0]


class LoadFailure(PluginLoadError):
    """A plugin that failed to load or register, and its distribution: a component a config
    asks for and nobody registered may be one it would have provided."""

    def __init__(self, message: str, distribution: str | None = None) -> None:
        super().__init__(message)
        self.distribution = distribution


@dataclass
class Registry:
    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)
    failures: list[LoadFailure] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)

    def register_for(self, kind: str, plugin: str, distribution: str) -> Register:
        """The ``register`` callback handed to one plugin's registration hook for one kind."""

        def register(cls: type, *, name: str | None = None, aliases: tuple[str, ...] = ()) -> None:
            where = f"plugin {plugin!r} (distribution {distribution!r}) registering {kind} {cls.__name__}"
            checked = _check_component(kind, cls, name or getattr(cls, "name", None), where, distribution != "evalkit")
            for key in (checked, *aliases):
                previous = self.entries.get((kind, key))
                if previous is not None:
                    # The first registration (built-ins load first) keeps the plain name; the
                    # newcomer stays selectable by its qualified name. Both are reported.
                    self.conflicts.append(
                        f"{kind} {key!r} is registered by {previous.distribution} and "
                        f"{distribution}; {distribution}'s is available as '{distribution}:{key}'"
                    )
                    key = f"{distribution}:{key}"
                self.entries[(kind, key)] = Entry(kind, key, cls, plugin, distribution)

        return register

    def names(self, kind: str) -> list[str]:
        return sorted(name for k, name in self.entries if k == kind)

    def __iter__(self) -> Iterator[Entry]:
        return iter(sorted(self.entries.values(), key=lambda e: (e.kind, e.name)))

    def entry(self, kind: str, name: str, where: str = "") -> Entry:
        try:
            return self.entries[(kind, name)]
        except KeyError:
            others = [k for (k, n) in self.entries if n == name and k != kind]
            article = "an" if kind[0] in "aeiou" else "a"
            hint = f"{name!r} is a {others[0]}, not {article} {kind}." if others else ""
            if self.failures:
                failed = list(dict.fromkeys(f.distribution for f in self.failures if f.distribution))
                hint += f" It may be provided by {' or '.join(failed)}, which failed to load: " if failed else " "
                hint += "; ".join(map(str, self.failures))
            raise UnknownComponentError(
                kind, name, self.names(kind), hint.strip(), where, suggest=not others
            ) from None

    def create(
        self, kind: str, spec: str | Mapping[str, Any], where: str = "", base: Path | None = None
    ) -> Any:
        """Instantiate a component from ``"name"`` or ``{"name": ..., **params}``.

        ``where`` (e.g. ``"run.yaml:12: tnorm[2]"``) prefixes every error message. ``base`` (the
        config file's folder) reaches the ``Params`` validators as ``info.context["base"]``, so a
        parameter that is a path can be resolved against the config, not the working directory.
        """
        prefix = f"{where}: " if where else ""
        if isinstance(spec, str):
            name, raw = spec, {}
        elif isinstance(spec, Mapping) and isinstance(spec.get("name"), str):
            name, raw = spec["name"], {k: v for k, v in spec.items() if k != "name"}
        else:
            raise ConfigError(
                f"{prefix}a {kind} is given as a name or as a mapping with a 'name' key "
                f'(e.g. {{"name": "hamacher", "p": 0.5}}), not {spec!r}'
            )
        entry = self.entry(kind, name, where)
        try:
            params = entry.cls.Params.model_validate(raw, context={"base": base or Path.cwd()})
        except ValidationError as exc:
            raise ConfigError(prefix + describe_validation_error(exc, entry)) from None
        who = entry.who(label_of(spec))
        return guard(kind, calling(who, "__init__", entry.cls, params), who)


def label_of(spec: str | Mapping[str, Any]) -> str:
    """``name``, or ``name(key=value, ...)`` with the parameters as written in the config."""
    if isinstance(spec, str):
        return spec
    given = {k: v for k, v in spec.items() if k != "name"}
    if not given:
        return spec["name"]
    return f"{spec['name']}({', '.join(f'{k}={v}' for k, v in given.items())})"


def describe_validation_error(exc: ValidationError, entry: Entry) -> str:
    """One readable sentence per problem, naming the plugin and what it accepts."""
    allowed = ", ".join(f"{k} ({_type_name(v)})" for k, v in entry.params.items()) or "no parameters"
    problems = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(parameters)"
        if err["type"] == "extra_forbidden":
            problems.append(f"unknown parameter {key!r}")
        else:
            problems.append(f"parameter {key!r}: {err['msg']} (got {err.get('input')!r})")
    return (
        f"{entry.kind} {entry.name!r} (from {entry.distribution}): {'; '.join(problems)}. "
        f"It accepts: {allowed}."
    )


def _type_name(schema: Mapping[str, Any]) -> str:
    if "type" in schema:
        return str(schema["type"])
    if "anyOf" in schema:
        return " | ".join(str(s.get("type", s.get("const", "?"))) for s in schema["anyOf"])
    if "enum" in schema:
        return " | ".join(repr(v) for v in schema["enum"])
    return "value"


def _check_component(kind: str, cls: type, name: Any, where: str, third_party: bool = True) -> str:
    """The component's name, once ``cls`` is checked against its kind's protocol. A third party's
    ``Params`` is built now if it defers its build (as ``NoParams`` and the built-ins' models do,
    and so their subclasses), so that a model pydantic cannot build fails the plugin's load, as
    it did when the model was built on import, not the first command that uses it."""
    if kind not in KINDS:
        raise PluginContractError(f"{where}: unknown component kind {kind!r}")
    if not isinstance(name, str) or not NAME.match(name):
        raise PluginContractError(
            f"{where}: name {name!r} must match [a-z][a-z0-9_]* (set a `name` class attribute)"
        )
    params = getattr(cls, "Params", None)
    if not (isinstance(params, type) and issubclass(params, BaseModel)):
        raise PluginContractError(f"{where}: `Params` must be a pydantic BaseModel subclass")
    if params.model_config.get("extra") != "forbid":
        raise PluginContractError(
            f"{where}: `Params` must set model_config = ConfigDict(extra='forbid') so that a "
            "misspelled parameter is an error, not silently ignored"
        )
    if third_party and not params.__pydantic_complete__:
        try:
            params.model_rebuild()
        except (PydanticUserError, PydanticUndefinedAnnotation) as exc:
            first = str(exc).splitlines()[0]  # pydantic's advice; a page of text follows it
            raise PluginContractError(f"{where}: its `Params` model cannot be built: {type(exc).__name__}: {first}") from None
    protocol = KINDS[kind][0]
    protocols = (SetMetric, DataMetric) if kind == "metric" else (protocol,)
    missing = [sorted(_members(p) - set(dir(cls))) for p in protocols]
    if all(missing):
        fewest: list[str] = min(missing, key=len)
        raise PluginContractError(
            f"{where}: missing {', '.join(fewest)} required by the "
            f"{' or '.join(p.__name__ for p in protocols)} protocol (see evalkit.protocols)"
        )
    lines = optional(cls, "glossary")
    if not (isinstance(lines, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in lines.items())):
        raise PluginContractError(f"{where}: `glossary` must map result names to one-line explanations (str to str)")
    # A misspelt optional member (`symetric = True`, a method `pair`) would be silently ignored.
    known = set().union(*map(_members, protocols)) | {m.name for m in OPTIONAL[kind]} | {"params"}
    for attribute in sorted(a for a in set(dir(cls)) - known if not a.startswith("_")):
        close = difflib.get_close_matches(attribute, known, n=1, cutoff=NEAR_MISS)
        if close:
            raise PluginContractError(
                f"{where}: {attribute!r} is not a member of the {kind} contract, so evalkit would "
                f"ignore it. Did you mean {close[0]!r}? Rename it to {close[0]!r}, or, if it is a "
                f"helper of your own, make it private with a leading underscore ('_{attribute}')"
            )
    return name


@functools.cache
def _members(protocol: type) -> frozenset[str]:
    """The attributes and methods a protocol requires (its own and inherited); once per protocol,
    not once per registered class (a third of the registry's start-up)."""
    names: set[str] = set()
    for klass in protocol.__mro__:
        if klass is object or klass.__name__ in ("Protocol", "Generic"):
            continue
        names |= set(getattr(klass, "__annotations__", {}))
        names |= {k for k, v in vars(klass).items() if callable(v) and not k.startswith("__")}
        if "__call__" in vars(klass):
            names.add("__call__")
    return frozenset(names)
