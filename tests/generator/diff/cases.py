"""The verdict table: schema changes with their expected class in each direction.

Each case is (old, new) for one schema; `action` is the expected verdict when clients write
it and the server reads it, `reader` when the server writes it (observation or state). A
verdict is "CLASS rule rule...": the worst class of all changes found, and rules that must
be among them. Drawn from the anchors' documented rules: oasdiff's request/response
property, enum, type and bound checks; buf's wire versus generated-code categories; schema
registries' BACKWARD/FORWARD checks for JSON Schema (where they call open-content property
additions incompatible, envgen deliberately does not).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from envgen_runtime.schemadiff import Policy

BASE: dict[str, Any] = {
    "type": "object",
    "description": "A test object.",
    "properties": {
        "name": {"type": "string", "description": "A name."},
        "count": {"type": "integer", "minimum": 0, "maximum": 100},
        "ratio": {"type": "number"},
        "mode": {"type": "string", "enum": ["fast", "slow"]},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "count"],
}
CLOSED: dict[str, Any] = {**BASE, "additionalProperties": False}
UNION: dict[str, Any] = {
    "type": "object",
    "oneOf": [{"$ref": "#/$defs/Move"}, {"$ref": "#/$defs/Turn"}],
    "$defs": {
        "Move": {
            "type": "object",
            "properties": {"type": {"const": "move"}, "steps": {"type": "integer"}},
            "required": ["type", "steps"],
            "additionalProperties": False,
        },
        "Turn": {
            "type": "object",
            "properties": {"type": {"const": "turn"}, "left": {"type": "boolean"}},
            "required": ["type", "left"],
            "additionalProperties": False,
        },
    },
}
PLAIN_UNION: dict[str, Any] = {
    "type": "object",
    "oneOf": [
        {"properties": {"a": {"type": "integer"}}, "required": ["a"]},
        {"properties": {"b": {"type": "string"}}, "required": ["b"], "not": {"required": ["a"]}},
    ],
}
NESTED: dict[str, Any] = {
    "type": "object",
    "properties": {"position": {"$ref": "#/$defs/Position"}},
    "required": ["position"],
    "$defs": {
        "Position": {
            "type": "object",
            "properties": {"row": {"type": "integer", "minimum": 0}},
            "required": ["row"],
        }
    },
}
TUPLE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pair": {
            "type": "array",
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "items": False,
        }
    },
    "required": ["pair"],
}


def edit(base: dict[str, Any], *ops: tuple[str, Any]) -> dict[str, Any]:
    """A copy of `base` with each (pointer, value) set; value DELETE removes the key."""
    doc = copy.deepcopy(base)
    for pointer, value in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
        node: Any = doc
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        last = parts[-1]
        if value is DELETE:
            if isinstance(node, list):
                del node[int(last)]
            else:
                del node[last]
        elif isinstance(node, list) and last == "-":
            node.append(value)
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return doc


DELETE: Any = object()
P = "/properties"


@dataclass
class Case:
    id: str
    old: Any
    new: Any
    action: str
    reader: str
    policy: Policy = field(default_factory=Policy)
    code: bool = False
    reader_role: str = "observation"
    files: dict[str, Any] = field(default_factory=dict)

    def expected(self, direction: str) -> tuple[str, list[str]]:
        text = self.action if direction == "action" else self.reader
        cls, *rules = text.split()
        return cls, rules


Mut = Callable[[dict[str, Any]], dict[str, Any]]
SHARED_OLD = {"$defs": {"Result": {"type": "object", "properties": {"code": {"type": "integer"}}}}}
SHARED_NEW = {"$defs": {"Result": {"type": "object", "properties": {"code": {"type": "string"}}}}}

CASES: list[Case] = [
    # -- nothing / annotations / defaults ------------------------------------------------------
    Case("identical", BASE, BASE, "safe", "safe"),
    Case(
        "description changed",
        BASE,
        edit(BASE, (f"{P}/name/description", "Another name."), ("/title", "T")),
        "safe annotation.changed",
        "safe annotation.changed",
    ),
    Case(
        "default added",
        BASE,
        edit(BASE, (f"{P}/ratio/default", 0.5)),
        "safe default.added",
        "safe default.added",
    ),
    Case(
        "default changed on an optional field",
        edit(BASE, (f"{P}/ratio/default", 0.5)),
        edit(BASE, (f"{P}/ratio/default", 1.5)),
        "safe default.changed",
        "breaking default.changed",
    ),
    Case(
        "default changed on a required field",
        edit(BASE, (f"{P}/count/default", 1)),
        edit(BASE, (f"{P}/count/default", 2)),
        "safe default.changed",
        "safe default.changed",
    ),
    # -- properties and required ---------------------------------------------------------------
    Case(
        "optional property added",
        BASE,
        edit(BASE, (f"{P}/extra", {"type": "boolean"})),
        "safe property.added",
        "safe property.added",
    ),
    Case(
        "required property added",
        BASE,
        edit(BASE, (f"{P}/extra", {"type": "boolean"}), ("/required/-", "extra")),
        "breaking property.added-required",
        "safe property.added-required",
    ),
    Case(
        "required property with a default added, defaults satisfy required",
        BASE,
        edit(BASE, (f"{P}/extra", {"type": "boolean", "default": False}), ("/required/-", "extra")),
        "safe property.added-required",
        "safe property.added-required",
        policy=Policy(default_satisfies_required=True),
    ),
    Case(
        "optional property removed from an open object",
        BASE,
        edit(BASE, (f"{P}/ratio", DELETE)),
        "safe property.removed",
        "safe property.removed",
    ),
    Case(
        "required property removed",
        BASE,
        edit(BASE, (f"{P}/count", DELETE), ("/required", ["name"])),
        "safe property.removed",
        "breaking property.removed-required",
    ),
    Case(
        "optional field made required",
        BASE,
        edit(BASE, ("/required/-", "ratio")),
        "breaking required.added",
        "safe required.added",
    ),
    Case(
        "required field made optional",
        BASE,
        edit(BASE, ("/required", ["name"])),
        "safe required.removed",
        "breaking required.removed",
        reader_role="state",
    ),
    Case(
        "required field with a default made optional, defaults satisfy required",
        edit(BASE, (f"{P}/count/default", 0)),
        edit(BASE, (f"{P}/count/default", 0), ("/required", ["name"])),
        "safe required.removed",
        "safe required.removed",
        policy=Policy(default_satisfies_required=True),
    ),
    # -- closed and open objects ---------------------------------------------------------------
    Case(
        "object closed",
        BASE,
        CLOSED,
        "breaking object.closed",
        "safe object.closed",
    ),
    Case(
        "object closed, server ignores unknown fields",
        BASE,
        CLOSED,
        "safe object.closed",
        "safe object.closed",
        policy=Policy(server_ignores_unknown_fields=True),
    ),
    Case(
        "object opened, readers ignore unknown fields (default)",
        CLOSED,
        BASE,
        "safe object.opened",
        "safe object.opened",
    ),
    Case(
        "object opened, readers reject unknown fields",
        CLOSED,
        BASE,
        "safe object.opened",
        "breaking object.opened",
        policy=Policy(readers_ignore_unknown_fields=False),
    ),
    Case(
        "property added to a closed object",
        CLOSED,
        edit(CLOSED, (f"{P}/extra", {"type": "boolean"})),
        "safe property.added",
        "safe property.added-to-closed",
    ),
    Case(
        "property added to a closed object, strict readers",
        CLOSED,
        edit(CLOSED, (f"{P}/extra", {"type": "boolean"})),
        "safe property.added",
        "breaking property.added-to-closed",
        policy=Policy(readers_ignore_unknown_fields=False),
    ),
    Case(
        "property removed from a closed object",
        CLOSED,
        edit(CLOSED, (f"{P}/ratio", DELETE)),
        "breaking property.removed-from-closed",
        "safe property.removed",
    ),
    Case(
        "map values narrowed",
        {"type": "object", "additionalProperties": {"type": "number"}},
        {"type": "object", "additionalProperties": {"type": "integer"}},
        "breaking type.narrowed",
        "safe type.narrowed",
    ),
    Case(
        "pattern properties removed from a closed object",
        {
            "type": "object",
            "patternProperties": {"^x_": {"type": "integer"}},
            "additionalProperties": False,
        },
        {"type": "object", "additionalProperties": False},
        "breaking pattern-properties.removed-from-closed",
        "safe pattern-properties.removed",
    ),
    Case(
        "pattern property value narrowed",
        {"type": "object", "patternProperties": {"^x_": {"type": "number"}}},
        {"type": "object", "patternProperties": {"^x_": {"type": "integer"}}},
        "breaking type.narrowed",
        "safe type.narrowed",
    ),
    Case(
        "minProperties raised",
        BASE,
        edit(BASE, ("/minProperties", 3)),
        "breaking object.minProperties-raised",
        "safe object.minProperties-raised",
    ),
    # -- types and nullability -----------------------------------------------------------------
    Case(
        "integer widened to number",
        BASE,
        edit(BASE, (f"{P}/count/type", "number")),
        "safe type.widened",
        "breaking type.widened",
    ),
    Case(
        "number narrowed to integer",
        BASE,
        edit(BASE, (f"{P}/ratio/type", "integer")),
        "breaking type.narrowed",
        "safe type.narrowed",
    ),
    Case(
        "integer changed to string",
        BASE,
        edit(BASE, (f"{P}/count", {"type": "string"})),
        "breaking type.changed",
        "breaking type.changed",
    ),
    Case(
        "type list gains a type",
        BASE,
        edit(BASE, (f"{P}/name/type", ["string", "integer"])),
        "safe type.widened",
        "breaking type.widened",
    ),
    Case(
        "null added to a type list",
        BASE,
        edit(BASE, (f"{P}/name/type", ["string", "null"])),
        "safe nullable.added",
        "breaking nullable.added",
    ),
    Case(
        "null removed from a type list",
        edit(BASE, (f"{P}/name/type", ["string", "null"])),
        BASE,
        "breaking nullable.removed",
        "safe nullable.removed",
    ),
    Case(
        "nullable written as anyOf with null",
        BASE,
        edit(BASE, (f"{P}/ratio", {"anyOf": [{"type": "number"}, {"type": "null"}]})),
        "safe nullable.added",
        "breaking nullable.added",
    ),
    Case(
        "anyOf-null to type list: same values",
        edit(BASE, (f"{P}/ratio", {"anyOf": [{"type": "number"}, {"type": "null"}]})),
        edit(BASE, (f"{P}/ratio", {"type": ["number", "null"]})),
        "safe",
        "safe",
    ),
    # -- enum and const ------------------------------------------------------------------------
    Case(
        "enum value added",
        BASE,
        edit(BASE, (f"{P}/mode/enum/-", "turbo")),
        "safe enum.value-added",
        "breaking enum.value-added",
    ),
    Case(
        "enum value added, extensible enums",
        BASE,
        edit(BASE, (f"{P}/mode/enum/-", "turbo")),
        "safe enum.value-added",
        "safe enum.value-added",
        policy=Policy(extensible_enums=True),
    ),
    Case(
        "enum value removed",
        BASE,
        edit(BASE, (f"{P}/mode/enum", ["fast"])),
        "breaking enum.value-removed",
        "safe enum.value-removed",
    ),
    Case(
        "enum added to a free string",
        BASE,
        edit(BASE, (f"{P}/name/enum", ["a", "b"])),
        "breaking enum.added",
        "safe enum.added",
    ),
    Case(
        "enum restriction removed",
        BASE,
        edit(BASE, (f"{P}/mode/enum", DELETE)),
        "safe enum.removed",
        "breaking enum.removed",
    ),
    Case(
        "const changed",
        edit(BASE, (f"{P}/kind", {"const": "a"})),
        edit(BASE, (f"{P}/kind", {"const": "b"})),
        "breaking const.changed",
        "breaking const.changed",
    ),
    Case(
        "const added",
        BASE,
        edit(BASE, (f"{P}/name/const", "fixed")),
        "breaking const.added",
        "safe const.added",
    ),
    # -- numbers -------------------------------------------------------------------------------
    Case(
        "minimum raised",
        BASE,
        edit(BASE, (f"{P}/count/minimum", 5)),
        "breaking number.minimum-raised",
        "safe number.minimum-raised",
    ),
    Case(
        "minimum removed",
        BASE,
        edit(BASE, (f"{P}/count/minimum", DELETE)),
        "safe number.minimum-lowered",
        "breaking number.minimum-lowered",
    ),
    Case(
        "maximum lowered",
        BASE,
        edit(BASE, (f"{P}/count/maximum", 10)),
        "breaking number.maximum-lowered",
        "safe number.maximum-lowered",
    ),
    Case(
        "maximum added to a number",
        BASE,
        edit(BASE, (f"{P}/ratio/maximum", 1)),
        "breaking number.maximum-lowered",
        "safe number.maximum-lowered",
    ),
    Case(
        "inclusive minimum made exclusive",
        BASE,
        edit(BASE, (f"{P}/count/minimum", DELETE), (f"{P}/count/exclusiveMinimum", 0)),
        "breaking number.minimum-raised",
        "safe number.minimum-raised",
    ),
    Case(
        "integer bounds written two ways",
        BASE,
        edit(BASE, (f"{P}/count/minimum", DELETE), (f"{P}/count/exclusiveMinimum", -1)),
        "safe",
        "safe",
    ),
    Case(
        "multipleOf added",
        BASE,
        edit(BASE, (f"{P}/ratio/multipleOf", 0.5)),
        "breaking number.multipleOf-stricter",
        "safe number.multipleOf-stricter",
    ),
    Case(
        "multipleOf made coarser",
        edit(BASE, (f"{P}/count/multipleOf", 2)),
        edit(BASE, (f"{P}/count/multipleOf", 4)),
        "breaking number.multipleOf-stricter",
        "safe number.multipleOf-stricter",
    ),
    Case(
        "multipleOf made finer",
        edit(BASE, (f"{P}/count/multipleOf", 4)),
        edit(BASE, (f"{P}/count/multipleOf", 2)),
        "safe number.multipleOf-looser",
        "breaking number.multipleOf-looser",
    ),
    Case(
        "multipleOf changed to an unrelated step",
        edit(BASE, (f"{P}/count/multipleOf", 2)),
        edit(BASE, (f"{P}/count/multipleOf", 3)),
        "breaking number.multipleOf-changed",
        "breaking number.multipleOf-changed",
    ),
    # -- strings -------------------------------------------------------------------------------
    Case(
        "minLength raised",
        BASE,
        edit(BASE, (f"{P}/name/minLength", 3)),
        "breaking string.minLength-raised",
        "safe string.minLength-raised",
    ),
    Case(
        "maxLength lowered",
        edit(BASE, (f"{P}/name/maxLength", 10)),
        edit(BASE, (f"{P}/name/maxLength", 4)),
        "breaking string.maxLength-lowered",
        "safe string.maxLength-lowered",
    ),
    Case(
        "maxLength removed",
        edit(BASE, (f"{P}/name/maxLength", 4)),
        BASE,
        "safe string.maxLength-raised",
        "breaking string.maxLength-raised",
    ),
    Case(
        "pattern added",
        BASE,
        edit(BASE, (f"{P}/name/pattern", "^[a-z]+$")),
        "breaking string.pattern-added",
        "safe string.pattern-added",
    ),
    Case(
        "pattern removed",
        edit(BASE, (f"{P}/name/pattern", "^[a-z]+$")),
        BASE,
        "safe string.pattern-removed",
        "breaking string.pattern-removed",
    ),
    Case(
        "pattern changed",
        edit(BASE, (f"{P}/name/pattern", "^[a-z]+$")),
        edit(BASE, (f"{P}/name/pattern", "^[a-c]+$")),
        "breaking string.pattern-changed",
        "breaking string.pattern-changed",
    ),
    Case(
        "format added",
        BASE,
        edit(BASE, (f"{P}/name/format", "date-time")),
        "breaking string.format-added",
        "safe string.format-added",
    ),
    Case(
        "format removed",
        edit(BASE, (f"{P}/name/format", "uuid")),
        BASE,
        "safe string.format-removed",
        "breaking string.format-removed",
    ),
    # -- arrays --------------------------------------------------------------------------------
    Case(
        "minItems raised",
        BASE,
        edit(BASE, (f"{P}/tags/minItems", 1)),
        "breaking array.minItems-raised",
        "safe array.minItems-raised",
    ),
    Case(
        "maxItems removed",
        edit(BASE, (f"{P}/tags/maxItems", 2)),
        BASE,
        "safe array.maxItems-raised",
        "breaking array.maxItems-raised",
    ),
    Case(
        "uniqueItems added",
        BASE,
        edit(BASE, (f"{P}/tags/uniqueItems", True)),
        "breaking array.uniqueItems-added",
        "safe array.uniqueItems-added",
    ),
    Case(
        "uniqueItems removed",
        edit(BASE, (f"{P}/tags/uniqueItems", True)),
        BASE,
        "safe array.uniqueItems-removed",
        "breaking array.uniqueItems-removed",
        reader_role="state",
    ),
    Case(
        "item type changed",
        BASE,
        edit(BASE, (f"{P}/tags/items/type", "integer")),
        "breaking type.changed",
        "breaking type.changed",
    ),
    Case(
        "tuple position narrowed",
        TUPLE,
        edit(TUPLE, (f"{P}/pair/prefixItems/0/minimum", 1)),
        "breaking number.minimum-raised",
        "safe number.minimum-raised",
    ),
    Case(
        "tuple opened to more items",
        TUPLE,
        edit(TUPLE, (f"{P}/pair/items", {"type": "boolean"})),
        "safe array.maxItems-raised",
        "breaking array.maxItems-raised",
    ),
    Case(
        "tuple shortened",
        TUPLE,
        edit(TUPLE, (f"{P}/pair/prefixItems/1", DELETE)),
        "breaking array.maxItems-lowered",
        "safe array.maxItems-lowered",
    ),
    # -- unions --------------------------------------------------------------------------------
    Case(
        "tagged oneOf branch added",
        UNION,
        edit(
            UNION,
            ("/oneOf/-", {"$ref": "#/$defs/Stop"}),
            (
                "/$defs/Stop",
                {
                    "type": "object",
                    "properties": {"type": {"const": "stop"}},
                    "required": ["type"],
                    "additionalProperties": False,
                },
            ),
        ),
        "safe union.branch-added",
        "breaking union.branch-added",
    ),
    Case(
        "tagged oneOf branch removed",
        UNION,
        edit(UNION, ("/oneOf/1", DELETE)),
        "breaking union.branch-removed",
        "safe union.branch-removed",
    ),
    Case(
        "field inside a oneOf branch narrowed",
        UNION,
        edit(UNION, ("/$defs/Move/properties/steps/minimum", 1)),
        "breaking number.minimum-raised",
        "safe number.minimum-raised",
    ),
    Case(
        "oneOf branch added that overlaps an existing one",
        PLAIN_UNION,
        edit(
            PLAIN_UNION, ("/oneOf/-", {"properties": {"a": {"type": "number"}}, "required": ["a"]})
        ),
        "breaking oneOf.branch-overlap",
        "breaking union.branch-added",
    ),
    Case(
        "anyOf branch added",
        edit(BASE, (f"{P}/name", {"anyOf": [{"type": "string"}]})),
        edit(BASE, (f"{P}/name", {"anyOf": [{"type": "string"}, {"type": "boolean"}]})),
        "safe union.branch-added",
        "breaking union.branch-added",
    ),
    Case(
        "allOf requirement dropped",
        {
            "allOf": [{"$ref": "#/$defs/Base"}, {"required": ["x"]}],
            "$defs": {"Base": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        },
        {
            "allOf": [{"$ref": "#/$defs/Base"}],
            "$defs": {"Base": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        },
        "safe required.removed",
        "breaking required.removed",
    ),
    # -- refs ----------------------------------------------------------------------------------
    Case(
        "field narrowed behind a $ref",
        NESTED,
        edit(NESTED, ("/$defs/Position/properties/row/minimum", 1)),
        "breaking number.minimum-raised",
        "safe number.minimum-raised",
    ),
    Case(
        "$ref retargeted to an identical def",
        NESTED,
        edit(
            NESTED,
            (f"{P}/position/$ref", "#/$defs/Cell"),
            ("/$defs/Cell", NESTED["$defs"]["Position"]),
            ("/$defs/Position", DELETE),
        ),
        "safe",
        "safe",
    ),
    Case(
        "type changed in a file reached by a cross-file $ref",
        {"type": "object", "properties": {"r": {"$ref": "shared_old.json#/$defs/Result"}}},
        {"type": "object", "properties": {"r": {"$ref": "shared_new.json#/$defs/Result"}}},
        "breaking type.changed",
        "breaking type.changed",
        files={"shared_old.json": SHARED_OLD, "shared_new.json": SHARED_NEW},
    ),
    # -- other keywords ------------------------------------------------------------------------
    Case(
        "not added",
        BASE,
        edit(BASE, (f"{P}/name/not", {"const": "x"})),
        "breaking keyword.changed",
        "breaking keyword.changed",
    ),
    Case(
        "property schema made false",
        BASE,
        edit(BASE, (f"{P}/ratio", False)),
        "breaking schema.now-false",
        "safe schema.now-false",
    ),
    # -- generated code (breaking-code) ---------------------------------------------------------
    Case(
        "optional property removed: wire-safe, attribute gone",
        BASE,
        edit(BASE, (f"{P}/ratio", DELETE)),
        "breaking-code code.attribute-removed property.removed",
        "breaking-code code.attribute-removed property.removed",
        code=True,
    ),
    Case(
        "property renamed on an open object",
        BASE,
        edit(BASE, (f"{P}/ratio", DELETE), (f"{P}/fraction", {"type": "number"})),
        "breaking-code code.attribute-removed code.attribute-added",
        "breaking-code code.attribute-removed code.attribute-added",
        code=True,
    ),
    Case(
        "def renamed: same wire, class renamed",
        NESTED,
        edit(
            NESTED,
            (f"{P}/position/$ref", "#/$defs/Cell"),
            ("/$defs/Cell", NESTED["$defs"]["Position"]),
            ("/$defs/Position", DELETE),
        ),
        "breaking-code code.class-renamed",
        "breaking-code code.class-renamed",
        code=True,
    ),
    Case(
        "python name taken by a new property: attribute renamed",
        edit(BASE, (f"{P}/class_", {"type": "integer"})),
        {
            **BASE,
            "properties": {
                "class": {"type": "integer"},
                **BASE["properties"],
                "class_": {"type": "integer"},
            },
        },
        "breaking-code code.attribute-renamed",
        "breaking-code code.attribute-renamed",
        code=True,
    ),
    Case(
        "format added to a string the client reads: str becomes a datetime",
        BASE,
        edit(BASE, (f"{P}/name/format", "date-time")),
        "breaking string.format-added",
        "breaking-code code.type-changed",
        code=True,
    ),
    Case(
        "number narrowed to integer: reading code still fits",
        BASE,
        edit(BASE, (f"{P}/ratio/type", "integer")),
        "breaking type.narrowed",
        "safe code.type-changed-compatibly",
        code=True,
    ),
    Case(
        "integer widened to number: building code still fits",
        BASE,
        edit(BASE, (f"{P}/count/type", "number")),
        "safe code.type-changed-compatibly",
        "breaking type.widened",
        code=True,
    ),
    Case(
        "optional field made required: building code must pass it",
        BASE,
        edit(BASE, ("/required/-", "ratio"), (f"{P}/ratio/default", 1.0)),
        "breaking required.added",
        "safe required.added",
        code=True,
        policy=Policy(),
    ),
]
