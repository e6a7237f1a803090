"""Validating JSON values against parts of a bundled schema, and the reader's view of it.

Witnesses are only reported once `jsonschema` agrees with them, so this module is the judge:
it validates against any subschema of a bundle (its `$ref`s resolve into the bundle's
`$defs`), checks formats the way generated models do, and builds the schema a reader
effectively applies under a policy (unknown fields accepted, defaults filling `required`,
enums left open). `jsonschema` is imported on the first validation, not with this module:
the runtime imports the comparer only when a client compares schemas at connect.
"""

from __future__ import annotations

import re
from datetime import datetime, time
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .policy import Policy
from .roles import Role
from .schemaops import as_dict, json_type

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator, FormatChecker

_DATA = ("enum", "const", "default", "examples")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_TIME = re.compile(r"^\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


@cache
def formats() -> FormatChecker:
    """jsonschema's checkers plus the formats generated pydantic models enforce."""
    from jsonschema import Draft202012Validator, FormatChecker

    checker = FormatChecker()
    checker.checkers = dict(Draft202012Validator.FORMAT_CHECKER.checkers)

    @checker.checks("date-time")
    def _date_time(value: object) -> bool:
        if not isinstance(value, str):
            return True
        if not _DATE_TIME.match(value):
            return False
        try:
            datetime.fromisoformat(value.replace("z", "+00:00").replace("Z", "+00:00"))
        except ValueError:
            return False
        return True

    @checker.checks("time")
    def _time(value: object) -> bool:
        if not isinstance(value, str):
            return True
        if not _TIME.match(value):
            return False
        try:
            time.fromisoformat(value[:8])
        except ValueError:
            return False
        return True

    @checker.checks("uri")
    def _uri(value: object) -> bool:
        if not isinstance(value, str):
            return True
        parts = urlsplit(value)
        return bool(parts.scheme) and " " not in value

    return checker


class Validation:
    """Validates values against subschemas of one bundle's `$defs`."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self._cache: dict[int, tuple[Any, Draft202012Validator]] = {}

    def valid(self, schema: Any, value: Any) -> bool:
        if schema is True:
            return True
        if schema is False:
            return False
        entry = self._cache.get(id(schema))
        if entry is None or entry[0] is not schema:
            from jsonschema import Draft202012Validator

            document = {"$defs": self.defs, "allOf": [schema]}
            entry = (schema, Draft202012Validator(document, format_checker=formats()))
            self._cache[id(schema)] = entry
        try:
            return bool(entry[1].is_valid(value))
        except (RecursionError, re.error):
            return False

    def root(self, name: str) -> dict[str, Any]:
        """A schema for the def named `name` (a role class)."""
        return {"$ref": "#/$defs/" + name.replace("~", "~0").replace("/", "~1")}


def reader_defs(defs: dict[str, Any], policy: Policy, role: Role) -> dict[str, Any]:
    """The schema a reader of `role` actually applies, given how readers behave."""
    open_up = policy.reader_ignores_unknown(role)
    return {
        name: view(node, open_up, policy.default_satisfies_required, policy.extensible_enums)
        for name, node in defs.items()
    }


def view(node: Any, open_up: bool, defaults: bool, enums: bool) -> Any:
    """`node` as a reader applies it (see `reader_defs`)."""
    if isinstance(node, list):
        return [view(v, open_up, defaults, enums) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DATA:
            if key == "enum" and enums:
                continue
            out[key] = value
        elif key in ("properties", "patternProperties") and isinstance(value, dict):
            out[key] = {n: view(s, open_up, defaults, enums) for n, s in value.items()}
        elif open_up and key in ("additionalProperties", "unevaluatedProperties") and not value:
            continue
        else:
            out[key] = view(value, open_up, defaults, enums)
    if enums and isinstance(node.get("enum"), list) and "type" not in node:
        kinds = sorted({json_type(v) for v in node["enum"]})
        out["type"] = kinds if len(kinds) != 1 else kinds[0]
    if defaults and isinstance(out.get("required"), list):
        props = as_dict(node.get("properties"))
        out["required"] = [
            n
            for n in out["required"]
            if not (isinstance(props.get(n), dict) and "default" in props[n])
        ]
    return out
