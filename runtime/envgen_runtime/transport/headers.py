"""Request headers: merging, checking, the bearer token from the environment, W3C tracing.

Header values may hold secrets (tokens, cookies), so nothing here ever puts a value into a
message, a repr or a log record: errors name the header, never its value. The WebSocket
library logs handshake headers at DEBUG level; ``websocket.redact.RedactingLogger`` blanks
them.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping

_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
"""An HTTP field name (RFC 9110 token)."""

_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


def _value_problem(value: object) -> str | None:
    """Why ``value`` cannot be sent as a header value, or None (the value is never quoted)."""
    if not isinstance(value, str):
        return f"must be a string, not {type(value).__name__}"
    if not value.isascii():
        return "must be ASCII"
    if any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in value):
        return "must not contain line breaks or control characters"
    if value != value.strip(" \t"):
        return "must not start or end with whitespace"
    return None


def check_headers(headers: Mapping[str, str] | None, *, what: str = "headers") -> dict[str, str]:
    """A plain copy of ``headers`` after checking every name and value.

    Raises ValueError naming the offending header but never showing its value; the HTTP
    libraries would otherwise quote the value (a token, say) in their own error.
    """
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise TypeError(f"{what} must be a mapping of header names to values")
    for name, value in headers.items():
        if not isinstance(name, str) or not _TOKEN.match(name):
            shown = repr(name) if isinstance(name, str) and len(name) <= 60 else "a header"
            raise ValueError(f"{what}: {shown} is not a valid header name")
        problem = _value_problem(value)
        if problem is not None:
            raise ValueError(f"{what}: the value of header {name!r} {problem}")
    return dict(headers)


def has_header(headers: Mapping[str, str], name: str) -> bool:
    """Whether ``headers`` has ``name``, compared case-insensitively as HTTP does."""
    lowered = name.lower()
    return any(key.lower() == lowered for key in headers)


def merge_headers(*layers: Mapping[str, str] | None) -> dict[str, str]:
    """Later layers override earlier ones; names compare case-insensitively."""
    merged: dict[str, str] = {}
    for layer in layers:
        for name, value in (layer or {}).items():
            for existing in [k for k in merged if k.lower() == name.lower()]:
                del merged[existing]
            merged[name] = value
    return merged


def bearer_headers(token_env: str | None) -> dict[str, str]:
    """``Authorization: Bearer <token>`` from the environment variable named ``token_env``.

    Read when a client is built; an unset or empty variable sends no Authorization header
    (a local server usually needs none). The token is checked like any header value.
    """
    token = os.environ.get(token_env, "").strip() if token_env else ""
    if not token:
        return {}
    problem = _value_problem(token)
    if problem is not None:
        raise ValueError(f"the token in ${token_env} {problem}")
    return {"Authorization": f"Bearer {token}"}


class TraceContext:
    """W3C Trace Context (``traceparent``) for a client's requests.

    One ``trace_id`` for the client's lifetime (taken from ``parent`` when given, so the
    client's requests join the caller's trace) and a fresh random span id for every
    request. Over WebSocket, headers travel only with the handshake, so each session
    carries one traceparent.
    """

    def __init__(self, parent: str | None = None) -> None:
        if parent is None:
            self.trace_id, self._flags = _nonzero_hex(16), "01"
            return
        match = _TRACEPARENT.match(parent.strip().lower()) if isinstance(parent, str) else None
        zero = {"0"}  # an all-zero trace or span id is invalid, as is version ff
        if match is None or match[1] == "ff" or zero in (set(match[2]), set(match[3])):
            raise ValueError(
                "trace must be True or a W3C traceparent such as "
                "'00-<32 hex trace id>-<16 hex span id>-01'"
            )
        self.trace_id, self._flags = match[2], match[4]

    def __repr__(self) -> str:
        return f"TraceContext(trace_id={self.trace_id!r})"

    def traceparent(self) -> str:
        """A ``traceparent`` value with a new span id (call once per request)."""
        return f"00-{self.trace_id}-{_nonzero_hex(8)}-{self._flags}"


def _nonzero_hex(nbytes: int) -> str:
    while True:
        value = secrets.token_hex(nbytes)
        if set(value) != {"0"}:  # all zeros is invalid in W3C Trace Context
            return value
