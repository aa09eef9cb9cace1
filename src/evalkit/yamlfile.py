"""YAML loading that keeps safe_load's semantics, rejects duplicate keys, and remembers where
every value was written, so errors can say ``run.yaml:12:9``.

A config is text a stranger may have written, so the loader also refuses what would crash or
exhaust evalkit later, each with the place and a fix: bytes that are not UTF-8, keys that are
not text (``[1, 2]:``, ``true:``), a value a tag cannot be read as (``!!float "abc"``), nesting
deeper than :data:`MAX_DEPTH`, an alias that contains itself (``&a [*a]``), and aliases that
expand to more than :data:`MAX_EXPANDED` values (a "billion laughs" file is a few lines).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evalkit.errors import ConfigError, shortened
from evalkit.loading import case_twin, special_file

Path_ = tuple[Hashable, ...]

#: Levels of nesting a config may have; a real one needs about six.
MAX_DEPTH = 100
#: Values that aliases may add by repeating what they refer to.
MAX_EXPANDED = 100_000
#: Key tags that construct text: plain and quoted strings, and YAML's ``=`` value key.
_TEXT_KEYS = ("tag:yaml.org,2002:str", "tag:yaml.org,2002:value")


def _at(mark: yaml.Mark) -> str:
    return f"{mark.name}:{mark.line + 1}:{mark.column + 1}"


def _too_deep(mark: yaml.Mark) -> ConfigError:
    return ConfigError(
        f"{_at(mark)}: the config is nested more than {MAX_DEPTH:,} levels deep (aliases expanded); "
        "a config needs a handful: check for unclosed brackets or an alias inside what it refers to"
    )


class _StrictLoader(yaml.SafeLoader):
    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        """The composer recurses once per level: stop it at the limit, not at Python's."""
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _too_deep(self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """A scalar its tag cannot read (``!!bool maybe``, an integer of 5,000 digits) is a
        config error at its place, not PyYAML's KeyError or ValueError."""
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, KeyError, AttributeError):
            if not isinstance(node, yaml.ScalarNode):
                raise
            raise ConfigError(
                f"{_at(node.start_mark)}: {shortened(node.value, 80)!r} is not a valid {_tag(node)} value; correct "
                "it, or write text in quotes without a tag"
            ) from None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise ConfigError(
                    f"{key_node.start_mark.name}:{key_node.start_mark.line + 1}: duplicate key "
                    f"{key!r} (first at line {seen[key].line + 1}); YAML would silently keep only the last"
                )
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


@dataclass
class YamlDocument:
    """Parsed data and the line:column of every value, by its path of keys and indices."""

    data: Any
    file: str
    marks: dict[Path_, yaml.Mark] = field(default_factory=dict)
    text: str = ""  # the YAML as written, for reports

    def where(self, path: Path_) -> str:
        """``file:line:col`` of the deepest value on ``path`` that exists."""
        for end in range(len(path), -1, -1):
            mark = self.marks.get(tuple(path[:end]))
            if mark is not None:
                return f"{self.file}:{mark.line + 1}:{mark.column + 1}"
        return self.file


def load_yaml(path: Path) -> YamlDocument:
    what = special_file(path)
    if what is not None:  # reading it would never end
        raise ConfigError(f"{path}: the config is {what}, not a regular file; save it to a file and name that")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file{case_twin(path.absolute())}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"{path}:{line}:{column}: not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start:,}; "
            "save the config as UTF-8"
        ) from None
    return parse_yaml(text, str(path))


def parse_yaml(text: str, file: str = "<string>") -> YamlDocument:
    try:
        loader = _StrictLoader(text)
        loader.name = file
        try:
            node = loader.get_single_node()
            marks = _record(node) if node is not None else {}
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "unreadable"
        if mark is None:
            raise ConfigError(f"{file}: malformed YAML: {problem}") from None
        raise ConfigError(f"{_at(mark)}: malformed YAML: {problem}{_advice(problem, mark)}\n"
                          f"{_pointed(text, mark)}") from None
    except yaml.YAMLError as exc:  # a ReaderError: a character YAML does not allow
        raise ConfigError(f"{file}: malformed YAML: {exc}") from None
    return YamlDocument(data, file, marks, text)


#: PyYAML's words for a key written at a column its mapping does not use.
_INDENTATION = ("mapping values are not allowed here", "expected <block end>", "could not find expected ':'",
                "did not find expected key")


def _advice(problem: str, mark: yaml.Mark) -> str:
    """What such a message usually means, in the words of the person who wrote the file."""
    if any(problem.startswith(words) for words in _INDENTATION):
        return (f"; this is usually the indentation of line {mark.line + 1} (or the line above it): keys of one "
                "mapping start in the same column, a value nested under a key two spaces further in")
    if "'\\t'" in problem:
        return f"; YAML indents with spaces, never tabs: replace the tab on line {mark.line + 1} with spaces"
    return ""


#: The characters of a long line shown around the place of an error.
_SHOWN = 120


def _pointed(text: str, mark: yaml.Mark) -> str:
    """The line of ``mark`` with a caret under its column, numbered as an editor shows it (at
    the end of the last line when the mark is past it: an unclosed bracket); of a long line, the
    part around the column."""
    lines = text.splitlines() or [""]
    row, column = (mark.line, mark.column) if mark.line < len(lines) else (len(lines) - 1, len(lines[-1]))
    line, start = lines[row], max(0, column - _SHOWN // 2)
    shown = ("…" if start else "") + line[start:start + _SHOWN] + ("…" if start + _SHOWN < len(line) else "")
    before = ("…" if start else "") + line[start:column]
    pad = "".join(c if c == "\t" else " " for c in before)  # a tab moves the caret as it moves the text
    number = f"{row + 1:>5} | "
    return f"{number}{shown}\n{' ' * (len(number) - 2)}| {pad}^"


def _record(root: yaml.Node) -> dict[Path_, yaml.Mark]:
    """The mark of every value by its path, walking the nodes as construction would expand
    them, so that what the limits and key rules refuse is refused before anything is built."""
    marks: dict[Path_, yaml.Mark] = {}
    seen: set[int] = set()
    repeated = 0
    todo: list[tuple[yaml.Node, Path_, tuple[int, ...]]] = [(root, (), ())]  # node, path, its ancestors
    while todo:
        node, path, ancestors = todo.pop()
        if id(node) in ancestors:
            raise ConfigError(
                f"{_at(node.start_mark)}: this value holds an alias of itself (like `&a [*a]`), so it never "
                "ends; refer to it from outside it"
            )
        if len(path) > MAX_DEPTH:
            raise _too_deep(node.start_mark)
        if id(node) in seen:
            repeated += 1
            if repeated > MAX_EXPANDED:
                raise ConfigError(
                    f"{_at(node.start_mark)}: the aliases of this config expand to more than {MAX_EXPANDED:,} "
                    "values; write the values out, or repeat less"
                )
        seen.add(id(node))
        marks[path] = node.start_mark
        inside = (*ancestors, id(node))
        if isinstance(node, yaml.MappingNode):
            children = [(value, (*path, _key(key)), inside) for key, value in node.value]
        elif isinstance(node, yaml.SequenceNode):
            children = [(item, (*path, index), inside) for index, item in enumerate(node.value)]
        else:
            continue
        todo += reversed(children)  # popped in the order written: the first problem is reported
    return marks


def _key(node: yaml.Node) -> str:
    """A mapping key, which must be text: ``true:``, ``1:`` or ``[a, b]:`` would reach evalkit
    as a bool, a number or an unhashable list."""
    if isinstance(node, yaml.ScalarNode) and node.tag in _TEXT_KEYS:
        return node.value
    place = _at(node.start_mark)
    if node.tag == "tag:yaml.org,2002:merge":
        raise ConfigError(f"{place}: YAML merge keys (`<<`) are not supported; repeat the keys instead")
    if isinstance(node, yaml.ScalarNode):
        value = shortened(node.value, 80)
        raise ConfigError(
            f"{place}: keys must be text, but `{value}` is read as {_tag(node)}; quote it ('{value}':) if it is a name"
        )
    kind = "a list" if isinstance(node, yaml.SequenceNode) else "a mapping"
    raise ConfigError(f"{place}: keys must be text, but this key is {kind}; use a name")


def _tag(node: yaml.Node) -> str:
    """``!!bool`` for ``tag:yaml.org,2002:bool``: a tag as it is written."""
    return node.tag.replace("tag:yaml.org,2002:", "!!")
