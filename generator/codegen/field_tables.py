"""Human-readable field tables for an environment's generated README."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from generator.schema.loader import EnvInput

_CONSTRAINTS = (
    ("minimum", ">= {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "<= {}"),
    ("exclusiveMaximum", "< {}"),
    ("multipleOf", "multiple of {}"),
    ("minLength", "length >= {}"),
    ("maxLength", "length <= {}"),
    ("pattern", "matches {}"),
    ("format", "format {}"),
    ("minItems", "items >= {}"),
    ("maxItems", "items <= {}"),
    ("minProperties", "properties >= {}"),
    ("maxProperties", "properties <= {}"),
)


@dataclass(frozen=True)
class Row:
    name: str
    type: str
    required: bool
    default: str
    constraints: str
    description: str


@dataclass(frozen=True)
class Section:
    title: str
    description: str
    type: str
    rows: list[Row]


def sections(env: EnvInput) -> list[Section]:
    """One section per role (and per union branch), then one per other named type."""
    defs = env.bundle.defs
    role_titles = {
        env.class_name("action"): "Action",
        env.class_name("observation"): "Observation",
        env.class_name("state"): "State",
    }
    if env.reset_class:
        role_titles[env.reset_class] = "Reset parameters"
    out: list[Section] = []
    for name, label in role_titles.items():
        out.append(_section(f"{label}: {name}", defs[name], defs))
    for name, schema in defs.items():
        if name not in role_titles:
            out.append(_section(name, schema, defs))
    return out


def _section(title: str, schema: Any, defs: dict[str, Any]) -> Section:
    schema = schema if isinstance(schema, dict) else {}
    rows = [
        _row(prop, sub, prop in schema.get("required", []), defs)
        for prop, sub in schema.get("properties", {}).items()
    ]
    return Section(
        title=title,
        description=str(schema.get("description", "")),
        type=describe(schema, defs),
        rows=rows,
    )


def _row(name: str, schema: Any, required: bool, defs: dict[str, Any]) -> Row:
    schema = schema if isinstance(schema, dict) else {}
    return Row(
        name=name,
        type=describe(schema, defs),
        required=required,
        default=json.dumps(schema["default"], ensure_ascii=False) if "default" in schema else "",
        constraints=", ".join(_constraints(schema)),
        description=str(schema.get("description", "")),
    )


def _constraints(schema: dict[str, Any]) -> list[str]:
    found = [fmt.format(schema[key]) for key, fmt in _CONSTRAINTS if key in schema]
    if schema.get("uniqueItems"):
        found.append("unique items")
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
        if isinstance(branch, dict):
            found.extend(_constraints(branch))
    return found


def describe(schema: Any, defs: dict[str, Any]) -> str:
    """A short type expression such as `array of number` or `string | null`."""
    if schema is True or schema == {}:
        return "any"
    if schema is False:
        return "nothing"
    if not isinstance(schema, dict):
        return "any"
    if "$ref" in schema:
        return str(schema["$ref"]).removeprefix("#/$defs/")
    if "const" in schema:
        return "const " + json.dumps(schema["const"], ensure_ascii=False)
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return " | ".join(describe(branch, defs) for branch in schema[key])
    if "allOf" in schema:
        return " & ".join(describe(branch, defs) for branch in schema["allOf"])
    declared = schema.get("type")
    types = declared if isinstance(declared, list) else [declared] if declared else []
    if not types:
        if "properties" in schema:
            return "object"
        if "prefixItems" in schema or "items" in schema:
            return _describe_one("array", schema, defs)
        return "any"
    return " | ".join(_describe_one(t, schema, defs) for t in types)


def _describe_one(kind: str, schema: dict[str, Any], defs: dict[str, Any]) -> str:
    if kind == "array":
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list):
            # A tuple: fixed length when nothing may follow the listed items.
            shown = [describe(s, defs) for s in prefix]
            rest = schema.get("items", True)
            closed = rest is False or schema.get("maxItems") == len(prefix)
            if not closed:
                shown.append("..." if rest in (True, {}) else describe(rest, defs) + "...")
            return "[" + ", ".join(shown) + "]"
        return "array of " + describe(schema.get("items", True), defs)
    if kind == "object":
        extra = schema.get("additionalProperties")
        if "properties" not in schema and isinstance(extra, dict):
            return "map of " + describe(extra, defs)
    return str(kind)
