"""The asyncio shell of the WebSocket engine: an asyncio protocol around a ``FrameEngine``.

Each read feeds the engine and writes its answers (pongs, closes) at once, so an
idle session answers pings with no task running; a waiting request is woken through one
future. Keepalive runs every ``KEEPALIVE_CHECK_S``; proxies are left to websockets' client.
A ``BufferedProtocol`` reading into one buffer (``aio_protocol.ReadBuffer`` says why), with one
deadline timer per connection (``aio_protocol.Waiting``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from typing import Any, cast

from websockets.exceptions import InvalidMessage
from websockets.frames import CloseCode
from websockets.protocol import State

from ..aio_protocol import ReadBuffer, Round, Waiting
from .direct import direct_allowed
from .frames import FrameEngine, Hop

__all__ = ["AsyncConnection", "LibraryConnection", "connect"]

KEEPALIVE_CHECK_S = 5.0
"""How often an open connection runs the engine's keepalive (seconds)."""

_OPEN = State.OPEN
_CLOSED = State.CLOSED


class AsyncConnection(ReadBuffer, Waiting, asyncio.BufferedProtocol):
    """An open WebSocket client connection driven by the event loop.

    A request either awaits ``roundtrip``, or is split for a lock-step round (``post`` now,
    ``take`` once the ``Round`` it is counted in has woken).
    """

    SPLITS = True
    """``post``/``take`` split a request for a lock-step round (see ``AsyncWebSocketTransport``)."""

    def __init__(self, engine: FrameEngine) -> None:
        super().__init__()
        self._engine = engine
        self._messages = engine.messages
        self._transport: asyncio.Transport | None = None
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self.round: Round | None = None

    # ------------------------------------------------------------------ event loop side

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast("asyncio.Transport", transport)  # uvloop's is not a subclass
        self._flush()

    def buffer_updated(self, nbytes: int) -> None:
        self._engine.receive(self._buffer[:nbytes].tobytes())
        self._flush()
        self._wake()

    def eof_received(self) -> bool | None:
        self._engine.receive_eof()
        self._flush()
        self._wake()
        return None  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._engine.fail(exc)
        for timer in (self._timer, self._expiry):
            if timer is not None:
                timer.cancel()
        self._timer = self._expiry = None  # a cancelled timer must never be taken as armed
        self._wake()

    def _wake(self) -> None:
        Waiting._wake(self)
        waiting = self.round
        if waiting is not None and (self._messages or self._engine.state is not _OPEN):
            self.round = None
            waiting.arrived(self)

    def _flush(self) -> None:
        chunks = self._engine.outgoing()
        if not chunks:
            return
        transport = self._transport
        if transport is None or transport.is_closing():
            return  # nowhere to go
        for chunk in chunks:
            if chunk:
                transport.write(chunk)
            elif transport.can_write_eof():
                transport.write_eof()

    def _keepalive(self) -> None:
        failed = self._engine.keepalive(time.monotonic())
        self._flush()
        if failed:
            self.abort()
            self._wake()
        elif self._engine.state is _OPEN:
            self._timer = self._loop.call_later(KEEPALIVE_CHECK_S, self._keepalive)

    # ------------------------------------------------------------------ caller side

    async def handshake(self) -> None:
        """Wait for the server's handshake response (the caller bounds the time)."""
        engine = self._engine
        while engine.handshaking:
            if self._transport is None or self._transport.is_closing():
                raise InvalidMessage("connection closed during the opening handshake")
            await self._wait()
        engine.check_handshake()  # else it succeeded, even if a close came right after it
        self._keepalive()  # a server heard from just now: it only starts the timer

    async def send(self, message: str | bytes) -> None:
        """Send one message (written in the background); ConnectionClosed if not open."""
        self._engine.send(message)
        self._flush()

    async def roundtrip(self, message: str, timeout: float) -> str | bytes:
        """Send one message and wait at most ``timeout`` seconds for the next one."""
        self.post(message)
        messages = self._messages
        deadline = self._loop.time() + timeout
        while not messages:
            if self._engine.state is not _OPEN:
                self.abort()
                raise self._engine.close_exc()
            await self._wait(deadline)
        return messages.popleft()

    def post(self, message: str) -> None:
        """Send one message now (the socket takes it, or the loop writes it soon)."""
        self._engine.send(message)
        self._flush()

    def readable(self) -> bool:
        """Whether ``take`` would not time out: a message is here or the connection ended."""
        return bool(self._messages) or self._engine.state is not _OPEN

    def take(self) -> str | bytes:
        """The next message, without waiting: the connection's close, or TimeoutError if none."""
        self.round = None
        if self._messages:
            return self._messages.popleft()
        if self._engine.state is not _OPEN:
            self.abort()
            raise self._engine.close_exc()
        raise TimeoutError(self._TIMED_OUT)

    def buffered(self) -> list[str | bytes]:
        """Messages received but not read yet."""
        return list(self._messages)

    def abort(self) -> None:
        """Close now: a close frame is written but never waited for (the server may be frozen)."""
        self._engine.close(CloseCode.GOING_AWAY)
        self._flush()
        if self._transport is not None:
            self._transport.close()  # flushes what the socket takes, in the background
        self._engine.receive_eof()

    async def close(self) -> None:
        """The closing handshake, bounded by the close timeout, then close the socket (also
        when the wait is cancelled: a caller's timeout, a pool closing)."""
        self._engine.close(CloseCode.NORMAL_CLOSURE)
        self._flush()
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._engine.close_timeout):
                    while self._engine.state is not _CLOSED:
                        await self._wait()
        finally:
            self.abort()


async def connect_direct(url: str, options: dict[str, Any]) -> AsyncConnection:
    """Open an AsyncConnection (the handshake included) within the open timeout."""
    engine = FrameEngine(url, options)
    uri = engine.uri
    context = ssl.create_default_context() if uri.secure else None
    conn = AsyncConnection(engine)
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(engine.open_timeout):
            await loop.create_connection(lambda: conn, uri.host, uri.port, ssl=context)
            await conn.handshake()
    except TimeoutError:
        conn.abort()
        raise TimeoutError("timed out during the opening handshake") from None
    except BaseException:
        conn.abort()
        raise
    return conn


class LibraryConnection:
    """websockets' asyncio client, for a connection through a proxy."""

    SPLITS = False
    """Its messages can only be read by awaiting: requests on it are never split."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    async def roundtrip(self, message: str, timeout: float) -> str | bytes:
        """Send one message and wait at most ``timeout`` seconds for the next one."""
        await self.conn.send(message)
        async with asyncio.timeout(timeout):
            reply: str | bytes = await self.conn.recv()
        return reply

    def buffered(self) -> list[str | bytes]:
        """Nothing: its messages can only be read by waiting."""
        return []

    async def send(self, message: str) -> None:
        await self.conn.send(message)

    def abort(self) -> None:
        self.conn.transport.close()

    async def close(self) -> None:
        await self.conn.close()


async def connect(url: str, options: dict[str, Any]) -> AsyncConnection | LibraryConnection:
    """Open a connection for ``AsyncWebSocketTransport``: the engine's own unless proxied."""
    if not direct_allowed(url, options.get("proxy", True)):
        import inspect

        from websockets.asyncio.client import connect as library_connect

        accepted = inspect.signature(library_connect).parameters  # it varies by version
        chosen = {name: value for name, value in options.items() if name in accepted}
        return LibraryConnection(await library_connect(url, **chosen))
    for hop in Hop(url, options):
        with hop:
            return await connect_direct(hop.url, hop.options)
    raise AssertionError("unreachable: Hop raises or the handshake returns")
