"""The WebSocket engine without I/O: FrameEngine fed bytes from websockets' ServerProtocol.

The server side is websockets' own sans-I/O ``ServerProtocol``, so every byte the engine
reads is what a real server writes; no socket is involved. Session decisions (``Flow``)
run against a connection object that only records what the engine asked of it. The asyncio
shell is tested at the end against small websockets servers on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from envgen_runtime import (
    AsyncWebSocketTransport,
    EnvConnectionError,
    EnvTimeoutError,
    ProtocolError,
    ServerError,
    ServerValidationError,
    SessionLostError,
    WebSocketTransport,
)
from envgen_runtime.transport.websocket import aio_connection as ws_aio
from envgen_runtime.transport.websocket import direct as ws_direct
from envgen_runtime.transport.websocket import frames as ws_frames
from envgen_runtime.transport.websocket.errors import map_ws_exception, ws_error
from envgen_runtime.transport.websocket.frames import FrameEngine, redirect
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosedError, ConnectionClosedOK, InvalidStatus
from websockets.exceptions import SecurityError as WsSecurityError
from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response
from websockets.server import ServerProtocol

from tests.runtime.transport.websocket.test_direct import _silent_server, counting, ws_server

URL = "ws://127.0.0.1:9/ws"


def handshake(**options: Any) -> tuple[FrameEngine, ServerProtocol]:
    """A client engine and a server protocol with the opening handshake done."""
    engine = FrameEngine(URL, {"compression": None, **options})
    server = ServerProtocol(max_size=None)
    server.receive_data(b"".join(engine.outgoing()))
    [request] = server.events_received()
    assert isinstance(request, Request)
    server.send_response(server.accept(request))
    engine.receive(b"".join(server.data_to_send()))
    assert not engine.handshaking
    engine.check_handshake()
    return engine, server


def splits(data: bytes) -> Iterator[list[bytes]]:
    """``data`` cut in two at every boundary, and byte by byte."""
    for cut in range(1, len(data)):
        yield [data[:cut], data[cut:]]
    yield [data[i : i + 1] for i in range(len(data))]


# --------------------------------------------------------------------------- frames


def test_handshake_request_carries_headers_and_response_split_anywhere() -> None:
    probe = FrameEngine(URL, {"additional_headers": {"Authorization": "Bearer t"}})
    request = b"".join(probe.outgoing())
    assert request.startswith(b"GET /ws HTTP/1.1\r\n")
    assert b"Authorization: Bearer t\r\n" in request
    assert b"permessage-deflate" in request  # the default; loopback options turn it off
    for cut in range(1, 400):
        engine = FrameEngine(URL, {})
        server = ServerProtocol()
        server.receive_data(b"".join(engine.outgoing()))
        [parsed] = server.events_received()
        assert isinstance(parsed, Request)
        server.send_response(server.accept(parsed))
        response = b"".join(server.data_to_send())
        if cut >= len(response):
            break
        engine.receive(response[:cut])
        assert engine.handshaking
        engine.receive(response[cut:])
        assert not engine.handshaking and engine.state.name == "OPEN"
    assert cut >= 100  # the response was split at every boundary


def test_refused_handshake_raises_invalid_status() -> None:
    engine = FrameEngine(URL, {})
    server = ServerProtocol()
    server.receive_data(b"".join(engine.outgoing()))
    server.events_received()
    server.send_response(server.reject(403, "no\n"))
    engine.receive(b"".join(server.data_to_send()))
    assert not engine.handshaking
    with pytest.raises(InvalidStatus) as info:
        engine.check_handshake()
    assert info.value.response.status_code == 403


def test_a_message_split_at_every_boundary_arrives_once() -> None:
    _, server = handshake()
    server.send_text(b'{"type":"state","data":{"n":1}}')
    wire = b"".join(server.data_to_send())
    for pieces in splits(wire):
        engine, _ = handshake()
        for piece in pieces:
            assert not engine.messages
            engine.receive(piece)
        assert list(engine.messages) == ['{"type":"state","data":{"n":1}}']


def test_fragmented_text_and_binary_messages_are_reassembled() -> None:
    _, server = handshake()
    server.send_text(b'{"type": "state", ', fin=False)
    server.send_continuation(b'"data": {"parts": ', fin=False)
    server.send_continuation(b"3}}", fin=True)
    server.send_binary(b"\x00\x01", fin=False)
    server.send_continuation(b"\x02", fin=True)
    wire = b"".join(server.data_to_send())
    for pieces in splits(wire):
        engine, _ = handshake()
        for piece in pieces:
            engine.receive(piece)
        assert list(engine.messages) == [
            '{"type": "state", "data": {"parts": 3}}',
            b"\x00\x01\x02",
        ]


def test_ping_is_answered_with_pong_and_no_message() -> None:
    engine, server = handshake()
    server.send_ping(b"beat")
    engine.receive(b"".join(server.data_to_send()))
    assert not engine.messages
    server.receive_data(b"".join(engine.outgoing()))
    [pong] = server.events_received()
    assert isinstance(pong, Frame) and pong.opcode is Opcode.PONG and pong.data == b"beat"


def test_oversized_message_fails_with_1009_and_maps_to_the_limit_hint() -> None:
    engine, server = handshake(max_size=100)
    server.send_text(json.dumps({"type": "state", "data": {"x": "y" * 500}}).encode())
    engine.receive(b"".join(server.data_to_send()))
    assert not engine.messages
    server.receive_data(b"".join(engine.outgoing()))
    [close] = server.events_received()
    assert isinstance(close, Frame) and close.opcode is Opcode.CLOSE
    exc = engine.close_exc()
    assert isinstance(exc, ConnectionClosedError) and exc.sent is not None
    assert exc.sent.code == 1009
    mapped = map_ws_exception(exc, op="state", url=URL, timeout_s=1.0)
    assert isinstance(mapped, ProtocolError) and "max_message_bytes" in mapped.message


def test_invalid_utf8_fails_with_1007() -> None:
    engine, server = handshake()
    server.send_frame(Frame(Opcode.TEXT, b"\xff\xfe not utf-8"))
    engine.receive(b"".join(server.data_to_send()))
    assert not engine.messages
    exc = engine.close_exc()
    assert exc.sent is not None and exc.sent.code == 1007
    assert isinstance(exc.__cause__, UnicodeDecodeError)


def test_server_close_mid_reply_is_a_connection_error() -> None:
    engine, server = handshake()
    server.send_text(b'{"type":"observation","data":{}}')
    wire = b"".join(server.data_to_send())
    engine.receive(wire[: len(wire) // 2])
    engine.receive_eof()  # the server went away halfway through the frame
    assert not engine.messages
    exc = engine.close_exc()
    assert isinstance(exc, ConnectionClosedError) and exc.rcvd is None
    mapped = map_ws_exception(exc, op="step", url=URL, timeout_s=1.0)
    assert isinstance(mapped, EnvConnectionError) and "no close frame" in mapped.message
    with pytest.raises(ConnectionClosedError):
        engine.send("after the close")


def test_server_close_frame_keeps_its_code_and_reason() -> None:
    engine, server = handshake()
    server.send_close(1011, "env crashed")
    engine.receive(b"".join(server.data_to_send()))
    server.receive_data(b"".join(engine.outgoing()))  # the engine answered the close
    assert server.state.name == "CLOSING"
    exc = engine.close_exc()
    assert exc.rcvd is not None and exc.rcvd.code == 1011
    mapped = map_ws_exception(exc, op="step", url=URL, timeout_s=1.0)
    assert "1011" in str(mapped) and "env crashed" in str(mapped)
    normal, other = handshake()
    other.send_close(1000)
    normal.receive(b"".join(other.data_to_send()))
    assert isinstance(normal.close_exc(), ConnectionClosedOK)


def test_keepalive_pings_a_silent_server_then_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ws_frames, "PING_INTERVAL_S", 10.0)
    monkeypatch.setattr(ws_frames, "PING_TIMEOUT_S", 5.0)
    engine, server = handshake()
    start = engine.last_recv
    assert not engine.keepalive(start + 9) and not engine.outgoing()
    assert not engine.keepalive(start + 10)
    server.receive_data(b"".join(engine.outgoing()))
    [ping] = server.events_received()
    assert isinstance(ping, Frame) and ping.opcode is Opcode.PING
    assert not engine.keepalive(start + 14)  # waiting for the pong
    assert engine.keepalive(start + 16)  # none came: failed with 1011
    exc = engine.close_exc()
    assert exc.sent is not None and exc.sent.code == 1011
    assert isinstance(exc.__cause__, TimeoutError)


def test_keepalive_is_satisfied_by_any_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ws_frames, "PING_INTERVAL_S", 10.0)
    monkeypatch.setattr(ws_frames, "PING_TIMEOUT_S", 5.0)
    engine, server = handshake()
    engine.keepalive(engine.last_recv + 10)
    server.receive_data(b"".join(engine.outgoing()))
    server.events_received()  # the server's protocol answers the ping
    engine.receive(b"".join(server.data_to_send()))
    assert not engine.keepalive(engine.last_recv + 6)
    assert engine.state.name == "OPEN"


def _redirect_status(location: str, status: int = 302) -> InvalidStatus:
    return InvalidStatus(Response(status, "Found", Headers({"Location": location}), b""))


def test_redirect_rules() -> None:
    secret = {"Authorization": "Bearer x", "X-Env": "a"}
    same = redirect(_redirect_status("/other/ws"), "ws://h:1/ws", secret)
    assert same == ("ws://h:1/other/ws", secret)  # same origin: credentials kept
    cross = redirect(_redirect_status("ws://elsewhere:2/ws"), "ws://h:1/ws", secret)
    assert cross == ("ws://elsewhere:2/ws", {"X-Env": "a"})
    with pytest.raises(WsSecurityError):
        redirect(_redirect_status("ws://h:1/ws"), "wss://h:1/ws", None)
    assert redirect(_redirect_status("/x", status=403), "ws://h:1/ws", None) is None
    assert redirect(ValueError("no"), "ws://h:1/ws", None) is None


def test_ws_error_codes() -> None:
    err = ws_error({"message": "full", "code": "CAPACITY_REACHED"}, op="reset", raw="{}")
    assert err.code == "CAPACITY_REACHED" and err.status is None
    assert "maximum number of sessions" in str(err)
    invalid = ws_error(
        {
            "message": "Invalid message",
            "code": "VALIDATION_ERROR",
            "errors": [{"loc": ["message"], "msg": "Input should be a valid string", "input": 5}],
        },
        op="step",
        raw="{}",
    )
    assert isinstance(invalid, ServerValidationError)
    assert invalid.code == "VALIDATION_ERROR" and invalid.errors[0].path == "message"
    odd = ws_error("not a mapping", op="state", raw='"x"')
    assert type(odd) is ServerError and odd.code is None


# --------------------------------------------------------------------------- session


class RecordingConnection:
    """Replies from a script; records what the engine asked (no I/O)."""

    def __init__(self, *replies: str | BaseException, buffered: list[str | bytes] = []) -> None:  # noqa: B006
        self.replies = list(replies)
        self.sent: list[str] = []
        self.aborted = False
        self._buffered = buffered

    def roundtrip(self, text: str, timeout: float) -> str | bytes:
        self.sent.append(text)
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def buffered(self) -> list[str | bytes]:
        return self._buffered

    def abort(self) -> None:
        self.aborted = True


class ScriptedTransport(WebSocketTransport):
    """The sync shell with connections taken from a list instead of opened."""

    def __init__(self, *conns: RecordingConnection) -> None:
        super().__init__("http://127.0.0.1:9")
        self.pending = list(conns)

    def _open(self, op: str, headers: Any) -> Any:
        with self._opening(op, headers) as opening:
            opening.conn = self.pending.pop(0)
        return opening.conn


OBS = json.dumps({"type": "observation", "data": {"observation": {}, "done": False}})
CLOSED = ConnectionClosedError(None, None)


def test_flow_step_on_a_dropped_session_is_session_lost() -> None:
    first = RecordingConnection(OBS, CLOSED)
    transport = ScriptedTransport(first)
    transport.request("reset", {})
    with pytest.raises(SessionLostError) as info:
        transport.request("step", {"x": 1})
    assert isinstance(info.value.__cause__, ConnectionClosedError)
    assert first.aborted and not transport.connected and transport.session_lost
    with pytest.raises(SessionLostError):  # nothing is sent until a reset
        transport.request("state", {})
    assert len(first.sent) == 2


def test_flow_reset_on_a_stale_session_goes_to_a_new_one_once() -> None:
    stale = RecordingConnection(OBS, CLOSED)
    fresh = RecordingConnection(OBS)
    transport = ScriptedTransport(stale, fresh)
    transport.request("reset", {})
    assert transport.request("reset", {"seed": 1}) == {"observation": {}, "done": False}
    assert fresh.sent == ['{"type":"reset","data":{"seed":1}}']
    assert transport.sessions_opened == 2 and not transport.session_lost


def test_flow_a_failed_new_session_is_not_retried() -> None:
    transport = ScriptedTransport(RecordingConnection(CLOSED), RecordingConnection(OBS))
    with pytest.raises(EnvConnectionError) as info:
        transport.request("reset", {})
    assert not isinstance(info.value, SessionLostError)
    assert len(transport.pending) == 1  # no second session was opened


def test_flow_error_sent_before_the_close_is_what_is_reported() -> None:
    capacity = json.dumps({"type": "error", "data": {"code": "CAPACITY_REACHED", "message": "m"}})
    transport = ScriptedTransport(RecordingConnection(CLOSED, buffered=[capacity]))
    with pytest.raises(ServerError) as info:
        transport.request("reset", {})
    assert info.value.code == "CAPACITY_REACHED" and not transport.connected


def test_flow_server_error_keeps_the_session_unless_it_ends_it() -> None:
    failed = json.dumps({"type": "error", "data": {"code": "EXECUTION_ERROR", "message": "m"}})
    conn = RecordingConnection(OBS, failed, OBS)
    transport = ScriptedTransport(conn)
    transport.request("reset", {})
    with pytest.raises(ServerError):
        transport.request("step", {})
    assert transport.connected and not conn.aborted
    transport.request("step", {})
    assert len(conn.sent) == 3


# --------------------------------------------------------------------------- asyncio shell


def test_async_idle_session_answers_server_pings() -> None:
    async def run(url: str) -> None:
        transport = AsyncWebSocketTransport(url, timeout_s=5)
        assert await transport.request("state", {}) == {"count": 1}
        assert isinstance(transport._conn, ws_aio.AsyncConnection)
        await asyncio.sleep(1.5)  # idle: the event loop answers the pings
        assert await transport.request("state", {}) == {"count": 2}
        assert transport.sessions_opened == 1
        await transport.close()

    with ws_server(counting, ping_interval=0.2, ping_timeout=0.2) as url:
        asyncio.run(run(url))


def test_async_keepalive_fails_a_silent_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ws_aio, "KEEPALIVE_CHECK_S", 0.05)
    monkeypatch.setattr(ws_frames, "PING_INTERVAL_S", 0.1)
    monkeypatch.setattr(ws_frames, "PING_TIMEOUT_S", 0.2)
    accepted: list[socket.socket] = []
    listener, url = _silent_server(accepted)  # completes the handshake, then never reads

    async def run() -> None:
        transport = AsyncWebSocketTransport(url, timeout_s=5)
        await transport.reconnect()
        conn = transport._conn
        assert isinstance(conn, ws_aio.AsyncConnection)
        await asyncio.sleep(1.0)
        assert conn._engine.state.name == "CLOSED"
        with pytest.raises(SessionLostError) as info:
            await transport.request("state", {})
        cause = info.value.__cause__
        assert isinstance(cause, ConnectionClosedError) and cause.sent is not None
        assert cause.sent.code == 1011 and "keepalive" in cause.sent.reason
        await transport.close()

    try:
        asyncio.run(run())
        accepted[0].settimeout(2)
        frames = accepted[0].recv(4096)
        assert frames[0] & 0x0F == 0x9  # the server did receive a ping before the close
    finally:
        listener.close()
        for sock in accepted:
            sock.close()


def test_async_redirect_is_followed() -> None:
    with ws_server(counting) as target:

        def moved(conn: Any, request: Any) -> Any:
            response = conn.respond(302, "")
            response.headers["Location"] = "ws" + target.removeprefix("http") + "/ws"
            return response

        async def run(url: str) -> None:
            transport = AsyncWebSocketTransport(url, timeout_s=5)
            assert await transport.request("state", {}) == {"count": 1}
            await transport.close()

        with ws_server(counting, process_request=moved) as url:
            asyncio.run(run(url))


def test_async_oversized_reply_is_refused_with_the_limit_hint() -> None:
    def big(conn: Any) -> None:
        conn.recv()
        conn.send(json.dumps({"type": "state", "data": {"blob": "x" * 5000}}))
        try:
            conn.recv()
        except Exception:
            return

    async def run(url: str) -> None:
        transport = AsyncWebSocketTransport(url, timeout_s=5, max_message_bytes=1000)
        with pytest.raises(ProtocolError) as info:
            await transport.request("state", {})
        assert "max_message_bytes" in info.value.message
        assert not transport.connected
        await transport.close()

    with ws_server(big) as url:
        asyncio.run(run(url))


def test_async_fallback_to_the_library_client(monkeypatch: pytest.MonkeyPatch) -> None:
    # What a proxied session uses: websockets' asyncio client (here forced by ENABLED).
    monkeypatch.setattr(ws_direct, "ENABLED", False)

    def slow_second(conn: Any) -> None:
        conn.recv()
        conn.send(json.dumps({"type": "state", "data": {"n": 1}}))
        conn.recv()
        time.sleep(1.0)  # the second reply never comes in time

    async def run(url: str) -> None:
        transport = AsyncWebSocketTransport(url, timeout_s=0.3)
        assert await transport.request("state", {}) == {"n": 1}
        assert isinstance(transport._conn, ws_aio.LibraryConnection)
        with pytest.raises(EnvTimeoutError):
            await transport.request("state", {})
        assert not transport.connected and transport.session_lost
        await transport.close()

    with ws_server(slow_second) as url:
        asyncio.run(run(url))


def test_async_error_and_close_in_the_handshake_chunk_is_the_error() -> None:
    # At capacity a server accepts, sends the error and closes at once: all of it can
    # reach the client in one read together with the handshake response. The handshake
    # succeeded, so the error is what the request reports (it was taken for a failed
    # handshake before).
    error = json.dumps({"type": "error", "data": {"code": "CAPACITY_REACHED", "message": "full"}})
    frames = bytes([0x81, len(error)]) + error.encode() + bytes([0x88, 2]) + (1000).to_bytes(2)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)

        def accept_then_refuse() -> None:
            sock, _ = listener.accept()
            with sock:
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
                    b"Connection: Upgrade\r\nSec-WebSocket-Accept: " + accept + b"\r\n\r\n" + frames
                )

        server = threading.Thread(target=accept_then_refuse, daemon=True)
        server.start()

        async def run() -> None:
            transport = AsyncWebSocketTransport(
                f"http://127.0.0.1:{listener.getsockname()[1]}", timeout_s=5
            )
            with pytest.raises(ServerError) as info:
                await transport.request("reset", {})
            assert info.value.code == "CAPACITY_REACHED" and not transport.connected
            await transport.close()

        asyncio.run(run())
        server.join(5)


def test_async_each_request_gets_its_own_full_deadline() -> None:
    # The reply deadline is one timer per connection, re-armed lazily: a later request must
    # still get its whole timeout (not the first request's), and a late reply must still
    # time out on time.
    delays = [0.0, 0.35, 1.0]

    def delayed(conn: Any) -> None:
        for count, delay in enumerate(delays, 1):
            conn.recv()
            time.sleep(delay)
            conn.send(json.dumps({"type": "state", "data": {"count": count}}))
        conn.recv()

    async def run(url: str) -> None:
        transport = AsyncWebSocketTransport(url, timeout_s=0.5)
        assert await transport.request("state", {}) == {"count": 1}
        await asyncio.sleep(0.3)
        assert await transport.request("state", {}) == {"count": 2}  # 0.65 s after the first
        started = time.monotonic()
        with pytest.raises(EnvTimeoutError):
            await transport.request("state", {})
        assert 0.45 <= time.monotonic() - started < 0.8
        assert not transport.connected and transport.session_lost
        await transport.close()

    with ws_server(delayed) as url:
        asyncio.run(run(url))
