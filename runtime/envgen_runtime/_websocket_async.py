"""The OpenEnv ``/ws`` session for asyncio, on ``websockets.asyncio.client``.

Same protocol, session rules and errors as ``WebSocketTransport`` (shared through
``WebSocketCommon``). A request that is cancelled while waiting for its reply drops the
session like a timeout does: the late reply must never be read as the next one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._errormap import translate
from ._exceptions import EnvConnectionError, EnvgenRuntimeError, ServerError
from ._headers import TraceContext, check_headers
from ._transport import Op
from ._websocket import CLOSE_MESSAGE, TIMEOUT_HINT, WebSocketCommon, ends_session

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

__all__ = ["AsyncWebSocketTransport"]


async def _quiet_close(conn: ClientConnection) -> None:
    with contextlib.suppress(Exception):  # best effort: the session is being abandoned
        await conn.close()


def _abandon(conn: ClientConnection) -> None:
    """Close now: a close frame is queued but never waited for (the server may be frozen)."""
    from websockets.protocol import State

    with contextlib.suppress(Exception):
        protocol = conn.protocol
        if protocol.state is State.OPEN:
            protocol.send_close(1001)
            for data in protocol.data_to_send():
                if data:
                    conn.transport.write(data)
    conn.transport.close()  # flushes what the socket takes, in the background


class AsyncWebSocketTransport(WebSocketCommon):
    """A lazily opened OpenEnv ``/ws`` session for asyncio.

    Concurrent requests from several tasks are serialised (replies are matched to requests by
    order). Use it from one event loop.
    """

    _kind = "AsyncWebSocketTransport"

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 15.0,
        headers: Mapping[str, str] | None = None,
        max_message_bytes: int | None = 100 * 1024 * 1024,
        connect_timeout_s: float | None = None,
        trace: TraceContext | None = None,
    ) -> None:
        import asyncio

        super().__init__(
            base_url,
            timeout_s=timeout_s,
            headers=headers,
            max_message_bytes=max_message_bytes,
            connect_timeout_s=connect_timeout_s,
            trace=trace,
        )
        self._conn: ClientConnection | None = None
        self._lock = asyncio.Lock()

    @property
    def connected(self) -> bool:
        """Whether a session is currently open."""
        return self._conn is not None

    async def _open(self, op: str, headers: Mapping[str, str] | None) -> ClientConnection:
        from websockets.asyncio.client import connect

        handshake = self._handshake(headers)
        options = self._connect_options(handshake, asynchronous=True)
        with translate(
            op, self._url, self._timeout_s, connect=True, connect_timeout_s=self._connect_timeout_s
        ):
            conn: ClientConnection = await connect(self._url, **options)
        self._conn = conn
        self._opened(handshake)
        return conn

    def _drop(self, reason: str) -> None:
        """Forget the current connection; its server session (and episode) ends with it.

        Synchronous so that it also works while a cancellation unwinds; the connection is
        abandoned without waiting for the server's close (it may be dead or frozen).
        """
        conn, self._conn = self._conn, None
        if conn is None:
            return
        self._mark_lost(reason)
        _abandon(conn)

    async def _pending_server_error(self, conn: ClientConnection, op: Op) -> ServerError | None:
        import asyncio

        try:
            async with asyncio.timeout(0.5):
                raw = await conn.recv()
        except Exception:  # nothing pending: report the close itself
            return None
        return self._pending_error(raw, op)

    async def request(
        self, op: Op, body: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one operation over the session and return the reply's ``data`` object."""
        text = self._message(op, body)
        async with self._lock:
            self._check_open(op)
            reused = self._conn is not None
            if reused:
                self._check_headers_fit(op, headers)
            else:
                self._check_not_lost(op)
            try:
                raw = await self._exchange(op, text, headers)
            except EnvConnectionError as exc:
                if not reused:
                    raise
                if op != "reset":
                    raise self._session_lost(op, exc) from exc.__cause__
                # An idle session closed by the server: a reset may go to a new one, once.
                raw = await self._exchange(op, text, headers)
            try:
                return self._parse_reply(op, raw)
            except EnvgenRuntimeError as exc:
                if ends_session(exc):
                    self._drop(self._reason(exc))
                raise

    async def _exchange(self, op: Op, text: str, headers: Mapping[str, str] | None) -> str | bytes:
        """Send one message and receive one reply; any failure drops the connection."""
        import asyncio

        conn = self._conn if self._conn is not None else await self._open(op, headers)
        try:
            with translate(op, self._url, self._timeout_s, timeout_hint=TIMEOUT_HINT):
                try:
                    await conn.send(text)
                except Exception:
                    pending = await self._pending_server_error(conn, op)
                    if pending is not None:
                        raise pending from None
                    raise
                async with asyncio.timeout(self._timeout_s):
                    return await conn.recv()
        except BaseException as exc:  # includes cancellation: a late reply may still come
            self._drop(self._reason(exc))
            raise

    async def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """End the current session (and its episode) and open a new one now.

        ``headers`` go with this and every later handshake until the next reconnect.
        """
        sticky = check_headers(headers, what="headers")
        async with self._lock:
            self._check_open("reconnect")
            await self._end_session()
            self._sticky_headers = sticky
            self._lost = None
            await self._open("reconnect", None)

    async def _end_session(self) -> None:
        conn, self._conn = self._conn, None
        self._handshake_headers = {}
        if conn is None:
            return
        with contextlib.suppress(Exception):  # the server may already be gone
            await conn.send(CLOSE_MESSAGE)
        await _quiet_close(conn)

    async def close(self) -> None:
        """End the session politely (``{"type": "close"}``) and close; idempotent."""
        self._closed = True
        await self._end_session()
