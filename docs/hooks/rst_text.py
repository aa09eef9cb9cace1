"""Docstring prose as Markdown: evalkit's docstrings use reST inline markup (``code``,
:class:`~x`, ``::`` literal blocks) inside Google-style sections, which griffe splits; this is
what remains for the prose of a section."""

from __future__ import annotations

import inspect
import re
import textwrap

LIST_ITEM = re.compile(r"^([-*+]|\d+\.)\s")
TOKEN = re.compile(r"(:[a-z]+:`~?[^`]+`|``.+?``|`[^`]+`)")


def inline(text: str, links: dict[str, str] | None = None, table: bool = False) -> str:
    """reST-flavoured docstring text as Markdown: ``code`` and :role:`x` become code spans (or
    links, for names in ``links``); Markdown specials outside code are escaped."""
    links = links or {}
    out = []
    for i, part in enumerate(TOKEN.split(text)):
        if not i % 2:  # prose
            out.append(re.sub(r"([\\*_\[\]])", r"\\\1", part).replace("<", "&lt;"))
        elif part.startswith(":"):  # :role:`target` or :role:`~target`
            target = part.split("`")[1]
            short, target = (target[1:].rsplit(".", 1)[-1], target[1:]) if target.startswith("~") else (target, target)
            out.append(f"[`{short}`]({links[target]})" if target in links else f"`{short}`")
        else:  # ``code`` or `code`
            code = part[2:-2] if part.startswith("``") else part[1:-1]
            out.append(f"`{code}`" if "`" not in code else f"`` {code} ``")
    result = "".join(out)
    return result.replace("|", "\\|") if table else result


def first_paragraph(doc: str | None) -> str:
    text = inspect.cleandoc(doc or "")
    return " ".join(text.split("\n\n", 1)[0].split())


def prose(doc: str | None, links: dict[str, str] | None = None) -> str:
    """Docstring prose as Markdown: paragraphs joined, lists kept, ``::`` and indented literal
    blocks fenced."""
    lines = inspect.cleandoc(doc or "").splitlines()
    out: list[str] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            out.append(inline(" ".join(s.strip() for s in para), links))
            para.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            flush()
            out.append("")
            i += 1
        elif line.rstrip().endswith("::"):
            para.append(line.rstrip()[:-1])
            flush()
            block, i = _indented(lines, i + 1)
            out += ["", "```python", *textwrap.dedent("\n".join(block)).strip("\n").splitlines(), "```", ""]
        elif LIST_ITEM.match(line.lstrip()) and not line.startswith("    "):
            flush()
            para.append(line)
            i += 1
            while i < len(lines) and lines[i].strip() and not LIST_ITEM.match(lines[i].lstrip()):
                para.append(lines[i])
                i += 1
            marker, _, rest = para[0].strip().partition(" ")
            para[0] = rest
            text = " ".join(s.strip() for s in para)
            para.clear()
            if out and out[-1].strip() and not LIST_ITEM.match(out[-1]):
                out.append("")  # Markdown starts a list only after a blank line
            out.append(f"{marker} {inline(text, links)}")
        elif line.startswith("    ") and not para:
            block, i = _indented(lines, i)
            out += ["```python", *textwrap.dedent("\n".join(block)).strip("\n").splitlines(), "```"]
        else:
            para.append(line)
            i += 1
    flush()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _indented(lines: list[str], i: int) -> tuple[list[str], int]:
    """The indented block starting at ``lines[i]`` (blank lines inside it included)."""
    block = []
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
        if not lines[i].strip() and (i + 1 >= len(lines) or not lines[i + 1].startswith(" ")):
            break
        block.append(lines[i])
        i += 1
    while block and not block[0].strip():
        block.pop(0)
    return block, i
