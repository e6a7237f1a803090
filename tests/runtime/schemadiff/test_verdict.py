"""`schemadiff.drift`: committed schemas against a server's `/schema`, by diff's rules."""

from __future__ import annotations

import copy
from typing import Any

from envgen_runtime.schemadiff import NO_RESET_SCHEMA, canonical_hash, drift, role_schemas


def _committed() -> dict[str, Any]:
    return {
        "schema_hash": "sha256:x",
        "action": {
            "type": "object",
            "properties": {"move": {"$ref": "#/$defs/Move"}},
            "required": ["move"],
            "$defs": {"Move": {"type": "string", "enum": ["left", "right"]}},
        },
        "observation": {
            "type": "object",
            "properties": {"x": {"type": "integer"}},
            "required": ["x"],
        },
        "state": {"type": "object", "properties": {"step_count": {"type": "integer"}}},
    }


def test_the_same_schemas_do_not_drift() -> None:
    committed = _committed()
    report = drift(committed, copy.deepcopy(committed))
    assert (report.breaking, report.compatible, report.drifted) == ((), (), False)


def test_a_narrowed_enum_in_a_def_breaks_at_a_pointer_into_the_published_document() -> None:
    published = _committed()
    published["action"]["$defs"]["Move"]["enum"] = ["left"]
    first = drift(_committed(), published).first_breaking
    assert first is not None
    assert (first.role, first.rule) == ("action", "enum.value-removed")
    assert first.pointer == "/action/$defs/Move/enum"
    assert first.has_witness and first.witness == {"move": "right"}


def test_an_added_optional_observation_field_is_compatible() -> None:
    published = _committed()
    published["observation"]["properties"]["y"] = {"type": "string"}
    report = drift(_committed(), published)
    assert report.breaking == ()
    assert [(c.rule, c.pointer) for c in report.compatible] == [
        ("property.added", "/observation/properties/y")
    ]


def test_changes_a_client_cannot_notice_are_not_drift() -> None:
    published = _committed()
    published["observation"]["title"] = "Obs"
    published["observation"]["additionalProperties"] = False
    published["observation"]["properties"]["reward"] = {"type": "number"}  # the envelope's
    published["state"]["properties"]["step_count"]["default"] = 0
    published["action"]["properties"]["metadata"] = {"type": "object"}  # OpenEnv's base field
    assert drift(_committed(), published).drifted is False


def test_reset_parameters_the_server_adds_are_judged_against_none() -> None:
    published = _committed()
    published["reset"] = {
        "type": "object",
        "properties": {"level": {"type": "integer"}},
        "required": ["level"],
    }
    first = drift(_committed(), published).first_breaking
    assert first is not None and first.role == "reset"
    assert NO_RESET_SCHEMA == {"type": "object", "additionalProperties": False}


def test_a_reply_that_is_not_openenvs_shape_has_nothing_to_compare() -> None:
    assert drift(_committed(), {"openapi": "3.1.0"}).drifted is False
    assert drift(_committed(), ["action"]).drifted is False
    assert role_schemas({"action": {}, "observation": {}, "state": True}) is None


def test_the_canonical_hash_ignores_key_order() -> None:
    one = {"a": {"type": "object", "title": "A"}}
    two = {"a": {"title": "A", "type": "object"}}
    assert canonical_hash(one) == canonical_hash(two) != canonical_hash({"a": {}})
