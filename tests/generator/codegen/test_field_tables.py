from __future__ import annotations

from pathlib import Path

from generator.codegen.field_tables import describe, sections
from generator.schema.loader import Layout, load_env
from tests.helpers import write_env


def test_describe_types() -> None:
    defs: dict[str, object] = {}
    assert describe({"type": "array", "items": {"type": "number"}}, defs) == "array of number"
    assert describe({"anyOf": [{"type": "string"}, {"type": "null"}]}, defs) == "string | null"
    assert describe({"enum": ["a", "b"]}, defs) == 'one of "a", "b"'
    assert describe({"const": "move"}, defs) == 'const "move"'
    assert describe({"$ref": "#/$defs/Point"}, defs) == "Point"
    assert describe({"type": "object", "additionalProperties": {"type": "integer"}}, defs) == (
        "map of integer"
    )
    pair = [{"type": "integer"}, {"type": "string"}]
    assert describe({"type": "array", "prefixItems": pair, "maxItems": 2}, defs) == (
        "[integer, string]"
    )
    assert describe({"prefixItems": pair, "items": False}, defs) == "[integer, string]"
    assert describe({"type": "array", "prefixItems": pair}, defs) == "[integer, string, ...]"
    assert describe({"prefixItems": pair, "items": {"type": "number"}}, defs) == (
        "[integer, string, number...]"
    )
    assert describe({"items": {"type": "number"}}, defs) == "array of number"
    assert describe({}, defs) == "any"


def test_sections_list_every_field_with_constraints(tmp_path: Path) -> None:
    action = {
        "type": "object",
        "required": ["steps"],
        "properties": {
            "steps": {
                "type": "integer",
                "minimum": 1,
                "maximum": 5,
                "default": 1,
                "description": "How far.",
            },
            "name": {"type": "string", "maxLength": 8, "pattern": "^[a-z]+$"},
        },
    }
    write_env(tmp_path, "demo", action=action)
    found = sections(load_env(Layout.at(tmp_path), "demo"))
    assert [s.title for s in found] == [
        "Action: DemoAction",
        "Observation: DemoObservation",
        "State: DemoState",
    ]
    steps, name = found[0].rows
    assert (steps.name, steps.type, steps.required, steps.default) == (
        "steps",
        "integer",
        True,
        "1",
    )
    assert steps.constraints == ">= 1, <= 5"
    assert steps.description == "How far."
    assert name.constraints == "matches ^[a-z]+$, length <= 8" or name.constraints == (
        "length <= 8, matches ^[a-z]+$"
    )
    assert not name.required
