"""Source sliced by `ast` positions: lines end only where `ast` ends them, columns are bytes."""

from __future__ import annotations

import ast

import pytest

from generator.codegen.source_text import SourceText

# Characters str.splitlines() breaks at that Python's tokenizer does not.
NOT_LINE_ENDS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.mark.parametrize("sep", NOT_LINE_ENDS)
def test_segment_is_what_ast_points_at(sep: str) -> None:
    source = f'class M:\n    """a{sep}b €😀"""\n\n    ﬁ: int = 1\r\n    é: str = "é"\rx = 1\n'
    text = SourceText(source)
    fields = [n for n in ast.parse(source).body[0].body if isinstance(n, ast.AnnAssign)]  # type: ignore[attr-defined]
    assert [text.segment(f.target) for f in fields] == ["ﬁ", "é"]
    assert [text.segment(f.value) for f in fields] == ["1", '"é"']  # type: ignore[arg-type]
    assert text.replace([(*text.span(fields[0].target), "fi_")]) == source.replace("ﬁ", "fi_")
