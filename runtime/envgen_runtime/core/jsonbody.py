"""The JSON both transports send and receive.

A request body serialised (an unserialisable value is the caller's validation error) and a
reply that must be a JSON object (else a ProtocolError quoting it). Both run once per step
each way, so each takes the fastest path that gives ``json``'s own results.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

from pydantic_core import from_json

from .errors import EnvValidationError, ProtocolError, ValidationIssue
from .text import quote

_REQUEST_ROLES = {"step": "action", "reset": "reset request", "state": "state request"}


def request_role(op: str) -> str:
    """What a server-side validation error is about, named for the caller."""
    return _REQUEST_ROLES.get(op, f"{op} request")


_ENCODER = json.JSONEncoder(allow_nan=False, separators=(",", ":"))
_chunks: Callable[[Any, int], list[str]] = c_make_encoder(
    None, _ENCODER.default, encode_basestring_ascii, None, ":", ",", False, False, False
)
"""``_ENCODER``'s C encoder, built once: ``JSONEncoder.encode`` builds a new one (and its
closures) on every call, most of its time for a small body. Without the circular check,
whose ``markers`` dict would be shared between calls: a cycle is a RecursionError, below."""


def compact_json(value: Any) -> str:
    """JSON text without spaces, as ``_ENCODER.encode`` writes it; ValueError for NaN and
    infinities and for a value that is circular or nested too deeply to write."""
    try:
        return "".join(_chunks(value, 0))
    except RecursionError:
        raise ValueError("the value is circular or nested too deeply for JSON") from None


def loads_json(text: str | bytes) -> Any:
    """``text``'s JSON value, as ``json.loads(text)`` reads it (and raises), in less time.

    pydantic_core's ``from_json`` parses a small message in about a third of ``json.loads``'s
    time and gives the same values for every text both accept (NaN and Infinity literals,
    big integers, floats, escapes, duplicate keys: the last wins). Where it refuses a text
    (``ValueError``: lone surrogate escapes, nesting deeper than its limit, malformed JSON,
    bytes that are not UTF-8), ``json.loads`` decides, so what it accepts is accepted and
    what it refuses fails with its exception and message.
    """
    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)


def dumps_body(body: Mapping[str, Any], *, op: str) -> str:
    """Serialise a request body; an unserialisable value is the caller's validation error."""
    try:
        return compact_json(body)
    except (TypeError, ValueError) as exc:
        issue = ValidationIssue(loc=(), message=str(exc), type="json_serialization")
        raise EnvValidationError(
            request_role(op),
            [issue],
            message=f"{op} failed: the request body cannot be sent as JSON: {exc}",
        ) from exc


def parse_json_object(data: bytes | str, *, op: str, source: str) -> dict[str, Any]:
    """Decode a reply that must be a JSON object, else ProtocolError quoting it."""
    cause: Exception | None = None
    try:
        value = loads_json(data)
    except (ValueError, UnicodeDecodeError) as exc:
        problem, cause = f"is not valid JSON ({exc})", exc
    else:
        if isinstance(value, dict):
            return value
        problem = f"must be a JSON object, got {type(value).__name__}"
    received = quote(data)
    message = f"{op} failed: {source} {problem}; received: {received}"
    raise ProtocolError(message, received=received, op=op) from cause
