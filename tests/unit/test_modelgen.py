from __future__ import annotations

import ast
import itertools
import json
import sys
import types
from pathlib import Path

import pytest

from generator.errors import GenerationError
from generator.loader import Layout, load_env
from generator.modelgen import ROOT_NAME, defined_names, generate_models
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
