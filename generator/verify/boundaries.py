"""Boundary actions: the simplest valid action of each action kind, one field at a bound.

Random examples rarely land exactly on a bound (a `minimum` of -100000, a 64-character
string, one member of a 40-name enum), and those are the values servers most often get wrong,
so verify tries each of them first, as schemathesis and hypothesis-jsonschema do. For every
branch of the action schema (each variant of a union), every field (nested objects' fields
too) gets, one at a time: minimum and maximum (the nearest value inside an exclusive bound, a
multiple of `multipleOf`), zero, each enum member, the const, false and true, null,
minLength/maxLength strings (matching `pattern` and `format`), minItems/maxItems arrays,
empty strings and arrays, and each array's items (the first, or each `prefixItems` position).
Every action is checked against the committed action schema before it is sent; a bound that
cannot be built as a valid value becomes a note, never an invalid action.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from generator.verify.schemas import branches, resolve
from generator.verify.strategies import MISSING
from generator.verify.textvalues import string_of_length

Simplest = Callable[[Any], Any]
"""The simplest valid value of a schema (resolved against the action's `$defs`), or MISSING."""
MAX_ARRAY = 64
"""Arrays longer than this are not built for a minItems/maxItems boundary (a note says so)."""


@dataclass(frozen=True)
class Boundary:
    """One valid action: the simplest action of its kind with the field at `pointer` at `bound`."""

    pointer: str
    bound: str
    value: Any
    action: Any
    base: Any
    """The simplest action of this kind, which `action` changes at `pointer` only."""

    def describe(self, limit: int = 80) -> str:
        """`/label at its maxLength ("aaa...")`: the value cut at `limit` characters."""
        text = json.dumps(self.value, ensure_ascii=False)
        text = text if len(text) <= limit else text[: limit - 3] + "..."
        return f"{self.pointer} at its {self.bound} ({text})"


@dataclass
class BoundarySet:
    """Every boundary action of an action schema, in a stable order, and what could not be built."""

    boundaries: list[Boundary]
    notes: list[str]


def _number(schema: dict[str, Any], key: str) -> float | None:
    value = schema.get(key)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _types(schema: dict[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    if "properties" in schema or "required" in schema:
        return ["object"]
    return []


def numeric_bounds(schema: dict[str, Any], integer: bool) -> list[tuple[str, Any]]:
    """The lowest and highest values a numeric schema allows, named by the keyword they meet.

    An exclusive bound gives the nearest value inside it (+-1 for an integer, the next
    representable float for a number); with `multipleOf`, the multiple nearest inside.
    """
    out: list[tuple[str, Any]] = []
    for key, ex_key, up in (
        ("minimum", "exclusiveMinimum", True),
        ("maximum", "exclusiveMaximum", False),
    ):
        toward = math.ceil if up else math.floor
        candidates: list[tuple[str, Any]] = []
        inclusive, exclusive = _number(schema, key), _number(schema, ex_key)
        if inclusive is not None:
            candidates.append((key, toward(inclusive) if integer else inclusive))
        if exclusive is not None:
            inside: float
            if integer:
                inside = math.floor(exclusive) + 1 if up else math.ceil(exclusive) - 1
            else:
                inside = math.nextafter(exclusive, math.inf if up else -math.inf)
            candidates.append((ex_key, inside))
        if not candidates:
            continue
        name, value = (max if up else min)(candidates, key=lambda c: c[1])
        step = _number(schema, "multipleOf")
        if step is not None and step > 0:
            if isinstance(step, int) and isinstance(value, int):  # exact: no float rounding
                value = -(-value // step) * step if up else value // step * step
            else:
                value = toward(value / step) * step
            name = f"{name} (multipleOf {step:g})"
        out.append((name, int(value) if integer else value))
    return out


def _in_range(schema: dict[str, Any], value: float, integer: bool) -> bool:
    for name, bound in numeric_bounds(schema, integer):
        if name.startswith("min") or name.startswith("exclusiveMin"):
            if value < bound:
                return False
        elif value > bound:
            return False
    return True


def leaf_values(schema: dict[str, Any], notes: list[str], where: str) -> Iterator[tuple[str, Any]]:
    """The boundary values of one (resolved, non-union) schema, each named by its bound."""
    if "const" in schema:
        yield "const", schema["const"]
        return
    if isinstance(schema.get("enum"), list):
        for index, member in enumerate(schema["enum"]):
            yield f"enum member {index}", member
        return
    for kind in _types(schema):
        if kind == "null":
            yield "null", None
        elif kind == "boolean":
            yield "false", False
            yield "true", True
        elif kind in ("integer", "number"):
            yield from numeric_bounds(schema, kind == "integer")
            if _in_range(schema, 0, kind == "integer"):
                yield "zero", 0
        elif kind == "string":
            yield from _string_values(schema, notes, where)


def _string_values(
    schema: dict[str, Any], notes: list[str], where: str
) -> Iterator[tuple[str, Any]]:
    low = schema.get("minLength") if isinstance(schema.get("minLength"), int) else None
    high = schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None
    wanted = [("empty string", 0)] if (low or 0) == 0 else []
    wanted += [("minLength", low)] if low is not None else []
    wanted += [("maxLength", high)] if high is not None else []
    for bound, length in wanted:
        text, why = string_of_length(schema, length)
        if text is None and bound != "empty string":
            notes.append(f"boundary {where} {bound} ({length} characters) not tried: {why}")
        elif text is not None:
            yield bound, text


def _array_values(
    schema: dict[str, Any], simplest: Simplest, notes: list[str], where: str
) -> Iterator[tuple[str, Any]]:
    low = schema.get("minItems") if isinstance(schema.get("minItems"), int) else None
    high = schema.get("maxItems") if isinstance(schema.get("maxItems"), int) else None
    wanted = [("empty array", 0)] if not low else []
    wanted += [("minItems", low)] if low is not None else []
    wanted += [("maxItems", high)] if high is not None else []
    if isinstance(schema.get("prefixItems"), list):
        return
    item = simplest(schema.get("items", True))
    for bound, length in wanted:
        if length > MAX_ARRAY or (length and item is MISSING):
            notes.append(
                f"boundary {where} {bound} ({length} items) not tried: no such array built"
            )
        elif length > 1 and schema.get("uniqueItems") is True:
            notes.append(f"boundary {where} {bound} ({length} items) not tried: items must differ")
        else:
            yield bound, [copy.deepcopy(item) for _ in range(length)]


def _members(schema: Any, defs: dict[str, Any]) -> list[dict[str, Any]]:
    """The alternatives a field's schema allows: its union's members, or itself."""
    schema = resolve(schema, defs)
    if not isinstance(schema, dict):
        return []
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list):
            rest = {k: v for k, v in schema.items() if k not in (key, "discriminator")}
            return [m for b in schema[key] for m in _members({**rest, **resolve(b, defs)}, defs)]
    return [schema]


Variant = tuple[str, str, Any, Any]
"""(pointer, bound, the leaf's value, the whole value with that leaf set)."""


def _variants(schema: dict[str, Any], current: Any, where: str, ctx: _Context) -> Iterator[Variant]:
    """Every boundary of a value of the (non-union) `schema` now `current`: its own, then its
    items' (the first, or each of `prefixItems`) and its fields', depth first."""
    for bound, leaf in leaf_values(schema, ctx.notes, where):
        yield where, bound, leaf, leaf
    kinds = _types(schema)
    if ctx.depth >= ctx.max_depth or not ({"array", "object"} & set(kinds)):
        return
    ctx.depth += 1
    if "array" in kinds:
        for bound, leaf in _array_values(schema, ctx.simplest, ctx.notes, where):
            yield where, bound, leaf, leaf
        yield from _item_variants(schema, current, where, ctx)
    if "object" in kinds:
        yield from _field_variants(schema, current, where, ctx)
    ctx.depth -= 1


def _valid_or_simplest(schema: dict[str, Any], current: Any, kind: type, ctx: _Context) -> Any:
    if isinstance(current, kind) and ctx.fits(schema, current):
        return current
    built = ctx.simplest(schema)
    return built if isinstance(built, kind) else MISSING


def _field_variants(
    schema: dict[str, Any], current: Any, where: str, ctx: _Context
) -> Iterator[Variant]:
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return
    value = _valid_or_simplest(schema, current, dict, ctx)
    if value is MISSING:
        ctx.notes.append(f"fields under {where or 'the action'} not tried: no valid object built")
        return
    for name in sorted(props):
        inner = f"{where}/{name.replace('~', '~0').replace('/', '~1')}"
        for member in _members(props[name], ctx.defs):
            for pointer, bound, leaf, child in _variants(member, value.get(name), inner, ctx):
                yield pointer, bound, leaf, {**value, name: child}


def _item_variants(
    schema: dict[str, Any], current: Any, where: str, ctx: _Context
) -> Iterator[Variant]:
    prefix: list[Any] = schema.get("prefixItems") or []
    positional = isinstance(prefix, list) and bool(prefix)
    if not positional and schema.get("items", True) in (True, {}):
        return
    value = current if isinstance(current, list) and current else None
    if value is None or not ctx.fits(schema, value):
        low: int = schema["minItems"] if isinstance(schema.get("minItems"), int) else 0
        item = ctx.simplest(schema.get("items", True))
        value = [copy.deepcopy(item) for _ in range(max(low, 1))] if not positional else None
        if value is None or item is MISSING or not ctx.fits(schema, value):
            value = _valid_or_simplest(schema, None, list, ctx)
    if not isinstance(value, list) or not value:
        ctx.notes.append(f"items of {where} not tried: no valid non-empty array built")
        return
    positions = range(min(len(prefix), len(value))) if positional else range(1)
    for index in positions:
        item_schema = prefix[index] if positional else schema.get("items", True)
        for member in _members(item_schema, ctx.defs):
            for pointer, bound, leaf, child in _variants(
                member, value[index], f"{where}/{index}", ctx
            ):
                yield pointer, bound, leaf, [*value[:index], child, *value[index + 1 :]]


@dataclass
class _Context:
    defs: dict[str, Any]
    simplest: Simplest
    fits: Callable[[dict[str, Any], Any], bool]
    notes: list[str]
    depth: int = 0
    max_depth: int = 4


def boundary_actions(
    action_schema: dict[str, Any],
    simplest: Simplest,
    is_valid: Callable[[Any], bool],
    fits: Callable[[dict[str, Any], Any], bool],
) -> BoundarySet:
    """Every boundary action of `action_schema` (a document with `$defs`), deduplicated.

    `simplest(schema)` gives a base value, `is_valid(action)` holds an action to the committed
    schema, `fits(schema, value)` tells whether a value matches a sub-schema.
    """
    defs = action_schema.get("$defs", {})
    notes: list[str] = []
    ctx = _Context(defs, simplest, fits, notes)
    found: list[Boundary] = []
    seen: set[str] = set()
    for index, branch in enumerate(branches(action_schema, defs)):
        base = simplest(branch)
        if not isinstance(base, dict):
            notes.append(f"boundaries of action kind {index} not tried: no valid action built")
            continue
        for pointer, bound, leaf, action in _field_variants(branch, base, "", ctx):
            key = json.dumps(action, sort_keys=True, default=repr)
            if key in seen:
                continue
            seen.add(key)
            if is_valid(action):
                found.append(Boundary(pointer, bound, leaf, action, base))
            else:
                notes.append(
                    f"boundary {pointer} {bound} not tried: the action it makes is not valid"
                )
    return BoundarySet(found, notes)
