"""OpenEnv WebSocket transport for asyncio (the rules are in ``engine``).

A thin shell: ``WebSocketCommon`` decides, ``aio_connection`` moves the bytes on the event loop.
A request that is cancelled while waiting for its reply drops the session like a timeout
does: the late reply must never be read as the next one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..base import Op
from .engine import CLOSE_MESSAGE, Flow, WebSocketCommon

if TYPE_CHECKING:
    from .aio_connection import AsyncConnection, LibraryConnection

__all__ = ["AsyncWebSocketTransport"]


class AsyncWebSocketTransport(WebSocketCommon):
    """A lazily opened OpenEnv ``/ws`` session for asyncio.

    Concurrent requests from several tasks are serialised (replies are matched to requests by
    order). Use it from one event loop.
    """

    _conn: AsyncConnection | LibraryConnection | None

    @staticmethod
    def _new_lock() -> Any:
        import asyncio

        return asyncio.Lock()

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
