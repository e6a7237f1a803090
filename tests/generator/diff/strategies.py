"""Hypothesis strategies for JSON values of a schema, for the subset the tests use.

Objects get their declared properties only (plus map entries when the object is a map):
the diff's reading of open objects is that writers send extension fields only under names
no schema declares, and such fields are never generated here. Values are filtered through
`jsonschema`, so an imprecise branch below can cost examples but never yield a wrong one.
"""

from __future__ import annotations

import math
from typing import Any

from envgen_runtime.schemadiff.examples import FORMAT_EXAMPLES
from envgen_runtime.schemadiff.numeric import lower_bound, upper_bound
from envgen_runtime.schemadiff.schemaops import canon, types_of
from hypothesis import strategies as st

Strategy = st.SearchStrategy[Any]
SCALARS: Strategy = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4))


def values_of(schema: Any, doc: Any, depth: int = 0) -> Strategy:
    if schema is True or schema == {}:
        return SCALARS
    if schema is False or not isinstance(schema, dict):
        return st.nothing()
    if "$ref" in schema:
        return values_of(_resolve(doc, schema["$ref"]), doc, depth)
    if "allOf" in schema:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for branch in schema["allOf"]:
            branch = _resolve(doc, branch["$ref"]) if "$ref" in branch else branch
            required = [*merged.get("required", []), *branch.get("required", [])]
            merged = {**branch, **merged, "required": required}
            merged["properties"] = {**branch.get("properties", {}), **merged.get("properties", {})}
        return values_of(merged, doc, depth)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for key in ("oneOf", "anyOf"):
        if key in schema:
            base = {k: v for k, v in schema.items() if k != key}
            options = []
            for branch in schema[key]:
                branch = _resolve(doc, branch["$ref"]) if "$ref" in branch else branch
                options.append(values_of({**base, **branch}, doc, depth))
            return st.one_of(options)
    kinds = sorted(types_of(schema))
    if "number" in kinds and "integer" in kinds:
        kinds.remove("integer") if schema.get("type") not in ("integer", ["integer"]) else None
    return st.one_of([_typed(kind, schema, doc, depth) for kind in kinds])


def _resolve(doc: Any, ref: str) -> Any:
    node = doc
    for part in ref.removeprefix("#").split("/")[1:]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _typed(kind: str, s: dict[str, Any], doc: Any, depth: int) -> Strategy:
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind in ("integer", "number"):
        return _numbers(kind, s)
    if kind == "string":
        if isinstance(s.get("pattern"), str):
            return st.from_regex(s["pattern"])
        if s.get("format") in FORMAT_EXAMPLES:
            return st.just(FORMAT_EXAMPLES[s["format"]])
        return st.text(
            alphabet="abcxyz09-_ ", min_size=s.get("minLength", 0), max_size=s.get("maxLength", 8)
        )
    if kind == "array":
        return _arrays(s, doc, depth)
    return _objects(s, doc, depth)


def _numbers(kind: str, s: dict[str, Any]) -> Strategy:
    low, high = lower_bound(s), upper_bound(s)
    lo = None if low is None else low[0]
    hi = None if high is None else high[0]
    step = s.get("multipleOf")
    if isinstance(step, int | float) and step > 0:
        k_lo = None if lo is None else math.ceil(lo / step)
        k_hi = None if hi is None else math.floor(hi / step)
        return st.integers(k_lo, k_hi).map(lambda k: k * step)
    ints = st.integers(
        None if lo is None else math.ceil(lo), None if hi is None else math.floor(hi)
    )
    if kind == "integer":
        return ints
    floats = st.floats(
        lo,
        hi,
        allow_nan=False,
        allow_infinity=False,
        exclude_min=bool(low and low[1]),
        exclude_max=bool(high and high[1]),
    )
    return st.one_of(ints, floats)


def _arrays(s: dict[str, Any], doc: Any, depth: int) -> Strategy:
    prefix = s.get("prefixItems", [])
    items = s.get("items", True)
    low, high = s.get("minItems", 0), s.get("maxItems", 3 if depth < 2 else 1)
    rest_max = max(0, min(high, 3) - len(prefix)) if items is not False else 0
    head = st.tuples(*[values_of(p, doc, depth + 1) for p in prefix]).map(list)
    tail = st.lists(
        values_of(items, doc, depth + 1),
        min_size=max(0, low - len(prefix)),
        max_size=max(rest_max, max(0, low - len(prefix))),
        unique_by=canon if s.get("uniqueItems") else None,
    )
    return st.tuples(head, tail).map(lambda parts: parts[0] + parts[1])


def _objects(s: dict[str, Any], doc: Any, depth: int) -> Strategy:
    props = s.get("properties", {})
    required = [n for n in s.get("required", []) if n in props]
    optional = {n: values_of(v, doc, depth + 1) for n, v in props.items() if n not in required}
    fixed = st.fixed_dictionaries(
        {n: values_of(props[n], doc, depth + 1) for n in required}, optional=optional
    )
    extra = s.get("additionalProperties", True)
    if props or extra is False or depth > 2:
        return fixed
    entries = st.dictionaries(
        st.sampled_from(["m1", "m2", "m3"]), values_of(extra, doc, depth + 1), max_size=2
    )
    return entries
