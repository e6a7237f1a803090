"""OpenEnv WebSocket transport: one ``/ws`` connection is one server session (one episode).

Messages: ``{"type": "reset"|"step", "data": {...}}`` -> ``{"type": "observation", "data":
{...}}``; ``{"type": "state"}`` -> ``{"type": "state", "data": {...}}``; failures come back as
``{"type": "error", "data": {"message", "code", ...}}``.

Replies carry no request id, so a reply that arrives after its request timed out would be
read as the answer to the next request. A receive timeout therefore closes the socket: that
server session and its episode are lost, and the next request opens a new session (call
``reset()`` first). ``websockets`` is imported on first use.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ._errormap import (
    SESSION_ENDING_CODES,
    dumps_body,
    parse_json_object,
    quote,
    redact_url,
    translate,
    ws_error,
)
from ._exceptions import EnvConnectionError, EnvgenRuntimeError, ProtocolError, ServerError
from ._transport import Op, is_loopback_url

if TYPE_CHECKING:
    from websockets.sync.client import ClientConnection

__all__ = ["WebSocketTransport", "websocket_url"]

_SCHEMES = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
_TIMEOUT_HINT = (
    "; the WebSocket was closed so a late reply cannot be taken for the next one: the server "
    "session and its episode are lost, and the next request opens a new session (call reset())"
)
_EXPECTED_REPLY: dict[str, str] = {"reset": "observation", "step": "observation", "state": "state"}


@functools.cache
def _connect_parameters() -> frozenset[str]:
    """Keyword arguments the installed websockets' ``connect`` accepts (they vary by version)."""
    from websockets.sync.client import connect

    return frozenset(inspect.signature(connect).parameters)


def websocket_url(base_url: str) -> str:
    """The ``/ws`` endpoint for a base URL (http -> ws, https -> wss)."""
    parts = urlsplit(base_url)
    scheme = _SCHEMES.get(parts.scheme)
    if scheme is None:
        raise ValueError(
            "WebSocketTransport needs an http(s):// or ws(s):// base URL, "
            f"got {redact_url(base_url)}"
        )
    path = parts.path.rstrip("/")
    if not path.endswith("/ws"):
        path += "/ws"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


class WebSocketTransport:
    """A lazily opened OpenEnv ``/ws`` session.

    ``timeout_s`` bounds opening the connection and waiting for each reply. Requests from
    several threads are serialised (replies are matched to requests by order).
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 15.0,
        headers: Mapping[str, str] | None = None,
        max_message_bytes: int | None = 100 * 1024 * 1024,
    ) -> None:
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self._url = websocket_url(base_url)
        self._timeout_s = timeout_s
        self._headers = dict(headers or {})
        self._max_message_bytes = max_message_bytes
        self._conn: ClientConnection | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._sessions_opened = 0

    def __repr__(self) -> str:
        return f"WebSocketTransport({redact_url(self._url)!r}, timeout_s={self._timeout_s})"

    @property
    def url(self) -> str:
        """The ``ws://.../ws`` endpoint."""
        return self._url

    @property
    def connected(self) -> bool:
        """Whether a session is currently open."""
        return self._conn is not None

    @property
    def sessions_opened(self) -> int:
        """How many connections (server sessions) this transport has opened so far."""
        return self._sessions_opened

    def _open(self, op: Op) -> ClientConnection:
        from websockets.sync.client import connect

        options: dict[str, Any] = {
            "open_timeout": self._timeout_s,
            "close_timeout": 2.0,
            "max_size": self._max_message_bytes,
        }
        if self._headers:
            options["additional_headers"] = self._headers
        supported = _connect_parameters()
        if "legacy" in supported:
            # websockets >= 17.1 warns unless direct (non context manager) use is explicit.
            options["legacy"] = True
        if "proxy" in supported and is_loopback_url(self._url):
            options["proxy"] = None  # never route local traffic through a configured proxy
        with translate(op, self._url, self._timeout_s):
            conn: ClientConnection = connect(self._url, **options)
        self._conn = conn
        self._sessions_opened += 1
        return conn

    def _drop(self) -> None:
        """Forget the current connection (its server session ends with it)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # best effort: it is being abandoned
                conn.close()

    def _pending_server_error(self, conn: ClientConnection, op: Op) -> ServerError | None:
        """An error the server sent before closing (e.g. CAPACITY_REACHED), if any."""
        try:
            raw = conn.recv(timeout=0.5)
        except Exception:  # nothing pending: report the close itself
            return None
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        try:
            message = parse_json_object(text, op=op, source="the WebSocket message")
        except ProtocolError:
            return None
        if message.get("type") != "error":
            return None
        return ws_error(message.get("data"), op=op, raw=text)

    def request(self, op: Op, body: Mapping[str, Any]) -> dict[str, Any]:
        """Send one operation over the session and return the reply's ``data`` object."""
        if op not in _EXPECTED_REPLY:
            raise ValueError(f"unknown operation {op!r}; expected reset, step or state")
        message: dict[str, Any] = (
            {"type": op} if op == "state" else {"type": op, "data": dict(body)}
        )
        text = dumps_body(message, op=op)
        with self._lock:
            if self._closed:
                raise EnvgenRuntimeError(f"{op} failed: this WebSocketTransport is closed")
            reused = self._conn is not None
            try:
                raw = self._exchange(op, text)
            except EnvConnectionError:
                if not (reused and op == "reset"):
                    raise
                # The server closed an idle session (restart, idle reaping). A reset starts
                # a new episode anyway, so it may safely go to a new session once.
                raw = self._exchange(op, text)
            return self._handle_reply(op, raw)

    def _exchange(self, op: Op, text: str) -> str | bytes:
        """Send one message and receive one reply; any failure drops the connection."""
        conn = self._conn if self._conn is not None else self._open(op)
        try:
            with translate(op, self._url, self._timeout_s, timeout_hint=_TIMEOUT_HINT):
                try:
                    conn.send(text)
                except Exception:
                    pending = self._pending_server_error(conn, op)
                    if pending is not None:
                        raise pending from None
                    raise
                return conn.recv(timeout=self._timeout_s)
        except EnvgenRuntimeError:
            self._drop()
            raise

    def _handle_reply(self, op: Op, raw: str | bytes) -> dict[str, Any]:
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                self._drop()
                received = quote(raw)
                raise ProtocolError(
                    f"{op} failed: binary WebSocket message is not UTF-8 JSON; "
                    f"received: {received}",
                    received=received,
                    op=op,
                ) from None
        try:
            reply = parse_json_object(raw, op=op, source="the WebSocket message")
        except ProtocolError:
            self._drop()
            raise
        kind = reply.get("type")
        data = reply.get("data")
        if kind == "error":
            error = ws_error(data, op=op, raw=raw)
            if error.code in SESSION_ENDING_CODES:
                self._drop()
            raise error
        expected = _EXPECTED_REPLY[op]
        if kind != expected or not isinstance(data, dict):
            self._drop()
            received = quote(raw)
            problem = (
                f"a message of type {kind!r}"
                if kind != expected
                else f"'data' of type {type(data).__name__}, not an object"
            )
            raise ProtocolError(
                f"{op} failed: expected a {expected!r} message with an object 'data', got "
                f"{problem}; received: {received}",
                received=received,
                op=op,
            )
        return data

    def close(self) -> None:
        """End the session politely (``{"type": "close"}``) and close; idempotent."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is None:
            return
        with contextlib.suppress(Exception):  # the server may already be gone
            conn.send('{"type":"close"}')
        with contextlib.suppress(Exception):
            conn.close()
