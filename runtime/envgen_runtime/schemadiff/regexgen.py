"""Strings that match a regular expression, for example values and witnesses.

A small walker over Python's parsed form of the pattern; it covers what schema patterns use
(literals, classes, ranges, groups, alternation, repeats, anchors, backreferences). Every
string it returns has been checked with `re.search`; patterns it cannot serve give nothing.
"""

from __future__ import annotations

import random
import re
import warnings
from collections.abc import Iterator
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import sre_constants as C
    import sre_parse

_CATEGORY_CHARS = {
    C.CATEGORY_DIGIT: "0123456789",
    C.CATEGORY_NOT_DIGIT: "aZ_-",
    C.CATEGORY_SPACE: " \t",
    C.CATEGORY_NOT_SPACE: "a0Z",
    C.CATEGORY_WORD: "a0Z_",
    C.CATEGORY_NOT_WORD: " -.",
}
_PRINTABLE = [chr(c) for c in range(0x20, 0x7F)]


def samples(pattern: str, count: int = 12, seed: int = 0) -> Iterator[str]:
    """Up to `count` distinct strings matching `pattern` (shortest first), each verified."""
    try:
        compiled = re.compile(pattern)
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return
    seen: set[str] = set()
    rng = random.Random(seed)
    for attempt in range(count * 4):
        mode = "min" if attempt == 0 else "one" if attempt == 1 else "random"
        try:
            text = _emit(parsed, rng, mode, {})
        except (_Unsupported, RecursionError):
            return
        if text not in seen and compiled.search(text):
            seen.add(text)
            yield text
            if len(seen) >= count:
                return


def not_matching(pattern: str, candidates: list[str]) -> Iterator[str]:
    """The candidates that do not match `pattern`."""
    try:
        compiled = re.compile(pattern)
    except re.error:
        return
    for text in candidates:
        if not compiled.search(text):
            yield text


class _Unsupported(Exception):
    pass


def _emit(items: Any, rng: random.Random, mode: str, groups: dict[int, str]) -> str:
    out: list[str] = []
    for op, arg in items:
        out.append(_emit_one(op, arg, rng, mode, groups))
    return "".join(out)


def _emit_one(op: Any, arg: Any, rng: random.Random, mode: str, groups: dict[int, str]) -> str:
    if op == C.LITERAL:
        return chr(arg)
    if op == C.NOT_LITERAL:
        return next(c for c in "aZ0_-" if ord(c) != arg)
    if op == C.ANY:
        return "a" if mode != "random" else rng.choice("aZ0_ -")
    if op == C.IN:
        return _class_char(arg, rng, mode)
    if op == C.BRANCH:
        options = arg[1]
        chosen = options[0] if mode != "random" else rng.choice(options)
        return _emit(chosen, rng, mode, groups)
    if op == C.SUBPATTERN:
        group, _, _, body = arg
        text = _emit(body, rng, mode, groups)
        if group is not None:
            groups[group] = text
        return text
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
        low, high, body = arg
        high = low + 3 if high == C.MAXREPEAT else high
        if mode == "min":
            times = low
        elif mode == "one":
            times = max(low, min(1, high))
        else:
            times = rng.randint(low, max(low, min(high, low + 3)))
        return "".join(_emit(body, rng, mode, groups) for _ in range(times))
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return ""
    if op == C.GROUPREF:
        return groups.get(arg, "")
    if op == C.CATEGORY:
        return _CATEGORY_CHARS.get(arg, "a")[0]
    raise _Unsupported(str(op))


def _class_char(items: Any, rng: random.Random, mode: str) -> str:
    negate = bool(items) and items[0][0] == C.NEGATE
    allowed: list[str] = []
    for op, arg in items:
        if op == C.LITERAL:
            allowed.append(chr(arg))
        elif op == C.RANGE:
            low, high = arg
            allowed.extend(chr(c) for c in range(low, min(high, low + 60) + 1))
        elif op == C.CATEGORY:
            allowed.extend(_CATEGORY_CHARS.get(arg, "a"))
    if negate:
        allowed = [c for c in _PRINTABLE if c not in set(allowed)]
    if not allowed:
        raise _Unsupported("empty class")
    return allowed[0] if mode != "random" else rng.choice(allowed)
