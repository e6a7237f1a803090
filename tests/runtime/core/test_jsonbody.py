"""core.jsonbody: ``loads_json`` reads every text as json.loads does (its values, or its
exception), and ``compact_json`` writes what ``json.JSONEncoder`` writes, refusing what it
refuses."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from envgen_runtime.core.jsonbody import compact_json, loads_json
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
    assert _same(loads_json(text), json.loads(text))


def test_non_finite_literals_are_read_as_floats() -> None:
    value = loads_json('{"a":NaN,"b":-Infinity}')
    assert math.isnan(value["a"]) and value["b"] == -math.inf


@pytest.mark.parametrize("text", INVALID)
def test_invalid_json_fails_with_json_loads_s_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as mine:
        loads_json(text)
    assert str(mine.value) == str(theirs.value)


def test_too_many_digits_fail_as_json_loads_fails() -> None:
    text = '{"a":' + "9" * 5000 + "}"
    with pytest.raises(ValueError, match="4300 digits"):
        loads_json(text)


@pytest.mark.parametrize("text", REFUSED_BY_PYDANTIC)
def test_the_fallback_texts_are_ones_from_json_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        from_json(text)


@pytest.mark.parametrize("text", SAME + REFUSED_BY_PYDANTIC)
def test_bytes_are_read_as_json_loads_reads_them(text: str) -> None:
    assert _same(loads_json(text.encode("utf-8", "surrogatepass")), json.loads(text.encode()))


@pytest.mark.parametrize(
    "data", ['{"a":"é"}'.encode("utf-16"), '{"a":"é"}'.encode("utf-8-sig"), b'{"a":1}']
)
def test_bytes_json_loads_detects_the_encoding_of_are_read_as_it_reads_them(data: bytes) -> None:
    assert loads_json(data) == json.loads(data)


def test_bytes_that_are_not_utf8_fail_as_json_loads_fails() -> None:
    with pytest.raises(UnicodeDecodeError):
        loads_json(b'{"a":"\xff"}')  # a byte no UTF-8 text holds


COMPACT = [
    {"message": "hello", "metadata": {}},
    {"a": [1, 2.5, -0.0, 1e-07, 1e300, "é\u2028\x00", None, True, False]},
    {"nested": {"deep": [[{"x": 12345678901234567890}]]}},
    [],
    "text",
    3.25,
]


@pytest.mark.parametrize("value", COMPACT)
def test_compact_json_writes_what_the_json_encoder_writes(value: Any) -> None:
    assert compact_json(value) == json.dumps(value, separators=(",", ":"), allow_nan=False)


@pytest.mark.parametrize("value", [math.nan, {"a": [math.inf]}, {"a": -math.inf}])
def test_compact_json_refuses_non_finite_numbers(value: Any) -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        compact_json(value)


def test_compact_json_refuses_a_circular_value_with_a_value_error() -> None:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(ValueError, match="circular or nested too deeply"):
        compact_json(cycle)
    assert compact_json({"after": 1}) == '{"after":1}'  # nothing is left behind


def test_compact_json_refuses_what_json_cannot_write_with_its_type_error() -> None:
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        compact_json({"x": {1, 2}})
