"""Checks a schema document against its JSON Schema meta-schema and envgen's own needs."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match

from generator.errors import SchemaError

# Keywords that only annotate: a root holding nothing else accepts any JSON value.
_ANNOTATIONS = {"title", "description", "$schema", "$id", "$comment", "examples", "default"}
_CONTAINERS = {"$defs", "definitions"}
_SHAPE_KEYWORDS = {"properties", "oneOf", "anyOf", "allOf", "$ref", "required"}


def json_pointer(parts: Any) -> str:
    """Render path parts as an RFC 6901 JSON pointer."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def check_meta_schema(doc: Any, display: str) -> None:
    """Raise SchemaError (file, pointer, what is wrong) if `doc` is not a valid schema."""
    if not isinstance(doc, dict | bool):
        raise SchemaError(
            f"a schema must be a JSON object or boolean, not {type(doc).__name__}",
            file=display,
            pointer="",
        )
    if isinstance(doc, bool):
        return
    validator_cls = validators.validator_for(doc, default=Draft202012Validator)
    meta = validator_cls(validator_cls.META_SCHEMA)
    error: ValidationError | None = best_match(meta.iter_errors(doc))
    if error is not None:
        raise SchemaError(
            f"invalid schema: {error.message}",
            file=display,
            pointer=json_pointer(error.absolute_path),
            hint=f"checked against {validator_cls.META_SCHEMA.get('$schema', 'the meta-schema')}",
        )


def check_role_root(doc: Any, display: str, role: str) -> None:
    """An action, observation or state schema must describe a JSON object (or a union of them)."""
    if doc is True or (isinstance(doc, dict) and not set(doc) - _ANNOTATIONS - _CONTAINERS):
        raise SchemaError(
            f"the {role} schema is empty, so it accepts any JSON value; envgen needs it to "
            "describe a JSON object",
            file=display,
            pointer="",
            hint='start from {"type": "object", "properties": {...}}',
        )
    if doc is False:
        raise SchemaError(f"the {role} schema is `false` and accepts nothing", file=display)
    assert isinstance(doc, dict)
    declared = doc.get("type")
    types = declared if isinstance(declared, list) else [declared] if declared else []
    if types and "object" not in types:
        raise SchemaError(
            f"the {role} schema must describe a JSON object, but its type is {declared!r}",
            file=display,
            pointer="/type",
        )
    if not types and not set(doc) & _SHAPE_KEYWORDS:
        raise SchemaError(
            f"the {role} schema does not say it is an object (no type, properties or "
            "oneOf/anyOf/allOf)",
            file=display,
            pointer="",
            hint='add "type": "object"',
        )
