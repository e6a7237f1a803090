"""verify/schemas.py: validators read every regex keyword as ECMA-262, not Python's `re`."""

from __future__ import annotations

from typing import Any

import pytest

from generator.verify.schemas import validator_for

# `$` before a final newline and `\d` on a non-ASCII digit: Python's `re` matches, ECMA does not.
NOT_ECMA = ["a\n", "\u0663"]


def _object(**keywords: Any) -> dict[str, Any]:
    return {"type": "object", **keywords}


@pytest.mark.parametrize("key", NOT_ECMA)
def test_pattern_properties_match_keys_as_ecma_262(key: str) -> None:
    schema = _object(patternProperties={r"^a$|^\d$": {"type": "integer"}})
    validator = validator_for(schema)
    assert validator.is_valid({key: "not checked: the key matches no pattern"})
    assert not validator.is_valid({"a": "a string where an integer must be"})


@pytest.mark.parametrize("key", NOT_ECMA)
def test_additional_properties_count_a_key_no_pattern_matches(key: str) -> None:
    schema = _object(patternProperties={r"^a$|^\d$": {}}, additionalProperties=False)
    validator = validator_for(schema)
    assert not validator.is_valid({key: 1})
    assert validator.is_valid({"a": 1, "7": 2})


def test_property_names_use_the_ecma_pattern() -> None:
    assert not validator_for(_object(propertyNames={"pattern": "^a$"})).is_valid({"a\n": 1})
