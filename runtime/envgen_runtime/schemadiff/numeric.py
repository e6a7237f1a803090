"""Number arithmetic of schema keywords: numeric bounds and `multipleOf` steps.

`minimum`/`exclusiveMinimum` (and the maximum pair) are read into one `Bound` whichever
draft spelled them, tightened to whole numbers for integers; `multipleOf` steps are
compared and combined as exact fractions, so 0.3 is a multiple of 0.1 as a person expects.
The merger (`schemaops`), the example builder (`examples`) and the number rules
(`rules_scalar`) all reason about numbers through here.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

Bound = tuple[float, bool]  # (value, exclusive)


def lower_bound(schema: dict[str, Any]) -> Bound | None:
    return _bound(schema, "minimum", "exclusiveMinimum", max)


def upper_bound(schema: dict[str, Any]) -> Bound | None:
    return _bound(schema, "maximum", "exclusiveMaximum", min)


def _bound(schema: dict[str, Any], inclusive: str, exclusive: str, pick: Any) -> Bound | None:
    found: list[Bound] = []
    value = schema.get(inclusive)
    excl = schema.get(exclusive)
    if isinstance(value, int | float) and not isinstance(value, bool):
        found.append((float(value), excl is True))
    if isinstance(excl, int | float) and not isinstance(excl, bool):
        found.append((float(excl), True))
    if not found:
        return None
    best: Bound = found[0]
    for candidate in found[1:]:
        if candidate[0] == best[0]:
            best = (best[0], best[1] or candidate[1])
        elif pick(candidate[0], best[0]) == candidate[0]:
            best = candidate
    return best


def integer_lower(bound: Bound | None) -> float | None:
    if bound is None:
        return None
    value, exclusive = bound
    low = math.floor(value) + 1 if exclusive or not float(value).is_integer() else value
    return float(math.ceil(low))


def integer_upper(bound: Bound | None) -> float | None:
    if bound is None:
        return None
    value, exclusive = bound
    high = math.ceil(value) - 1 if exclusive or not float(value).is_integer() else value
    return float(math.floor(high))


def lcm_step(a: Any, b: Any) -> float | int | None:
    """Least common multiple of two multipleOf steps, or None when they are not rational."""
    fa, fb = as_fraction(a), as_fraction(b)
    if fa is None or fb is None or fa <= 0 or fb <= 0:
        return None
    num = fa.numerator * fb.numerator // math.gcd(fa.numerator, fb.numerator)
    den = math.gcd(fa.denominator, fb.denominator)
    step = Fraction(num, den)
    return int(step) if step.denominator == 1 else float(step)


def as_fraction(value: Any) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return Fraction(str(value))


def is_multiple(step: Any, of: Any) -> bool:
    """Whether every multiple of `step` is a multiple of `of`."""
    fs, fo = as_fraction(step), as_fraction(of)
    if fs is None or fo is None or fo == 0:
        return False
    return (fs / fo).denominator == 1
