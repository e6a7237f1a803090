"""The one reading of a server address, for clients and for ``envgen pull``/``verify``.

``127.0.0.1:8000`` (what a server's log prints) means ``http://127.0.0.1:8000``; anything
else must name its scheme. Checked before any connection, so a typo gets a ``ValueError``
naming the address instead of a socket library's message.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .text import redact_url

CLIENT_SCHEMES = ("http", "https", "ws", "wss")
"""What a client connects to (``ws(s)://`` names the same server as ``http(s)://``)."""

_EXAMPLE = "e.g. http://127.0.0.1:8000"


def normalize_base_url(text: str, *, schemes: tuple[str, ...] = CLIENT_SCHEMES) -> str:
    """``text`` as a server's base URL: a bare ``host:port`` gets ``http://``, no trailing ``/``.

    ValueError (naming ``text``) for an empty address, spaces, a scheme outside ``schemes``,
    no host, a port outside 0-65535, a query or a fragment.
    """
    url = text.strip()
    shown = repr(redact_url(url))  # credentials and query values stay out of messages
    if not url:
        raise ValueError(f"the URL is empty ({_EXAMPLE})")
    if any(ch.isspace() for ch in url):
        raise ValueError(f"{shown} contains a space")
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    if parts.scheme not in schemes:
        allowed = " or ".join(f"{scheme}://" for scheme in schemes)
        raise ValueError(f"{shown} must start with {allowed} (or be a bare host:port)")
    if not parts.hostname:
        raise ValueError(f"{shown} has no host ({_EXAMPLE})")
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not 0-65535
    except ValueError:
        raise ValueError(f"{shown} has an invalid port (expected 1-65535)") from None
    if parts.query:
        raise ValueError(f"{shown} has a query (?...); give the server's base URL")
    if parts.fragment:
        raise ValueError(f"{shown} has a fragment (#...); give the server's base URL")
    return url.rstrip("/")
