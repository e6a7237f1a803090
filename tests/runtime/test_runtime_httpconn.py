"""The sync HTTP transport's ``http.client`` plumbing: keep-alive, proxies, one write, errors.

The transport moved from requests to the standard library (see benchmarks/bench_step.py);
these pin what requests used to provide: stale keep-alive connections replaced, proxy
settings honoured for remote servers and ignored for local ones, garbled replies mapped.
"""

from __future__ import annotations

import base64
import socket
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager

import pytest
from envgen_runtime import EnvConnectionError, HttpTransport
from envgen_runtime._httpconn import charset, dropped, open_connection

from .fakes import Reply, fake_http

STATE = Reply(body={"step_count": 1})


def test_charset_is_read_from_the_content_type() -> None:
    assert charset(None) is None
    assert charset("application/json") is None
    assert charset('text/plain; charset="latin-1"') == "latin-1"
    assert charset("text/html; q=1; Charset=utf-8") == "utf-8"


def test_dropped_notices_a_socket_the_peer_closed() -> None:
    mine, theirs = socket.socketpair()
    try:
        assert not dropped(mine)
        theirs.close()
        assert dropped(mine)
    finally:
        mine.close()


def test_head_and_body_leave_in_one_write() -> None:
    conn, absolute = open_connection("http://127.0.0.1:9", 1.0, proxies=False)
    writes: list[bytes] = []
    conn.send = writes.append  # type: ignore[method-assign, assignment]
    conn.request("POST", "/step", b'{"action":{}}', {"Content-Type": "application/json"})
    assert not absolute
    assert len(writes) == 1
    head, body = writes[0].split(b"\r\n\r\n", 1)
    assert head.startswith(b"POST /step HTTP/1.1\r\n") and body == b'{"action":{}}'


@pytest.mark.parametrize("http11", [False, True])
def test_connections_closed_by_the_server_are_replaced(http11: bool) -> None:
    # HTTP/1.0 replies close the connection after each request; HTTP/1.1 keeps it open.
    with fake_http({("GET", "/state"): STATE}, http11=http11) as server:
        transport = HttpTransport(server.url)
        try:
            for _ in range(3):
                assert transport.request("state", {}) == {"step_count": 1}
        finally:
            transport.close()
        assert len(server.seen) == 3


@contextmanager
def garbage_server(reply: bytes) -> Iterator[str]:
    """Answers every connection with ``reply`` and closes it."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()


@pytest.mark.parametrize(
    "reply",
    [b"garbage\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{}", b""],
    ids=["bad-status-line", "short-body", "closed-without-reply"],
)
def test_garbled_or_missing_replies_are_connection_errors(reply: bytes) -> None:
    with (
        garbage_server(reply) as url,
        closing(HttpTransport(url)) as transport,
        pytest.raises(EnvConnectionError) as info,
    ):
        transport.request("step", {"message": "x"})
    assert info.value.op == "step" and not info.value.during_connect


def test_remote_servers_go_through_the_environments_http_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    target = "http://env.example.invalid:8000"
    with fake_http({("GET", f"{target}/state"): STATE}) as proxy:
        netloc = proxy.url.removeprefix("http://")
        monkeypatch.setenv("http_proxy", f"http://user:p%40ss@{netloc}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        with closing(HttpTransport(target)) as transport:
            assert transport.request("state", {}) == {"step_count": 1}
        method, path, _, headers = proxy.seen[0]
    assert (method, path) == ("GET", f"{target}/state")
    assert headers["Proxy-Authorization"] == "Basic " + base64.b64encode(b"user:p@ss").decode()
    assert headers["Host"] == "env.example.invalid:8000"


def test_no_proxy_and_loopback_skip_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"  # nothing listens: a proxy = failure
    monkeypatch.setenv("http_proxy", dead)
    with (
        fake_http({("GET", "/state"): STATE}) as server,
        closing(HttpTransport(server.url)) as transport,
    ):
        assert transport.request("state", {}) == {"step_count": 1}
    monkeypatch.setenv("no_proxy", "env.example.invalid")
    conn, absolute = open_connection("http://env.example.invalid:8000", 1.0, proxies=True)
    assert not absolute and conn.host == "env.example.invalid"


def test_unsupported_proxy_schemes_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", "socks5://127.0.0.1:1080")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    with pytest.raises(ValueError, match="only http:// proxies"):
        open_connection("http://env.example.invalid:8000", 1.0, proxies=True)


@pytest.mark.parametrize(
    "block",
    [
        b"Content-Type: application/json\r\nContent-Length: 2\r\nX-Twice: a\r\nX-Twice: b\r\n\r\n",
        b"Server:   uvicorn  \r\nX-Empty:\r\n\r\n",
        b"X-Folded: first\r\n  second\r\nContent-Length: 0\r\n\r\n",  # obsolete folding
        b"no colon here\r\nContent-Length: 0\r\n\r\n",
        b"Caf\xe9: \xff\r\n\r\n",  # latin-1 bytes, as http.client reads them
    ],
    ids=["plain", "spaces-and-empty", "folded", "no-colon", "latin-1"],
)
def test_header_parsing_matches_the_standard_library(block: bytes) -> None:
    import http.client
    import io

    from envgen_runtime._httpconn import _header_message

    lines = block.splitlines(keepends=True)
    ours = _header_message(lines)
    theirs = http.client.parse_headers(io.BytesIO(block))
    assert ours.items() == theirs.items()
    assert ours.get_all("x-twice") == theirs.get_all("x-twice")


def test_chunked_and_close_delimited_replies_are_read_whole() -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n"
        b'\r\n5\r\n{"a":\r\n2\r\n1}\r\n0\r\n\r\n'
    )
    close_delimited = b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"a":2}'
    for reply, expected in ((chunked, {"a": 1}), (close_delimited, {"a": 2})):
        with garbage_server(reply) as url, closing(HttpTransport(url)) as transport:
            assert transport.request("state", {}) == expected
