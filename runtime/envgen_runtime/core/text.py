"""Text for error messages: shortened, quoted, and without secrets from URLs."""

from __future__ import annotations

import functools
import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

RECEIVED_LIMIT = 500
"""How much of an unexpected reply is quoted in an error (characters)."""

BODY_LIMIT = 2000
"""How much of an error reply's body is kept on a ServerError (characters)."""


def truncate(text: str, limit: int = RECEIVED_LIMIT) -> str:
    """Shorten ``text`` for a message, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"


def quote(data: bytes | str | Any, limit: int = RECEIVED_LIMIT) -> str:
    """Printable, truncated form of whatever arrived, for ProtocolError.received."""
    if isinstance(data, bytes | bytearray):
        text = bytes(data).decode("utf-8", errors="replace")
    elif isinstance(data, str):
        text = data
    else:
        try:  # a decoded reply: show it as the JSON text it came as, not a Python repr
            text = json.dumps(data, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            text = repr(data)
    return truncate(text, limit)


@functools.lru_cache(maxsize=256)
def redact_url(url: str) -> str:
    """Drop credentials and query values from a URL before it goes into a message.

    Cached: a client has a handful of URLs, and each reply names one.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = "..." if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
