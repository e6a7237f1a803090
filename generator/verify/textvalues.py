"""Strings for verify: JSON Schema's regex semantics in Python, and strings of a given length.

JSON Schema's `pattern` is an ECMA-262 regex, and Python's `re` reads some of it differently:
`$` also matches before a final newline ("abc\\n" matches `^abc$`), and `\\d`/`\\w` match
any Unicode digit or letter ("٣" matches `^\\d$`). A server (pydantic-core, a JavaScript one)
refuses such strings, so verify would send "valid" actions that are not and accept replies
that break the schema. `ecma_pattern` rewrites a pattern so Python matches what ECMA-262
matches, for generating strings (hypothesis) and validating them (jsonschema) alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, find, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException, NoSuchExample

_CLASS_ESCAPES = {"d": "0-9", "w": "A-Za-z0-9_"}
_ESCAPES = {"d": "[0-9]", "D": "[^0-9]", "w": "[A-Za-z0-9_]", "W": "[^A-Za-z0-9_]"}

_FORMAT_EXAMPLES: dict[str, tuple[str, Callable[[int], str] | None]] = {
    "email": ("a@example.com", lambda n: "a" * (n - 12) + "@example.com"),
    "uri": ("https://example.com/", lambda n: "https://example.com/" + "a" * (n - 20)),
    "uri-reference": ("a", lambda n: "a" * n),
    "hostname": ("example.com", None),
    "uuid": ("00000000-0000-4000-8000-000000000000", None),
    "date": ("2000-01-01", None),
    "time": ("00:00:00Z", None),
    "date-time": ("2000-01-01T00:00:00Z", None),
    "ipv4": ("127.0.0.1", None),
    "ipv6": ("::1", None),
}


FORMATS = frozenset(_FORMAT_EXAMPLES)
"""The formats strings can be built for."""


@lru_cache(maxsize=256)
def ecma_pattern(pattern: str) -> str:
    """`pattern` (ECMA-262) rewritten so that Python's `re.search` matches the same strings."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if in_class and nxt in _CLASS_ESCAPES:
                out.append(_CLASS_ESCAPES[nxt])
            elif not in_class and nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        elif char == "$" and not in_class:
            char = r"\Z"  # end of input only, never before a final newline
        out.append(char)
        i += 1
    return "".join(out)


def ecma_search(pattern: str, text: str) -> bool:
    return re.search(ecma_pattern(pattern), text) is not None


_SETTINGS = settings(
    database=None,
    phases=(Phase.generate, Phase.shrink),
    suppress_health_check=list(HealthCheck),
    verbosity=Verbosity.quiet,
    derandomize=True,
    max_examples=100,
)


def _matching(pattern: str, length: int) -> str | None:
    """A string of `length` characters that `pattern` matches (searching as JSON Schema does):
    the shortest match hypothesis finds, stretched by repeating one of its characters (which
    fills a quantified part: `[0-9]+`) or padding it; else a search for that length."""
    compiled = ecma_pattern(pattern)

    def fits(text: str) -> bool:
        return len(text) == length and re.search(compiled, text) is not None

    try:
        short = str(find(st.from_regex(compiled), lambda t: len(t) <= length, settings=_SETTINGS))
    except (NoSuchExample, HypothesisException, re.error):
        return None
    extra = length - len(short)
    for i in range(len(short) + 1):
        for char in dict.fromkeys([*short[max(i - 1, 0) : i + 1], "a"]):
            text: str = short[:i] + char * extra + short[i:]
            if fits(text):
                return text
    try:
        return str(find(st.from_regex(compiled), fits, settings=_SETTINGS))
    except (NoSuchExample, HypothesisException):
        return None


def string_of_length(schema: dict[str, Any], length: int) -> tuple[str | None, str]:
    """A string of exactly `length` characters that `schema`'s pattern and format allow, or
    None and why not."""
    pattern, form = schema.get("pattern"), schema.get("format")
    if isinstance(pattern, str):
        text = _matching(pattern, length)
        return (text, "") if text is not None else (None, f"no match of pattern {pattern!r} found")
    if isinstance(form, str) and form in _FORMAT_EXAMPLES:
        example, pad = _FORMAT_EXAMPLES[form]
        if len(example) == length:
            return example, ""
        if pad is not None and length > len(example):
            return pad(length), ""
        return None, f"no {form} string of {length} characters is built"
    return "a" * length, ""
