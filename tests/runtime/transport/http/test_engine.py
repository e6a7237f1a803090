"""The HTTP engine and its two shells (blocking socket, asyncio streams) on real sockets.

Keep-alive reuse, stale connections replaced, proxies honoured for remote servers and
ignored for local ones, garbled or missing replies, deadlines, and the mapping of each
failure to the runtime's errors: every case runs through both shells, which share all logic.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, suppress
from typing import Any

import pytest
from envgen_runtime import (
    AsyncHttpTransport,
    EnvConnectionError,
    EnvTimeoutError,
    HttpTransport,
    ServerError,
    ServerValidationError,
)
from envgen_runtime.transport.http.engine import (
    CLOSE,
    OPEN,
    RECV,
    SEND,
    HttpEngine,
    http_error,
    resume,
    route_for,
)

from tests.runtime.fakes import Reply, fake_http

STATE = Reply(body={"step_count": 1})
OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


def call(asynchronous: bool, url: str, op: str = "state", **options: Any) -> Any:
    """One request through a fresh transport of either shell, closed afterwards."""
    body = {"message": "x"} if op == "step" else {}
    if not asynchronous:
        with closing(HttpTransport(url, **options)) as transport:
            return transport.request(op, body)  # type: ignore[arg-type]

    async def go() -> Any:
        transport = AsyncHttpTransport(url, **options)
        try:
            return await transport.request(op, body)  # type: ignore[arg-type]
        finally:
            await transport.close()

    return asyncio.run(go())


def repeat(asynchronous: bool, url: str, times: int) -> list[Any]:
    """``times`` state requests over one transport."""
    if not asynchronous:
        with closing(HttpTransport(url)) as transport:
            return [transport.request("state", {}) for _ in range(times)]

    async def go() -> list[Any]:
        transport = AsyncHttpTransport(url)
        try:
            return [await transport.request("state", {}) for _ in range(times)]
        finally:
            await transport.close()

    return asyncio.run(go())


SHELLS = pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])


@contextmanager
def raw_server(answer: Callable[[socket.socket, int], None]) -> Iterator[tuple[str, list[int]]]:
    """A TCP server on 127.0.0.1 calling ``answer(conn, n)`` for its n-th connection.

    Yields the base URL and a list that gets one entry per accepted connection.
    """
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[int] = []
    workers: list[threading.Thread] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(len(accepted))

            def run(conn: socket.socket = conn, n: int = len(accepted) - 1) -> None:
                with conn, suppress(OSError):
                    answer(conn, n)

            worker = threading.Thread(target=run, daemon=True)
            workers.append(worker)
            worker.start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", accepted
    finally:
        listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() above
        listener.close()
        thread.join(5)
        for worker in workers:
            worker.join(5)


def read_request(conn: socket.socket) -> bytes:
    """One request's head (the tests' requests have small bodies that come with it)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data
        data += chunk
    return data


def answer_once(reply: bytes) -> Callable[[socket.socket, int], None]:
    def answer(conn: socket.socket, n: int) -> None:
        read_request(conn)
        conn.sendall(reply)

    return answer


@SHELLS
def test_keep_alive_reuses_one_connection(asynchronous: bool) -> None:
    def answer(conn: socket.socket, n: int) -> None:
        while read_request(conn):
            conn.sendall(OK)

    with raw_server(answer) as (url, accepted):
        assert repeat(asynchronous, url, 3) == [{}, {}, {}]
    assert len(accepted) == 1


@SHELLS
@pytest.mark.parametrize("http11", [False, True])
def test_connections_closed_by_the_server_are_replaced(asynchronous: bool, http11: bool) -> None:
    # HTTP/1.0 replies close the connection after each request; HTTP/1.1 keeps it open.
    with fake_http({("GET", "/state"): STATE}, http11=http11) as server:
        assert repeat(asynchronous, server.url, 3) == [{"step_count": 1}] * 3
        assert len(server.seen) == 3


@SHELLS
def test_an_idle_connection_the_server_dropped_is_replaced(asynchronous: bool) -> None:
    def answer(conn: socket.socket, n: int) -> None:
        read_request(conn)
        conn.sendall(OK)  # keep-alive announced, then closed while idle

    with raw_server(answer) as (url, accepted):
        if asynchronous:

            async def go() -> list[Any]:
                transport = AsyncHttpTransport(url)
                try:
                    first = await transport.request("state", {})
                    await asyncio.sleep(0.2)
                    return [first, await transport.request("state", {})]
                finally:
                    await transport.close()

            assert asyncio.run(go()) == [{}, {}]
        else:
            with closing(HttpTransport(url)) as transport:
                first = transport.request("state", {})
                time.sleep(0.2)
                assert [first, transport.request("state", {})] == [{}, {}]
    assert len(accepted) == 2


@SHELLS
@pytest.mark.parametrize(
    "reply",
    [
        b"garbage\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{}",
        b"",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{",
    ],
    ids=["bad-status-line", "short-body", "closed-without-reply", "short-chunk"],
)
def test_garbled_or_missing_replies_are_connection_errors(asynchronous: bool, reply: bytes) -> None:
    with raw_server(answer_once(reply)) as (url, _), pytest.raises(EnvConnectionError) as info:
        call(asynchronous, url, "step")
    assert info.value.op == "step" and not info.value.during_connect


@SHELLS
def test_chunked_and_close_delimited_replies_are_read_whole(asynchronous: bool) -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n"
        b'\r\n5\r\n{"a":\r\n2\r\n1}\r\n0\r\n\r\n'
    )
    close_delimited = b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"a":2}'
    for reply, expected in ((chunked, {"a": 1}), (close_delimited, {"a": 2})):
        with raw_server(answer_once(reply)) as (url, _):
            assert call(asynchronous, url) == expected


@SHELLS
def test_a_trickling_reply_is_cut_at_its_deadline(asynchronous: bool) -> None:
    # Each byte comes well within a per-read timeout; the whole reply cannot.
    def answer(conn: socket.socket, n: int) -> None:
        read_request(conn)
        for byte in OK:
            conn.sendall(bytes([byte]))
            time.sleep(0.05)

    with raw_server(answer) as (url, _):
        started = time.monotonic()
        with pytest.raises(EnvTimeoutError) as info:
            call(asynchronous, url, "step", timeout_s=0.5)
        elapsed = time.monotonic() - started
    assert info.value.timeout_s == 0.5 and not info.value.during_connect
    assert "the episode's state is now uncertain" in str(info.value)
    assert elapsed < 2.0


@SHELLS
def test_refused_connections_fail_during_connect(asynchronous: bool) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"  # bound, not listening: refused
        with pytest.raises(EnvConnectionError) as info:
            call(asynchronous, url, "reset")
    assert info.value.during_connect and "connection refused" in str(info.value)


def drive(engine: HttpEngine, perform: Callable[[int, Any], Any]) -> Any:
    """Run one state request through ``engine`` with a scripted ``perform``."""
    flow = engine.flow("state", {}, None)
    done, item = resume(flow, None, None)
    while not done:
        try:
            value, error = perform(*item), None
        except BaseException as exc:
            value, error = None, exc
        done, item = resume(flow, value, error)
    return item


def test_a_connect_timeout_is_during_connect_with_the_connect_limit() -> None:
    actions: list[int] = []

    def perform(kind: int, arg: Any) -> Any:
        actions.append(kind)
        if kind == OPEN:
            raise TimeoutError("timed out")

    engine = HttpEngine("http://127.0.0.1:1", timeout_s=9.0, connect_timeout_s=1.0)
    with pytest.raises(EnvTimeoutError) as info:
        drive(engine, perform)
    assert info.value.during_connect and info.value.timeout_s == 1.0
    assert actions == [OPEN, CLOSE]  # the half-open connection is released


def test_a_read_timeout_is_not_during_connect_and_drops_the_connection() -> None:
    actions: list[int] = []

    def perform(kind: int, arg: Any) -> Any:
        actions.append(kind)
        if kind == RECV:
            raise TimeoutError("timed out")

    engine = HttpEngine("http://127.0.0.1:1", timeout_s=9.0, connect_timeout_s=1.0)
    with pytest.raises(EnvTimeoutError) as info:
        drive(engine, perform)
    assert not info.value.during_connect and info.value.timeout_s == 9.0
    assert actions == [OPEN, SEND, RECV, CLOSE]  # never reused with a reply pending


def test_remote_servers_go_through_the_environments_http_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = "http://env.example.invalid:8000"
    with fake_http({("GET", f"{target}/state"): STATE}) as proxy:
        netloc = proxy.url.removeprefix("http://")
        monkeypatch.setenv("http_proxy", f"http://user:p%40ss@{netloc}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        assert call(False, target) == {"step_count": 1}
        assert call(True, target) == {"step_count": 1}
        seen = list(proxy.seen)
    assert len(seen) == 2
    for method, path, _, headers in seen:
        assert (method, path) == ("GET", f"{target}/state")
        assert headers["Proxy-Authorization"] == "Basic " + base64.b64encode(b"user:p@ss").decode()
        assert headers["Host"] == "env.example.invalid:8000"


def test_https_through_a_proxy_opens_a_tunnel_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("https_proxy", "http://u:p@proxy.invalid:3128")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    route = route_for("https://env.example.invalid:8443/x", proxies=True)
    assert (route.host, route.port, route.tls_name) == (
        "proxy.invalid",
        3128,
        "env.example.invalid",
    )
    assert route.tunnel is not None and not route.absolute
    assert route.tunnel.startswith(b"CONNECT env.example.invalid:8443 HTTP/1.1\r\n")
    assert b"Proxy-Authorization: Basic " + base64.b64encode(b"u:p") in route.tunnel


@SHELLS
def test_no_proxy_and_loopback_skip_the_proxy(
    asynchronous: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"  # nothing listens: a proxy = failure
    monkeypatch.setenv("http_proxy", dead)
    with fake_http({("GET", "/state"): STATE}) as server:
        assert call(asynchronous, server.url) == {"step_count": 1}
    monkeypatch.setenv("no_proxy", "env.example.invalid")
    route = route_for("http://env.example.invalid:8000", proxies=True)
    assert not route.absolute and route.host == "env.example.invalid"


def test_unsupported_proxy_schemes_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", "socks5://127.0.0.1:1080")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with pytest.raises(ValueError, match="only http:// proxies"):
        route_for("http://env.example.invalid:8000", proxies=True)


def test_http_client_is_not_imported_by_a_request() -> None:
    # The engine parses replies itself: no private http.client API, not even its import.
    import subprocess
    import sys

    code = (
        "import sys\nfrom envgen_runtime import HttpTransport\n"
        "t = HttpTransport('http://127.0.0.1:1', timeout_s=1)\n"
        "try:\n    t.request('state', {})\nexcept Exception:\n    pass\n"
        "print('http.client' in sys.modules, 'httpx' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert out == ["False", "False"]


# Error replies (moved here from _errormap with http_error).


def test_http_error_parses_422_detail() -> None:
    body = json.dumps({"detail": [{"loc": ["body", "action", "x"], "msg": "bad", "type": "t"}]})
    err = http_error(422, body, op="step", url="http://h/step")
    assert isinstance(err, ServerValidationError)
    assert err.errors[0].path == "body.action.x"
    assert err.role == "action"


def test_http_error_422_without_pydantic_detail_is_plain_server_error() -> None:
    err = http_error(422, '{"detail": "nope"}', op="step", url="http://h/step")
    assert type(err) is ServerError
    assert err.status == 422 and "nope" in str(err)


def test_http_error_truncates_body() -> None:
    err = http_error(500, "y" * 5000, op="state", url="http://h/state")
    assert len(err.body) < 2100
    assert len(str(err)) < 800
    assert "server's log" in str(err)


@SHELLS
@pytest.mark.parametrize("pause_s", [0.0, 0.2, 0.6])
def test_a_later_reply_gets_its_own_full_deadline(asynchronous: bool, pause_s: float) -> None:
    # The asyncio shell keeps one deadline timer per connection, re-armed when it fires: a
    # reply that never comes must time out at its own deadline, not the first request's.
    def answer(conn: socket.socket, n: int) -> None:
        read_request(conn)
        conn.sendall(OK)
        read_request(conn)
        time.sleep(1.2)  # the second reply never comes in time

    async def go(url: str) -> float:
        transport = AsyncHttpTransport(url, timeout_s=0.5)
        try:
            await transport.request("state", {})
            await asyncio.sleep(pause_s)
            started = time.monotonic()
            with pytest.raises(EnvTimeoutError):
                await transport.request("step", {"message": "x"})
            return time.monotonic() - started
        finally:
            await transport.close()

    with raw_server(answer) as (url, _):
        if asynchronous:
            waited = asyncio.run(go(url))
        else:
            with closing(HttpTransport(url, timeout_s=0.5)) as transport:
                transport.request("state", {})
                time.sleep(pause_s)
                started = time.monotonic()
                with pytest.raises(EnvTimeoutError):
                    transport.request("step", {"message": "x"})
                waited = time.monotonic() - started
    assert 0.45 <= waited < 1.0


@pytest.mark.parametrize("cls", [HttpTransport, AsyncHttpTransport])
@pytest.mark.parametrize("option", ["timeout_s", "connect_timeout_s", "step_timeout_s"])
@pytest.mark.parametrize("value", [0, -1.0, float("nan"), True])
def test_limits_must_be_positive_numbers(cls: Any, option: str, value: float) -> None:
    # NaN passed the old `value <= 0` check and made every deadline unusable.
    with pytest.raises(ValueError, match=f"{option} must be positive"):
        cls("http://127.0.0.1:9", **{option: value})
