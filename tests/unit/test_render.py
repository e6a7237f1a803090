from __future__ import annotations

import ast

import pytest

from generator.render import cell, comment, docstring, pyrepr

NASTY = [
    "plain",
    '"""; import os; os.system("touch /tmp/x") #',
    "'''",
    'ends with a quote"',
    "ends with a backslash\\",
    "{{ 7 * 7 }} {% raw %}",
    "line\nbreak\r\nand\ttab and \x00 nul and \u2028 separator",
    "\\N{BULLET} \\u0041 \\x41",
]


@pytest.mark.parametrize("text", NASTY)
def test_pyrepr_round_trips(text: str) -> None:
    assert ast.literal_eval(pyrepr(text)) == text


@pytest.mark.parametrize("text", NASTY)
def test_docstring_is_one_string_literal_with_the_same_text(text: str) -> None:
    module = ast.parse(f"def f():\n    {docstring(text)}\n")
    body = module.body[0].body  # type: ignore[attr-defined]
    assert len(body) == 1
    value = ast.literal_eval(body[0].value)
    assert value.rstrip("\n") == text.replace("\r", "\r")


def test_pyrepr_of_tuples_and_none() -> None:
    assert pyrepr(()) == "()"
    assert pyrepr(("a",)) == "('a',)"
    assert pyrepr(("a", 1, None)) == "('a', 1, None)"
    assert pyrepr(None) == "None"
    with pytest.raises(TypeError):
        pyrepr({"a": 1})


def test_cell_cannot_break_a_table_or_inject_markup() -> None:
    text = cell("a | b\n<script>alert(1)</script> `code` **bold** [link](x)")
    for bad in ("|", "\n", "<", ">", "`", "*", "[", "]", "(", ")"):
        assert bad not in text
    assert "alert" in text


def test_comment_cannot_close_an_html_comment() -> None:
    assert "-->" not in comment("a --> b")
    assert "--" not in comment("x--y")
