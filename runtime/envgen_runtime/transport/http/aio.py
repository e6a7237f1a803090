"""The asyncio HTTP transport: performs ``HttpEngine``'s I/O actions on one asyncio connection.

Routes, envelopes, headers, deadlines, keep-alive and reply parsing come from
``engine``, exactly as for the blocking transport; only waiting differs. It needs no
library beyond the standard one (the ``async`` extra is kept, empty, for old install lines).

A step can also be split, for the pool's lock-step rounds: ``post_step`` performs the
flow's actions that need no waiting (the write, above all) and returns a ``Posted``, whose
``finish`` goes on once a ``Round`` has woken; whatever still needs waiting then (a reply
not complete yet, a new connection) it returns as an awaitable: the same flow throughout.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any

from ..base import Op
from .engine import CLOSE, DROPPED, OPEN, RECV, SEND, TLS, Flow, HttpEngine, resume
from .sync import dropped

if TYPE_CHECKING:
    from ..aio_protocol import Round
    from ..aio_turns import TurnLock
    from .aio_connection import Connection

__all__ = ["AsyncHttpTransport", "Posted"]

_LATER = object()  # an action that needs waiting: ``Posted.finish`` hands it to ``_run``


class Posted:
    """A step ``AsyncHttpTransport.post_step`` began: the flow, and the action it waits on.

    It holds the transport's turn (its lock) until ``finish`` returns a reply or raises,
    what it returned to await ends, or ``abandon``.
    """

    settles_on_arrival = False
    """A reply's first bytes may not be all of it: ``finish`` may still have to wait."""

    def __init__(self, transport: AsyncHttpTransport, flow: Flow) -> None:
        self._transport = transport
        self._flow = flow
        self._item: Any = None  # the pending action, or the flow's result once ``_done``
        self._done = False
        self.timeout_s = transport._step_read_timeout_s
        """How long its reply may take (the step's read timeout), in seconds."""

    def _advance(self, value: Any, error: BaseException | None) -> None:
        """Resume the flow and perform each action that needs no waiting, until one does."""
        try:
            while True:
                self._done, self._item = resume(self._flow, value, error)
                if self._done:
                    return
                value, error = None, None
                try:
                    value = self._transport._perform_now(*self._item)
                except BaseException as exc:  # the flow closes the connection and re-raises
                    error = exc
                if value is _LATER:
                    return
        except BaseException:
            self._release()
            raise

    def join(self, round_: Round, key: int) -> None:
        """Count the connection in ``round_`` under ``key`` if the flow waits for its reply;
        else it is ready at once (``finish`` gives the result, or what to await for it)."""
        conn = self._transport._conn
        if not self._done and self._item[0] == RECV and conn is not None:
            round_.expect(conn, key)
        else:
            round_.ready_now(key)

    def finish(self) -> dict[str, Any] | Awaitable[dict[str, Any]]:
        """The reply's data (turn released), or, while the flow must still wait (a reply not
        complete yet, a check of the server's state, a new connection), what to await for it.
        """
        if not self._done:
            kind, _ = self._item
            conn = self._transport._conn
            if kind == RECV and conn is not None and conn.readable():
                try:
                    data = conn.take()
                except BaseException as exc:  # the connection's failure is the flow's
                    self._advance(None, exc)
                else:
                    self._advance(data, None)
            if not self._done:
                return self._complete()
        self._release()
        result: dict[str, Any] = self._item
        return result

    async def _complete(self) -> dict[str, Any]:
        """The rest of the step the usual way (``AsyncHttpTransport._run``); turn released."""
        try:
            result: dict[str, Any] = await self._transport._run(self._flow, self._item)
            return result
        finally:
            self._release()

    def abandon(self) -> None:
        """The round ended before the reply was read (cancelled): close the connection."""
        if not self._done:
            import asyncio

            self._transport._drop_flow(self._flow, asyncio.CancelledError())
        self._release()

    def _release(self) -> None:
        lock = self._transport._lock
        if lock.locked():
            lock.release()


class AsyncHttpTransport(HttpEngine):
    """One keep-alive connection (``aio_connection``) to a stateful OpenEnv HTTP server.

    Concurrent requests from several tasks are serialised, as the server holds one episode.
    Use it from one event loop.
    """

    _lock: TurnLock

    def _init_io(self) -> None:
        from ..aio_turns import TurnLock

        self._conn: Connection | None = None
        self._lock = TurnLock()

    def post_step(self, body: Mapping[str, Any] | str) -> Posted | None:
        """Begin a step now, without waiting, for ``Posted.finish`` to end later.

        None when it cannot begin without waiting (no connection open, or another request
        holds it): then use ``request``. Raises what ``request`` would raise before a reply.
        """
        if self._conn is None or not self._lock.try_acquire():
            return None
        posted = Posted(self, self.flow("step", body, None))
        posted._advance(None, None)
        return posted

    def _perform_now(self, kind: int, arg: Any) -> Any:
        """An action's result if it needs no waiting, else ``_LATER`` (``_perform`` waits)."""
        conn = self._conn
        if kind == SEND and conn is not None and conn.writable():
            conn.write(arg[0])
            return None
        if kind == DROPPED and conn is not None and conn.transport is not None:
            # Asked of the socket itself too, as the loop may not have read the EOF yet.
            return not conn.idle_and_open() or dropped(conn.transport.get_extra_info("socket"))
        if kind == RECV and conn is not None and conn.readable():
            return conn.take()
        if kind == CLOSE:
            if conn is not None:
                self._conn = None
                conn.close()
            return None
        return _LATER

    def _drop_flow(self, flow: Flow, error: BaseException) -> None:
        """Throw ``error`` into ``flow`` and perform what it does about it (it closes)."""
        done, item = resume(flow, None, error)
        while not done:
            try:
                done, item = resume(flow, self._perform_now(*item), None)
            except BaseException:
                return

    async def request(
        self, op: Op, body: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one operation; see ``engine`` for the routes and continuity checks."""
        async with self._lock:
            result: dict[str, Any] = await self._run(self.flow(op, body, headers))
            return result

    async def _run(self, flow: Flow, item: Any = None) -> Any:
        """Perform ``flow``'s actions until it returns; a failed action's error goes into it.

        ``item``: the action a flow already begun waits on (``Posted.complete``).
        """
        done, item = (False, item) if item is not None else resume(flow, None, None)
        while not done:
            try:
                result = await self._perform(*item)
            except BaseException as exc:  # the flow closes the connection and re-raises
                done, item = resume(flow, None, exc)
            else:
                done, item = resume(flow, result, None)
        return item

    async def _perform(self, kind: int, arg: Any) -> Any:
        """One action: a send waits while the peer does not read; the rest as ``_perform_now``
        does them when they need no waiting, else awaited."""
        conn = self._conn
        if kind == SEND:
            assert conn is not None
            await conn.send(*arg)
            return None
        done = self._perform_now(kind, arg)
        if done is not _LATER:
            return done
        if kind == RECV:
            assert conn is not None
            return await conn.recv(arg)
        if kind == OPEN:
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
        else:  # DROPPED needs an open connection, which _perform_now had
            raise AssertionError(f"action {kind} on no open connection")
        return None

    async def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """Close pooled connections; later requests also carry ``headers`` (until the next)."""
        async with self._lock:
            await self._run(self.reconnect_flow(headers))

    async def close(self) -> None:
        """Close the pooled connection; idempotent."""
        self._closed = True
        await self._run(self.close_flow())
