"""Negative cases break one bound by the least they can: the value just past it."""

from __future__ import annotations

import math
import re
from typing import Any

from generator.verify.negative import cases


def _past(prop: dict[str, Any], base: Any) -> dict[str, Any]:
    schema = {
        "$defs": {},
        "type": "object",
        "properties": {"f": prop},
        "required": ["f"],
        "additionalProperties": False,
    }
    found = cases({"f": base}, schema)
    return {c.why.removeprefix("f: "): c.value for c in found if c.why.startswith("f: ")}


def test_numbers_one_past_each_bound() -> None:
    assert _past({"type": "integer", "minimum": -3, "maximum": 3}, 0) == {
        "a value of the wrong type (not integer)": "not a number",
        "a required field left out": None,
        "one past its minimum -3": -4,
        "one past its maximum 3": 4,
    }
    found = _past({"type": "number", "maximum": 1.5, "exclusiveMinimum": 0}, 1.0)
    assert found["one past its maximum 1.5"] == math.nextafter(1.5, math.inf)
    assert found[f"one past its exclusiveMinimum {math.nextafter(0, 1)}"] == 0
    found = _past({"type": "integer", "minimum": 1, "maximum": 22, "multipleOf": 5}, 5)
    assert found["one past its maximum (multipleOf 5) 20"] == 25
    assert found["one past its minimum (multipleOf 5) 5"] == 0


def test_strings_one_character_past_each_length_and_still_matching_the_pattern() -> None:
    found = _past({"type": "string", "pattern": "^[a-c]*$", "minLength": 2, "maxLength": 4}, "ab")
    long, short = (
        found["5 characters, one past its maxLength 4"],
        found["1 characters, one past its minLength 2"],
    )
    assert len(long) == 5 and re.fullmatch("[a-c]*", long)
    assert len(short) == 1 and re.fullmatch("[a-c]*", short)


def test_arrays_one_item_past_each_count_with_valid_items() -> None:
    found = _past(
        {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3}, [0, 0]
    )
    assert found["4 items, one past its maxItems 3"] == [0, 0, 0, 0]
    assert found["1 items, one past its minItems 2"] == [0]
