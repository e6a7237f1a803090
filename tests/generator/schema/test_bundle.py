from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.errors import RefError, SchemaError
from generator.schema.loader import Layout, load_env
from tests.helpers import OBJECT, write_env


def _load(root: Path, name: str = "demo"):
    return load_env(Layout.at(root), name)


def test_role_names_and_sources(tmp_path: Path) -> None:
    write_env(tmp_path, "demo_env")
    env = _load(tmp_path, "demo_env")
    assert env.bundle.role_names == {
        "action": "DemoAction",
        "observation": "DemoObservation",
        "state": "DemoState",
    }
    assert env.sources == (
        "schemas/demo_env/env.toml",
        "schemas/demo_env/action.schema.json",
        "schemas/demo_env/observation.schema.json",
        "schemas/demo_env/state.schema.json",
    )
    assert env.schema_hash.startswith("sha256:")


def test_cross_file_ref_is_inlined_into_defs(tmp_path: Path) -> None:
    shared = {
        "type": "object",
        "properties": {"stdout": {"type": "string"}},
        "$defs": {"Code": {"type": "integer"}},
    }
    obs = {
        "type": "object",
        "properties": {
            "result": {"$ref": "../_shared/exec_result.schema.json"},
            "code": {"$ref": "../_shared/exec_result.schema.json#/$defs/Code"},
        },
    }
    write_env(
        tmp_path,
        "demo",
        observation=obs,
        raw={"_shared/exec_result.schema.json": json.dumps(shared)},
    )
    env = _load(tmp_path)
    defs = env.bundle.defs
    assert defs["DemoObservation"]["properties"]["result"] == {"$ref": "#/$defs/ExecResult"}
    assert defs["DemoObservation"]["properties"]["code"] == {"$ref": "#/$defs/Code"}
    assert defs["ExecResult"] == {"type": "object", "properties": {"stdout": {"type": "string"}}}
    assert "schemas/_shared/exec_result.schema.json" in env.sources


def test_same_def_name_in_two_files_gets_distinct_names(tmp_path: Path) -> None:
    act = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/Pos"}},
        "$defs": {"Pos": {"type": "integer"}},
    }
    obs = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/Pos"}},
        "$defs": {"Pos": {"type": "string"}},
    }
    write_env(tmp_path, "demo", action=act, observation=obs)
    defs = _load(tmp_path).bundle.defs
    assert defs["Pos"] == {"type": "integer"}
    assert defs["ObservationPos"] == {"type": "string"}


def test_hash_changes_with_content(tmp_path: Path) -> None:
    write_env(tmp_path, "demo")
    first = _load(tmp_path).schema_hash
    write_env(tmp_path, "demo", state={"type": "object", "properties": {"y": {"type": "string"}}})
    assert _load(tmp_path).schema_hash != first


def test_data_keywords_are_not_rewritten(tmp_path: Path) -> None:
    act = {
        "type": "object",
        "properties": {
            "x": {"type": "object", "default": {"$ref": "nowhere.json"}, "const": {"$ref": "no"}}
        },
    }
    write_env(tmp_path, "demo", action=act)
    prop = _load(tmp_path).bundle.defs["DemoAction"]["properties"]["x"]
    assert prop["default"] == {"$ref": "nowhere.json"}


def test_property_named_like_a_keyword_is_kept(tmp_path: Path) -> None:
    act = {
        "type": "object",
        "properties": {"$defs": {"type": "string"}, "$ref": {"type": "integer"}},
    }
    write_env(tmp_path, "demo", action=act)
    props = _load(tmp_path).bundle.defs["DemoAction"]["properties"]
    assert props == {"$defs": {"type": "string"}, "$ref": {"type": "integer"}}


@pytest.mark.parametrize(
    ("ref", "words"),
    [
        ("#/$defs/Missing", "does not exist"),
        ("https://example.com/s.json", "remote $ref"),
        ("../../outside.json", "leaves the schemas folder"),
        ("other.json", "not found"),
        ("#anchor", "anchor"),
    ],
)
def test_bad_refs_name_file_and_pointer(tmp_path: Path, ref: str, words: str) -> None:
    act = {"type": "object", "properties": {"x": {"$ref": ref}}}
    write_env(tmp_path, "demo", action=act)
    (tmp_path / "outside.json").write_text("{}")
    with pytest.raises(RefError) as info:
        _load(tmp_path)
    assert words in str(info.value)
    assert info.value.file == "schemas/demo/action.schema.json"
    assert info.value.pointer == "/properties/x/$ref"


def test_ref_cycle_without_schema_is_an_error(tmp_path: Path) -> None:
    act = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
    }
    write_env(tmp_path, "demo", action=act)
    with pytest.raises(RefError, match="cycle"):
        _load(tmp_path)


def test_recursive_object_is_fine(tmp_path: Path) -> None:
    state = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
    }
    write_env(tmp_path, "demo", state=state)
    defs = _load(tmp_path).bundle.defs
    assert defs["Node"]["properties"]["kids"]["items"] == {"$ref": "#/$defs/Node"}


def test_invalid_schema_names_pointer(tmp_path: Path) -> None:
    act = {"type": "object", "properties": {"x": {"type": "integer", "minimum": "zero"}}}
    write_env(tmp_path, "demo", action=act)
    with pytest.raises(SchemaError) as info:
        _load(tmp_path)
    assert info.value.pointer == "/properties/x/minimum"
    assert "'zero' is not of type 'number'" in str(info.value)


def test_invalid_schema_in_referenced_file(tmp_path: Path) -> None:
    obs = {"type": "object", "properties": {"r": {"$ref": "../_shared/r.json"}}}
    write_env(
        tmp_path, "demo", observation=obs, raw={"_shared/r.json": json.dumps({"type": "strin"})}
    )
    with pytest.raises(SchemaError) as info:
        _load(tmp_path)
    assert info.value.file == "schemas/_shared/r.json"
    assert info.value.pointer == "/type"


@pytest.mark.parametrize("schema", [{}, {"title": "only a title"}, True])
def test_empty_root_schema_is_refused(tmp_path: Path, schema: object) -> None:
    write_env(tmp_path, "demo", observation=schema)
    with pytest.raises(SchemaError, match="empty") as info:
        _load(tmp_path)
    assert info.value.file == "schemas/demo/observation.schema.json"


def test_non_object_root_is_refused(tmp_path: Path) -> None:
    write_env(tmp_path, "demo", action={"type": "string"})
    with pytest.raises(SchemaError, match="must describe a JSON object") as info:
        _load(tmp_path)
    assert info.value.pointer == "/type"


def test_draft07_definitions_are_followed(tmp_path: Path) -> None:
    act = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"x": {"$ref": "#/definitions/X"}},
        "definitions": {"X": {"type": "integer"}},
    }
    write_env(tmp_path, "demo", action=act)
    defs = _load(tmp_path).bundle.defs
    assert defs["X"] == {"type": "integer"}


def test_unsafe_file_name_is_refused(tmp_path: Path) -> None:
    obs = {"type": "object", "properties": {"r": {"$ref": "../_shared/we%20ird.json"}}}
    write_env(tmp_path, "demo", observation=obs, raw={"_shared/we ird.json": json.dumps(OBJECT)})
    with pytest.raises(SchemaError, match="schema file paths may only use"):
        _load(tmp_path)


def test_identical_defs_from_two_files_become_one(tmp_path: Path) -> None:
    pos = {"type": "object", "properties": {"row": {"type": "integer"}}}
    obs = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/Position"}},
        "$defs": {"Position": pos},
    }
    state = {"type": "object", "properties": {"q": {"$ref": "#/$defs/Pos"}}, "$defs": {"Pos": pos}}
    write_env(tmp_path, "demo", observation=obs, state=state)
    defs = _load(tmp_path).bundle.defs
    assert "Pos" not in defs
    assert defs["DemoState"]["properties"]["q"] == {"$ref": "#/$defs/Position"}


def test_role_defs_are_never_merged_away(tmp_path: Path) -> None:
    write_env(tmp_path, "demo", action=OBJECT, observation=OBJECT, state=OBJECT)
    assert sorted(_load(tmp_path).bundle.defs) == ["DemoAction", "DemoObservation", "DemoState"]
