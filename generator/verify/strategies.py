"""hypothesis strategies for values that a JSON Schema accepts (the subset envgen generates).

Covers what envgen's schemas use: `$ref` into `$defs` (recursion bounded), `const`, `enum`,
`oneOf`/`anyOf`, `allOf` (first member, then filtered), type lists, numeric bounds (also
exclusive) and `multipleOf`, string lengths and `pattern`, arrays (`items`, `prefixItems`,
`minItems`/`maxItems`, `uniqueItems`), objects (`properties`, `required`). Every value is
finally checked by jsonschema, so a keyword handled loosely here costs draws, never a wrong
value. (hypothesis-jsonschema would be the general tool, but its latest release fails with
current hypothesis: `'many' object has no attribute 'more'`.)
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, find, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException, NoSuchExample

from generator.verify.schemas import resolve, validator_for
from generator.verify.textvalues import FORMATS, ecma_pattern, string_of_length

MISSING: Any = object()
"""What `simplest` gives for a schema no value can be drawn from."""
MAX_DEPTH = 4
MAX_ITEMS = 4
MAX_TEXT = 12
_JSON_SCALARS = st.none() | st.booleans() | st.integers(-100, 100) | st.text(max_size=MAX_TEXT)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid against `schema` (a document whose `$ref`s point into its `$defs`)."""
    validator = validator_for(schema)
    defs = schema.get("$defs", {})
    return _strategy(schema, defs, 0).filter(validator.is_valid)


def simplest(schema: Any, defs: dict[str, Any]) -> Any:
    """The minimal valid value of `schema` hypothesis finds (derandomized), or MISSING."""
    try:
        return find(
            from_schema({**schema, "$defs": defs} if isinstance(schema, dict) else schema),
            lambda _: True,
            settings=settings(
                database=None,
                phases=(Phase.generate, Phase.shrink),
                suppress_health_check=list(HealthCheck),
                verbosity=Verbosity.quiet,
                derandomize=True,
            ),
        )
    except (NoSuchExample, HypothesisException):
        return MISSING


def _strategy(schema: Any, defs: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
    if schema is True or schema == {}:
        return _JSON_SCALARS
    if schema is False:
        return st.nothing()
    schema = resolve(schema, defs)
    if not isinstance(schema, dict):
        return st.nothing()
    if "const" in schema:
        return st.just(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return st.sampled_from(schema["enum"])
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            rest = {k: v for k, v in schema.items() if k not in (key, "discriminator")}
            branches = [
                _strategy({**rest, **resolve(b, defs)}, defs, depth + 1) for b in schema[key]
            ]
            return st.one_of(branches)
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        return _strategy({**rest, **resolve(schema["allOf"][0], defs)}, defs, depth + 1)
    types = schema.get("type")
    if isinstance(types, list):
        return st.one_of([_typed({**schema, "type": t}, t, defs, depth) for t in types])
    if isinstance(types, str):
        return _typed(schema, types, defs, depth)
    if "properties" in schema or "required" in schema:
        return _typed(schema, "object", defs, depth)
    if "items" in schema or "prefixItems" in schema:
        return _typed(schema, "array", defs, depth)
    return _JSON_SCALARS


def _typed(
    schema: dict[str, Any], kind: str, defs: dict[str, Any], depth: int
) -> st.SearchStrategy[Any]:
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return _integers(schema)
    if kind == "number":
        return _integers(schema) | _floats(schema)
    if kind == "string":
        return _strings(schema)
    if kind == "array":
        return _arrays(schema, defs, depth)
    if kind == "object":
        return _objects(schema, defs, depth)
    return st.nothing()


def _number(schema: dict[str, Any], key: str) -> float | None:
    value = schema.get(key)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _integers(schema: dict[str, Any]) -> st.SearchStrategy[int]:
    lows = [math.ceil(v) for v in [_number(schema, "minimum")] if v is not None]
    lows += [math.floor(v) + 1 for v in [_number(schema, "exclusiveMinimum")] if v is not None]
    highs = [math.floor(v) for v in [_number(schema, "maximum")] if v is not None]
    highs += [math.ceil(v) - 1 for v in [_number(schema, "exclusiveMaximum")] if v is not None]
    lo, hi = (max(lows) if lows else None), (min(highs) if highs else None)
    step = schema.get("multipleOf")
    if isinstance(step, int) and not isinstance(step, bool) and step > 0:
        first = -(-lo // step) if lo is not None else -1000  # integer division: exact
        last = hi // step if hi is not None else 1000
        return st.integers(first, last).map(lambda k: k * step) if first <= last else st.nothing()
    if lo is not None and hi is not None and lo > hi:
        return st.nothing()
    return st.integers(min_value=lo, max_value=hi)


def _floats(schema: dict[str, Any]) -> st.SearchStrategy[float]:
    low, high = _number(schema, "minimum"), _number(schema, "maximum")
    ex_low, ex_high = _number(schema, "exclusiveMinimum"), _number(schema, "exclusiveMaximum")
    exclude_low = ex_low is not None and (low is None or ex_low >= low)
    exclude_high = ex_high is not None and (high is None or ex_high <= high)
    return st.floats(
        min_value=ex_low if exclude_low else low,
        max_value=ex_high if exclude_high else high,
        exclude_min=exclude_low,
        exclude_max=exclude_high,
        allow_nan=False,
        allow_infinity=False,
    )


def _strings(schema: dict[str, Any]) -> st.SearchStrategy[str]:
    low = schema.get("minLength", 0) if isinstance(schema.get("minLength"), int) else 0
    high = schema.get("maxLength") if isinstance(schema.get("maxLength"), int) else None
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        return st.from_regex(ecma_pattern(pattern)).filter(
            lambda s: len(s) >= low and (high is None or len(s) <= high)
        )
    top = high if high is not None else max(low, MAX_TEXT)
    if schema.get("format") in FORMATS:  # random text is almost never an email or a date
        built = st.integers(low, max(low, top)).map(lambda n: string_of_length(schema, n)[0])
        return built.filter(lambda s: s is not None).map(str)
    return st.text(st.characters(codec="utf-8"), min_size=low, max_size=top)


def _arrays(schema: dict[str, Any], defs: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
    low = schema.get("minItems", 0) if isinstance(schema.get("minItems"), int) else 0
    high = schema.get("maxItems") if isinstance(schema.get("maxItems"), int) else None
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and prefix:  # a tuple: exactly its positions
        return st.tuples(*(_strategy(p, defs, depth + 1) for p in prefix)).map(list)
    top = high if high is not None else max(low, MAX_ITEMS if depth < MAX_DEPTH else low)
    items = _strategy(schema.get("items", True), defs, depth + 1)
    unique = schema.get("uniqueItems") is True
    return st.lists(
        items,
        min_size=low,
        max_size=max(low, top),
        unique_by=(lambda v: json.dumps(v, sort_keys=True)) if unique else None,
    )


def _objects(schema: dict[str, Any], defs: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
    props: dict[str, Any] = schema.get("properties") or {}
    required = [n for n in schema.get("required", []) if isinstance(n, str)]
    fixed = {n: _strategy(props.get(n, True), defs, depth + 1) for n in required}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    if depth < MAX_DEPTH:  # deeper, leave optional fields out so recursion ends
        optional = {n: _strategy(p, defs, depth + 1) for n, p in props.items() if n not in fixed}
    return st.fixed_dictionaries(fixed, optional=optional)
