"""The transport interfaces (sync and async), and the limits every transport and client checks."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable
from urllib.parse import urlsplit

from ._exceptions import EnvgenRuntimeError
from ._text import redact_url

if TYPE_CHECKING:
    import asyncio

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


def positive(name: str, value: float | None) -> None:
    """Reject a limit that is not a positive number (None: not given)."""
    if value is not None and (isinstance(value, bool) or not value > 0):
        raise ValueError(f"{name} must be positive, got {value!r}")


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


class ReadBuffer:
    """For an ``asyncio.BufferedProtocol``: the transport reads into one buffer per connection.

    A plain ``Protocol`` gets each read as a fresh 256 KiB ``recv``, which glibc maps, shrinks
    and unmaps (three system calls and page faults per reply). No asyncio import: this module
    is loaded with the package.
    """

    def __init__(self) -> None:
        self._buffer = memoryview(bytearray(65536))

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._buffer


class Waiting:
    """For an asyncio protocol: a read sleeps on one future that the loop's callbacks wake;
    one deadline timer serves every read, re-armed only when it fires early or would fire
    after the awaited read's deadline (a timer per read costs a handle, a heap push and a
    cancel). The protocol sets ``_loop``."""

    _loop: asyncio.AbstractEventLoop
    _waiter: asyncio.Future[None] | None = None
    _deadline: float | None = None  # loop time by which the awaited read is due
    _expiry: asyncio.TimerHandle | None = None
    _TIMED_OUT = "timed out while waiting for a message"

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self, deadline: float | None = None) -> None:
        """Until ``_wake``; past ``deadline`` (loop time, if given) TimeoutError instead."""
        loop = self._loop
        if deadline is not None:
            self._deadline = deadline
            expiry = self._expiry
            if expiry is None or expiry.when() > deadline:  # it would fire too late
                if expiry is not None:
                    expiry.cancel()
                self._expiry = loop.call_at(deadline, self._expire)
        self._waiter = loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = self._deadline = None

    def _expire(self) -> None:
        """The deadline timer: fail the awaited read if it is late, else wait for its deadline."""
        self._expiry = None
        deadline = self._deadline
        if deadline is None:
            return  # idle: the next read arms a new timer
        if self._loop.time() < deadline:
            self._expiry = self._loop.call_at(deadline, self._expire)
            return
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(TimeoutError(self._TIMED_OUT))


def is_loopback_url(url: str) -> bool:
    """True for URLs on this machine, which must never go through a proxy."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
