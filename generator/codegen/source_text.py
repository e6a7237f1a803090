"""Source text addressed the way `ast` addresses it: by line number and UTF-8 byte column.

Python ends a line only at ``\\n``, ``\\r\\n`` or ``\\r``; ``str.splitlines`` also ends one at
``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028`` and ``\\u2029``, which schema text
puts into docstrings as they are. Every edit of generated source by `ast` positions goes
through `SourceText`, so a row is always the row `ast` means and a cut never splits a character.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

_LINE_END = re.compile(rb"\r\n|\r|\n")


class SourceText:
    """One module's source as UTF-8 bytes, with the byte offset where each `ast` line starts."""

    def __init__(self, source: str) -> None:
        self.data = source.encode()
        self._starts = [0, *(m.end() for m in _LINE_END.finditer(self.data))]

    def line_start(self, lineno: int) -> int:
        """Byte offset of line `lineno` (1-based); one past the last line is the end."""
        return self._starts[lineno - 1] if lineno <= len(self._starts) else len(self.data)

    def offset(self, lineno: int, col: int) -> int:
        return self._starts[lineno - 1] + col

    def span(self, node: ast.expr | ast.stmt) -> tuple[int, int]:
        """Byte offsets where `node` starts and ends."""
        end_line = node.end_lineno if node.end_lineno is not None else node.lineno
        end_col = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        return self.offset(node.lineno, node.col_offset), self.offset(end_line, end_col)

    def segment(self, node: ast.expr | ast.stmt) -> str:
        """The text of `node` exactly as written (before Python folds its names)."""
        start, end = self.span(node)
        return self.data[start:end].decode()

    def replace(self, edits: Iterable[tuple[int, int, str]]) -> str:
        """The source with each (start, end, text) byte range replaced; ranges do not overlap."""
        data = self.data
        for start, end, text in sorted(edits, reverse=True):  # from the end: offsets hold
            data = data[:start] + text.encode() + data[end:]
        return data.decode()
