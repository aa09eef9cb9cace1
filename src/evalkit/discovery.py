"""Plugin discovery: entry points of group ``evalkit``, each registration hook called once.

Built-in plugins (the ``evalkit_*`` packages under ``src/``, beside evalkit) come through the same entry
points as third-party ones. Loading is done by our own loop rather than pluggy's
``load_setuptools_entrypoints`` so that one broken plugin is reported and the others still load.

A plugin that calls ``sys.exit()`` while it is imported or registers is a broken plugin like any
other, not the end of the command; only ``KeyboardInterrupt`` goes through, since a plugin
raising it cannot be told from the user pressing Ctrl-C, who means to stop.
"""

from __future__ import annotations

import difflib
import functools
import importlib.metadata
import inspect
import os
import re
from collections.abc import Callable, Sequence

import pluggy

from evalkit import hookspecs
from evalkit.protocols import KINDS
from evalkit.registry import LoadFailure, Registry

GROUP = "evalkit"

#: What a plugin may raise while it is imported or registers: everything but KeyboardInterrupt.
FAILURES = (Exception, SystemExit, GeneratorExit)


def make_plugin_manager(
    load_entrypoints: bool = True, extra: dict[str, object] | None = None
) -> tuple[pluggy.PluginManager, list[LoadFailure]]:
    """A plugin manager with the installed plugins, and the plugins that failed to load.

    Plugins are named ``"<distribution>:<entry point>"``. ``extra`` adds in-process plugins
    under such names (tests use it). Which third-party distributions load is chosen as llm and
    pytest choose (:func:`selection`): ``EVALKIT_LOAD_PLUGINS=dist1,dist2`` loads only those
    (empty: none), ``EVALKIT_BLOCK_PLUGINS=dist3`` (or ``evalkit -p no:dist3``) all but those.
    """
    pm = pluggy.PluginManager(GROUP)
    pm.add_hookspecs(hookspecs)
    if os.environ.get("EVALKIT_TRACE_PLUGINS"):
        pm.trace.root.setwriter(print)
        pm.enable_tracing()
    failures: list[LoadFailure] = []
    plugins = _entry_point_plugins(failures) if load_entrypoints else {}
    plugins.update(extra or {})
    for name, plugin in plugins.items():
        dist = name.partition(":")[0]
        try:
            problems = hook_problems(plugin)
            if problems:
                failures.append(LoadFailure(f"plugin {name} (distribution {dist}): {'; '.join(problems)}", dist))
                continue
            pm.register(plugin, name=name)
            pm.check_pending()
        except (ValueError, pluggy.PluginValidationError) as exc:
            _unregister(pm, plugin)
            failures.append(LoadFailure(f"plugin {name}: {exc}", dist))
        except FAILURES as exc:
            _unregister(pm, plugin)
            failures.append(LoadFailure(f"plugin {name} (distribution {dist}) failed to register ({_reason(exc)})", dist))
    return pm, failures


def _unregister(pm: pluggy.PluginManager, plugin: object) -> None:
    if pm.is_registered(plugin):
        pm.unregister(plugin)


def _reason(exc: BaseException) -> str:
    """``ImportError: No module named 'shapely'``; ``SystemExit: 3``."""
    return f"{type(exc).__name__}: {exc}"


def hook_problems(plugin: object) -> list[str]:
    """What is wrong with a plugin's hook functions, said so that an author can fix it: a name
    that is no hook (with the closest one), a hook without ``@evalkit.hookimpl`` (pluggy would
    silently never call it), or arguments other than ``register``."""
    hooks = sorted(hook for _, hook in KINDS.values())
    problems = []
    for attribute in dir(plugin):
        if not attribute.startswith("evalkit_"):
            continue
        function = getattr(plugin, attribute, None)
        if not callable(function) or isinstance(function, type):
            continue
        marked = getattr(function, "evalkit_impl", None) is not None
        if attribute not in hooks:
            if marked or attribute.startswith("evalkit_register"):
                close = difflib.get_close_matches(attribute, hooks, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"the hooks are {', '.join(hooks)}"
                problems.append(f"{attribute!r} is not an evalkit hook ({hint})")
        elif not marked:
            problems.append(f"{attribute} is not marked with @evalkit.hookimpl, so it would never be called")
        else:
            args = [a for a in inspect.signature(function).parameters if a != "self"]
            if args != ["register"]:
                problems.append(
                    f"{attribute}({', '.join(args)}) must take exactly one argument named "
                    f"'register' (the callback the hook passes): def {attribute}(register)"
                )
    return problems


def normalized(name: str) -> str:
    """A distribution name as pip compares them (PEP 503): ``Evalkit_GPS`` is ``evalkit-gps``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _names(variable: str) -> set[str] | None:
    """The distributions an environment variable lists (None when it is not set)."""
    value = os.environ.get(variable)
    if value is None:
        return None
    return {normalized(d.strip()) for d in value.split(",") if d.strip()}


def selection(installed: set[str], failures: list[LoadFailure]) -> Callable[[str], bool]:
    """Whether a distribution's plugins load. Built-ins always do. ``EVALKIT_LOAD_PLUGINS``, when
    set, names the only third-party distributions that load (set and empty: none, as llm's
    ``LLM_LOAD_PLUGINS``); ``EVALKIT_BLOCK_PLUGINS`` names those that do not (what
    ``evalkit -p no:NAME`` sets, as pytest's ``-p no:``). A name that matches no installed
    distribution is reported, since a misspelt one would otherwise change nothing without a word."""
    load, block = _names("EVALKIT_LOAD_PLUGINS"), _names("EVALKIT_BLOCK_PLUGINS") or set()
    for variable, names in (("EVALKIT_LOAD_PLUGINS", load or set()), ("EVALKIT_BLOCK_PLUGINS", block)):
        for name in sorted(names - installed):
            close = difflib.get_close_matches(name, sorted(installed - {"evalkit"}), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            failures.append(
                LoadFailure(f"{variable} names {name!r}, which no installed distribution with evalkit plugins is{hint}")
            )
        if "evalkit" in names and variable == "EVALKIT_BLOCK_PLUGINS":
            failures.append(LoadFailure("EVALKIT_BLOCK_PLUGINS names 'evalkit': the built-in plugins always load"))

    def loads(dist: str) -> bool:
        name = normalized(dist)
        return name == "evalkit" or ((load is None or name in load) and name not in block)

    return loads


def _named_entry_points() -> list[tuple[importlib.metadata.EntryPoint, str | None]]:
    """Each entry point of the group with its distribution's name, read once per distribution:
    ``Distribution.name`` parses the whole METADATA file (a README-long description) on every
    access, 0.4 ms each, and was read three times per entry point."""
    names: dict[int, str] = {}
    named = []
    for ep in importlib.metadata.entry_points(group=GROUP):
        if ep.dist is not None and id(ep.dist) not in names:
            names[id(ep.dist)] = ep.dist.name
        named.append((ep, None if ep.dist is None else names[id(ep.dist)]))
    return named


def _entry_point_plugins(failures: list[LoadFailure]) -> dict[str, object]:
    seen: set[tuple[str, str]] = set()
    plugins: dict[str, object] = {}  # what each entry point names: a module, usually
    # Built-ins first: they keep the plain names when a third party registers the same one.
    eps = sorted(_named_entry_points(), key=lambda named: (named[1] != "evalkit", named[0].value))
    loads = selection({normalized(name) for _, name in eps if name is not None}, failures)
    for ep, name in eps:
        dist = name or "unknown"
        if (dist, ep.name) in seen or not loads(dist):
            continue
        seen.add((dist, ep.name))
        try:
            plugins[f"{dist}:{ep.name}"] = ep.load()
        except FAILURES as exc:  # a broken third-party package must not hide the others
            failures.append(LoadFailure(f"plugin {dist}:{ep.name} failed to load ({_reason(exc)})", dist))
    return plugins


def build_registry(pm: pluggy.PluginManager, failures: Sequence[LoadFailure] = ()) -> Registry:
    """Call every plugin's registration hooks once, each separately, into a new registry."""
    registry = Registry(failures=list(failures))
    for kind, (_, hook_name) in KINDS.items():
        hook = getattr(pm.hook, hook_name)
        for impl in hook.get_hookimpls():  # in registration order: built-ins first
            plugin_name = impl.plugin_name
            dist = plugin_name.partition(":")[0]
            try:
                impl.function(register=registry.register_for(kind, plugin_name, dist))
            except FAILURES as exc:
                registry.failures.append(
                    LoadFailure(f"plugin {plugin_name} (distribution {dist}) failed in {hook_name} ({_reason(exc)})", dist)
                )
    return registry


@functools.cache
def default_registry() -> Registry:
    """The registry of every installed plugin, built once per process."""
    registry = build_registry(*make_plugin_manager())
    if not registry.entries:
        registry.failures.append(
            LoadFailure(
                "no evalkit plugins are installed, not even the built-ins: evalkit must be "
                "installed (run `pip install -e .` in a checkout), not just put on sys.path"
            )
        )
    return registry
