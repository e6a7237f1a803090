"""The fast 2020-12 meta-schema check gives the verdict of jsonschema's own, on any input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from generator.errors import SchemaError
from generator.schema.check import check_meta_schema
from generator.schema.meta_schema import VOCABULARIES, flattened_meta_schema, is_valid_2020_12
from tests.helpers import REPO

FULL = Draft202012Validator(Draft202012Validator.META_SCHEMA)
KEYWORDS = [
    "type",
    "properties",
    "items",
    "prefixItems",
    "required",
    "enum",
    "const",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "maxLength",
    "minItems",
    "pattern",
    "format",
    "$ref",
    "$defs",
    "definitions",
    "dependencies",
    "$recursiveRef",
    "additionalProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "$id",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
    "contentEncoding",
    "dependentSchemas",
    "dependentRequired",
    "propertyNames",
    "contains",
    "minContains",
    "uniqueItems",
    "multipleOf",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "x-extra",
]
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from(["object", "string", "integer", "null", "#", "#/$defs/a", "a b", "^x$"]),
    st.text(max_size=4),
)


def _schemas() -> st.SearchStrategy[Any]:
    return st.recursive(
        LEAVES,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from(KEYWORDS), inner, max_size=4),
            st.dictionaries(st.sampled_from(["a", "b", "$ref"]), inner, max_size=2),
        ),
        max_leaves=12,
    )


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYWORDS), _schemas(), max_size=5))
def test_the_verdict_matches_jsonschemas_on_any_document(doc: dict[str, Any]) -> None:
    assert is_valid_2020_12(doc) == FULL.is_valid(doc)


def _repo_schemas() -> list[Path]:
    found = sorted(REPO.glob("schemas/**/*.schema.json"))
    found += sorted(REPO.glob("tests/golden/cases/*/schemas/**/*.schema.json"))
    return found


def test_every_schema_in_the_repository_gets_the_same_verdict() -> None:
    paths = _repo_schemas()
    assert len(paths) > 15
    for path in paths:
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert is_valid_2020_12(doc) == FULL.is_valid(doc), path


@pytest.mark.parametrize(
    ("doc", "pointer"),
    [
        ({"type": 5}, "/type"),
        ({"properties": {"x": {"minimum": "1"}}}, "/properties/x/minimum"),
        ({"$defs": {"a": {"required": [1]}}}, "/$defs/a/required/0"),
        ({"definitions": {"a": 3}}, "/definitions/a"),
        (
            {"items": {"additionalProperties": {"type": ["nope"]}}},
            "/items/additionalProperties/type/0",
        ),
    ],
)
def test_a_rejected_schema_is_still_reported_with_its_pointer(doc: Any, pointer: str) -> None:
    assert not is_valid_2020_12(doc)
    with pytest.raises(SchemaError) as caught:
        check_meta_schema(doc, "schemas/x/action.schema.json")
    assert caught.value.pointer == pointer
    assert caught.value.file == "schemas/x/action.schema.json"


def test_the_flattening_keeps_every_vocabularys_keywords() -> None:
    flat = flattened_meta_schema()
    assert len(VOCABULARIES) == len(Draft202012Validator.META_SCHEMA["allOf"])
    for keyword in ("$ref", "properties", "minimum", "unevaluatedItems", "default", "format"):
        assert keyword in flat["properties"]
    assert "#meta" not in json.dumps(flat)
