"""DirectConnection: WebSocket I/O in the caller's thread, kept alive by the shared keeper.

Against a real openenv server and small websockets servers on 127.0.0.1 (each configured to
do the one thing under test: ping often, fragment, close, stay silent...).
"""

from __future__ import annotations

import base64
import gc
import hashlib
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from envgen_runtime import (
    EnvConnectionError,
    EnvTimeoutError,
    ProtocolError,
    WebSocketTransport,
)
from envgen_runtime.transport.websocket import direct as ws_direct
from envgen_runtime.transport.websocket import frames as ws_frames
from envgen_runtime.transport.websocket.direct import (
    KEEPER,
    DirectConnection,
    ThreadedConnection,
    connect_direct,
    direct_allowed,
)
from websockets.exceptions import ConnectionClosed, ConnectionClosedError, ConnectionClosedOK
from websockets.sync.client import ClientConnection
from websockets.sync.server import serve

from tests.runtime.clients import CounterAction, CounterEnv

SECRET = "Bearer direct-s3cr3t"


@contextmanager
def ws_server(handler: Callable[[Any], None], **options: Any) -> Iterator[str]:
    """A websockets server on 127.0.0.1 running ``handler(connection)``; its base URL."""
    server = serve(handler, "127.0.0.1", 0, **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.socket.getsockname()[1]}"
    finally:
        server.shutdown()
        thread.join(5)


def counting(conn: Any) -> None:
    """Answer every message with a state reply counting the messages of this connection."""
    count = 0
    try:
        while True:
            conn.recv()
            count += 1
            conn.send(json.dumps({"type": "state", "data": {"count": count}}))
    except Exception:
        return


@pytest.fixture
def fast_keeper(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Keeper visits every 0.1 s (the default is 5 s)."""
    monkeypatch.setattr(ws_direct, "KEEPER_INTERVAL_S", 0.1)
    KEEPER.wake()
    yield
    KEEPER.wake()


def direct(url: str, **options: Any) -> DirectConnection:
    options.setdefault("close_timeout", 2.0)
    return connect_direct("ws" + url.removeprefix("http") + "/ws", {"open_timeout": 5, **options})


# --------------------------------------------------------------------------- real server


def test_real_server_uses_the_direct_connection(ws_url: str) -> None:
    with CounterEnv(ws_url) as env:
        env.reset(episode_id="direct")
        transport = env.transport
        assert isinstance(transport, WebSocketTransport)
        conn = transport._conn
        assert isinstance(conn, DirectConnection)
        for i in range(1, 21):
            assert env.step(CounterAction(message=f"m{i}")).observation.step == i
        assert env.state().step_count == 20
    assert conn.state.name == "CLOSED"  # close() ended the connection


def test_real_server_fallback_when_disabled(ws_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ws_direct, "ENABLED", False)
    with CounterEnv(ws_url) as env:
        env.reset()
        assert isinstance(env.transport, WebSocketTransport)
        assert isinstance(env.transport._conn, ThreadedConnection)
        assert isinstance(env.transport._conn.conn, ClientConnection)
        assert env.step(CounterAction(message="threaded")).observation.echoed == "threaded"


# --------------------------------------------------------------------------- keepalive


def test_idle_session_survives_server_pings(fast_keeper: None) -> None:
    # The server pings every 0.3 s and drops the connection when a pong is 0.3 s late.
    with ws_server(counting, ping_interval=0.3, ping_timeout=0.3) as url:
        transport = WebSocketTransport(url, timeout_s=5)
        assert transport.request("state", {}) == {"count": 1}
        time.sleep(2.5)  # idle: only the keeper can answer the pings
        assert transport.request("state", {}) == {"count": 2}
        assert transport.sessions_opened == 1
        transport.close()


def test_without_the_keeper_the_idle_session_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    # The control for the test above: with the keeper asleep the server gives up on us.
    monkeypatch.setattr(ws_direct, "KEEPER_INTERVAL_S", 60.0)
    KEEPER.wake()
    with ws_server(counting, ping_interval=0.3, ping_timeout=0.3) as url:
        transport = WebSocketTransport(url, timeout_s=5)
        assert transport.request("state", {}) == {"count": 1}
        time.sleep(1.5)
        with pytest.raises(EnvConnectionError):
            transport.request("state", {})
        assert not transport.connected
        transport.close()


def test_keeper_keeps_a_message_that_arrives_while_idle(fast_keeper: None) -> None:
    def handler(conn: Any) -> None:
        conn.recv()
        conn.send("first")
        time.sleep(0.1)
        conn.send("unsolicited")
        conn.recv()

    with ws_server(handler) as url:
        conn = direct(url)
        conn.send("hi")
        assert conn.recv(timeout=5) == "first"
        deadline = time.monotonic() + 3
        while not conn._messages and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(conn._messages) == ["unsolicited"]  # read by the keeper, not by recv
        assert conn.recv(timeout=0) == "unsolicited"
        conn.close()


def _silent_server(accepted: list[socket.socket]) -> tuple[socket.socket, str]:
    """A server that completes the handshake and then never reads again (no pongs)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def run() -> None:
        sock, _ = listener.accept()
        accepted.append(sock)
        request = b""
        while b"\r\n\r\n" not in request:
            request += sock.recv(4096)
        key = next(
            line.split(b":", 1)[1].strip()
            for line in request.split(b"\r\n")
            if line.lower().startswith(b"sec-websocket-key:")
        )
        accept = base64.b64encode(
            hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest()
        )
        sock.sendall(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n"
        )

    threading.Thread(target=run, daemon=True).start()
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}"


def test_keeper_pings_a_silent_server_and_fails_the_connection(
    fast_keeper: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ws_frames, "PING_INTERVAL_S", 0.2)
    monkeypatch.setattr(ws_frames, "PING_TIMEOUT_S", 0.3)
    accepted: list[socket.socket] = []
    listener, url = _silent_server(accepted)
    try:
        conn = direct(url, close_timeout=0.2)
        deadline = time.monotonic() + 5
        while conn.state.name != "CLOSED" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert conn.state.name == "CLOSED"
        with pytest.raises(ConnectionClosedError) as info:
            conn.send("too late")
        assert info.value.sent is not None and info.value.sent.code == 1011
        assert "keepalive ping timeout" in info.value.sent.reason
        # the server did receive a ping (opcode 0x9) before the close (0x8)
        accepted[0].settimeout(2)
        frames = accepted[0].recv(4096)
        assert frames[0] & 0x0F == 0x9
        conn.close()
    finally:
        listener.close()
        for sock in accepted:
            sock.close()


def test_keeper_holds_connections_weakly_and_stops_when_none_are_left(fast_keeper: None) -> None:
    with ws_server(counting) as url:
        conn = direct(url)
        ref = weakref.ref(conn)
        assert ref() in set(KEEPER._connections)
        assert KEEPER.running
        del conn
        gc.collect()
        assert ref() is None  # an abandoned connection is not kept alive by the keeper
        closed = direct(url)
        closed.close()
        assert closed not in set(KEEPER._connections)
        deadline = time.monotonic() + 3
        while KEEPER.running and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not KEEPER.running


# --------------------------------------------------------------------------- messages


def test_fragmented_messages_are_reassembled() -> None:
    def handler(conn: Any) -> None:
        conn.recv()
        conn.send(iter(['{"type": "state", ', '"data": {"parts": ', "3}}"]))
        conn.recv()
        conn.send(iter([b"\x00\x01", b"\x02", b"\x03"]))
        conn.recv()

    with ws_server(handler) as url:
        transport = WebSocketTransport(url, timeout_s=5)
        assert transport.request("state", {}) == {"parts": 3}
        conn = transport._conn
        assert isinstance(conn, DirectConnection)
        conn.send("binary please")
        assert conn.recv(timeout=5) == b"\x00\x01\x02\x03"
        transport.close()


def test_binary_reply() -> None:
    def handler(conn: Any) -> None:
        conn.recv()
        conn.send(json.dumps({"type": "state", "data": {"binary": True}}).encode())
        conn.recv()
        conn.send(b"\xff raw")
        conn.recv()

    with ws_server(handler) as url:
        transport = WebSocketTransport(url, timeout_s=5)
        assert transport.request("state", {}) == {"binary": True}
        conn = transport._conn
        assert isinstance(conn, DirectConnection)
        conn.send("again")
        reply = conn.recv(timeout=5)
        assert reply == b"\xff raw" and isinstance(reply, bytes)
        transport.close()


def test_message_larger_than_max_size_is_refused() -> None:
    def handler(conn: Any) -> None:
        conn.recv()
        conn.send(json.dumps({"type": "state", "data": {"blob": "x" * 5000}}))
        try:
            conn.recv()
        except Exception:
            return

    with ws_server(handler) as url:
        transport = WebSocketTransport(url, timeout_s=5, max_message_bytes=1000)
        with pytest.raises(ProtocolError) as info:
            transport.request("state", {})
        # the client refused it (not "the server closed"), and says how to raise the limit
        assert "max_message_bytes" in info.value.message
        assert "server closed" not in info.value.message
        # as with websockets' threaded client: we closed with 1009 (message too big)
        cause = info.value.__cause__
        assert isinstance(cause, ConnectionClosedError)
        assert cause.sent is not None and cause.sent.code == 1009
        assert not transport.connected
        transport.close()
        # the same reply fits a larger limit
        roomy = WebSocketTransport(url, timeout_s=5, max_message_bytes=10_000)
        assert len(roomy.request("state", {})["blob"]) == 5000
        roomy.close()


def test_invalid_utf8_text_fails_the_connection() -> None:
    def handler(conn: Any) -> None:
        conn.recv()
        with conn.send_context():  # websockets' own send() would refuse invalid text
            conn.protocol.send_text(b"\xff\xfe not utf-8")
        time.sleep(0.5)

    with ws_server(handler) as url:
        conn = direct(url)
        conn.send("hi")
        with pytest.raises(ConnectionClosedError) as info:
            conn.recv(timeout=5)
        assert info.value.sent is not None and info.value.sent.code == 1007
        conn.close()


# --------------------------------------------------------------------------- closing


def test_server_close_mid_session() -> None:
    def handler(conn: Any) -> None:
        conn.recv()
        conn.send(json.dumps({"type": "state", "data": {}}))
        conn.recv()
        conn.close(code=1011, reason="env crashed")

    with ws_server(handler) as url:
        transport = WebSocketTransport(url, timeout_s=5)
        assert transport.request("state", {}) == {}
        with pytest.raises(EnvConnectionError) as info:
            transport.request("state", {})
        assert "1011" in str(info.value) and "env crashed" in str(info.value)
        assert not transport.connected and transport.session_lost
        transport.close()


def test_normal_close_raises_connection_closed_ok() -> None:
    def handler(conn: Any) -> None:
        conn.recv()
        conn.close()

    with ws_server(handler) as url:
        conn = direct(url)
        conn.send("bye?")
        with pytest.raises(ConnectionClosedOK):
            conn.recv(timeout=5)
        with pytest.raises(ConnectionClosedOK):
            conn.send("after the close")
        conn.close()  # idempotent


def test_close_performs_the_closing_handshake() -> None:
    seen: list[int | None] = []

    def handler(conn: Any) -> None:
        try:
            conn.recv()
        except ConnectionClosedOK:
            seen.append(conn.close_code)

    with ws_server(handler) as url:
        conn = direct(url)
        conn.close()
        deadline = time.monotonic() + 3
        while not seen and time.monotonic() < deadline:
            time.sleep(0.02)
    assert seen == [1000]


def test_receive_timeout_drops_the_connection() -> None:
    ended = threading.Event()

    def handler(conn: Any) -> None:
        try:
            while True:
                conn.recv()  # never answers
        except Exception:
            ended.set()

    with ws_server(handler) as url:
        transport = WebSocketTransport(url, timeout_s=0.3)
        started = time.monotonic()
        with pytest.raises(EnvTimeoutError) as info:
            transport.request("state", {})
        assert time.monotonic() - started < 2.0
        assert info.value.timeout_s == 0.3
        assert not transport.connected and transport.session_lost
        assert ended.wait(3)  # the server saw the connection end
        transport.close()


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (made by the openssl CLI)."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"),
            *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_timeout_over_tls_sends_going_away_and_closes(
    tls_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Abandoning a TLS session must not wait, and must still say goodbye (1001) and hang up.
    cert, key = tls_files
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts the test certificate
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    seen: list[int | None] = []

    def handler(conn: Any) -> None:
        try:
            while True:
                conn.recv()  # never answers
        except ConnectionClosed:
            seen.append(conn.close_code)

    with ws_server(handler, ssl=context) as url:
        transport = WebSocketTransport(url.replace("http", "https"), timeout_s=0.3)
        with pytest.raises(EnvTimeoutError):
            transport.request("state", {})
        assert not transport.connected and transport.session_lost
        deadline = time.monotonic() + 3
        while not seen and time.monotonic() < deadline:
            time.sleep(0.02)
        assert seen == [1001]
        transport.close()


def test_recv_timeout_and_partial_reads() -> None:
    def handler(conn: Any) -> None:
        conn.recv()
        # one message split over several TCP writes, the first after a pause
        payload = json.dumps({"type": "state", "data": {"big": "y" * 200_000}})
        time.sleep(0.3)
        conn.send(payload)
        conn.recv()

    with ws_server(handler) as url:
        conn = direct(url)
        conn.send("slow please")
        with pytest.raises(TimeoutError):
            conn.recv(timeout=0.1)
        reply = conn.recv(timeout=5)
        assert isinstance(reply, str) and len(json.loads(reply)["data"]["big"]) == 200_000
        conn.close()


# --------------------------------------------------------------------------- handshake


def test_handshake_carries_the_headers() -> None:
    seen: list[dict[str, str]] = []

    def handler(conn: Any) -> None:
        seen.append(dict(conn.request.headers.raw_items()))
        counting(conn)

    with ws_server(handler) as url:
        transport = WebSocketTransport(
            url, timeout_s=5, headers={"Authorization": SECRET, "X-Env": "direct"}
        )
        assert transport.request("state", {}) == {"count": 1}
        assert isinstance(transport._conn, DirectConnection)
        transport.close()
    assert seen[0]["Authorization"] == SECRET and seen[0]["X-Env"] == "direct"
    assert "Python" in seen[0]["User-Agent"]
    assert "Sec-WebSocket-Extensions" not in seen[0]  # no compression on loopback


def test_handshake_refused_is_a_server_error() -> None:
    def refuse(conn: Any, request: Any) -> Any:
        return conn.respond(403, "no thanks\n")

    with ws_server(counting, process_request=refuse) as url:
        transport = WebSocketTransport(url, timeout_s=5)
        with pytest.raises(Exception) as info:
            transport.request("state", {})
        assert getattr(info.value, "status", None) == 403
        assert not transport.connected
        transport.close()


def test_redirect_is_followed() -> None:
    with ws_server(counting) as target:

        def redirect(conn: Any, request: Any) -> Any:
            response = conn.respond(302, "")
            response.headers["Location"] = "ws" + target.removeprefix("http") + "/ws"
            return response

        with ws_server(counting, process_request=redirect) as url:
            transport = WebSocketTransport(url, timeout_s=5)
            assert transport.request("state", {}) == {"count": 1}
            assert isinstance(transport._conn, DirectConnection)  # followed by the engine
            transport.close()


def test_direct_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert direct_allowed("ws://127.0.0.1:1/ws", None)  # loopback: proxy=None
    assert not direct_allowed("wss://example.com/ws", True)  # from the environment
    assert not direct_allowed("ws://example.com/ws", "http://proxy.invalid:3128")
    monkeypatch.delenv("HTTPS_PROXY")
    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.delenv("https_proxy", raising=False)
    monkeypatch.delenv("http_proxy", raising=False)
    monkeypatch.delenv("ALL_PROXY", raising=False)
    monkeypatch.delenv("all_proxy", raising=False)
    assert direct_allowed("wss://example.com/ws", True)
    monkeypatch.setattr(ws_direct, "ENABLED", False)
    assert not direct_allowed("ws://127.0.0.1:1/ws", None)


def test_server_hanging_up_during_the_handshake_is_a_connection_error() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)

        def hang_up() -> None:
            sock, _ = listener.accept()
            sock.recv(4096)
            sock.close()

        threading.Thread(target=hang_up, daemon=True).start()
        transport = WebSocketTransport(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout_s=5)
        with pytest.raises(EnvConnectionError) as info:
            transport.request("reset", {})
        assert info.value.during_connect
        assert not transport.connected
        transport.close()
