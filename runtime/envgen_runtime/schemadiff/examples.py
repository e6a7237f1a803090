"""Example JSON values for a schema: the raw material of witnesses.

`values` yields distinct values that `jsonschema` accepts for a subschema of a bundle (every
candidate is checked before it is returned); `object_with` and `array_with` build a value
around a given property or item, which is how a witness found deep inside a schema is
wrapped into a complete action, observation or state.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from .numeric import integer_lower, integer_upper, lower_bound, upper_bound
from .regexgen import samples
from .schemaops import (
    Loc,
    Node,
    as_dict,
    branches,
    canon,
    resolve,
    types_of,
    union_kind,
)
from .validation import Validation

MISSING: Any = object()
MAX_DEPTH = 7
_TYPE_ORDER = ("object", "array", "string", "integer", "number", "boolean", "null")
FORMAT_EXAMPLES = {
    "date-time": "2024-01-02T03:04:05Z",
    "date": "2024-01-02",
    "time": "03:04:05Z",
    "email": "someone@example.com",
    "idn-email": "someone@example.com",
    "uri": "https://example.com/x",
    "uri-reference": "x",
    "iri": "https://example.com/x",
    "uuid": "12345678-1234-4234-8234-123456789abc",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "regex": "a+",
    "duration": "P1D",
    "json-pointer": "/a",
    "relative-json-pointer": "0",
}
# Strings that fail each format, for witnesses of a format the reader now checks.
FORMAT_MISSES = ["not a valid value", "", "x", "2024-13-45", "::::", "a b"]


class Examples:
    """Generates values valid for subschemas of one bundle."""

    def __init__(self, validation: Validation) -> None:
        self.validation = validation
        self.defs = validation.defs

    def valid(self, schema: Any, value: Any) -> bool:
        return self.validation.valid(schema, value)

    def values(self, schema: Any, limit: int = 6, depth: int = 0) -> Iterator[Any]:
        """Up to `limit` distinct values that `schema` accepts."""
        seen: set[str] = set()
        tried = found = 0
        for candidate in self._raw(schema, depth):
            tried += 1
            if tried > 60:
                return
            key = canon(candidate)
            if key in seen:
                continue
            seen.add(key)
            if self.valid(schema, candidate):
                yield candidate
                found += 1
                if found >= limit:
                    return

    def example(self, schema: Any, depth: int = 0) -> Any:
        return next(iter(self.values(schema, 1, depth)), MISSING)

    def first_valid(self, schema: Any, candidates: list[Any]) -> Any:
        for candidate in candidates:
            if self.valid(schema, candidate):
                return candidate
        return MISSING

    # -- building around a value ---------------------------------------------------------------

    def object_with(
        self,
        schema: Any,
        force: dict[str, Any] | None = None,
        omit: frozenset[str] = frozenset(),
        fill: bool = False,
    ) -> Any:
        """An object `schema` accepts holding `force`, lacking `omit`; MISSING if none found."""
        force = force or {}
        if any(value is MISSING for value in force.values()):
            return MISSING
        node = resolve(Node(schema, Loc("")), self.defs)
        for all_props in (fill, not fill):
            built = self._object(node.d, 0, force, omit, all_props)
            if built is not MISSING and self.valid(schema, built):
                return built
        for variant in branches(node, self.defs):
            built = self._object(variant.d, 0, force, omit, fill)
            if built is not MISSING and self.valid(schema, built):
                return built
        return MISSING

    def array_with(self, schema: Any, index: int, value: Any) -> Any:
        """An array `schema` accepts with `value` at `index`; MISSING if none found."""
        if value is MISSING:
            return MISSING
        node = resolve(Node(schema, Loc("")), self.defs)
        s = node.d
        length = max(int(s.get("minItems", 0)), index + 1)
        out: list[Any] = []
        used = {canon(value)}
        for position in range(length):
            if position == index:
                out.append(value)
                continue
            item = self._distinct(
                self._item_schema(s, position), used if s.get("uniqueItems") else set()
            )
            if item is MISSING:
                return MISSING
            used.add(canon(item))
            out.append(item)
        return out if self.valid(schema, out) else MISSING

    # -- candidates ----------------------------------------------------------------------------

    def _raw(self, schema: Any, depth: int) -> Iterator[Any]:
        node = resolve(Node(schema, Loc("")), self.defs)
        s = node.schema
        if s is False:
            return
        if s is True or s == {}:
            yield from (0, "a", None, True, {}, [])
            return
        assert isinstance(s, dict)
        if "const" in s:
            yield s["const"]
            return
        if isinstance(s.get("enum"), list):
            yield from s["enum"]
            return
        if union_kind(node):
            for branch in branches(node, self.defs):
                yield from self.values(branch.schema, 2, depth + 1)
            return
        declared = s.get("type")
        kinds = types_of(s)
        if isinstance(declared, list):
            order = list(declared)
        elif isinstance(declared, str):
            order = [declared]
        else:
            order = [
                k for k in _TYPE_ORDER if k in kinds and not (k == "integer" and "number" in kinds)
            ]
        for kind in order:
            yield from self._typed(kind, s, depth)

    def _typed(self, kind: str, s: dict[str, Any], depth: int) -> Iterator[Any]:
        if kind == "null":
            yield None
        elif kind == "boolean":
            yield from (False, True)
        elif kind == "integer":
            yield from self._numbers(s, integer=True)
        elif kind == "number":
            yield from self._numbers(s, integer=False)
        elif kind == "string":
            yield from self._strings(s)
        elif kind == "array":
            if depth > MAX_DEPTH:
                yield []
                return
            for fill in (False, True):
                built = self._array(s, depth, fill)
                if built is not MISSING:
                    yield built
        elif kind == "object":
            if depth > MAX_DEPTH:
                yield {}
                return
            built = MISSING
            for fill in (False, True):
                built = self._object(s, depth, {}, frozenset(), fill)
                if built is not MISSING:
                    yield built
            if built is MISSING:
                return
            # Variants with other values per property, for witnesses that need them.
            for name, sub in list(as_dict(s.get("properties")).items())[:8]:
                for value in list(self.values(sub, 4, depth + 1))[1:]:
                    yield {**built, name: value}

    def _numbers(self, s: dict[str, Any], integer: bool) -> Iterator[Any]:
        low, high = lower_bound(s), upper_bound(s)
        step = s.get("multipleOf")
        if integer:
            lo, hi = integer_lower(low), integer_upper(high)
        else:
            lo = None if low is None else low[0] + (0.5 if low[1] else 0.0)
            hi = None if high is None else high[0] - (0.5 if high[1] else 0.0)
        points: list[float] = [0, 1, -1, 2, 3]
        if lo is not None:
            points = [lo + k for k in range(5)] + points
        if hi is not None:
            points += [hi - k for k in range(5)]
        if lo is not None and hi is not None:
            points.append((lo + hi) / 2)
        if not integer:
            points = [q for p in points for q in (p, p + 0.5)] + [0.25]
        if isinstance(step, int | float) and not isinstance(step, bool) and step > 0:
            snapped = []
            for point in points:
                k = math.ceil(point / step)
                snapped += [k * step, (k + 1) * step]
            points = snapped
        for point in points:
            if not integer:
                yield int(point) if float(point).is_integer() else point
            elif float(point).is_integer():
                yield int(point)

    def _strings(self, s: dict[str, Any]) -> Iterator[str]:
        low = int(s.get("minLength", 0))
        high = s.get("maxLength")
        fmt = s.get("format")
        if isinstance(fmt, str) and fmt in FORMAT_EXAMPLES:
            yield FORMAT_EXAMPLES[fmt]
        pattern = s.get("pattern")
        if isinstance(pattern, str):
            yield from samples(pattern, 8)
        size = max(low, 1) if high is None or high >= 1 else 0
        yield "a" * size
        yield "b" * max(low, 2 if high is None or high >= 2 else size)
        yield "x" * low
        yield "example"

    def _item_schema(self, s: dict[str, Any], position: int) -> Any:
        prefix = s.get("prefixItems", [])
        if isinstance(prefix, list) and position < len(prefix):
            return prefix[position]
        return s.get("items", True)

    def _distinct(self, schema: Any, used: set[str]) -> Any:
        for value in self.values(schema, 4 + len(used)):
            if canon(value) not in used:
                return value
        return MISSING

    def _array(self, s: dict[str, Any], depth: int, fill: bool) -> Any:
        length = int(s.get("minItems", 0))
        prefix = s.get("prefixItems", [])
        if fill:
            length = max(length, 1, len(prefix) if isinstance(prefix, list) else 0)
        maximum = s.get("maxItems")
        if isinstance(maximum, int) and length > maximum:
            return MISSING
        used: set[str] = set()
        out = []
        for position in range(length):
            item_schema = self._item_schema(s, position)
            pool = used if s.get("uniqueItems") else set()
            item = MISSING
            for value in self.values(item_schema, 3 + len(pool), depth + 1):
                if canon(value) not in pool:
                    item = value
                    break
            if item is MISSING:
                return MISSING
            used.add(canon(item))
            out.append(item)
        return out

    def _object(
        self,
        s: dict[str, Any],
        depth: int,
        force: dict[str, Any],
        omit: frozenset[str],
        fill: bool,
    ) -> Any:
        props = as_dict(s.get("properties"))
        required = [n for n in s.get("required", []) if isinstance(n, str)]
        wanted = list(dict.fromkeys([*required, *(props if fill else [])]))
        out: dict[str, Any] = {}
        for name in wanted:
            if name in omit or name in force:
                continue
            sub = props.get(name, s.get("additionalProperties", True))
            value = self.example(sub, depth + 1)
            if value is MISSING:
                if name in required:
                    return MISSING
                continue
            out[name] = value
        out.update(force)
        minimum = s.get("minProperties", 0)
        extra_schema = s.get("additionalProperties", True)
        index = 0
        while isinstance(minimum, int) and len(out) < minimum and index < minimum + 4:
            name = f"extra{index}"
            index += 1
            if name in out or name in omit:
                continue
            value = self.example(extra_schema, depth + 1)
            if value is MISSING:
                return MISSING
            out[name] = value
        return out
