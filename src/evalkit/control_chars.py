"""Control characters shown as their escapes. Names from configs and data files reach terminals,
reports and figures, where an ESC, a CR or a bidirectional control would act instead of showing.
A leaf (it imports nothing of evalkit), so the CLI's error path and every writer can use it.
"""

from __future__ import annotations

#: Characters a terminal would act on instead of showing: C0 and C1 controls (ESC starts ANSI
#: sequences, CR overwrites a line), every bidirectional control (the overrides, embeddings and
#: isolates that reorder text, and the marks U+061C, U+200E, U+200F that move neutral characters)
#: and the line and paragraph separators U+2028, U+2029 that editors break lines at.
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_CONTROLS = {c: repr(chr(c))[1:-1] for c in [*range(0x20), *range(0x7F, 0xA0), *_BIDI, 0x2028, 0x2029]}
_LINES = {k: v for k, v in _CONTROLS.items() if chr(k) not in "\n\t"}


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` with every control character shown as its Python escape (ESC as ``\\x1b``), so a
    name cannot move the cursor, colour or retitle a terminal, or hide the text around it.
    ``lines`` keeps newlines and tabs (for whole documents such as CSV)."""
    return text.translate(_LINES if lines else _CONTROLS)
