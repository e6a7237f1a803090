"""Values drawn from a schema: exact for integers too large for a float."""

from __future__ import annotations

from hypothesis import find

from generator.verify.strategies import from_schema


def test_multiples_of_large_integers_are_drawn_inside_the_bounds() -> None:
    # 2**62 + 7 / 3 as a float rounds: every multiple drawn fell outside and none was valid
    schema = {"type": "integer", "minimum": 2**62 + 7, "maximum": 2**62 + 20, "multipleOf": 3}
    assert find(from_schema(schema), lambda _: True) == 2**62 + 8
