"""The asyncio HTTP transport: performs ``HttpEngine``'s I/O actions on one asyncio connection.

Routes, envelopes, headers, deadlines, keep-alive and reply parsing come from
``engine``, exactly as for the blocking transport; only waiting differs. It needs no
library beyond the standard one (the ``async`` extra is kept, empty, for old install lines).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..base import Op
from .engine import CLOSE, DROPPED, OPEN, RECV, SEND, TLS, Flow, HttpEngine, resume
from .sync import dropped

if TYPE_CHECKING:
    from .aio_connection import Connection


class AsyncHttpTransport(HttpEngine):
    """One keep-alive connection (``aio_connection``) to a stateful OpenEnv HTTP server.

    Concurrent requests from several tasks are serialised, as the server holds one episode.
    Use it from one event loop.
    """

    def _init_io(self) -> None:
        import asyncio

        self._conn: Connection | None = None
        self._lock = asyncio.Lock()

    async def request(
        self, op: Op, body: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one operation; see ``engine`` for the routes and continuity checks."""
        async with self._lock:
            result: dict[str, Any] = await self._run(self.flow(op, body, headers))
            return result

    async def _run(self, flow: Flow) -> Any:
        """Perform ``flow``'s actions until it returns; a failed action's error goes into it."""
        done, item = resume(flow, None, None)
        while not done:
            try:
                result = await self._perform(*item)
            except BaseException as exc:  # the flow closes the connection and re-raises
                done, item = resume(flow, None, exc)
            else:
                done, item = resume(flow, result, None)
        return item

    async def _perform(self, kind: int, arg: Any) -> Any:
        conn = self._conn
        if kind == RECV:
            assert conn is not None
            return await conn.recv(arg)
        if kind == SEND:
            assert conn is not None
            await conn.send(*arg)
        elif kind == DROPPED:
            assert conn is not None and conn.transport is not None
            # Asked of the socket itself too, as the loop may not have read the EOF yet.
            return not conn.idle_and_open() or dropped(conn.transport.get_extra_info("socket"))
        elif kind == OPEN:
            import asyncio

            from .aio_connection import Connection

            host, port, timeout = arg
            async with asyncio.timeout(timeout):
                _, self._conn = await asyncio.get_running_loop().create_connection(
                    Connection, host, port
                )
        elif kind == TLS:
            import asyncio

            assert conn is not None and conn.transport is not None
            server_name, timeout = arg
            async with asyncio.timeout(timeout):
                conn.transport = await asyncio.get_running_loop().start_tls(
                    conn.transport, conn, self.tls_context(), server_hostname=server_name
                )
        elif kind == CLOSE and conn is not None:
            self._conn = None
            conn.close()
        return None

    async def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """Close pooled connections; later requests also carry ``headers`` (until the next)."""
        async with self._lock:
            await self._run(self.reconnect_flow(headers))

    async def close(self) -> None:
        """Close the pooled connection; idempotent."""
        self._closed = True
        await self._run(self.close_flow())
