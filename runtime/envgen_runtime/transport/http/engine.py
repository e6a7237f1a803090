"""The stateful OpenEnv HTTP protocol without I/O: ``POST /reset``, ``POST /step``, ``GET /state``.

Only openenv-core 0.1.x style servers keep one environment across HTTP requests (current
OpenEnv servers build one per request: see "continuity" below). ``HttpEngine.flow(...)`` is
one operation as a generator of I/O actions, which the blocking (``sync``) and asyncio
(``aio``) shells perform, sending back results or throwing in errors.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator, Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from ...core.checks import positive
from ...core.errors import (
    ProtocolError,
    ServerError,
    ServerValidationError,
    SessionLostError,
    issues_from_wire,
)
from ...core.jsonbody import compact_json, dumps_body, parse_json_object, request_role
from ...core.result import envelope_problem
from ...core.text import BODY_LIMIT, RECEIVED_LIMIT, redact_url, truncate
from ..base import Limits, Op, is_loopback_url
from ..errormap import episode_ended, translate
from ..headers import TraceContext, check_headers, has_header, merge_headers
from .wire import HttpProtocolError, Reply, ReplyParser, request_bytes

# I/O actions: (kind, argument). OPEN (host, port, timeout) -> None; TLS (server name,
# timeout) -> None; SEND (bytes, timeout) -> None; RECV deadline (time.monotonic()) -> bytes,
# b"" at end of stream, TimeoutError once the deadline has passed; DROPPED None -> whether
# the idle connection was closed by the peer; CLOSE None -> None (never fails).
OPEN, TLS, SEND, RECV, DROPPED, CLOSE = range(6)
Action = tuple[int, Any]
Flow = Generator[Action, Any, Any]

_STEP_TIMEOUT_MARGIN_S = 5.0
_CHECKED_AGAIN = "; a reset() starts a new episode, and its first step checks again"
_NO_STATE = frozenset({404, 405, 501})
"""Statuses of a GET /state that say the server has none (not that it failed once)."""
_STEP_TIMEOUT_HINT = (
    "; the server may still complete this step, so the episode's state is now uncertain "
    "(call state() or reset())"
)


def resume(flow: Flow, value: Any, error: BaseException | None) -> tuple[bool, Any]:
    """Give ``flow`` an action's result (or its error); (True, result) once it returns."""
    try:
        return False, (flow.throw(error) if error is not None else flow.send(value))
    except StopIteration as stop:
        return True, stop.value


def http_error(status: int, text: str, *, op: str, url: str) -> ServerError:
    """ServerError for a non-2xx reply; a pydantic 422 ``detail`` list names the fields."""
    body = truncate(text, BODY_LIMIT)
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    detail = parsed.get("detail") if isinstance(parsed, dict) else None
    if status == 422:
        issues = issues_from_wire(detail)
        if issues is not None:
            return ServerValidationError(request_role(op), issues, status=status, body=body, op=op)
    shown = detail if isinstance(detail, str) else text
    code = parsed.get("code") if isinstance(parsed, dict) else None
    ended = episode_ended(
        shown,
        code=code if isinstance(code, str) else None,
        status=status,
        body=body,
        op=op,
        where=redact_url(url),
    )
    if ended is not None:
        return ended
    hint = ""
    if status == 404:
        hint = " (is this the right base URL, and does the server speak this protocol?)"
    elif status >= 500:
        hint = " (see the server's log for the cause)"
    message = (
        f"{op} failed: {redact_url(url)} answered HTTP {status}{hint}: "
        f"{truncate(shown.strip(), RECEIVED_LIMIT) or '<empty body>'}"
    )
    return ServerError(status, body, op, message=message)


class Route(NamedTuple):
    """Where connections go: the server itself or an ``http://`` proxy in front of it."""

    host: str
    port: int
    tls_name: str | None  # TLS to this server name once connected (or tunnelled)
    tunnel: bytes | None  # a CONNECT request to send first (https through a proxy)
    absolute: bool  # request targets name the full URL (plain http through a proxy)
    proxy_headers: dict[str, str]


def route_for(base_url: str, *, proxies: bool) -> Route:
    """The route to ``base_url``; with ``proxies``, through the environment's proxy if any
    (``http_proxy``, ``https_proxy``, ``all_proxy``; ``no_proxy`` respected)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    proxy = None
    if proxies:
        import urllib.request  # only here: it imports http.client

        found = urllib.request.getproxies()
        proxy = found.get(parts.scheme) or found.get("all")
        if proxy and urllib.request.proxy_bypass(f"{host}:{parts.port}" if parts.port else host):
            proxy = None
    if not proxy:
        return Route(host, port, host if secure else None, None, False, {})
    proxy_parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    if proxy_parts.scheme != "http":
        raise ValueError(
            f"only http:// proxies are supported, the environment names a "
            f"{proxy_parts.scheme}:// proxy for {redact_url(base_url)}"
        )
    auth: dict[str, str] = {}
    if proxy_parts.username is not None:
        import base64
        from urllib.parse import unquote

        credentials = f"{unquote(proxy_parts.username)}:{unquote(proxy_parts.password or '')}"
        token = base64.b64encode(credentials.encode("utf-8")).decode("ascii")
        auth["Proxy-Authorization"] = f"Basic {token}"
    proxy_host, proxy_port = proxy_parts.hostname or "", proxy_parts.port or 80
    if not secure:
        return Route(proxy_host, proxy_port, None, None, True, auth)
    authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    tunnel = request_bytes("CONNECT", authority, {"Host": authority, **auth}, None)
    return Route(proxy_host, proxy_port, host, tunnel, False, {})


class HttpEngine(Limits):
    """Configuration, wire format and connection rules shared by both HTTP transports.

    ``timeout_s`` is a deadline for each whole reply (sending included) and, unless
    ``connect_timeout_s`` is given, the connect limit. ``step_timeout_s`` is sent with every
    step as the server's own limit and stretches a step's deadline. ``trace`` adds a
    ``traceparent`` to every request. One keep-alive connection: an idle one the server
    closed is replaced, one that fails midway is closed. The environment's proxy settings
    apply to non-local servers.
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
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https"):
            raise ValueError(
                f"{type(self).__name__} needs an http:// or https:// base URL, "
                f"got {redact_url(base_url)}"
            )
        self._set_limits(timeout_s, connect_timeout_s)
        positive("step_timeout_s", step_timeout_s)
        self._base_url = base_url.rstrip("/")
        self._origin_len = len(f"{parts.scheme}://{parts.netloc}")
        self._host_header = parts.netloc.rsplit("@", 1)[-1]
        self._headers = check_headers(headers)
        self._session_headers: dict[str, str] = {}
        self._step_timeout_s = step_timeout_s
        self._step_read_timeout_s = timeout_s
        if step_timeout_s is not None:  # the server's own limit, plus a margin for the reply
            self._step_read_timeout_s = max(timeout_s, step_timeout_s + _STEP_TIMEOUT_MARGIN_S)
        self._trace = trace
        self._closed = False
        self._route_to: Route | None = None
        self._pool_headers = self._base_headers()
        self._connected = False  # whether the shell holds an open connection
        self._suspect = False  # a connection was lost since the last reply (see _exchange)
        # Continuity (see _verify): steps since the last reset, whether the server has
        # shown that it keeps an environment across requests, and why the episode was lost.
        self._episode_steps: int | None = None
        self._stateful = False
        self._stateless: str | None = None
        self._lost: str | None = None
        self._init_io()

    def _init_io(self) -> None:
        """The shell's own state (its connection and lock)."""

    def _base_headers(self) -> dict[str, str]:
        """Headers every request carries (Host first, as the standard library sends it)."""
        fixed = {"Host": self._host_header, "Accept-Encoding": "identity"}
        if self._route_to is not None:
            fixed.update(self._route_to.proxy_headers)
        fixed["Accept"] = "application/json"
        return merge_headers(fixed, self._headers, self._session_headers)

    def _route(self, op: Op, body: Mapping[str, Any] | str) -> tuple[str, str, bytes | None]:
        """Method, URL and encoded body of ``op``; a step gets a fresh ``request_id``.

        A step's ``body`` may come as its compact JSON text already (a pool round's
        batch-encoded actions): the same bytes either way.
        """
        data: str | None
        if op == "reset":
            assert not isinstance(body, str)
            method, path, data = "POST", "/reset", dumps_body(body, op=op)
        elif op == "step":
            action = body if isinstance(body, str) else dumps_body(body, op=op)
            # An opaque id, 32 hex digits as before (os.urandom: a quarter of uuid4's cost).
            data = f'{{"action":{action},"request_id":"{os.urandom(16).hex()}"'
            if self._step_timeout_s is not None:
                data += f',"timeout_s":{compact_json(self._step_timeout_s)}'
            data += "}"
            method, path = "POST", "/step"
        elif op == "state":
            method, path, data = "GET", "/state", None
        else:
            raise ValueError(f"unknown operation {op!r}; expected reset, step or state")
        return method, self._base_url + path, data.encode("utf-8") if data is not None else None

    def _request_headers(
        self, headers: Mapping[str, str] | None, *, has_body: bool
    ) -> dict[str, str]:
        """Every header of one request: the pool's, content type, caller's, traceparent."""
        if not headers and self._trace is None:  # the common case, without the checks
            if not has_body:
                return self._pool_headers
            return {**self._pool_headers, "Content-Type": "application/json"}
        extra = check_headers(headers)
        generated: dict[str, str] = {"Content-Type": "application/json"} if has_body else {}
        sent = {**self._pool_headers, **extra}
        if self._trace is not None and not has_header(sent, "traceparent"):
            generated["traceparent"] = self._trace.traceparent()
        return merge_headers(self._pool_headers, generated, extra)

    def reconnect_flow(self, headers: Mapping[str, str] | None) -> Flow:
        """Close the connection; later requests also carry ``headers`` (until the next call)."""
        session_headers = check_headers(headers)
        self._check_open("reconnect")
        self._session_headers = session_headers
        self._pool_headers = self._base_headers()
        yield from self.close_flow()

    @staticmethod
    def tls_context() -> Any:
        """Default certificate checks; a CA bundle named as for ``requests`` is honoured."""
        import ssl

        cafile = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or None
        return ssl.create_default_context(cafile=cafile)

    def flow(
        self, op: Op, body: Mapping[str, Any] | str, headers: Mapping[str, str] | None
    ) -> Flow:
        """One operation as I/O actions (see the module docstring); returns the reply.

        Only a reply that is a result counts for continuity: one that fails (an error, a
        timeout, a reply of the wrong shape) is that call's failure, and nothing is learnt
        from it that could refuse a later call.
        """
        self._check_open(op)
        self._check_continuity(op)
        if op == "reset":  # the old episode ends here, whatever the reply
            self._episode_steps = None
        reply, new_connection = yield from self._exchange(op, body, headers)
        if op == "state" or envelope_problem(reply) is not None:
            return reply  # no result to count (the caller's parse says what is wrong)
        if op == "reset":
            self._episode_steps, self._lost, self._stateless = 0, None, None
        elif self._episode_steps is not None:
            self._episode_steps += 1
            if new_connection or not self._stateful:
                yield from self._check_state(op, headers)
        return reply

    def _check_state(self, op: Op, headers: Mapping[str, str] | None) -> Flow:
        """GET /state after a step, and what its step count says (see ``_verify``)."""
        assert self._episode_steps is not None
        try:
            state: dict[str, Any] = (yield from self._exchange("state", {}, headers))[0]
        except ServerError as exc:
            if exc.status not in _NO_STATE:  # a failed check decides nothing: try next time
                return
            state = {}  # this server has no /state: nothing to compare
        except ProtocolError:  # a garbled state reply: the next step checks again
            return
        self._verify(op, state, self._episode_steps)

    def close_flow(self) -> Flow:
        """Close the connection, if one is open (``reconnect`` and ``close``)."""
        if self._connected:
            self._connected = False
            yield CLOSE, None

    def _exchange(
        self, op: Op, body: Mapping[str, Any] | str, headers: Mapping[str, str] | None
    ) -> Flow:
        """One request and its reply object; and whether it needed a new connection."""
        method, url, data = self._route(op, body)
        read_timeout = self._step_read_timeout_s if op == "step" else self._timeout_s
        if self._connected and (yield DROPPED, None):
            # Closed while idle (a restart, or an idle timeout); not after "Connection: close".
            self._suspect = True
            yield from self.close_flow()
        if not self._connected:
            yield from self._open(op, url)
        all_headers = self._request_headers(headers, has_body=data is not None)
        target = url if self._route_to and self._route_to.absolute else url[self._origin_len :]
        hint = _STEP_TIMEOUT_HINT if op == "step" else ""
        try:
            with translate(op, url, read_timeout, timeout_hint=hint):
                yield SEND, (request_bytes(method, target or "/", all_headers, data), read_timeout)
                reply = yield from self._receive(method, time.monotonic() + read_timeout)
        except GeneratorExit:
            raise
        except BaseException:
            # A reply may still be on its way: this stream must not be reused.
            self._suspect = True
            yield from self.close_flow()
            raise
        # Whether the connection was replaced after one was lost since the last reply.
        suspect, self._suspect = self._suspect, False
        if not reply.keep_alive:
            yield from self.close_flow()
        if not 200 <= reply.status < 300:  # the charset only matters for quoting an error body
            try:
                text = reply.body.decode(reply.charset() or "utf-8", errors="replace")
            except LookupError:  # a charset Python does not know
                text = reply.body.decode("utf-8", errors="replace")
            raise http_error(reply.status, text, op=op, url=url)
        source = f"the reply from {redact_url(url)}"
        return parse_json_object(reply.body, op=op, source=source), suspect

    def _open(self, op: Op, url: str) -> Flow:
        """A new connection (connect phase: its errors are connect errors)."""
        limit = self._connect_timeout_s
        try:
            with translate(op, url, limit, connect=True):
                if self._route_to is None:
                    local = is_loopback_url(self._base_url)  # loopback never uses a proxy
                    self._route_to = route_for(self._base_url, proxies=not local)
                    self._pool_headers = self._base_headers()
                route = self._route_to
                self._connected = True
                yield OPEN, (route.host, route.port, limit)
                if route.tunnel is not None:
                    yield SEND, (route.tunnel, limit)
                    reply = yield from self._receive("CONNECT", time.monotonic() + limit)
                    if not 200 <= reply.status < 300:
                        raise HttpProtocolError(
                            f"the proxy refused the tunnel: HTTP {reply.status}"
                        )
                if route.tls_name is not None:
                    yield TLS, (route.tls_name, limit)
        except GeneratorExit:
            raise
        except BaseException:
            yield from self.close_flow()
            raise

    @staticmethod
    def _receive(method: str, deadline: float) -> Flow:
        parser = ReplyParser(method)
        while True:
            data = yield RECV, deadline
            reply: Reply | None = parser.feed(data) if data else parser.eof()
            if reply is not None:
                return reply

    # Continuity: notice when the server's one environment is not this episode's, without a
    # request per step on the happy path. GET /state after a step until the server shows that
    # it keeps state (step_count 0: stateless, as current OpenEnv), and after a step on a new
    # connection (a restart drops them all; step_count below this episode's: fresh env).

    def _check_continuity(self, op: Op) -> None:
        """Refuse early, but for a reset: on a stateless server, or when the episode is lost.

        Both verdicts end with the episode they were drawn in: a reset starts a new one,
        whose first step checks again (one misjudged step never disables the client).
        """
        if self._stateless is not None and op != "reset":
            message = f"{op} failed: {self._stateless}; nothing was sent{_CHECKED_AGAIN}"
            raise ProtocolError(message, received="", op=op)
        if self._lost is not None and op != "reset":
            raise SessionLostError(
                f"{op} failed: the server's environment was replaced earlier ({self._lost}), "
                "and with it this episode; nothing was sent: call reset() to start a new one",
                op=op,
                url=self._base_url,
            )

    def _verify(self, op: Op, state: Mapping[str, Any], steps: int) -> None:
        """Compare the server's step count with this episode's ``steps`` (see above)."""
        count = state.get("step_count")
        if isinstance(count, bool) or not isinstance(count, int):
            self._stateful = True  # nothing to compare: assume the documented protocol
            return
        received = truncate(json.dumps(dict(state), default=str), RECEIVED_LIMIT)
        if count == 0 and not self._stateful:
            self._stateless = (
                f"{redact_url(self._base_url)} does not keep an environment across HTTP "
                f"requests: after a step its /state reports step_count 0 (received: "
                f"{received}). Current OpenEnv servers build a fresh environment for every "
                "HTTP request, so results would not form an episode: use "
                "transport='websocket' for this server"
            )
            message = f"{op} failed: {self._stateless}{_CHECKED_AGAIN}"
            raise ProtocolError(message, received=received, op=op)
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
