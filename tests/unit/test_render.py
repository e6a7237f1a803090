from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

from generator.errors import SchemaError
from generator.loader import Layout
from generator.output import build
from generator.render import cell, comment, docstring, pyrepr
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
    assert "TOK&#95;TOKEN" in files["README.md"] and "AsyncTokEnv" in files["README.md"]
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
