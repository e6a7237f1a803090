"""The transport interfaces (sync and async), and the limits every transport and client checks."""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Mapping
from typing import Any, Literal, Protocol, runtime_checkable
from urllib.parse import urlsplit

from ..core.checks import positive
from ..core.errors import EnvgenRuntimeError
from ..core.text import redact_url

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

    def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """Drop the current connection (a WebSocket session and its episode) and open anew."""

    def close(self) -> None:
        """Release the connection; further requests are an error."""


@runtime_checkable
class AsyncTransport(Protocol):
    """``Transport`` for asyncio: the same operations, documented there, as coroutines."""

    async def request(
        self, op: Op, body: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]: ...

    async def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None: ...

    async def close(self) -> None: ...


class PostedStep(Protocol):
    """A step sent for a lock-step round (``post_step`` of the asyncio transports).

    It holds its transport's turn until ``finish`` has given its reply (or raised), or
    ``abandon``. Between the two, ``join`` counts its connection in the round that waits
    for every reply at once.
    """

    timeout_s: float
    """How long its reply may take, in seconds."""

    settles_on_arrival: bool
    """Whether ``finish`` never needs waiting once its connection has arrived in the round (a
    WebSocket reply is one whole message): the round then finishes it in the read callback
    that brought the reply, with no wake-up of the awaiting task per reply."""

    def join(self, round_: Any, key: int) -> None:
        """Count its connection in ``round_`` (an ``aio_protocol.Round``) under ``key`` until
        it is readable (at once, when there is nothing to wait for)."""

    def finish(self) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """The reply's ``data`` as ``request`` returns it, or its error; read without waiting,
        or, when the reply is not all here yet, an awaitable of it."""

    def abandon(self) -> None:
        """Give up on the reply (the round was cancelled): the connection is dropped."""


class Limits:
    """The limits, repr and closed check that the clients and both engines share."""

    _base_url: str
    _timeout_s: float
    _connect_timeout_s: float
    _closed: bool

    def _set_limits(self, timeout_s: float, connect_timeout_s: float | None) -> None:
        """``connect_timeout_s`` defaults to ``timeout_s``."""
        positive("timeout_s", timeout_s)
        positive("connect_timeout_s", connect_timeout_s)
        self._timeout_s = timeout_s
        self._connect_timeout_s = timeout_s if connect_timeout_s is None else connect_timeout_s

    @property
    def base_url(self) -> str:
        """The server's base URL (no trailing slash)."""
        return self._base_url

    @property
    def connect_timeout_s(self) -> float:
        """Limit for opening a connection (a WebSocket handshake included), in seconds."""
        return self._connect_timeout_s

    @property
    def read_timeout_s(self) -> float:
        """Deadline for each whole reply, in seconds (an HTTP step's covers ``step_timeout_s``).

        However slowly a server trickles a reply, the call raises EnvTimeoutError by then.
        """
        return self._timeout_s

    def _repr_args(self) -> tuple[str, str]:
        """The URL a repr shows (redacted there) and what follows it."""
        return self._base_url, f"timeout_s={self._timeout_s}"

    def __repr__(self) -> str:
        url, rest = self._repr_args()
        return f"{type(self).__name__}({redact_url(url)!r}, {rest})"

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise EnvgenRuntimeError(f"{what} failed: this {type(self).__name__} is closed")


def is_loopback_url(url: str) -> bool:
    """True for URLs on this machine, which must never go through a proxy."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
