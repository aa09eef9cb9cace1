"""YAML loading that keeps safe_load's semantics, rejects duplicate keys, and remembers where
every value was written, so errors can say ``run.yaml:12:9``.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evalkit.errors import ConfigError

Path_ = tuple[Hashable, ...]


class _StrictLoader(yaml.SafeLoader):
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
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config ({exc.strerror})") from None
    return parse_yaml(text, str(path))


def parse_yaml(text: str, file: str = "<string>") -> YamlDocument:
    try:
        loader = _StrictLoader(text)
        loader.name = file
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{file}:{mark.line + 1}:{mark.column + 1}" if mark else file
        raise ConfigError(f"{where}: malformed YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file}: malformed YAML: {exc}") from None
    document = YamlDocument(data, file, text=text)
    if node is not None:
        _record(node, (), document.marks)
    return document


def _record(node: yaml.Node, path: Path_, marks: dict[Path_, yaml.Mark]) -> None:
    marks[path] = node.start_mark
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            _record(value_node, (*path, key_node.value), marks)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record(item, (*path, index), marks)
