"""OpenEnv WebSocket transport for asyncio (the rules are in ``engine``).

A thin shell: ``WebSocketCommon`` decides, ``aio_connection`` moves the bytes on the event loop.
A request that is cancelled while waiting for its reply drops the session like a timeout
does: the late reply must never be read as the next one.

A request can also be split, for the pool's lock-step rounds: ``post`` sends it now and
returns a ``Posted``, whose ``finish`` reads the reply once a ``Round`` has woken. Both
halves run the same ``Flow`` as ``request``, so errors, lost sessions and replies read the
same either way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from ..base import Op
from .engine import CLOSE_MESSAGE, Flow, WebSocketCommon

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..aio_protocol import Round
    from ..aio_turns import TurnLock
    from .aio_connection import AsyncConnection, LibraryConnection

__all__ = ["AsyncWebSocketTransport", "Posted"]


class Posted:
    """A request sent by ``AsyncWebSocketTransport.post`` whose reply is read by ``finish``.

    It holds the transport's turn (its lock) from ``post`` until ``finish`` or ``abandon``.
    """

    settles_on_arrival = True
    """A reply is one whole message: ``finish`` reads it without waiting once it arrived."""

    def __init__(
        self, transport: AsyncWebSocketTransport, flow: Flow, steps: Iterator[None]
    ) -> None:
        self._transport = transport
        self._flow = flow
        self._steps = steps
        self._conn: AsyncConnection | None = None
        self.timeout_s = transport.read_timeout_s
        """How long its reply may take (the transport's read timeout), in seconds."""

    def _send(self, conn: AsyncConnection) -> None:
        with self._flow:
            conn.post(self._flow.text)
            self._conn = conn  # sent: ``finish`` reads its reply

    def join(self, round_: Round, key: int) -> None:
        """Count this request's connection in ``round_`` under ``key`` until its reply (or
        failure) is here; a request that was never sent is ready at once (``finish`` raises)."""
        if self._conn is not None:
            round_.expect(self._conn, key)
        else:
            round_.ready_now(key)

    def finish(self) -> dict[str, Any]:
        """The reply's ``data``, as ``request`` returns it, or its error; releases the turn.

        Reads without waiting: a reply not here yet is the request's timeout.
        """
        flow, conn = self._flow, self._conn
        try:
            if conn is not None:
                with flow:
                    flow.raw = conn.take()
            for _ in self._steps:  # only a reset may try again on a new session
                raise AssertionError("a posted step is never retried")
            return flow.data
        finally:
            self._transport._lock.release()

    def abandon(self) -> None:
        """The round ended before this reply was read (cancelled): drop the session, as a
        cancelled ``request`` does (a late reply must never be read as the next one)."""
        try:
            if self._conn is not None:
                self._conn.round = None
                self._transport._drop("a request was cancelled before its reply arrived")
        finally:
            self._transport._lock.release()


class AsyncWebSocketTransport(WebSocketCommon):
    """A lazily opened OpenEnv ``/ws`` session for asyncio.

    Concurrent requests from several tasks are serialised (replies are matched to requests by
    order). Use it from one event loop.
    """

    _conn: AsyncConnection | LibraryConnection | None
    _lock: TurnLock

    @staticmethod
    def _new_lock() -> Any:
        from ..aio_turns import TurnLock

        return TurnLock()

    def post_step(self, body: Mapping[str, Any] | str) -> Posted | None:
        """Send a step now and return the request to ``finish`` later, without waiting.

        ``body`` is the action's object, or its compact JSON text (``ModelCodec.encode_texts``).

        None when it cannot go without waiting (another request holds the session, no
        session is open yet, or the connection is websockets' own, through a proxy): then
        use ``request``. Raises what ``request`` would raise before a reply is read.
        """
        conn = self._conn
        if conn is None or not conn.SPLITS or not self._lock.try_acquire():
            return None
        try:
            flow = Flow(self, "step", body, None)
            steps = iter(flow)
            next(steps)  # the session's checks: a lost session raises here
            posted = Posted(self, flow, steps)
            posted._send(cast("AsyncConnection", conn))
        except BaseException:
            self._lock.release()
            raise
        return posted

    async def _open(self, op: str, headers: Mapping[str, str] | None) -> Any:
        from .aio_connection import connect

        with self._opening(op, headers) as opening:
            opening.conn = await connect(opening.url, opening.options)
        return opening.conn

    async def request(
        self, op: Op, body: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one operation over the session and return the reply's ``data`` object."""
        flow = Flow(self, op, body, headers)
        lock = self._lock
        await lock.acquire()  # not ``async with``: two coroutines fewer per request
        try:
            for _ in flow:
                with flow:
                    conn = self._conn or await self._open(op, headers)
                    flow.raw = await conn.roundtrip(flow.text, self._timeout_s)
            return flow.data
        finally:
            lock.release()

    async def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """End the current session (and its episode) and open a new one now.

        ``headers`` go with this and every later handshake until the next reconnect.
        """
        async with self._lock:
            await self._end_session(self._reconnecting(headers))
            await self._open("reconnect", None)

    async def _end_session(self, conn: AsyncConnection | LibraryConnection | None) -> None:
        if conn is None:
            return
        with contextlib.suppress(Exception):  # the server may already be gone
            await conn.send(CLOSE_MESSAGE)
        with contextlib.suppress(Exception):
            await conn.close()

    async def close(self) -> None:
        """End the session politely (``{"type": "close"}``) and close; idempotent."""
        self._closed = True
        await self._end_session(self._forget())
