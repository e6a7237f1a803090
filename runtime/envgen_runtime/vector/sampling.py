"""Random JSON values for a JSON Schema, drawn from a numpy generator: what ``sample()`` needs.

``ModelSpace.sample`` draws a value here and validates it through the model; a value the
model rejects is drawn again (``ModelSpace`` gives up after a few tries and says why). The
sampler reads the keywords pydantic writes for generated models: ``$ref`` into ``$defs``,
``const``, ``enum``, ``anyOf``/``oneOf`` (one branch, chosen uniformly), ``allOf`` of one
schema, ``type`` (a list of types too), numeric bounds and ``multipleOf``, string lengths,
``pattern`` and ``format`` (strings from the schema comparer's generators), array lengths,
``prefixItems`` and ``items``, and object ``properties`` (every required one, each optional
one with even odds, left out when drawn as null). Unbounded numbers fall in
``[-UNBOUNDED, UNBOUNDED]``, unbounded arrays and strings get up to ``SPAN`` more items than
their minimum.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["SPAN", "UNBOUNDED", "sample_json"]

UNBOUNDED = 100
SPAN = 3
_MAX_DEPTH = 6  # below it, objects get only required properties and arrays their minimum
_ALPHABET = string.ascii_letters + string.digits + " "


def sample_json(schema: Mapping[str, Any], rng: np.random.Generator) -> Any:
    """A random JSON value for ``schema`` (a whole document: its ``$defs`` are resolved)."""
    return _Sampler(schema.get("$defs", {}), rng).value(schema, 0)


class _Sampler:
    def __init__(self, defs: Mapping[str, Any], rng: np.random.Generator) -> None:
        self.defs = defs
        self.rng = rng

    def pick(self, options: list[Any]) -> Any:
        return options[int(self.rng.integers(len(options)))]

    def value(self, schema: Any, depth: int) -> Any:
        if schema is True or not isinstance(schema, Mapping):
            return None if schema is not False else self._refuse("false")
        if "$ref" in schema:
            ref = str(schema["$ref"])
            if not ref.startswith("#/$defs/"):
                self._refuse(f"$ref {ref}")
            return self.value(self.defs[ref.removeprefix("#/$defs/")], depth)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.pick(list(schema["enum"]))
        for key in ("oneOf", "anyOf"):
            if key in schema:
                return self.value(self.pick(list(schema[key])), depth)
        if "allOf" in schema:
            if len(schema["allOf"]) != 1:
                self._refuse("allOf of several schemas")
            return self.value(schema["allOf"][0], depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = self.pick(kind)
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        draw = getattr(self, f"_{kind}", None)
        return draw(schema, depth) if draw is not None else self._refuse(f"type {kind!r}")

    @staticmethod
    def _refuse(what: str) -> Any:
        raise ValueError(f"cannot sample a schema with {what}")

    def _null(self, schema: Mapping[str, Any], depth: int) -> None:
        return None

    def _boolean(self, schema: Mapping[str, Any], depth: int) -> bool:
        return bool(self.rng.integers(2))

    def _integer(self, schema: Mapping[str, Any], depth: int) -> int:
        low = high = None
        if "minimum" in schema:
            low = math.ceil(schema["minimum"])
        if "exclusiveMinimum" in schema:
            low = math.floor(schema["exclusiveMinimum"]) + 1
        if "maximum" in schema:
            high = math.floor(schema["maximum"])
        if "exclusiveMaximum" in schema:
            high = math.ceil(schema["exclusiveMaximum"]) - 1
        low, high = _span(low, high)
        step = schema.get("multipleOf")
        if isinstance(step, int) and step > 0:
            first, last = math.ceil(low / step), math.floor(high / step)
            if first > last:
                self._refuse(f"no multiple of {step} in [{low}, {high}]")
            return int(self.rng.integers(first, last + 1)) * step
        if low > high:
            self._refuse(f"an empty integer range [{low}, {high}]")
        return int(self.rng.integers(low, high + 1))

    def _number(self, schema: Mapping[str, Any], depth: int) -> float:
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        low, high = _span(low, high)
        # uniform() draws from [low, high): an exclusive maximum is never met, and an
        # exclusive minimum is met with probability zero (a retry handles it).
        return float(self.rng.uniform(low, high))

    def _string(self, schema: Mapping[str, Any], depth: int) -> str:
        if "pattern" in schema:
            from ..schemadiff.regexgen import samples

            seed = int(self.rng.integers(2**31))
            found = list(samples(str(schema["pattern"]), count=4, seed=seed))
            return str(self.pick(found)) if found else self._refuse(f"pattern {schema['pattern']}")
        if "format" in schema:
            from ..schemadiff.examples import FORMAT_EXAMPLES

            example = FORMAT_EXAMPLES.get(str(schema["format"]))
            if example is not None:
                return example
        low = int(schema.get("minLength", 0))
        high = int(schema.get("maxLength", low + SPAN + 5))
        length = int(self.rng.integers(low, high + 1))
        return "".join(self.pick(list(_ALPHABET)) for _ in range(length))

    def _array(self, schema: Mapping[str, Any], depth: int) -> list[Any]:
        prefix = list(schema.get("prefixItems", []))
        low = max(int(schema.get("minItems", 0)), 0)
        if depth >= _MAX_DEPTH:
            high = low
        else:
            high = int(schema.get("maxItems", max(low, len(prefix)) + SPAN))
        if schema.get("items") is False:
            high = min(high, len(prefix))
        length = int(self.rng.integers(low, high + 1)) if high >= low else low
        items = schema.get("items", True)
        return [
            self.value(prefix[i] if i < len(prefix) else items, depth + 1) for i in range(length)
        ]

    def _object(self, schema: Mapping[str, Any], depth: int) -> dict[str, Any]:
        required = set(schema.get("required", ()))
        chosen: dict[str, Any] = {}
        for name, sub in schema.get("properties", {}).items():
            if name in required:
                chosen[name] = self.value(sub, depth + 1)
            # An optional property drawn as null is left out: servers that take the
            # property as a non-null type accept its absence, not a null.
            elif (
                depth < _MAX_DEPTH
                and self.rng.integers(2)
                and (value := self.value(sub, depth + 1)) is not None
            ):
                chosen[name] = value
        return chosen


def _span(low: Any, high: Any) -> tuple[Any, Any]:
    """Bounds for a draw: a missing one ``2 * UNBOUNDED`` past the other, or around zero."""
    if low is None and high is None:
        return -UNBOUNDED, UNBOUNDED
    if low is None:
        return high - 2 * UNBOUNDED, high
    if high is None:
        return low, low + 2 * UNBOUNDED
    return low, high
