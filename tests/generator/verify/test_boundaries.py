"""The boundary actions verify plays before random examples: which, in what order, and which not.

Through `probe.plan`, which gives `boundaries.boundary_actions` the real simplest-value search
and the committed-schema validators verify uses.
"""

from __future__ import annotations

import math
from typing import Any

import jsonschema

from generator.verify.boundaries import numeric_bounds
from generator.verify.probe import plan
from generator.verify.schemas import validator_for


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "$defs": {},
        "type": "object",
        "properties": properties,
        "required": required if required is not None else sorted(properties),
        "additionalProperties": False,
    }


def _found(schema: dict[str, Any]) -> list[tuple[str, str, Any]]:
    boundaries, _ = plan(schema)
    for boundary in boundaries:  # each is a whole, valid action
        assert validator_for(schema).is_valid(boundary.action), boundary
    return [(b.pointer, b.bound, b.value) for b in boundaries]


def test_an_integer_gets_its_minimum_its_maximum_and_zero() -> None:
    schema = _object({"n": {"type": "integer", "minimum": -3, "maximum": 3}})
    assert _found(schema) == [("/n", "minimum", -3), ("/n", "maximum", 3), ("/n", "zero", 0)]
    boundaries, notes = plan(schema)
    assert [b.action for b in boundaries] == [{"n": -3}, {"n": 3}, {"n": 0}]
    assert notes == []


def test_exclusive_bounds_give_the_nearest_value_inside() -> None:
    schema = _object(
        {
            "i": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
            "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5},
        }
    )
    found = _found(schema)
    assert ("/i", "exclusiveMinimum", 1) in found and ("/i", "exclusiveMaximum", 9) in found
    assert ("/x", "exclusiveMinimum", math.nextafter(0, 1)) in found
    assert ("/x", "exclusiveMaximum", math.nextafter(1.5, 0)) in found
    assert not any(p == "/i" and b == "zero" for p, b, _ in found)  # 0 is outside


def test_the_tighter_of_two_bounds_wins() -> None:
    bounds = numeric_bounds({"minimum": 2, "exclusiveMinimum": 5, "maximum": 9}, integer=True)
    assert bounds == [("exclusiveMinimum", 6), ("maximum", 9)]


def test_multiple_of_moves_each_bound_inside_to_a_multiple() -> None:
    schema = _object({"n": {"type": "integer", "minimum": 1, "maximum": 22, "multipleOf": 5}})
    assert _found(schema)[:2] == [
        ("/n", "minimum (multipleOf 5)", 5),
        ("/n", "maximum (multipleOf 5)", 20),
    ]


def test_multiple_of_bounds_of_large_integers_are_exact() -> None:
    # 2**62 + 7 / 3 as a float loses the low digits: the bound came out 261 too low
    bounds = numeric_bounds({"minimum": -(2**62), "maximum": 2**62 + 7, "multipleOf": 3}, True)
    assert bounds == [
        ("minimum (multipleOf 3)", -(2**62) + 1),
        ("maximum (multipleOf 3)", 2**62 + 5),
    ]


def test_each_enum_member_const_booleans_and_null_each_action_once() -> None:
    schema = _object(
        {
            "a": {"enum": ["x", "y", "z"]},
            "b": {"type": "boolean"},
            "c": {"const": 7},
            "d": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]},
        }
    )
    # b false, c's const and d null are the simplest action itself, already played as a's
    # first member: each distinct action is played once, under the first bound that made it
    assert _found(schema) == [
        ("/a", "enum member 0", "x"),
        ("/a", "enum member 1", "y"),
        ("/a", "enum member 2", "z"),
        ("/b", "true", True),
        ("/d", "minimum", 1),
    ]
    assert plan(schema)[0][0].action == {"a": "x", "b": False, "c": 7, "d": None}


def test_strings_at_their_lengths_respecting_pattern_and_format() -> None:
    schema = _object(
        {
            "s": {"type": "string", "minLength": 2, "maxLength": 5},
            "p": {"type": "string", "pattern": "^[a-c]+$", "maxLength": 6},
            "m": {"type": "string", "format": "email", "maxLength": 20},
            "e": {"type": "string"},
        },
        required=[],
    )
    found = {(p, b): v for p, b, v in _found(schema)}
    assert found[("/s", "minLength")] == "aa" and found[("/s", "maxLength")] == "aaaaa"
    assert len(found[("/p", "maxLength")]) == 6
    assert set(found[("/p", "maxLength")]) <= set("abc")
    email = found[("/m", "maxLength")]
    assert len(email) == 20
    assert jsonschema.FormatChecker().conforms(email, "email")
    assert found[("/e", "empty string")] == ""


def test_a_length_no_string_of_the_pattern_has_is_a_note_not_an_invalid_action() -> None:
    schema = _object({"code": {"type": "string", "pattern": "^[0-9]{3}$", "maxLength": 5}})
    boundaries, notes = plan(schema)
    assert [b.bound for b in boundaries] == []
    assert notes == [
        "boundary /code maxLength (5 characters) not tried: no match of pattern '^[0-9]{3}$' found"
    ]


def test_arrays_at_min_items_and_max_items() -> None:
    schema = _object(
        {
            "xs": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
            "u": {
                "type": "array",
                "items": {"type": "integer"},
                "maxItems": 2,
                "uniqueItems": True,
            },
        },
        required=["xs"],
    )
    boundaries, notes = plan(schema)
    assert [(b.pointer, b.bound, b.value) for b in boundaries] == [
        ("/u", "empty array", []),
        ("/u/0", "zero", 0),  # u is optional: built from its simplest value, [0]
        ("/xs", "minItems", [0]),
        ("/xs", "maxItems", [0, 0, 0]),
    ]
    assert notes == ["boundary /u maxItems (2 items) not tried: items must differ"]


def test_array_items_get_their_own_boundaries() -> None:
    torques = {
        "type": "array",
        "items": {"type": "number", "minimum": -1, "maximum": 1},
        "minItems": 2,
        "maxItems": 2,
    }
    pair = {"type": "array", "prefixItems": [{"type": "boolean"}, {"enum": ["a", "b"]}]}
    schema = _object({"torques": torques, "pair": pair})
    boundaries, notes = plan(schema)
    assert [(b.pointer, b.bound, b.action) for b in boundaries] == [
        ("/pair/0", "false", {"pair": [False, "a"], "torques": [0, 0]}),
        ("/pair/0", "true", {"pair": [True, "a"], "torques": [0, 0]}),
        ("/pair/1", "enum member 1", {"pair": [False, "b"], "torques": [0, 0]}),
        ("/torques/0", "minimum", {"pair": [False, "a"], "torques": [-1, 0]}),
        ("/torques/0", "maximum", {"pair": [False, "a"], "torques": [1, 0]}),
    ]
    assert notes == []


def test_nested_objects_fields_are_tried_inside_a_valid_parent() -> None:
    schema = _object(
        {
            "n": {"type": "integer"},
            "style": {
                "anyOf": [{"$ref": "#/$defs/Style"}, {"type": "null"}],
                "default": None,
            },
        },
        required=["n"],
    )
    schema["$defs"] = {
        "Style": {
            "type": "object",
            "properties": {"shade": {"enum": ["dark", "light"]}, "alpha": {"type": "number"}},
            "required": ["shade"],
        }
    }
    boundaries, _ = plan(schema)
    by_pointer = {(b.pointer, b.bound): b.action for b in boundaries}
    assert by_pointer[("/style/shade", "enum member 1")] == {"n": 0, "style": {"shade": "light"}}
    assert by_pointer[("/style/alpha", "zero")] == {"n": 0, "style": {"shade": "dark", "alpha": 0}}
    assert by_pointer[("/style", "null")] == {"n": 0, "style": None}


def test_every_variant_of_a_union_action_gets_its_own_boundaries() -> None:
    move = {
        "type": "object",
        "properties": {
            "kind": {"const": "move"},
            "dx": {"type": "integer", "minimum": -1, "maximum": 1},
        },
        "required": ["kind", "dx"],
    }
    say = {
        "type": "object",
        "properties": {"kind": {"const": "say"}, "text": {"type": "string", "maxLength": 3}},
        "required": ["kind", "text"],
    }
    schema = {
        "$defs": {"Move": move, "Say": say},
        "oneOf": [{"$ref": "#/$defs/Move"}, {"$ref": "#/$defs/Say"}],
    }
    boundaries, notes = plan(schema)
    assert [b.action for b in boundaries] == [
        {"kind": "move", "dx": -1},
        {"kind": "move", "dx": 1},
        {"kind": "move", "dx": 0},
        {"kind": "say", "text": ""},
        {"kind": "say", "text": "aaa"},
    ]
    assert notes == []


def test_a_boundary_the_whole_schema_refuses_is_noted_and_not_sent() -> None:
    schema = _object({"n": {"type": "integer", "minimum": 0, "maximum": 3}})
    schema["not"] = {"properties": {"n": {"const": 3}}}
    boundaries, notes = plan(schema)
    assert [b.value for b in boundaries] == [0]
    assert notes == ["boundary /n maximum not tried: the action it makes is not valid"]


def test_the_plan_is_the_same_every_time() -> None:
    schema = _object(
        {
            "p": {"type": "string", "pattern": "^[a-z]{2}[0-9]+$", "maxLength": 9},
            "n": {"type": "integer", "maximum": 4},
        }
    )
    assert plan(schema) == plan(schema)
