"""The transport interfaces: one request method, plus reconnect and close (sync and async)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Literal, Protocol, runtime_checkable
from urllib.parse import urlsplit

__all__ = ["AsyncTransport", "Op", "Transport", "is_loopback_url"]

Op = Literal["reset", "step", "state"]


@runtime_checkable
class Transport(Protocol):
    """Carries one operation to the server and returns its JSON object reply.

    ``reset`` and ``step`` return the ``{"observation", "reward", "done", ...}`` envelope;
    ``state`` returns the state object. Failures raise the runtime's exceptions. ``headers``
    are added to this request only (over WebSocket they can only travel with a handshake).
    """

    def request(
        self, op: Op, body: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send ``op`` with ``body`` and return the server's reply object."""
        ...

    def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """Drop the current connection (a WebSocket session and its episode) and open anew."""
        ...

    def close(self) -> None:
        """Release the connection; further requests are an error."""
        ...


@runtime_checkable
class AsyncTransport(Protocol):
    """``Transport`` for asyncio: the same operations, documented there, as coroutines."""

    async def request(
        self, op: Op, body: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]: ...

    async def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None: ...

    async def close(self) -> None: ...


def is_loopback_url(url: str) -> bool:
    """True for URLs on this machine, which must never go through a proxy."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
