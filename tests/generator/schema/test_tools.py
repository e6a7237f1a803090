"""Tool files (`schemas/<env>/tools/<tool>.json`): every problem is exit 2 naming the tool
file and the JSON pointer in it; refs inside a tool's schemas resolve within that schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.schema.loader import Layout, load_env
from generator.schema.tools import embed_refs, python_name
from tests.helpers import write_env

SEARCH = {
    "name": "search",
    "description": "Search the notes.",
    "inputSchema": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "default": 5}},
        "required": ["query"],
    },
}


def _env(root: Path, *tools: Any, raw: dict[str, str] | None = None) -> None:
    files = {f"my_env/tools/{i}.json": json.dumps(t) for i, t in enumerate(tools)}
    write_env(root, "my_env", raw={**files, **(raw or {})})


def _generate(root: Path) -> Any:
    return CliRunner().invoke(main, ["--root", str(root), "generate", "my_env"])


def _exit_2(root: Path, file: str, pointer: str, words: str) -> None:
    result = _generate(root)
    assert result.exit_code == 2, result.output
    assert f"schemas/my_env/tools/{file}" in result.output
    assert f"at {pointer} (JSON pointer)" in result.output, result.output
    assert words in result.output
    assert "Traceback" not in result.output
    assert not (root / "generated").exists()


@pytest.mark.parametrize(
    ("change", "pointer", "words"),
    [
        ({"name": 3}, "/name", "string 'name'"),
        ({"name": "has space"}, "/name", "not an MCP tool name"),
        ({"name": "step"}, "/name", "reserved by OpenEnv"),
        ({"description": ["x"]}, "/description", "must be a string"),
        ({"inputSchema": {"type": "string"}}, "/inputSchema/type", "must describe a JSON object"),
        (
            {"inputSchema": {"type": "object", "minProperties": -1}},
            "/inputSchema/minProperties",
            "invalid schema",
        ),
        ({"outputSchema": {"type": "array"}}, "/outputSchema/type", "JSON object"),
        ({"icons": []}, "/icons", "unknown key 'icons'"),
    ],
)
def test_bad_tool_file_exits_2_naming_file_and_pointer(
    tmp_path: Path, change: dict[str, Any], pointer: str, words: str
) -> None:
    _env(tmp_path, {**SEARCH, **change})
    _exit_2(tmp_path, "0.json", pointer, words)


def test_missing_input_schema_and_duplicate_names(tmp_path: Path) -> None:
    _env(tmp_path, {"name": "x", "description": ""})
    _exit_2(tmp_path, "0.json", "/", "needs an 'inputSchema'")
    other = tmp_path / "other"
    _env(other, SEARCH, SEARCH)
    _exit_2(other, "1.json", "/name", "also defined in schemas/my_env/tools/0.json")


def test_bad_ref_inside_a_tool_schema_names_its_pointer(tmp_path: Path) -> None:
    tool = {**SEARCH, "inputSchema": {"type": "object", "properties": {"q": {"$ref": "#/$defs/Q"}}}}
    _env(tmp_path, tool)
    _exit_2(tmp_path, "0.json", "/inputSchema/properties/q/$ref", "does not exist")


def test_two_tools_whose_model_names_clash(tmp_path: Path) -> None:
    _env(tmp_path, {**SEARCH, "name": "get-note"}, {**SEARCH, "name": "get_note"})
    _exit_2(tmp_path, "1.json", "/inputSchema", "GetNoteArguments")


def test_local_refs_resolve_within_each_embedded_schema(tmp_path: Path) -> None:
    """pydantic's tool schemas keep `$defs` inside inputSchema with refs `#/$defs/...`."""
    item = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    tool = {
        "name": "add-note",
        "description": "Add a note.",
        "inputSchema": {
            "type": "object",
            "$defs": {"Note": item},
            "properties": {"note": {"$ref": "#/$defs/Note"}},
            "required": ["note"],
        },
        "outputSchema": {
            "type": "object",
            "$defs": {"Note": item},
            "properties": {"saved": {"$ref": "#/$defs/Note"}},
        },
    }
    _env(tmp_path, tool)
    env = load_env(Layout.at(tmp_path), "my_env")
    assert [t.name for t in env.tools] == ["add-note"]
    defs = env.bundle.defs
    assert defs["AddNoteArguments"]["properties"]["note"] == {"$ref": "#/$defs/Note"}
    assert defs["AddNoteResult"]["properties"]["saved"] == {"$ref": "#/$defs/Note"}
    assert defs["Note"] == item  # both copies merged into one model
    assert "schemas/my_env/tools/0.json" in env.sources


def test_embed_refs_leaves_data_and_other_files_alone() -> None:
    doc = {
        "inputSchema": {
            "properties": {
                "a": {"$ref": "#/$defs/A", "default": {"$ref": "#/x"}},
                "b": {"$ref": "other.schema.json#/B"},
            }
        }
    }
    out = embed_refs(doc)["inputSchema"]["properties"]
    assert out["a"] == {"$ref": "#/inputSchema/$defs/A", "default": {"$ref": "#/x"}}
    assert out["b"] == {"$ref": "other.schema.json#/B"}


@pytest.mark.parametrize(
    ("name", "python"),
    [
        ("search", "search"),
        ("format-number", "format_number"),
        ("notes.get", "notes_get"),
        ("class", "class_"),
        ("match", "match_"),
        ("2fa", "t_2fa"),
    ],
)
def test_python_names(name: str, python: str) -> None:
    assert python_name(name) == python
    assert python.isidentifier()


def test_env_without_tools_has_none(tmp_path: Path) -> None:
    write_env(tmp_path, "my_env")
    assert load_env(Layout.at(tmp_path), "my_env").tools == ()


def test_a_schema_type_named_like_a_tool_call_class(tmp_path: Path) -> None:
    observation = {
        "type": "object",
        "properties": {"c": {"$ref": "#/$defs/SearchCall"}},
        "$defs": {"SearchCall": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    }
    write_env(
        tmp_path, "my_env", observation=observation, raw={"my_env/tools/s.json": json.dumps(SEARCH)}
    )
    result = _generate(tmp_path)
    assert result.exit_code == 2, result.output
    assert "schemas/my_env/observation.schema.json at /$defs/SearchCall" in result.output
    assert "like a class tools.py defines" in result.output


@pytest.mark.parametrize("file", ["my tool.json", "a\nb.json"])
def test_a_tool_file_name_that_could_break_a_generated_header(tmp_path: Path, file: str) -> None:
    _env(tmp_path, raw={f"my_env/tools/{file}": json.dumps(SEARCH)})
    result = _generate(tmp_path)
    assert result.exit_code == 2, result.output
    assert "tool file names may only use" in result.output
