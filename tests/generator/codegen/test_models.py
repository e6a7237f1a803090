from __future__ import annotations

import ast
import itertools
import json
import sys
import types
from pathlib import Path

import pytest

from generator.codegen.datamodel import ROOT_NAME, defined_names
from generator.codegen.models import generate_models
from generator.errors import GenerationError
from generator.schema.loader import Layout, load_env
from tests.helpers import write_env

_COUNTER = itertools.count()
SHARED = {"type": "object", "additionalProperties": False, "properties": {"v": {"type": "integer"}}}


def _models(tmp_path: Path, **schemas: object) -> str:
    write_env(tmp_path, "demo", **schemas)  # type: ignore[arg-type]
    return generate_models(load_env(Layout.at(tmp_path), "demo"), "# header")


def _namespace(source: str) -> dict[str, object]:
    """Import `source` as a real module (pydantic resolves annotations through it)."""
    name = f"envgen_test_models_{next(_COUNTER)}"
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    return module.__dict__


def test_root_placeholder_is_cut_and_roles_defined(tmp_path: Path) -> None:
    source = _models(tmp_path)
    assert ROOT_NAME not in source
    assert {"DemoAction", "DemoObservation", "DemoState"} <= set(defined_names(source))
    assert source.startswith("# header")


def test_reader_objects_keep_unknown_fields_writer_objects_reject_them(tmp_path: Path) -> None:
    closed = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"x": {"type": "integer"}, "inner": {"$ref": "#/$defs/Inner"}},
        "$defs": {"Inner": SHARED},
    }
    ns = _namespace(_models(tmp_path, action=closed, observation=closed))
    obs = ns["DemoObservation"].model_validate(  # type: ignore[attr-defined]
        {"x": 1, "new": 2, "inner": {"v": 1, "also_new": 3}}
    )
    assert obs.model_extra == {"new": 2}
    assert obs.inner.model_extra == {"also_new": 3}
    with pytest.raises(Exception, match="Extra inputs are not permitted"):
        ns["DemoAction"].model_validate({"x": 1, "new": 2})  # type: ignore[attr-defined]


def test_optional_non_nullable_field_with_default_is_not_optional(tmp_path: Path) -> None:
    obs = {
        "type": "object",
        "properties": {"n": {"type": "integer", "default": 3}, "m": {"type": ["integer", "null"]}},
    }
    source = _models(tmp_path, observation=obs)
    assert "n: int = 3" in source
    assert "m: int | None = None" in source


def test_unicode_and_keyword_property_names_import(tmp_path: Path) -> None:
    props = {
        name: {"type": "integer"}
        for name in [
            "class",
            "from",
            "e\u0301",
            "\u00e9",
            "a-b",
            "a_b",
            "1x",
            "model_config",
            "self",
        ]
    }
    ns = _namespace(_models(tmp_path, action={"type": "object", "properties": props}))
    model = ns["DemoAction"]
    payload = {name: i for i, name in enumerate(props)}
    value = model.model_validate(payload)  # type: ignore[attr-defined]
    assert value.model_dump(by_alias=True) == payload


def test_dataclass_models(tmp_path: Path) -> None:
    toml = 'name = "demo"\nversion = "1.0.0"\nmodel_type = "dataclasses"\n'
    source = _models(tmp_path, toml=toml)
    assert "from pydantic.dataclasses import dataclass" in source
    ast.parse(source)


def test_defined_names_rejects_broken_source() -> None:
    with pytest.raises(GenerationError, match="do not parse"):
        defined_names("class (:\n")


def test_clash_with_role_name_is_reported(tmp_path: Path) -> None:
    obs = {"type": "object", "properties": {"a": {"$ref": "../_shared/demo_action.json"}}}
    write_env(
        tmp_path, "demo", observation=obs, raw={"_shared/demo_action.json": json.dumps(SHARED)}
    )
    source = generate_models(load_env(Layout.at(tmp_path), "demo"), "# h")
    # the shared file's def is renamed, so the role class keeps its name
    assert "class DemoAction(" in source


CARD_GAME = {
    "oneOf": [{"$ref": "#/$defs/Play"}, {"$ref": "#/$defs/Pass"}, {"$ref": "#/$defs/Alias"}],
    "discriminator": {"propertyName": "kind"},
    "$defs": {
        "Play": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"kind": {"const": "play"}, "card": {"type": "integer"}},
            "required": ["kind", "card"],
        },
        "Pass": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"kind": {"enum": ["pass"]}, "note": {"type": "string"}},
            "required": ["note", "kind"],
        },
        "Alias": {"$ref": "#/$defs/Fold"},
        "Fold": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"kind": {"type": "string", "const": "fold", "default": "fold"}},
            "required": ["kind"],
        },
    },
}


@pytest.mark.parametrize("model_type", ["pydantic", "dataclasses"])
def test_union_members_default_their_tag_and_still_check_and_send_it(
    tmp_path: Path, model_type: str
) -> None:
    from envgen_runtime import EnvValidationError, ModelCodec

    toml = f'name = "demo"\nversion = "1.0.0"\nmodel_type = "{model_type}"\n'
    write_env(tmp_path, "demo", action=CARD_GAME, toml=toml)
    ns = _namespace(generate_models(load_env(Layout.at(tmp_path), "demo"), "# header"))
    play = ns["Play"](card=3)  # type: ignore[operator]
    assert play.kind == "play"
    assert ns["Pass"](note="n").kind == "pass"  # type: ignore[operator]
    assert ns["Fold"]().kind == "fold"  # type: ignore[operator]
    codec = ModelCodec(ns["DemoAction"], role="action")
    assert codec.encode(play) == {"kind": "play", "card": 3}
    with pytest.raises(Exception, match="kind"):
        ns["Play"](kind="pass", card=3)  # type: ignore[operator]
    with pytest.raises(EnvValidationError):
        codec.decode({"card": 3})  # the wire still needs the tag
    assert codec.decode({"kind": "pass", "note": "x"}).note == "x"


def test_integral_float_default_of_an_integer_field_is_an_int(tmp_path: Path) -> None:
    obs = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "default": 2.0},
            "f": {"type": "number", "default": 2.0},
        },
    }
    source = _models(tmp_path, observation=obs)
    assert "n: int = 2\n" in source
    assert "f: float = 2.0\n" in source
