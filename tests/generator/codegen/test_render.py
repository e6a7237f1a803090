from __future__ import annotations

import ast
import importlib
import itertools
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from generator.codegen.output import build
from generator.codegen.render import cell, comment, docstring, paragraph, pyrepr
from generator.errors import SchemaError
from generator.schema.loader import Layout
from tests.helpers import manifest, write_env

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


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_pyrepr_refuses_what_has_no_literal(value: float) -> None:
    # repr() gives `nan` / `inf`: names, not literals, in the generated module
    with pytest.raises(ValueError, match="no Python literal"):
        pyrepr(value)
    with pytest.raises(ValueError, match="no Python literal"):
        pyrepr(("x", value))


def test_pyrepr_of_tuples_and_none() -> None:
    assert pyrepr(()) == "()"
    assert pyrepr(("a",)) == "('a',)"
    assert pyrepr(("a", 1, None)) == "('a', 1, None)"
    assert pyrepr(None) == "None"
    with pytest.raises(TypeError):
        pyrepr({"a": 1})


TRICKY = [
    "The agent's cell",
    'say "hi" & <b>bold</b> &amp; &#x27; &#35; &copy;',
    "a | b || c \\| d",
    "# not a heading",
    "## neither ###",
    "- not a list",
    "+ nor this",
    "1. nor this",
    "2) nor this",
    "> not a quote",
    "---",
    "===",
    "`code` ``double`` `",
    "<script>alert(1)</script> <img src=x onerror=alert(1)>",
    "{{ 7 * 7 }} {% raw %}",
    "*a* **b** _c_ __d__ snake_case_name _leading trailing_",
    "[link](http://x.y) ![img](z.png) [ref][1] [1]: http://x.y",
    "[1]: http://x.y",
    "see [1] and [x]: y, [a] [b] [c](d) [e]\n[f]: g <a href=x> <!-- c --> <?p?> <http://x>",
    "a<b c>d <= >= << >> <3",
    "https://example.com www.example.com mail me@example.com <http://x.y>",
    "~~struck~~ ~one~ $x^2$ $$y$$",
    "back\\slash \\* \\_ \\",
    "line\nbreak\r\nand\ttab \u2028 sep \x00 nul",
    "(parens) {braces} !bang #hash +plus =eq .dot",
    "  \n  ",
]


def _markdown() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("gfm-like")  # tables, strikethrough, autolinks (linkify) as on GitHub


def _visible(tokens: list[Any]) -> str:
    """The text a reader sees, from the inline tokens; and no markup-making token at all."""
    out: list[str] = []
    for token in tokens:
        for child in token.children or []:
            assert child.type in ("text", "code_inline", "softbreak"), (child.type, child.content)
            out.append(child.content)
    return "".join(out)


def _allowed_tags(html_text: str) -> set[str]:
    return set(re.findall(r"</?([a-zA-Z0-9]+)", html_text))


@pytest.mark.parametrize("text", TRICKY)
def test_cell_renders_as_itself_in_a_table_paragraph_and_heading(text: str) -> None:
    md = _markdown()
    want = " ".join(text.replace("\x00", " ").split())
    escaped = cell(text)
    assert "\n" not in escaped
    table = f"| a | b |\n|---|---|\n| x | {escaped} |\n"
    block_text = paragraph(text)
    tokens = md.parse(table)
    cells = [t for t in tokens if t.type == "inline"]
    assert len(cells) == 4  # header a, b; row x, and exactly one cell for the text
    assert _visible([cells[3]]) == want
    for block, shown in (
        (block_text, want),
        (f"## {escaped}", want),
        (f"Type: {escaped}", "Type: " + want),
    ):
        inline = [t for t in md.parse(block + "\n") if t.type == "inline"]
        assert _visible(inline) == shown.strip()
        assert not [t for t in md.parse(block) if t.type == "html_block"]
    html_text = md.render(table + "\n" + block_text + "\n\n## " + escaped + "\n")
    tags = _allowed_tags(html_text)
    assert tags <= {"table", "thead", "tbody", "tr", "th", "td", "p", "h2"}, tags


def test_cell_escapes_only_what_markdown_acts_on() -> None:
    assert cell("The agent's cell") == "The agent's cell"
    assert cell("grid_env 0.1.0") == "grid_env 0.1.0"
    assert cell('one of "north", "east"') == 'one of "north", "east"'
    assert cell(">= 0, <= 3") == ">= 0, <= 3"
    assert paragraph("> 0") == "\\> 0"
    assert paragraph("[row, col] pairs") == "\\[row, col] pairs"
    assert cell("[row, col] pairs") == "[row, col] pairs"
    assert cell("as [row, col] pairs") == "as [row, col] pairs"
    assert cell("a | b\n<script>") == "a \\| b \\<script>"


def test_readme_shows_schema_text_as_written(tmp_path: Path) -> None:
    """Every tricky text, as a field description, is one cell of its row and reads as itself."""
    observation = {
        "type": "object",
        "description": "Top: " + TRICKY[0],
        "properties": {
            f"f{i} {text}": {"type": "string", "description": text, "default": text}
            for i, text in enumerate(TRICKY)
        },
    }
    write_env(tmp_path, "md_env", observation=observation)
    layout = Layout.at(tmp_path)
    readme = build(layout, ["md_env"]).files["md_env/README.md"]
    md = _markdown()
    tokens = md.parse(readme)
    rows: list[list[str]] = []
    for before, token in itertools.pairwise(tokens):
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and before.type in ("td_open", "th_open"):
            rows[-1].append(_visible([token]))
    described = {r[0].split(" ")[0]: r for r in rows if len(r) == 6 and r[0].startswith("f")}
    for i, text in enumerate(TRICKY):
        name, _, _, default, _, description = described[f"f{i}"]
        assert name == " ".join(f"f{i} {text}".replace("\x00", " ").split())
        assert description == " ".join(text.replace("\x00", " ").split())
        assert default == " ".join(json.dumps(text, ensure_ascii=False).split())
    assert "The agent's cell" in readme
    assert "&#" not in readme.replace("&#x27;", "").replace("&#35;", "")
    tags = _allowed_tags(md.render(readme))
    assert "script" not in tags and "img" not in tags and "a" not in tags and "b" not in tags


def test_comment_cannot_close_an_html_comment() -> None:
    assert "-->" not in comment("a --> b")
    assert "--" not in comment("x--y")


def _render(tmp_path: Path, name: str, **kwargs: object) -> dict[str, str]:
    write_env(tmp_path, name, **kwargs)  # type: ignore[arg-type]
    return build(Layout.at(tmp_path), use_cache=False).env_files(name)


def test_sync_and_async_clients_share_one_spec_with_the_token_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = manifest("tok_env") + '[auth]\ntoken_env = "TOK_TOKEN"\n'
    files = _render(tmp_path, "tok_env", toml=toml)
    assert "auth_token_env='TOK_TOKEN'" in files["client.py"].replace('"', "'")
    assert (
        "class AsyncTokEnv(AsyncEnvClient[TokAction, TokObservation, TokState])"
        in (files["client.py"])
    )
    assert '"AsyncTokEnv"' in files["__init__.py"] and '"TokEnv"' in files["__init__.py"]
    assert "`TOK_TOKEN`" in files["README.md"] and "AsyncTokEnv" in files["README.md"]
    # The package runs: both clients see the same SPEC, and the token reaches the headers.
    package = tmp_path / "pkg_tok_env"
    package.mkdir()
    for file_name, text in files.items():
        (package / file_name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("TOK_TOKEN", "t0k")
    try:
        module = importlib.import_module("pkg_tok_env")
        assert module.TokEnv.SPEC is module.AsyncTokEnv.SPEC
        assert module.TokEnv.SPEC.auth_token_env == "TOK_TOKEN"
        env = module.AsyncTokEnv("http://127.0.0.1:9", transport="http")
        assert env._wire_headers == {"Authorization": "Bearer t0k"}
    finally:
        for key in [k for k in sys.modules if k.startswith("pkg_tok_env")]:
            del sys.modules[key]


def test_no_auth_table_means_no_token_variable(tmp_path: Path) -> None:
    files = _render(tmp_path, "plain_env")
    assert "auth_token_env=None" in files["client.py"]
    assert "Bearer token" not in files["README.md"]


def test_a_schema_type_named_like_the_async_client_is_refused(tmp_path: Path) -> None:
    observation = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/AsyncClashEnv"}},
        "$defs": {"AsyncClashEnv": {"type": "object", "properties": {"y": {"type": "integer"}}}},
    }
    with pytest.raises(SchemaError, match="AsyncClashEnv") as info:
        _render(tmp_path, "clash_env", observation=observation)
    assert info.value.file == "schemas/clash_env/observation.schema.json"
    assert info.value.pointer == "/$defs/AsyncClashEnv"
