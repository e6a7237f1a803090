"""lean.decoding.parse reads every text as json.loads does: its values, or its exception."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from envgen_runtime.server.lean.decoding import parse
from pydantic_core import from_json

SAME = [
    '{"type":"step","data":{"message":"hello"}}',
    '{"a":NaN,"b":Infinity,"c":-Infinity}',
    '{"a":1e400,"b":-0.0,"c":-0,"d":1.5e-320,"e":0.1}',
    '{"a":12345678901234567890123,"b":-9999999999999999999999999}',
    '{"a":1,"a":2}',
    '{"a":"\\ud83d\\ude00","b":"\\/","c":"\\u0000"}',
    ' [1, "x", null, true] \n',
    '"x"',
]
REFUSED_BY_PYDANTIC = [
    '{"a":"\\ud800"}',  # a lone surrogate escape: json.loads keeps it
    '{"a":"\\udc00\\ud800"}',
    "[" * 300 + "]" * 300,  # deeper than from_json's limit
]
INVALID = ['{"a":nan}', '{"a":1.}', "not json", '{"a":"x\ty"}', "\ufeff{}", '{"a":1}x']


def _same(mine: Any, theirs: Any) -> bool:
    """Equal, NaN included (`repr` tells nan from nan-free values, and types apart)."""
    return repr(mine) == repr(theirs)


@pytest.mark.parametrize("text", SAME + REFUSED_BY_PYDANTIC)
def test_values_are_json_loads_s(text: str) -> None:
    assert _same(parse(text), json.loads(text))


def test_non_finite_literals_are_read_as_floats() -> None:
    value = parse('{"a":NaN,"b":-Infinity}')
    assert math.isnan(value["a"]) and value["b"] == -math.inf


@pytest.mark.parametrize("text", INVALID)
def test_invalid_json_fails_with_json_loads_s_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as mine:
        parse(text)
    assert str(mine.value) == str(theirs.value)


def test_too_many_digits_fail_as_json_loads_fails() -> None:
    text = '{"a":' + "9" * 5000 + "}"
    with pytest.raises(ValueError, match="4300 digits"):
        parse(text)


@pytest.mark.parametrize("text", REFUSED_BY_PYDANTIC)
def test_the_fallback_texts_are_ones_from_json_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        from_json(text)
