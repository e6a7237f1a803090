"""The JSON both transports send and receive.

A request body serialised (an unserialisable value is the caller's validation error) and a
reply that must be a JSON object (else a ProtocolError quoting it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .errors import EnvValidationError, ProtocolError, ValidationIssue
from .text import quote

_REQUEST_ROLES = {"step": "action", "reset": "reset request", "state": "state request"}


def request_role(op: str) -> str:
    """What a server-side validation error is about, named for the caller."""
    return _REQUEST_ROLES.get(op, f"{op} request")


compact_json = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode
"""JSON text without spaces; NaN and infinities refused. Built once: ``json.dumps`` with
arguments builds a new encoder on every call, twice per step."""


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
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        problem, cause = f"is not valid JSON ({exc})", exc
    else:
        if isinstance(value, dict):
            return value
        problem = f"must be a JSON object, got {type(value).__name__}"
    received = quote(data)
    message = f"{op} failed: {source} {problem}; received: {received}"
    raise ProtocolError(message, received=received, op=op) from cause
