"""The OpenEnv ``/ws`` session engine: everything about a session except moving bytes.

One ``/ws`` connection is one server session (one episode); the messages are in DESIGN.md.
Replies carry no request id, so a late reply would be read as the answer to the next
request: a receive timeout closes the socket, and the session and its episode are lost.
``step``/``state`` then raise ``SessionLostError`` rather than quietly open a fresh
server-side environment. Headers travel only with the handshake.

``WebSocketCommon`` decides for both shells (``sync``, ``aio``), which
only open connections, move bytes and wait. websockets' exceptions and the server's error
messages are mapped in ``errors``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ...core.errors import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    ProtocolError,
    ServerError,
    SessionLostError,
)
from ...core.jsonbody import dumps_body, parse_json_object
from ...core.text import quote, redact_url
from ..base import Limits, Op, is_loopback_url
from ..headers import TraceContext, check_headers, has_header, merge_headers
from .errors import SESSION_ENDING, Catcher, map_ws_exception, ws_error

__all__ = ["CLOSE_MESSAGE", "Flow", "WebSocketCommon", "websocket_url"]

_SCHEMES = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
_TIMEOUT_HINT = (
    "; the WebSocket was closed so a late reply cannot be taken for the next one: the server "
    "session and its episode are lost (call reset() to start a new episode on a new session)"
)
_EXPECTED_REPLY: dict[str, str] = {"reset": "observation", "step": "observation", "state": "state"}
CLOSE_MESSAGE = '{"type":"close"}'


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


# --------------------------------------------------------------------------- session


class Flow(Catcher):
    """One request: ``for _ in flow: with flow: flow.raw = <send and receive>``; then ``data``.

    A failed try is mapped to the runtime's errors and drops the connection (a reply may
    still come, and must never be read as the next one). A connection failure on a reused
    session ends it: ``step``/``state`` raise ``SessionLostError``; a ``reset`` (a new
    episode anyway) goes to a new session once, since the server may have closed an idle
    session (restart, idle reaping).
    """

    def __init__(
        self,
        session: WebSocketCommon,
        op: Op,
        body: Mapping[str, Any] | str,
        headers: Mapping[str, str] | None,
    ) -> None:
        self.op = op
        self.text = session._message(op, body)
        self.headers = headers
        self.raw: str | bytes = ""
        self.data: dict[str, Any] = {}
        self._session = session
        self._first = True
        self._error: EnvConnectionError | None = None  # the first try's, if it may be retried

    def caught(self, exc: BaseException) -> bool:
        """Map a failed try and drop the connection.

        An error message the server sent before closing (e.g. CAPACITY_REACHED) is reported
        rather than the close itself.
        """
        session, op = self._session, self.op
        mapped = session._map(exc, op)
        conn = session._conn
        if conn is not None and isinstance(exc, Exception) and exc is not mapped:
            for raw in conn.buffered():
                try:
                    session._parse_reply(op, raw)
                except ServerError as error:
                    error.__suppress_context__ = True
                    mapped = error
                    break
                except EnvgenRuntimeError:
                    continue
        session._drop(session._reason(mapped))
        if self._first and isinstance(mapped, EnvConnectionError):
            self._error = mapped
            return True
        if mapped is exc:
            return False
        raise mapped

    def __iter__(self) -> Iterator[None]:
        session, op = self._session, self.op
        reused = session._check(op, self.headers)
        yield None
        exc = self._error
        if exc is not None:
            if not reused:
                raise exc
            if op != "reset":  # this call is the first to learn the session is gone
                raise SessionLostError(exc.message, op=op, url=session._base_url) from exc.__cause__
            self._first = False
            yield None
        try:
            self.data = session._parse_reply(op, self.raw)
        except EnvgenRuntimeError as error:
            # Only an error message the server does not follow with a close (a failed step,
            # a rejected action) leaves the stream in step, and so keeps the session.
            if not (isinstance(error, ServerError) and error.code not in SESSION_ENDING):
                session._drop(session._reason(error))
            raise


class Opening:
    """What a shell needs to open a session: the URL, options, and (afterwards) the connection."""

    def __init__(self, url: str, options: dict[str, Any]) -> None:
        self.url = url
        self.options = options
        self.conn: Any = None


class WebSocketCommon(Limits):
    """Configuration, session bookkeeping and message format shared by sync and async.

    ``timeout_s`` bounds waiting for each reply and, unless ``connect_timeout_s`` is given,
    the opening handshake. A shell runs each request as a ``Flow`` and
    opens sessions inside ``with self._opening(...)``.
    """

    _conn: Any

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
        self._set_limits(timeout_s, connect_timeout_s)
        self._base_url = websocket_url(base_url)
        self._headers = check_headers(headers, what="headers")
        self._sticky_headers: dict[str, str] = {}
        self._handshake_headers: dict[str, str] = {}
        self._max_message_bytes = max_message_bytes
        self._trace = trace
        self._closed = False
        self._lost: str | None = None
        self._sessions_opened = 0
        self._conn = None
        self._lock = self._new_lock()

    @staticmethod
    def _new_lock() -> Any:
        """The lock that serialises requests (replies are matched to requests by order)."""
        return threading.Lock()

    @property
    def url(self) -> str:
        """The ``ws://.../ws`` endpoint (also ``base_url``)."""
        return self._base_url

    @property
    def sessions_opened(self) -> int:
        """How many connections (server sessions) this transport has opened so far."""
        return self._sessions_opened

    @property
    def session_lost(self) -> bool:
        """Whether the last session was lost (``step``/``state`` refuse until a reset)."""
        return self._lost is not None

    @property
    def connected(self) -> bool:
        """Whether a session is currently open."""
        return self._conn is not None

    # ------------------------------------------------------------------ requests

    @staticmethod
    def _message(op: Op, body: Mapping[str, Any] | str) -> str:
        """The message for ``op``; ``body`` as an object, or already as its compact JSON text
        (a pool round's batch-encoded actions): the same bytes either way."""
        if op not in _EXPECTED_REPLY:
            raise ValueError(f"unknown operation {op!r}; expected reset, step or state")
        if op == "state":
            return '{"type":"state"}'
        data = body if isinstance(body, str) else dumps_body(body, op=op)
        return f'{{"type":"{op}","data":{data}}}'

    def _check(self, op: Op, headers: Mapping[str, str] | None) -> bool:
        """Refuse a request this session cannot take; whether it goes to the open connection.

        A lost session is replaced only by a reset (a new episode anyway); per-call headers
        on an open session must be ones its handshake already carried.
        """
        self._check_open(op)
        if self._conn is None:
            if self._lost is None or op == "reset":
                return False
            raise SessionLostError(
                f"{op} failed: the WebSocket session was lost earlier ({self._lost}), and with "
                "it the server-side environment and its episode. A new session would be a "
                "fresh environment, so nothing was sent: call reset() to start a new episode "
                "(or reconnect() to open a new session explicitly)",
                op=op,
                url=self._base_url,
            )
        if not headers:
            return True
        sent = {name.lower(): value for name, value in self._handshake_headers.items()}
        for name, value in check_headers(headers, what="headers").items():
            if sent.get(name.lower()) != value:
                raise ValueError(
                    f"{op}(headers=...) cannot send header {name!r} on the open WebSocket "
                    "session: WebSocket headers travel only with the handshake. Use "
                    "default_headers, or reconnect(headers=...) to open a new session "
                    "carrying them"
                )
        return True

    def _connect_options(self, headers: Mapping[str, str]) -> dict[str, Any]:
        """Options for opening a connection (named as websockets' ``connect`` takes them)."""
        from .redact import RedactingLogger

        options: dict[str, Any] = {
            "open_timeout": self._connect_timeout_s,
            "close_timeout": 2.0,
            "max_size": self._max_message_bytes,
            "logger": RedactingLogger("websockets.client"),
        }
        if headers:
            options["additional_headers"] = dict(headers)
        if is_loopback_url(self._base_url):
            options["proxy"] = None  # never route local traffic through a configured proxy
            # permessage-deflate costs CPU on both ends for every message and saves no time
            # on a loopback link: about a third of a small step's client CPU (bench_step.py).
            options["compression"] = None
        return options

    @contextlib.contextmanager
    def _opening(self, op: str, headers: Mapping[str, str] | None) -> Iterator[Opening]:
        """Around a shell's connect: options in, errors mapped, the session counted.

        The handshake carries the defaults, reconnect()'s headers, the call's, a traceparent.
        """
        handshake = merge_headers(self._headers, self._sticky_headers, check_headers(headers))
        if self._trace is not None and not has_header(handshake, "traceparent"):
            handshake["traceparent"] = self._trace.traceparent()
        opening = Opening(self._base_url, self._connect_options(handshake))
        try:
            yield opening
        except Exception as exc:
            mapped = self._map(exc, op, connect=True)
            if mapped is exc:
                raise
            raise mapped from exc
        self._conn = opening.conn
        self._handshake_headers = dict(handshake)
        self._sessions_opened += 1
        self._lost = None

    def _map(self, exc: BaseException, op: str, *, connect: bool = False) -> BaseException:
        """``map_ws_exception`` with this transport's URL and limits."""
        return map_ws_exception(
            exc,
            op=op,
            url=self._base_url,
            connect=connect,
            timeout_s=self._timeout_s,
            timeout_hint="" if connect else _TIMEOUT_HINT,
            connect_timeout_s=self._connect_timeout_s,
        )

    def _drop(self, reason: str) -> None:
        """Forget the current connection; its server session (and episode) ends with it.

        The connection is abandoned without a closing handshake: the server may be dead or
        frozen, and waiting for its close frame would overrun the caller's timeout.
        """
        conn = self._forget()
        if conn is not None:
            self._lost = reason
            with contextlib.suppress(Exception):  # best effort: it is being abandoned
                conn.abort()

    def _forget(self) -> Any:
        """Detach the current connection for a polite close (``reconnect``/``close``)."""
        conn, self._conn = self._conn, None
        self._handshake_headers = {}
        return conn

    def _reconnecting(self, headers: Mapping[str, str] | None) -> Any:
        """``reconnect``'s checks; keeps its headers for every later handshake.

        Returns the current connection, detached, for the shell to end politely.
        """
        sticky = check_headers(headers, what="headers")
        self._check_open("reconnect")
        self._sticky_headers = sticky
        self._lost = None
        return self._forget()

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
