"""Checks a schema document against its JSON Schema meta-schema and envgen's own needs."""

from __future__ import annotations

import json
import keyword
import re
from typing import TYPE_CHECKING, Any

from envgen_runtime import schemadiff

from generator.errors import SchemaError

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

# Keywords that only annotate: a root holding nothing else accepts any JSON value.
_ANNOTATIONS = {"title", "description", "$schema", "$id", "$comment", "examples", "default"}
_CONTAINERS = {"$defs", "definitions"}
_SHAPE_KEYWORDS = {"properties", "oneOf", "anyOf", "allOf", "$ref", "required"}
# Keywords whose value maps names to subschemas, and keywords whose value is plain data.
_NAMED_SCHEMAS = {"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
_DATA = {"enum", "const", "default", "examples"}
_SURROGATE = re.compile("[\ud800-\udfff]")
# Keywords outside JSON Schema that the model generator reads: the meta-schema lets any
# value through, so their shape is checked here (OpenAPI's discriminator object).
_EXTENSIONS: dict[str, dict[str, Any]] = {
    "discriminator": {
        "type": "object",
        "required": ["propertyName"],
        "properties": {
            "propertyName": {"type": "string", "minLength": 1},
            "mapping": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }
}


def check_text(doc: Any, display: str) -> None:
    """Every string (keys too) is Unicode text: JSON can escape half a UTF-16 pair
    (`"\\ud800"`), which no UTF-8 file, generated module or terminal can hold."""
    stack: list[tuple[Any, list[str | int]]] = [(doc, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            _check_string(node, path, display)
        elif isinstance(node, dict):
            for key, value in node.items():
                _check_string(key, [*path, key], display)
                stack.append((value, [*path, key]))
        elif isinstance(node, list):
            stack.extend((value, [*path, index]) for index, value in enumerate(node))


def _check_string(text: str, path: list[str | int], display: str) -> None:
    found = _SURROGATE.search(text)
    if found:
        raise SchemaError(
            f"holds an escaped lone surrogate (\\u{ord(found.group()):04x}), which is not "
            "Unicode text",
            file=display,
            pointer=json_pointer(path).encode("utf-8", "backslashreplace").decode(),
            hint="write the character itself, or both halves of its surrogate pair",
        )


json_pointer = schemadiff.json_pointer
"""Render path parts as an RFC 6901 JSON pointer (the comparer's, so both read alike)."""


def check_meta_schema(doc: Any, display: str) -> None:
    """Raise SchemaError (file, pointer, what is wrong) if `doc` is not a valid schema."""
    check_text(doc, display)
    if not isinstance(doc, dict | bool):
        raise SchemaError(
            f"a schema must be a JSON object or boolean, not {_json_type(doc)}",
            file=display,
            pointer="",
        )
    if isinstance(doc, bool):
        return
    # Imported here: unpickling an env (in a worker) imports this module, not jsonschema.
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import best_match

    from generator.schema.meta_schema import is_valid_2020_12

    validator_cls = validators.validator_for(doc, default=Draft202012Validator)
    error: ValidationError | None = None
    if validator_cls is not Draft202012Validator or not is_valid_2020_12(doc):
        meta = validator_cls(validator_cls.META_SCHEMA)
        error = best_match(meta.iter_errors(doc))
    if error is not None:
        raise SchemaError(
            f"invalid schema: {error.message}",
            file=display,
            pointer=json_pointer(error.absolute_path),
            hint=f"checked against {validator_cls.META_SCHEMA.get('$schema', 'the meta-schema')}",
        )
    _check_extensions(doc, display, [])


def _check_extensions(node: Any, display: str, path: list[str | int]) -> None:
    """Check the shape of the non-standard keywords envgen acts on, anywhere in a schema."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            _check_extensions(item, display, [*path, index])
        return
    if not isinstance(node, dict):
        return
    _check_default_type(node, display, path)
    for key, value in node.items():
        here = [*path, key]
        if key in _DATA:
            continue
        if key in _EXTENSIONS:
            from jsonschema import Draft202012Validator
            from jsonschema.exceptions import best_match

            error = best_match(Draft202012Validator(_EXTENSIONS[key]).iter_errors(value))
            if error is not None:
                raise SchemaError(
                    f"invalid {key}: {error.message}",
                    file=display,
                    pointer=json_pointer([*here, *error.absolute_path]),
                    hint='write {"propertyName": "<tag field>"} (OpenAPI discriminator object)',
                )
        elif key in _NAMED_SCHEMAS and isinstance(value, dict):
            for name, sub in value.items():
                _check_extensions(sub, display, [*here, name])
        else:
            _check_extensions(value, display, here)


def check_role_root(doc: Any, display: str, role: str) -> None:
    """An action, observation or state schema must describe a JSON object (or a union of them)."""
    if not isinstance(doc, dict | bool):
        raise SchemaError(
            f"the {role} schema must be a JSON object, not {_json_type(doc)}",
            file=display,
            pointer="",
            hint='start from {"type": "object", "properties": {...}}',
        )
    if doc is True or (isinstance(doc, dict) and not set(doc) - _ANNOTATIONS - _CONTAINERS):
        raise SchemaError(
            f"the {role} schema is empty, so it accepts any JSON value; envgen needs it to "
            "describe a JSON object",
            file=display,
            pointer="",
            hint='start from {"type": "object", "properties": {...}}',
        )
    if doc is False:
        raise SchemaError(
            f"the {role} schema is `false` and accepts nothing", file=display, pointer=""
        )
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


RESET_RESERVED = ("seed", "episode_id", "headers", "self", "seeds", "slots", "super")
"""Names the generated `reset()` methods already take (the client's and the pool's) or call
(`super`): a reset parameter cannot have them."""


def check_reset_params(doc: Any, display: str) -> None:
    """reset.schema.json: an object whose properties become `reset()` keyword arguments.

    Each property name is a Python keyword argument of the generated `reset()` and a key on
    the wire, so it must be a plain identifier that is not a keyword and not one of the
    arguments `reset()` already has.
    """
    check_role_root(doc, display, "reset")
    if not isinstance(doc, dict):
        return
    for key in ("oneOf", "anyOf", "allOf", "$ref"):
        if key in doc:
            raise SchemaError(
                f"the reset schema lists its parameters under properties; {key!r} at its root "
                "is not supported",
                file=display,
                pointer=json_pointer([key]),
            )
    props = doc.get("properties", {})
    for name in props if isinstance(props, dict) else []:
        problem = _reset_name_problem(name)
        if problem:
            raise SchemaError(
                f"reset parameter {name!r} {problem}",
                file=display,
                pointer=json_pointer(["properties", name]),
                hint="rename the property; the server's reset() must take the same name",
            )


def _reset_name_problem(name: str) -> str | None:
    if name in RESET_RESERVED:
        return "clashes with reset()'s own argument of that name"
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return "is a Python keyword, so it cannot be a keyword argument"
    if not name.isidentifier() or not name.isascii():
        return "is not a Python identifier (letters, digits and '_', not starting with a digit)"
    if name.startswith("_"):
        return "starts with '_', which pydantic treats as private"
    return None


_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "boolean": bool,
    "array": list,
    "object": dict,
    "null": type(None),
}


def _check_default_type(node: dict[str, Any], display: str, path: list[str | int]) -> None:
    """A default must be of a type the schema declares: it becomes a typed Python default.

    `null` defaults are left to the generator (pydantic writes them for optional fields that
    are not nullable); only the JSON type is checked, not bounds or formats.
    """
    if "default" not in node or node["default"] is None or "type" not in node:
        return
    declared = node["type"]
    types = declared if isinstance(declared, list) else [declared]
    value = node["default"]
    if any(_has_type(value, t) for t in types if isinstance(t, str)):
        return
    raise SchemaError(
        f"the default {_short_json(value)} is {_json_type(value)}, but the type is {declared!r}",
        file=display,
        pointer=json_pointer([*path, "default"]),
        hint="make the default match the type (generated models would not type-check)",
    )


def _has_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        return type(value) is int or (type(value) is float and value.is_integer())
    if kind == "number":
        return type(value) in (int, float)
    expected = _JSON_TYPES.get(kind)
    if expected is None:
        return True  # not a JSON type: the meta-schema check reports it
    return type(value) is expected


def _short_json(value: Any) -> str:
    """A short JSON rendering of a value for messages."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, as users wrote it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
