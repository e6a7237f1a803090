"""The bundle's ``$defs`` rewritten before the model generator reads them.

Each rewrite returns new defs (the bundle is shared by both model modules and the README):
tagged-union members get their tag as a default, integral float defaults become ints, and
the objects a client reads stop rejecting unknown fields.
"""

from __future__ import annotations

import copy
from typing import Any

_CLOSING = ("additionalProperties", "unevaluatedProperties")
DATA_KEYWORDS = ("enum", "const", "default", "examples")
"""Keywords whose values are data, never schemas: rewrites do not walk into them."""


def open_objects(defs: dict[str, Any], roots: list[str]) -> dict[str, Any]:
    """Defs reachable from ``roots`` stop rejecting unknown fields (``additionalProperties:
    false`` and ``unevaluatedProperties: false`` dropped); the others are kept as they are."""
    defs = copy.deepcopy(defs)
    for name in _reachable(defs, roots):
        defs[name] = _strip_closing(defs[name])
    return defs


def default_union_tags(defs: dict[str, Any]) -> dict[str, Any]:
    """Each member of a tagged union gets its fixed tag as the tag field's default.

    `Play(card=3)` then needs no `kind="play"`: the tag is still a `Literal` (a wrong value
    is rejected) and, not being a `None` default, is still sent on the wire. The schema
    keeps the tag required; only the model's constructor stops asking for it.
    """
    defs = copy.deepcopy(defs)
    for node in walk(defs):
        tag = (
            node.get("discriminator", {}).get("propertyName")
            if isinstance(node.get("discriminator"), dict)
            else None
        )
        if not isinstance(tag, str):
            continue
        for key in ("oneOf", "anyOf"):
            for member in node.get(key, []) if isinstance(node.get(key), list) else []:
                _default_tag(_deref(defs, member), tag)
    return defs


def integral_defaults(defs: dict[str, Any]) -> dict[str, Any]:
    """An integer field's default written `2.0` (the same JSON integer) becomes `2`.

    JSON Schema counts 2.0 as an integer; Python's `x: int = 2.0` fails `mypy --strict`.
    """
    defs = copy.deepcopy(defs)
    for node in walk(defs):
        declared = node.get("type")
        types = declared if isinstance(declared, list) else [declared]
        value = node.get("default")
        if not (isinstance(value, float) and value.is_integer()):
            continue
        if "integer" in types and "number" not in types:
            node["default"] = int(value)
    return defs


def walk(node: Any) -> list[dict[str, Any]]:
    """Every schema object under `node` (data keywords skipped), parents first."""
    found: list[dict[str, Any]] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            found.append(current)
            stack.extend(v for k, v in current.items() if k not in DATA_KEYWORDS)
        elif isinstance(current, list):
            stack.extend(current)
    return found


def _deref(defs: dict[str, Any], member: Any) -> Any:
    """The schema a union member stands for: a local `$ref` (chains too) or the member."""
    seen: set[str] = set()
    while isinstance(member, dict) and isinstance(member.get("$ref"), str):
        ref = member["$ref"]
        if not ref.startswith("#/$defs/") or ref in seen:
            break
        seen.add(ref)
        member = defs.get(ref.removeprefix("#/$defs/").replace("~1", "/").replace("~0", "~"))
    return member


def _default_tag(member: Any, tag: str) -> None:
    if not isinstance(member, dict) or not isinstance(member.get("properties"), dict):
        return
    prop = member["properties"].get(tag)
    if not isinstance(prop, dict) or ("default" in prop and prop["default"] != _fixed(prop)):
        return
    value = _fixed(prop)
    if not isinstance(value, str | int | bool):
        return
    prop["default"] = value
    required = member.get("required")
    if isinstance(required, list) and tag in required:
        member["required"] = [name for name in required if name != tag]


def _fixed(prop: dict[str, Any]) -> Any:
    """The one value a tag property allows (`const`, or a one-value `enum`), else None."""
    if "const" in prop:
        return prop["const"]
    enum = prop.get("enum")
    if isinstance(enum, list) and len(enum) == 1:
        return enum[0]
    return None


def _reachable(defs: dict[str, Any], roots: list[str]) -> list[str]:
    seen: list[str] = []
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name not in defs:
            continue
        seen.append(name)
        stack.extend(_refs(defs[name]))
    return sorted(seen)


def _refs(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                found.append(value.removeprefix("#/$defs/").replace("~1", "/").replace("~0", "~"))
            elif key not in DATA_KEYWORDS:
                found.extend(_refs(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_refs(item))
    return found


def _strip_closing(node: Any) -> Any:
    if isinstance(node, list):
        return [_strip_closing(v) for v in node]
    if not isinstance(node, dict):
        return node
    return {
        key: value if key in DATA_KEYWORDS else _strip_closing(value)
        for key, value in node.items()
        if not (key in _CLOSING and value is False)
    }
