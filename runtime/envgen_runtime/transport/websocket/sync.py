"""OpenEnv WebSocket transport on a blocking socket (the rules are in ``engine``).

A thin shell: ``WebSocketCommon`` decides, ``direct`` moves the bytes. ``websockets`` is
imported when the first session opens.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..base import Op
from .engine import CLOSE_MESSAGE, Flow, WebSocketCommon, websocket_url

if TYPE_CHECKING:
    from .direct import DirectConnection, ThreadedConnection

__all__ = ["WebSocketTransport", "websocket_url"]


class WebSocketTransport(WebSocketCommon):
    """A lazily opened OpenEnv ``/ws`` session.

    Requests from several threads are serialised (replies are matched to requests by order).
    """

    _conn: DirectConnection | ThreadedConnection | None

    def _open(self, op: str, headers: Mapping[str, str] | None) -> Any:
        from .direct import connect

        with self._opening(op, headers) as opening:
            opening.conn = connect(opening.url, opening.options)
        return opening.conn

    def request(
        self, op: Op, body: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one operation over the session and return the reply's ``data`` object."""
        flow = Flow(self, op, body, headers)
        with self._lock:
            for _ in flow:
                with flow:
                    conn = self._conn or self._open(op, headers)
                    flow.raw = conn.roundtrip(flow.text, self._timeout_s)
            return flow.data

    def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """End the current session (and its episode) and open a new one now.

        ``headers`` go with this and every later handshake until the next reconnect.
        """
        with self._lock:
            self._end_session(self._reconnecting(headers))
            self._open("reconnect", None)

    def _end_session(self, conn: DirectConnection | ThreadedConnection | None) -> None:
        if conn is None:
            return
        with contextlib.suppress(Exception):  # the server may already be gone
            conn.send(CLOSE_MESSAGE)
        with contextlib.suppress(Exception):
            conn.close()

    def close(self) -> None:
        """End the session politely (``{"type": "close"}``) and close; idempotent."""
        self._closed = True
        self._end_session(self._forget())
