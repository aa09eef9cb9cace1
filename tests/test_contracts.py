"""A deliberately broken third-party plugin: its components' bad outputs and exceptions are
reported naming the component, its plugin and distribution, and what was expected; the other
plugins keep working."""

from __future__ import annotations

import re

import numpy as np
import pytest

import evalkit
from evalkit.contracts import Guarded, unwrap
from evalkit.discovery import build_registry, make_plugin_manager
from evalkit.errors import DataError, PluginContractError, PluginError
from evalkit.protocols import BaseComponent, Similarity, TNorm
from evalkit_tnorms import Minimum

WHO = r"\(from evalkit-broken, plugin evalkit-broken:broken\)"


class BadTNorm(BaseComponent):
    """Returns what ``output`` makes of the minimum."""

    name = "bad_tnorm"
    output = staticmethod(lambda t: t)

    def __call__(self, a, b):
        return type(self).output(np.minimum(a, b))


class BadSimilarity(BaseComponent):
    """Exact matching, passed through ``output``; ``pairs`` likewise."""

    name = "bad_similarity"
    symmetric = True
    output = staticmethod(lambda m: m)

    def matrix(self, xs, ys):
        m = np.array([[float(x == y) for y in ys] for x in xs]).reshape(len(xs), len(ys))
        return type(self).output(m)


class BadRatio(BaseComponent):
    name = "bad_ratio"

    def ratio(self, ref, pred, inter):
        return inter, pred, ref  # one too many


class Broken:
    __name__ = "broken"

    @evalkit.hookimpl
    def evalkit_register_tnorms(self, register):
        register(BadTNorm)

    @evalkit.hookimpl
    def evalkit_register_similarities(self, register):
        register(BadSimilarity)

    @evalkit.hookimpl
    def evalkit_register_metrics(self, register):
        register(BadRatio)


@pytest.fixture
def registry():
    return build_registry(*make_plugin_manager(extra={"evalkit-broken:broken": Broken()}))


MEMBERSHIPS = np.array([[0.2, 0.9], [0.6, 0.0], [1.0, 0.4]])


def raise_zero_division(_):
    return 1 / 0


@pytest.mark.parametrize(
    ("output", "error", "problem"),
    [
        (lambda t: t[:, :1], PluginContractError,
         r"T\(a, b\) of shapes \(3, 2\) and \(3, 2\) returned shape \(3, 1\); "
         r"expected an array of shape \(3, 2\) with values in \[0, 1\]"),
        (lambda t: t + 0.7, PluginContractError, r"returned 1\.1 at index \(0, 1\) \(3 value\(s\) outside \[0, 1\] or NaN"),
        (lambda t: np.where(t > 0.5, np.nan, t), PluginContractError, r"returned nan at index \(1, 0\)"),
        (lambda t: t.astype(str), PluginContractError, r"returned dtype <U"),
        (raise_zero_division, PluginError,
         r"raised ZeroDivisionError in __call__\(\): division by zero\. This is a bug in the plugin"),
    ],
)
def test_tnorm_outputs_and_exceptions_name_the_plugin(monkeypatch, registry, output, error, problem):
    monkeypatch.setattr(BadTNorm, "output", staticmethod(output))
    with pytest.raises(error, match=rf"^tnorm 'bad_tnorm' {WHO}.*{problem}"):
        evalkit.evaluate(MEMBERSHIPS, MEMBERSHIPS[::-1], tnorm="bad_tnorm", registry=registry)


ITEMS = [["a", "b"], ["c"]]


@pytest.mark.parametrize(
    ("output", "error", "problem"),
    [
        (lambda m: m[:, :0], PluginContractError, r"matrix\(\) of \d+ x \d+ items returned shape"),
        (lambda m: m * 2, PluginContractError, r"returned 2\.0 at index"),
        (lambda m: m - 1, PluginContractError, r"returned -1\.0 at index"),
        (lambda m: m / 0, PluginContractError, r"outside \[0, 1\] or NaN"),
        (lambda m: {}[0], PluginError, r"raised KeyError in matrix\(\)"),
    ],
)
def test_similarity_outputs_and_exceptions_name_the_plugin(monkeypatch, registry, output, error, problem):
    monkeypatch.setattr(BadSimilarity, "output", staticmethod(output))
    with pytest.raises(error, match=rf"similarity 'bad_similarity' {WHO}.*{problem}"), np.errstate(all="ignore"):
        evalkit.evaluate(ITEMS, ITEMS, representation="soft_cardinality", similarity="bad_similarity",
                         registry=registry)


def test_set_metric_output_is_checked(registry):
    with pytest.raises(
        PluginContractError, match=rf"metric 'bad_ratio' {WHO}: ratio\(\) returned tuple; expected \(numerator, denominator\)"
    ):
        evalkit.evaluate(MEMBERSHIPS, MEMBERSHIPS, metrics=["bad_ratio"], registry=registry)


def test_wrapped_components_keep_their_protocols_and_attributes(registry):
    tnorm = registry.create("tnorm", "minimum")
    similarity = registry.create("similarity", "levenshtein")
    assert isinstance(tnorm, Guarded) and isinstance(tnorm, TNorm) and isinstance(unwrap(tnorm), Minimum)
    assert isinstance(similarity, Similarity) and not isinstance(similarity, TNorm)
    assert similarity.symmetric is True and similarity.name == "levenshtein"
    assert not hasattr(registry.create("similarity", "bad_similarity"), "pairs")  # optional methods stay optional
    with pytest.raises(ValueError, match=r"pairs\(\) needs two lists of equal length, got 2 and 1"):
        similarity.pairs(["a", "b"], ["a"])  # the caller's mistake, not the plugin's


def test_the_broken_plugin_does_not_stop_the_others(registry):
    # A plugin whose components misbehave still registers; everything else works as usual.
    assert registry.failures == [] and "bad_tnorm" in registry.names("tnorm")
    out = evalkit.evaluate(MEMBERSHIPS, MEMBERSHIPS, tnorm="product", registry=registry)
    assert out["precision"] == pytest.approx((MEMBERSHIPS**2).sum() / MEMBERSHIPS.sum())


@pytest.mark.parametrize(
    ("hook", "problem"),
    [
        (
            "evalkit_register_tnorm",
            r"'evalkit_register_tnorm' is not an evalkit hook \(did you mean 'evalkit_register_tnorms'\?\)",
        ),
        ("unmarked", r"evalkit_register_tnorms is not marked with @evalkit.hookimpl, so it would never be called"),
        ("arguments", r"evalkit_register_tnorms\(reg\) must take exactly one argument named 'register'"),
    ],
)
def test_hook_mistakes_read_clearly_and_skip_only_that_plugin(hook, problem):
    class Plugin:
        __name__ = "mistaken"

    if hook == "unmarked":
        Plugin.evalkit_register_tnorms = lambda self, register: register(BadTNorm)
    elif hook == "arguments":
        Plugin.evalkit_register_tnorms = evalkit.hookimpl(lambda self, reg: reg(BadTNorm))
    else:
        setattr(Plugin, hook, evalkit.hookimpl(lambda self, register: register(BadTNorm)))
    registry = build_registry(*make_plugin_manager(extra={"evalkit-mistaken:m": Plugin()}))
    (failure,) = registry.failures
    assert str(failure).startswith("plugin evalkit-mistaken:m (distribution evalkit-mistaken): ")
    assert re.search(problem, str(failure))
    assert "bad_tnorm" not in registry.names("tnorm") and "minimum" in registry.names("tnorm")


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (lambda: open("/nonexistent/model.bin"), DataError),  # names a file: about the file, not the plugin
        (lambda: (_ for _ in ()).throw(OSError("socket closed")), PluginError),  # names none: the plugin's own
    ],
)
def test_an_os_error_naming_a_file_is_a_data_error(monkeypatch, registry, raised, expected):
    monkeypatch.setattr(BadSimilarity, "output", staticmethod(lambda m: raised()))
    with pytest.raises(expected) as caught:
        evalkit.evaluate(ITEMS, ITEMS, representation="soft_cardinality", similarity="bad_similarity",
                         registry=registry)
    if expected is DataError:
        assert re.search(rf"similarity 'bad_similarity' {WHO}: cannot read /nonexistent/model.bin \(No such", str(caught.value))


@pytest.mark.parametrize(
    ("matrices", "problem"),
    [
        (lambda self, items, sizes: np.ones(sum(k * k for k in sizes) - 1), r"returned shape"),  # one too few
        (lambda self, items, sizes: np.full(sum(k * k for k in sizes), 2.0), r"returned 2\.0 at index"),
    ],
)
def test_batched_matrices_are_checked_like_matrix(monkeypatch, registry, matrices, problem):
    monkeypatch.setattr(BadSimilarity, "matrices", matrices, raising=False)
    with pytest.raises(PluginContractError, match=rf"similarity 'bad_similarity' {WHO}: matrices\(\) of \d+ groups {problem}"):
        evalkit.evaluate(ITEMS, ITEMS, representation="soft_cardinality", similarity="bad_similarity",
                         registry=registry)
