"""Reading bundled schemas the way the comparer needs them: refs followed, allOf merged,
unions split into branches, types normalised (the number arithmetic is in `numeric`).

Every node keeps the location (def name and pointer inside the def) of the keywords it came
from, so a change found after merging still points at the spot a person would edit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .numeric import lcm_step

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "discriminator",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$defs",
        "definitions",
    }
)
OBJECT_KEYWORDS = frozenset(
    {
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "minProperties",
        "maxProperties",
    }
)
ARRAY_KEYWORDS = frozenset({"items", "prefixItems", "minItems", "maxItems", "uniqueItems"})
STRING_KEYWORDS = frozenset({"minLength", "maxLength", "pattern", "format"})
NUMBER_KEYWORDS = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)
TYPE_KEYWORDS = frozenset({"type", "enum", "const"})
COMBINATORS = frozenset({"allOf", "anyOf", "oneOf", "$ref"})
# Keywords the comparer does not reason about: any change to them is reported as is.
OTHER_KEYWORDS = frozenset(
    {
        "not",
        "if",
        "then",
        "else",
        "contains",
        "minContains",
        "maxContains",
        "propertyNames",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)
KNOWN_KEYWORDS = (
    ANNOTATIONS
    | OBJECT_KEYWORDS
    | ARRAY_KEYWORDS
    | STRING_KEYWORDS
    | NUMBER_KEYWORDS
    | TYPE_KEYWORDS
    | COMBINATORS
    | OTHER_KEYWORDS
    | {"default", "additionalItems"}
)
ALL_TYPES = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})


def json_pointer(parts: Any) -> str:
    """Render path parts as an RFC 6901 JSON pointer."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@dataclass(frozen=True)
class Loc:
    """Where a schema node lives: a def of the bundle and a JSON pointer inside it."""

    def_name: str
    pointer: str = ""

    def at(self, *parts: str | int) -> Loc:
        return Loc(self.def_name, self.pointer + json_pointer(parts))


@dataclass
class Node:
    """A schema value and where its keywords came from."""

    schema: Any
    loc: Loc
    origins: dict[str, Loc] = field(default_factory=dict)

    @property
    def d(self) -> dict[str, Any]:
        return self.schema if isinstance(self.schema, dict) else {}

    def loc_of(self, keyword: str, *rest: str | int) -> Loc:
        """Location of `keyword` (and below): in the schema that supplied it."""
        key = f"{keyword}/{rest[0]}" if rest and keyword.endswith("roperties") else keyword
        base = self.origins.get(key) or self.origins.get(keyword) or self.loc
        return base.at(keyword, *rest)

    def child(self, keyword: str, *rest: str | int) -> Node:
        value: Any = self.d.get(keyword)
        for part in rest:
            value = value[part] if value is not None else None
        return Node(True if value is None else value, self.loc_of(keyword, *rest))


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def ref_name(ref: str) -> str:
    return unescape(ref.removeprefix("#/$defs/"))


def canon(value: Any) -> str:
    """Canonical text of a JSON value, with 1.0 and 1 the same number (as JSON Schema says)."""

    def norm(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    return json.dumps(norm(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (for keywords of the wrong type)."""
    return value if isinstance(value, dict) else {}


def types_of(schema: Any) -> frozenset[str]:
    """The JSON types a schema admits; without `type`, what its other keywords imply."""
    if schema is True:
        return ALL_TYPES
    if schema is False or not isinstance(schema, dict):
        return frozenset()
    declared = schema.get("type")
    if declared is not None:
        found = frozenset(declared if isinstance(declared, list) else [declared])
    elif "const" in schema:
        found = frozenset({json_type(schema["const"])})
    elif isinstance(schema.get("enum"), list):
        found = frozenset(json_type(v) for v in schema["enum"])
    else:
        implied: set[str] = set()
        keys = set(schema)
        if keys & OBJECT_KEYWORDS:
            implied.add("object")
        if keys & ARRAY_KEYWORDS:
            implied.add("array")
        if keys & STRING_KEYWORDS:
            implied.add("string")
        if keys & NUMBER_KEYWORDS:
            implied.add("number")
        found = frozenset(implied) if implied else ALL_TYPES
    if "number" in found:
        found = found | {"integer"}
    return found


def value_types(schema: Any) -> frozenset[str]:
    """The types a schema's values can really have: `types_of`, narrowed by enum/const, and
    a number whose multipleOf is a whole number read as an integer."""
    found = types_of(schema)
    if not isinstance(schema, dict):
        return found
    listed = [schema["const"]] if "const" in schema else schema.get("enum")
    if isinstance(listed, list):
        found = frozenset(k for k in (json_type(v) for v in listed) if admits(found, k))
    step = schema.get("multipleOf")
    if "number" in found and isinstance(step, int | float) and float(step).is_integer():
        found = (found - {"number"}) | {"integer"}
    return found


def admits(types: frozenset[str], kind: str) -> bool:
    return kind in types or (kind == "integer" and "number" in types)


# -- resolving and merging ----------------------------------------------------------------------


def resolve(node: Node, defs: dict[str, Any]) -> Node:
    """Follow `$ref` (keeping the referring site's annotations and default), merge `allOf`."""
    for _ in range(64):
        schema = node.schema
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            break
        name = ref_name(schema["$ref"])
        target = Node(defs.get(name, True), Loc(name))
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        if set(rest) <= ANNOTATIONS | {"default"}:
            merged = dict(target.schema) if isinstance(target.schema, dict) else target.schema
            if isinstance(merged, dict):
                merged.update(rest)
                origins = {k: node.loc for k in rest}
                node = Node(merged, target.loc, origins)
            else:
                node = target
        else:
            node = merge(resolve(target, defs), resolve(Node(rest, node.loc), defs), defs)
    return _normalise(merge_all_of(node, defs))


def merge_all_of(node: Node, defs: dict[str, Any]) -> Node:
    schema = node.schema
    if not (isinstance(schema, dict) and isinstance(schema.get("allOf"), list)):
        return node
    base = Node({k: v for k, v in schema.items() if k != "allOf"}, node.loc, dict(node.origins))
    for index, branch in enumerate(schema["allOf"]):
        base = merge(base, resolve(Node(branch, node.loc.at("allOf", index)), defs), defs)
    return base


def _normalise(node: Node) -> Node:
    """Draft-07 spellings to 2020-12 ones: array `items`, `unevaluatedProperties: false`."""
    schema = node.schema
    if not isinstance(schema, dict):
        return node
    changed = dict(schema)
    if isinstance(changed.get("items"), list):
        changed["prefixItems"] = changed.pop("items")
        if "additionalItems" in changed:
            changed["items"] = changed.pop("additionalItems")
    if changed.get("unevaluatedProperties") is False and "additionalProperties" not in changed:
        changed["additionalProperties"] = changed.pop("unevaluatedProperties")
    if changed == schema:
        return node
    return Node(changed, node.loc, node.origins)


def _both(a: Any, b: Any) -> Any:
    if a is True or a == {}:
        return b
    if b is True or b == {}:
        return a
    if a is False or b is False:
        return False
    return {"allOf": [a, b]}


def merge(a: Node, b: Node, defs: dict[str, Any]) -> Node:
    """The intersection of two resolved schemas, as one schema where keywords allow it.

    What cannot be merged (two patterns, two formats, two unions) stays behind in `allOf`, so
    the result always validates exactly what both do; the comparer reads it conservatively.
    """
    if a.schema is False or b.schema is False:
        return Node(False, a.loc)
    if a.schema is True or a.schema == {}:
        return Node(b.schema, b.loc if a.schema is True else a.loc, dict(b.origins))
    if b.schema is True or b.schema == {}:
        return a
    sa, sb = a.d, b.d
    out: dict[str, Any] = dict(sa)
    origins = {k: a.origins.get(k, a.loc) for k in sa}
    residual: list[Any] = list(sa.get("allOf", []))
    out.pop("allOf", None)

    def take(key: str, value: Any, source: Node = b) -> None:
        out[key] = value
        origins[key] = source.origins.get(key, source.loc)

    for key, value in sb.items():
        if key in ("properties", "patternProperties", "prefixItems") and key in out:
            continue
        if key == "allOf":
            residual.extend(value)
        elif key not in out:
            take(key, value)
        elif key in ANNOTATIONS or key == "default" or canon(out[key]) == canon(value):
            continue
        elif key == "type":
            ta, tb = _type_set(out[key]), _type_set(value)
            both = {t for t in ta if admits(tb, t)} | {t for t in tb if admits(ta, t)}
            out[key] = sorted(both) if len(both) != 1 else next(iter(both))
        elif key == "enum":
            out[key] = [v for v in out[key] if any(canon(v) == canon(w) for w in value)]
        elif key == "required":
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key in ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"):
            if isinstance(value, bool) or isinstance(out[key], bool):
                residual.append({key: value})
            else:
                out[key] = max(out[key], value)
        elif key in ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"):
            if isinstance(value, bool) or isinstance(out[key], bool):
                residual.append({key: value})
            else:
                out[key] = min(out[key], value)
        elif key == "uniqueItems":
            out[key] = bool(out[key] or value)
        elif key == "multipleOf":
            step = lcm_step(out[key], value)
            if step is None:
                residual.append({key: value})
            else:
                out[key] = step
        elif key == "items" or key == "additionalProperties":
            out[key] = _both(out[key], value)
        else:
            residual.append({key: value})
    _merge_named(out, origins, a, b, "properties")
    _merge_named(out, origins, a, b, "patternProperties")
    if "prefixItems" in sa and "prefixItems" in sb:
        pa, pb = sa["prefixItems"], sb["prefixItems"]
        rest_a, rest_b = sa.get("items", True), sb.get("items", True)
        length = max(len(pa), len(pb))
        out["prefixItems"] = [
            _both(pa[i] if i < len(pa) else rest_a, pb[i] if i < len(pb) else rest_b)
            for i in range(length)
        ]
    if residual:
        out["allOf"] = residual
    return Node(out, a.loc, origins)


def _merge_named(out: dict[str, Any], origins: dict[str, Loc], a: Node, b: Node, key: str) -> None:
    pa: dict[str, Any] = a.d.get(key, {}) if isinstance(a.d.get(key), dict) else {}
    pb: dict[str, Any] = b.d.get(key, {}) if isinstance(b.d.get(key), dict) else {}
    if not pa and not pb:
        return
    merged: dict[str, Any] = {}
    for name in [*pa, *(n for n in pb if n not in pa)]:
        if key == "properties":
            in_a = pa.get(name, _undeclared(a.d, name))
            in_b = pb.get(name, _undeclared(b.d, name))
        else:
            in_a, in_b = pa.get(name, True), pb.get(name, True)
        merged[name] = _both(in_a, in_b)
        source = a if name in pa else b
        origins[f"{key}/{name}"] = source.origins.get(key, source.loc)
    out[key] = merged


def _undeclared(schema: dict[str, Any], name: str) -> Any:
    """What `schema` says about a property it does not declare."""
    for pattern, sub in (schema.get("patternProperties") or {}).items():
        try:
            if re.search(pattern, name):
                return sub
        except re.error:
            continue
    return schema.get("additionalProperties", True)


def _type_set(declared: Any) -> frozenset[str]:
    return frozenset(declared if isinstance(declared, list) else [declared])


# -- unions -------------------------------------------------------------------------------------


def union_kind(node: Node) -> str | None:
    for key in ("oneOf", "anyOf"):
        if isinstance(node.d.get(key), list):
            return key
    return None


def branches(node: Node, defs: dict[str, Any], depth: int = 0) -> list[Node]:
    """The alternatives a resolved node allows: each oneOf/anyOf branch with its siblings."""
    kind = union_kind(node)
    if kind is None or depth > 8:
        return [node]
    base = Node({k: v for k, v in node.d.items() if k != kind}, node.loc, dict(node.origins))
    out: list[Node] = []
    for index, branch in enumerate(node.d[kind]):
        branch_node = resolve(Node(branch, node.loc.at(kind, index)), defs)
        merged = merge(branch_node, base, defs)
        merged = Node(merged.schema, branch_node.loc, merged.origins)
        out.extend(branches(resolve(merged, defs), defs, depth + 1))
    return out


def split_types(node: Node) -> list[Node]:
    """One node per JSON type of a `type` list (integer folded into number when both)."""
    declared = node.d.get("type")
    if not isinstance(declared, list) or len(declared) < 2:
        return [node]
    kinds = [t for t in declared if not (t == "integer" and "number" in declared)]
    out = []
    for kind in kinds:
        schema = dict(node.d)
        schema["type"] = kind
        if "enum" in schema:
            schema["enum"] = [v for v in schema["enum"] if admits(frozenset({kind}), json_type(v))]
        out.append(Node(schema, node.loc, node.origins))
    return out
