"""Stateful OpenEnv HTTP transport: ``POST /reset``, ``POST /step``, ``GET /state``.

Only openenv-core 0.1.x style servers keep one environment across HTTP requests; current
OpenEnv servers build a fresh environment per HTTP request, so use the WebSocket transport for
them (the first step after a reset finds out and raises ProtocolError saying so; a server
restarted mid-episode raises SessionLostError: see "continuity" in ``HttpCommon``). The sync
transport uses the standard library's ``http.client`` (measured in
``benchmarks/bench_step.py``: a third of the CPU per step of ``requests``).

``HttpCommon`` holds everything that does not do I/O (routes, envelopes, headers, timeouts,
reply decoding) so that the asyncio transport (``_http_async``) shares it.
"""

from __future__ import annotations

import functools
import json
import os
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._errormap import (
    RECEIVED_LIMIT,
    dumps_body,
    http_error,
    parse_json_object,
    redact_url,
    translate,
    truncate,
)
from ._exceptions import EnvgenRuntimeError, ProtocolError, ServerError, SessionLostError
from ._headers import TraceContext, check_headers, has_header, merge_headers
from ._transport import Op, is_loopback_url

if TYPE_CHECKING:
    import http.client

__all__ = ["HttpCommon", "HttpTransport"]

_STEP_TIMEOUT_MARGIN_S = 5.0
STEP_TIMEOUT_HINT = (
    "; the server may still complete this step, so the episode's state is now uncertain "
    "(call state() or reset())"
)


def _text(content: bytes, encoding: str | None) -> str:
    """Decode an error body for a message, whatever charset the server claimed."""
    try:
        return content.decode(encoding or "utf-8", errors="replace")
    except LookupError:
        return content.decode("utf-8", errors="replace")


class HttpCommon:
    """Configuration and wire format shared by the sync and async HTTP transports.

    ``timeout_s`` is a deadline for each whole reply (sending the request included, however
    slowly the server trickles bytes) and, unless ``connect_timeout_s`` is given, the limit
    for opening a connection. ``step_timeout_s``, when given, is sent with every step as
    ``timeout_s`` (the server's own limit for running the action); a step's deadline is then
    stretched to cover it. ``trace`` adds a ``traceparent`` header with a fresh
    span id to every request.
    """

    _kind = "HttpTransport"

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 15.0,
        headers: Mapping[str, str] | None = None,
        step_timeout_s: float | None = None,
        connect_timeout_s: float | None = None,
        trace: TraceContext | None = None,
    ) -> None:
        scheme = urlsplit(base_url).scheme
        if scheme not in ("http", "https"):
            raise ValueError(
                f"{self._kind} needs an http:// or https:// base URL, got {redact_url(base_url)}"
            )
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if connect_timeout_s is not None and connect_timeout_s <= 0:
            raise ValueError("connect_timeout_s must be positive")
        if step_timeout_s is not None and step_timeout_s <= 0:
            raise ValueError("step_timeout_s must be positive")
        self._base_url = base_url.rstrip("/")
        self._timeout_s = timeout_s
        self._connect_timeout_s = connect_timeout_s if connect_timeout_s is not None else timeout_s
        self._headers = check_headers(headers, what="headers")
        self._session_headers: dict[str, str] = {}
        self._step_timeout_s = step_timeout_s
        self._trace = trace
        self._closed = False
        # Continuity (see _continuity): steps since the last reset, whether the server has
        # shown that it keeps an environment across requests, and why the episode was lost.
        self._episode_steps: int | None = None
        self._stateful = False
        self._stateless: str | None = None
        self._lost: str | None = None

    def __repr__(self) -> str:
        return f"{self._kind}({redact_url(self._base_url)!r}, timeout_s={self._timeout_s})"

    @property
    def base_url(self) -> str:
        """The server's base URL (no trailing slash)."""
        return self._base_url

    @property
    def connect_timeout_s(self) -> float:
        """Limit for opening a connection, in seconds."""
        return self._connect_timeout_s

    @property
    def read_timeout_s(self) -> float:
        """Deadline for each whole reply (a step's is stretched to cover ``step_timeout_s``)."""
        return self._timeout_s

    def _base_headers(self) -> dict[str, str]:
        """Headers every request of the current connection pool carries."""
        return merge_headers({"Accept": "application/json"}, self._headers, self._session_headers)

    def _read_timeout(self, op: Op) -> float:
        if op == "step" and self._step_timeout_s is not None:
            return max(self._timeout_s, self._step_timeout_s + _STEP_TIMEOUT_MARGIN_S)
        return self._timeout_s

    def _route(self, op: Op, body: Mapping[str, Any]) -> tuple[str, str, bytes | None]:
        """Method, URL and encoded body of ``op``; a step gets a fresh ``request_id``."""
        data: str | None
        if op == "reset":
            method, path, data = "POST", "/reset", dumps_body(body, op=op)
        elif op == "step":
            # An opaque id, 32 hex digits as before (os.urandom: a quarter of uuid4's cost).
            envelope: dict[str, Any] = {"action": dict(body), "request_id": os.urandom(16).hex()}
            if self._step_timeout_s is not None:
                envelope["timeout_s"] = self._step_timeout_s
            method, path, data = "POST", "/step", dumps_body(envelope, op=op)
        elif op == "state":
            method, path, data = "GET", "/state", None
        else:
            raise ValueError(f"unknown operation {op!r}; expected reset, step or state")
        return method, self._base_url + path, data.encode("utf-8") if data is not None else None

    def _request_headers(
        self, headers: Mapping[str, str] | None, *, has_body: bool
    ) -> dict[str, str]:
        """Per-request headers on top of the pool's: content type, caller's, traceparent."""
        if not headers and self._trace is None:  # the common case, without the checks
            return {"Content-Type": "application/json"} if has_body else {}
        extra = check_headers(headers, what="headers")
        generated: dict[str, str] = {"Content-Type": "application/json"} if has_body else {}
        if (
            self._trace is not None
            and not has_header(extra, "traceparent")
            and not has_header(self._base_headers(), "traceparent")
        ):
            generated["traceparent"] = self._trace.traceparent()
        return merge_headers(generated, extra)

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise EnvgenRuntimeError(f"{what} failed: this {self._kind} is closed")

    # ------------------------------------------------------------------ continuity
    # A stateful server holds one environment; a client must notice when that environment
    # is not the one its episode ran on, without a request per step on the happy path:
    # - a server whose HTTP endpoints are stateless (current OpenEnv builds a fresh
    #   environment per request) is found on the first step after a reset: one GET /state,
    #   once per transport, must report step_count >= 1;
    # - a server restarted mid-episode is found when a step had to replace a connection
    #   that was lost (a restart drops every connection; one the server announced it would
    #   close does not count): GET /state then, and a step_count below the steps this
    #   episode took means a fresh environment. A server without a usable GET /state, or
    #   whose state has no integer step_count, is not checked.

    def _check_continuity(self, op: Op) -> None:
        """Refuse early: a stateless server for everything, a lost episode but for reset."""
        if self._stateless is not None:
            raise ProtocolError(f"{op} failed: {self._stateless}", received="", op=op)
        if self._lost is not None and op != "reset":
            raise SessionLostError(
                f"{op} failed: the server's environment was replaced earlier ({self._lost}), "
                "and with it this episode; nothing was sent: call reset() to start a new one",
                op=op,
                url=self._base_url,
            )

    def _counted(self, op: Op, *, new_connection: bool) -> bool:
        """Book a successful ``op``; True when a step must be checked with GET /state."""
        if op == "reset":
            self._episode_steps = 0
            self._lost = None
            return False
        if op != "step" or self._episode_steps is None:
            return False
        self._episode_steps += 1
        return new_connection or not self._stateful

    def _verify(self, op: Op, state: Mapping[str, Any] | None) -> None:
        """Compare the server's step count with this episode's (see the comment above).

        ``state`` is None when the server has no usable ``GET /state``: nothing to compare.
        """
        count = state.get("step_count") if state is not None else None
        steps = self._episode_steps
        if steps is None or isinstance(count, bool) or not isinstance(count, int):
            self._stateful = True  # nothing to compare: assume the documented protocol
            return
        assert state is not None
        received = truncate(json.dumps(dict(state), default=str), RECEIVED_LIMIT)
        if count == 0 and not self._stateful:
            self._stateless = (
                f"{redact_url(self._base_url)} does not keep an environment across HTTP "
                f"requests: after a step its /state reports step_count 0 (received: "
                f"{received}). Current OpenEnv servers build a fresh environment for every "
                "HTTP request, so results would not form an episode: use "
                "transport='websocket' for this server"
            )
            raise ProtocolError(f"{op} failed: {self._stateless}", received=received, op=op)
        if count < steps:
            self._episode_steps = None
            self._lost = f"it reports step_count {count} after {steps} steps of this episode"
            raise SessionLostError(
                f"{op} failed: the server's environment is not the one this episode ran on "
                f"(the server restarted?): {self._lost}. This step went to a fresh "
                "environment and its result was discarded: call reset() to start a new "
                "episode",
                op=op,
                url=self._base_url,
            )
        self._stateful = True

    def _use_loopback_rules(self) -> bool:
        """Whether proxy settings from the environment must be ignored (local traffic)."""
        return is_loopback_url(self._base_url)

    @staticmethod
    def _reply(
        status: int, content: bytes, encoding: str | None, *, op: Op, url: str
    ) -> dict[str, Any]:
        """The reply object of a 2xx; a ServerError (or ProtocolError) for anything else."""
        if not 200 <= status < 300:
            raise http_error(status, _text(content, encoding), op=op, url=url)
        return parse_json_object(content, op=op, source=f"the reply from {redact_url(url)}")


class HttpTransport(HttpCommon):
    """One keep-alive connection (stdlib ``http.client``) to a stateful OpenEnv HTTP server.

    Not safe for concurrent use from several threads: requests are serialised. A pooled
    connection the server closed while idle is noticed before reuse and replaced; a request
    that fails midway closes the connection (it is never reused with a reply pending).
    Proxy settings from the environment (``http_proxy``, ``https_proxy``, ``no_proxy``)
    apply to non-local servers, as with ``requests``; loopback traffic never uses a proxy.
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 15.0,
        headers: Mapping[str, str] | None = None,
        step_timeout_s: float | None = None,
        connect_timeout_s: float | None = None,
        trace: TraceContext | None = None,
    ) -> None:
        super().__init__(
            base_url,
            timeout_s=timeout_s,
            headers=headers,
            step_timeout_s=step_timeout_s,
            connect_timeout_s=connect_timeout_s,
            trace=trace,
        )
        self._conn: http.client.HTTPConnection | None = None
        self._absolute_form = False  # requests name the full URL (through an http proxy)
        self._pool_headers = self._base_headers()
        self._lock = threading.Lock()
        self._suspect = False  # a connection was lost since the last reply (see _exchange)

    def _connection(self, op: Op, url: str) -> http.client.HTTPConnection:
        """The open connection, or a new one (connect phase: errors are connect errors)."""
        conn = self._conn
        from ._httpconn import dropped, open_connection

        if conn is not None and conn.sock is not None and not dropped(conn.sock):
            return conn
        if conn is not None:
            # Closed while idle (a restart, or an idle timeout); not after "Connection: close".
            self._suspect = self._suspect or conn.sock is not None
            conn.close()
            self._conn = None
        with translate(
            op, url, self._timeout_s, connect=True, connect_timeout_s=self._connect_timeout_s
        ):
            conn, self._absolute_form = open_connection(
                self._base_url, self._connect_timeout_s, proxies=not self._use_loopback_rules()
            )
            try:
                conn.connect()
            except BaseException:
                conn.close()
                raise
        self._conn = conn
        return conn

    def request(
        self, op: Op, body: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one operation; see the module docstring for the routes."""
        with self._lock:
            self._check_open(op)
            self._check_continuity(op)
            reply, new_connection = self._exchange(op, body, headers)
            if self._counted(op, new_connection=new_connection):
                try:
                    state: dict[str, Any] | None = self._exchange("state", {}, headers)[0]
                except (ServerError, ProtocolError):  # no usable /state: cannot tell
                    state = None
                self._verify(op, state)
            return reply

    def _exchange(
        self, op: Op, body: Mapping[str, Any], headers: Mapping[str, str] | None
    ) -> tuple[dict[str, Any], bool]:
        """One request and its reply object; and whether it needed a new connection."""
        method, url, data = self._route(op, body)
        extra = self._request_headers(headers, has_body=data is not None)
        read_timeout = self._read_timeout(op)
        conn = self._connection(op, url)
        target = url if self._absolute_form else url[len(self._origin) :] or "/"
        hint = STEP_TIMEOUT_HINT if op == "step" else ""
        try:
            with translate(
                op, url, read_timeout, timeout_hint=hint, connect_timeout_s=self._connect_timeout_s
            ):
                sock = conn.sock
                assert sock is not None
                # The timeout bounds sending; the deadline the whole reply (_httpconn).
                if sock.gettimeout() != read_timeout:
                    sock.settimeout(read_timeout)
                conn.deadline = time.monotonic() + read_timeout  # type: ignore[attr-defined]
                conn.request(method, target, data, {**self._pool_headers, **extra})
                response = conn.getresponse()
                content = response.read()  # read inside translate: timeouts can hit here
        except BaseException:
            # A reply may still be on its way: this stream must not be reused.
            self._conn = None
            self._suspect = True
            conn.close()
            raise
        # Whether the connection was replaced after one was lost since the last reply.
        suspect, self._suspect = self._suspect, False
        status = response.status
        if 200 <= status < 300:  # the charset only matters for quoting an error body
            return self._reply(status, content, None, op=op, url=url), suspect
        from ._httpconn import charset

        encoding = charset(response.getheader("Content-Type"))
        return self._reply(status, content, encoding, op=op, url=url), suspect

    @functools.cached_property
    def _origin(self) -> str:
        parts = urlsplit(self._base_url)
        return f"{parts.scheme}://{parts.netloc}"

    def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """Close pooled connections; later requests also carry ``headers`` (until the next)."""
        session_headers = check_headers(headers, what="headers")
        with self._lock:
            self._check_open("reconnect")
            conn, self._conn = self._conn, None
            self._session_headers = session_headers
            self._pool_headers = self._base_headers()
        if conn is not None:
            conn.close()

    def close(self) -> None:
        """Close the pooled connection; idempotent."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
