"""OpenEnv WebSocket transport: one ``/ws`` connection is one server session (one episode).

Messages: ``{"type": "reset"|"step", "data": {...}}`` -> ``{"type": "observation", "data":
{...}}``; ``{"type": "state"}`` -> ``{"type": "state", "data": {...}}``; failures come back as
``{"type": "error", "data": {"message", "code", ...}}``.

Replies carry no request id, so a reply that arrives after its request timed out would be
read as the answer to the next request. A receive timeout therefore closes the socket: that
server session and its episode are lost. After a session is lost (timeout, server close,
protocol error) the transport never quietly opens a new one for ``step`` or ``state``: they
raise ``SessionLostError``, because a new session is a fresh server-side environment.
``reset`` (which starts a new episode anyway) and ``reconnect()`` open a new session.

Headers travel only with the handshake: per-call headers are sent when that call opens the
session; on an open session they must already have been sent, else ValueError.

``WebSocketCommon`` holds everything that does not do I/O, shared with the asyncio transport
(``_websocket_async``). ``websockets`` is imported on first use.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
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
from ._exceptions import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    ProtocolError,
    ServerError,
    SessionLostError,
)
from ._headers import RedactingLogger, TraceContext, check_headers, has_header, merge_headers
from ._transport import Op, is_loopback_url

if TYPE_CHECKING:
    from websockets.sync.client import ClientConnection

    from ._wsdirect import DirectConnection

__all__ = ["WebSocketCommon", "WebSocketTransport", "websocket_url"]

_SCHEMES = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
TIMEOUT_HINT = (
    "; the WebSocket was closed so a late reply cannot be taken for the next one: the server "
    "session and its episode are lost (call reset() to start a new episode on a new session)"
)
_EXPECTED_REPLY: dict[str, str] = {"reset": "observation", "step": "observation", "state": "state"}
CLOSE_MESSAGE = '{"type":"close"}'
_REDIRECTS = frozenset({300, 301, 302, 303, 307, 308})


@functools.cache
def connect_parameters(asynchronous: bool) -> frozenset[str]:
    """Keyword arguments the installed websockets' ``connect`` accepts (they vary by version)."""
    if asynchronous:
        from websockets.asyncio.client import connect as async_connect

        return frozenset(inspect.signature(async_connect).parameters)
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


def ends_session(error: EnvgenRuntimeError) -> bool:
    """Whether a failed exchange leaves the stream unusable (so the session is dropped).

    Only a server error message that the server does not follow with a close (a failed
    step, a rejected action) keeps the session: the stream is still in step.
    """
    return not (isinstance(error, ServerError) and error.code not in SESSION_ENDING_CODES)


class WebSocketCommon:
    """Configuration, session bookkeeping and message format shared by sync and async.

    ``timeout_s`` bounds waiting for each reply and, unless ``connect_timeout_s`` is given,
    the opening handshake.
    """

    _kind = "WebSocketTransport"

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
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if connect_timeout_s is not None and connect_timeout_s <= 0:
            raise ValueError("connect_timeout_s must be positive")
        self._url = websocket_url(base_url)
        self._timeout_s = timeout_s
        self._connect_timeout_s = connect_timeout_s if connect_timeout_s is not None else timeout_s
        self._headers = check_headers(headers, what="headers")
        self._sticky_headers: dict[str, str] = {}
        self._handshake_headers: dict[str, str] = {}
        self._max_message_bytes = max_message_bytes
        self._trace = trace
        self._closed = False
        self._lost: str | None = None
        self._sessions_opened = 0

    def __repr__(self) -> str:
        return f"{self._kind}({redact_url(self._url)!r}, timeout_s={self._timeout_s})"

    @property
    def url(self) -> str:
        """The ``ws://.../ws`` endpoint."""
        return self._url

    @property
    def connect_timeout_s(self) -> float:
        """Limit for the opening handshake, in seconds."""
        return self._connect_timeout_s

    @property
    def read_timeout_s(self) -> float:
        """Limit for each reply, in seconds."""
        return self._timeout_s

    @property
    def sessions_opened(self) -> int:
        """How many connections (server sessions) this transport has opened so far."""
        return self._sessions_opened

    @property
    def session_lost(self) -> bool:
        """Whether the last session was lost (``step``/``state`` refuse until a reset)."""
        return self._lost is not None

    # ------------------------------------------------------------------ pure helpers

    @staticmethod
    def _message(op: Op, body: Mapping[str, Any]) -> str:
        if op not in _EXPECTED_REPLY:
            raise ValueError(f"unknown operation {op!r}; expected reset, step or state")
        message: dict[str, Any] = (
            {"type": op} if op == "state" else {"type": op, "data": dict(body)}
        )
        return dumps_body(message, op=op)

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise EnvgenRuntimeError(f"{what} failed: this {self._kind} is closed")

    def _check_not_lost(self, op: Op) -> None:
        """A lost session is replaced only by a reset (a new episode anyway)."""
        if self._lost is not None and op != "reset":
            raise SessionLostError(
                f"{op} failed: the WebSocket session was lost earlier ({self._lost}), and with "
                "it the server-side environment and its episode. A new session would be a "
                "fresh environment, so nothing was sent: call reset() to start a new episode "
                "(or reconnect() to open a new session explicitly)",
                op=op,
                url=self._url,
            )

    def _check_headers_fit(self, op: Op, headers: Mapping[str, str] | None) -> None:
        """Per-call headers on an open session must be ones its handshake already carried."""
        if not headers:
            return
        extra = check_headers(headers, what="headers")
        sent = {name.lower(): value for name, value in self._handshake_headers.items()}
        for name, value in extra.items():
            if sent.get(name.lower()) != value:
                raise ValueError(
                    f"{op}(headers=...) cannot send header {name!r} on the open WebSocket "
                    "session: WebSocket headers travel only with the handshake. Use "
                    "default_headers, or reconnect(headers=...) to open a new session "
                    "carrying them"
                )

    def _handshake(self, headers: Mapping[str, str] | None) -> dict[str, str]:
        """Headers for a new session: defaults, reconnect()'s, the call's, a traceparent."""
        merged = merge_headers(self._headers, self._sticky_headers, check_headers(headers))
        if self._trace is not None and not has_header(merged, "traceparent"):
            merged["traceparent"] = self._trace.traceparent()
        return merged

    def _connect_options(self, headers: Mapping[str, str], *, asynchronous: bool) -> dict[str, Any]:
        options: dict[str, Any] = {
            "open_timeout": self._connect_timeout_s,
            "close_timeout": 2.0,
            "max_size": self._max_message_bytes,
        }
        if headers:
            options["additional_headers"] = dict(headers)
        supported = connect_parameters(asynchronous)
        if "logger" in supported:
            options["logger"] = RedactingLogger(logging.getLogger("websockets.client"))
        if "legacy" in supported:
            # websockets >= 17.1 warns unless direct (non context manager) use is explicit.
            options["legacy"] = True
        if is_loopback_url(self._url):
            if "proxy" in supported:
                options["proxy"] = None  # never route local traffic through a configured proxy
            # permessage-deflate costs CPU on both ends for every message and saves no time
            # on a loopback link: about a third of a small step's client CPU (bench_step.py).
            options["compression"] = None
        return options

    def _opened(self, headers: Mapping[str, str]) -> None:
        self._handshake_headers = dict(headers)
        self._sessions_opened += 1
        self._lost = None

    def _mark_lost(self, reason: str) -> None:
        self._lost = reason
        self._handshake_headers = {}

    @staticmethod
    def _reason(error: BaseException) -> str:
        """Why a session was dropped, for SessionLostError (never quotes server text)."""
        if isinstance(error, EnvTimeoutError):
            return f"{error.op or 'a request'} got no reply in time"
        if isinstance(error, ServerError):
            return f"the server ended it with {error.code or 'an error'}"
        if isinstance(error, ProtocolError):
            return f"{error.op or 'a request'} got a malformed reply"
        if isinstance(error, EnvConnectionError):
            return "the connection closed or failed"
        if type(error).__name__ == "CancelledError":
            return "a request was cancelled before its reply arrived"
        return f"a request was interrupted ({type(error).__name__})"

    def _session_lost(self, op: Op, exc: EnvConnectionError) -> EnvConnectionError:
        """The error for a connection failure mid-request on an established session.

        That call is the first to learn that the session (and its episode) is gone, so it
        raises ``SessionLostError`` like every later call, not a plain connection error.
        """
        if isinstance(exc, SessionLostError):
            return exc
        return SessionLostError(exc.message, op=op, url=self._url)

    @staticmethod
    def _parse_reply(op: Op, raw: str | bytes) -> dict[str, Any]:
        """The ``data`` object of the expected reply; runtime errors for anything else."""
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError:
                received = quote(raw)
                raise ProtocolError(
                    f"{op} failed: binary WebSocket message is not UTF-8 JSON; "
                    f"received: {received}",
                    received=received,
                    op=op,
                ) from None
        reply = parse_json_object(raw, op=op, source="the WebSocket message")
        kind = reply.get("type")
        data = reply.get("data")
        if kind == "error":
            raise ws_error(data, op=op, raw=raw)
        expected = _EXPECTED_REPLY[op]
        if kind != expected or not isinstance(data, dict):
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

    @staticmethod
    def _pending_error(raw: str | bytes, op: Op) -> ServerError | None:
        """The error message a server sent before closing (e.g. CAPACITY_REACHED), if any."""
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        try:
            message = parse_json_object(text, op=op, source="the WebSocket message")
        except ProtocolError:
            return None
        if message.get("type") != "error":
            return None
        return ws_error(message.get("data"), op=op, raw=text)


def abandon(conn: ClientConnection | DirectConnection) -> None:
    """Close a connection now, without waiting for the server's side of the close."""
    from ._wsdirect import DirectConnection

    if isinstance(conn, DirectConnection):
        conn.abort()
        return
    import socket

    # websockets' threaded client: shutting the socket down ends its reader thread at once.
    sock = conn.socket
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


class WebSocketTransport(WebSocketCommon):
    """A lazily opened OpenEnv ``/ws`` session.

    Requests from several threads are serialised (replies are matched to requests by order).
    """

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
        super().__init__(
            base_url,
            timeout_s=timeout_s,
            headers=headers,
            max_message_bytes=max_message_bytes,
            connect_timeout_s=connect_timeout_s,
            trace=trace,
        )
        self._conn: ClientConnection | DirectConnection | None = None
        self._lock = threading.Lock()

    @property
    def connected(self) -> bool:
        """Whether a session is currently open."""
        return self._conn is not None

    def _open(
        self, op: str, headers: Mapping[str, str] | None
    ) -> ClientConnection | DirectConnection:
        handshake = self._handshake(headers)
        options = self._connect_options(handshake, asynchronous=False)
        with translate(
            op, self._url, self._timeout_s, connect=True, connect_timeout_s=self._connect_timeout_s
        ):
            conn = self._connect(options)
        self._conn = conn
        self._opened(handshake)
        return conn

    def _connect(self, options: dict[str, Any]) -> ClientConnection | DirectConnection:
        """A DirectConnection (I/O in the caller's thread) unless a proxy is involved.

        websockets' threaded client handles proxies, and redirects (the direct handshake
        hands a redirect over to it).
        """
        from websockets.exceptions import InvalidStatus
        from websockets.sync.client import connect

        from ._wsdirect import connect_direct, direct_allowed

        if direct_allowed(self._url, options.get("proxy", True)):
            try:
                return connect_direct(self._url, **options)
            except InvalidStatus as exc:
                if exc.response.status_code not in _REDIRECTS:
                    raise
        threaded: ClientConnection = connect(self._url, **options)
        return threaded

    def _drop(self, reason: str) -> None:
        """Forget the current connection; its server session (and episode) ends with it.

        The connection is abandoned without a closing handshake: the server may be dead or
        frozen, and waiting for its close frame would overrun the caller's timeout.
        """
        conn, self._conn = self._conn, None
        if conn is not None:
            self._mark_lost(reason)
            with contextlib.suppress(Exception):  # best effort: it is being abandoned
                abandon(conn)

    def _pending_server_error(
        self, conn: ClientConnection | DirectConnection, op: Op
    ) -> ServerError | None:
        try:
            raw = conn.recv(timeout=0.5)
        except Exception:  # nothing pending: report the close itself
            return None
        return self._pending_error(raw, op)

    def request(
        self, op: Op, body: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one operation over the session and return the reply's ``data`` object."""
        text = self._message(op, body)
        with self._lock:
            self._check_open(op)
            reused = self._conn is not None
            if reused:
                self._check_headers_fit(op, headers)
            else:
                self._check_not_lost(op)
            try:
                raw = self._exchange(op, text, headers)
            except EnvConnectionError as exc:
                if not reused:
                    raise
                if op != "reset":
                    raise self._session_lost(op, exc) from exc.__cause__
                # The server closed an idle session (restart, idle reaping). A reset starts
                # a new episode anyway, so it may safely go to a new session once.
                raw = self._exchange(op, text, headers)
            try:
                return self._parse_reply(op, raw)
            except EnvgenRuntimeError as exc:
                if ends_session(exc):
                    self._drop(self._reason(exc))
                raise

    def _exchange(self, op: Op, text: str, headers: Mapping[str, str] | None) -> str | bytes:
        """Send one message and receive one reply; any failure drops the connection."""
        conn = self._conn if self._conn is not None else self._open(op, headers)
        try:
            with translate(op, self._url, self._timeout_s, timeout_hint=TIMEOUT_HINT):
                try:
                    conn.send(text)
                except Exception:
                    pending = self._pending_server_error(conn, op)
                    if pending is not None:
                        raise pending from None
                    raise
                return conn.recv(timeout=self._timeout_s)
        except BaseException as exc:  # a reply may still come: never reuse this stream
            self._drop(self._reason(exc))
            raise

    def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """End the current session (and its episode) and open a new one now.

        ``headers`` go with this and every later handshake until the next reconnect.
        """
        sticky = check_headers(headers, what="headers")
        with self._lock:
            self._check_open("reconnect")
            self._end_session()
            self._sticky_headers = sticky
            self._lost = None
            self._open("reconnect", None)

    def _end_session(self) -> None:
        conn, self._conn = self._conn, None
        self._handshake_headers = {}
        if conn is None:
            return
        with contextlib.suppress(Exception):  # the server may already be gone
            conn.send(CLOSE_MESSAGE)
        with contextlib.suppress(Exception):
            conn.close()

    def close(self) -> None:
        """End the session politely (``{"type": "close"}``) and close; idempotent."""
        self._closed = True
        self._end_session()
