"""WebSocketTransport and EnvClient over OpenEnv's /ws protocol.

Features run against real openenv 0.10.0 servers; fakes (websockets.sync.server on
127.0.0.1) only send what a real server never would.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import pytest
from envgen_runtime import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    EnvValidationError,
    ProtocolError,
    ServerError,
    ServerValidationError,
    SessionLostError,
    WebSocketTransport,
)
from envgen_runtime.transport.websocket.sync import websocket_url

from tests.runtime.clients import CounterAction, CounterEnv, CounterState
from tests.runtime.fakes import fake_ws, scripted_ws

SECRET = "Bearer ws-s3cr3t"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# --------------------------------------------------------------------------- real server


def test_full_episode(ws_url: str) -> None:
    with CounterEnv(ws_url) as env:
        assert env.transport_name == "websocket"
        first = env.reset(seed=42, episode_id="ep-1")
        assert first.observation.seed == 42 and first.observation.episode_id == "ep-1"
        assert first.reward is None and first.done is False
        assert first.metadata == {"phase": "reset"}
        for i, delta in enumerate((1, 2, 3), start=1):
            result = env.step(CounterAction(message=f"hello {i}", delta=delta))
            assert result.observation.step == i
            assert result.observation.echoed == f"hello {i}"
            assert result.reward == float(delta) and isinstance(result.reward, float)
        assert result.observation.total == 6 and result.done is False
        # top-level keys besides observation/reward/done are kept, not dropped
        assert result.extra == {"metadata": {"step": 3}}
        assert result.metadata == {"step": 3}
        assert result.raw["reward"] == 3  # as received (an int)
        # observation fields the client model does not declare stay reachable
        assert result.observation.model_extra == {"metadata": {"step": 3}, "server_only": "kept"}
        state = env.state()
        assert isinstance(state, CounterState)
        assert (state.episode_id, state.step_count, state.total) == ("ep-1", 3, 6)
        assert state.model_extra == {"seed": 42, "label": "counter"}
        done = env.step(CounterAction(message="big", delta=10))
        assert done.done is True


def test_each_client_is_its_own_session(ws_url: str) -> None:
    with CounterEnv(ws_url) as a, CounterEnv(ws_url) as b:
        a.reset(episode_id="a")
        b.reset(episode_id="b")
        a.step(CounterAction(message="x", delta=5))
        assert a.state().total == 5
        assert b.state().total == 0 and b.state().episode_id == "b"


def test_receive_timeout_drops_socket_and_next_request_reconnects(ws_url: str) -> None:
    with CounterEnv(ws_url, request_timeout_s=0.4) as env:
        env.reset(episode_id="slow")
        transport = env.transport
        assert isinstance(transport, WebSocketTransport)
        started = time.monotonic()
        with pytest.raises(EnvTimeoutError) as info:
            env.step(CounterAction(message="slow", sleep_s=1.2))
        assert time.monotonic() - started < 1.0
        assert "episode" in str(info.value) and info.value.timeout_s == 0.4
        assert not transport.connected
        # A new session: the late reply of the slow step can never be read as this answer.
        fresh = env.reset(episode_id="after")
        assert fresh.observation.episode_id == "after" and fresh.observation.total == 0
        assert transport.sessions_opened == 2
        quick = env.step(CounterAction(message="quick", delta=2))
        assert quick.observation.echoed == "quick" and quick.observation.total == 2


def test_execution_error_carries_code_and_session_survives(ws_url: str) -> None:
    with CounterEnv(ws_url) as env:
        env.reset(episode_id="boom")
        env.step(CounterAction(message="ok", delta=1))
        with pytest.raises(ServerError) as info:
            env.step(CounterAction(message="fail", fail=True))
        err = info.value
        assert err.code == "EXECUTION_ERROR" and err.status is None and err.op == "step"
        assert "asked the server to fail" in str(err)
        assert env.state().step_count == 1  # same session, episode intact
        assert isinstance(env.transport, WebSocketTransport)
        assert env.transport.sessions_opened == 1


def test_server_validation_error_names_fields(ws_url: str) -> None:
    transport = WebSocketTransport(ws_url, timeout_s=10)
    try:
        transport.request("reset", {})
        with pytest.raises(ServerValidationError) as info:
            transport.request("step", {"message": 5, "delta": "x"})
        err = info.value
        assert err.code == "VALIDATION_ERROR" and err.role == "action"
        assert sorted(issue.path for issue in err.errors) == ["delta", "message"]
        assert isinstance(err, EnvValidationError) and isinstance(err, ServerError)
        # a validation error does not end the session
        assert transport.request("state", {})["step_count"] == 0
        assert transport.sessions_opened == 1
    finally:
        transport.close()


def test_client_side_validation_sends_nothing(ws_url: str) -> None:
    with CounterEnv(ws_url) as env:
        bad = CounterAction.model_construct(message=3)  # type: ignore[arg-type]
        with pytest.raises(EnvValidationError) as info:
            env.step(bad)
        assert not isinstance(info.value, ServerError)
        assert info.value.errors[0].path == "message"
        assert isinstance(env.transport, WebSocketTransport)
        assert not env.transport.connected  # nothing was sent, not even a connection opened


def test_capacity_reached(ws_cap1_url: str) -> None:
    with CounterEnv(ws_cap1_url) as first:
        first.reset()
        with CounterEnv(ws_cap1_url) as second:
            with pytest.raises(ServerError) as info:
                second.reset()
            assert isinstance(second.transport, WebSocketTransport)
            assert not second.transport.connected
        assert info.value.code == "CAPACITY_REACHED"
        assert "maximum number of sessions" in str(info.value)
        assert first.step(CounterAction(message="still mine")).observation.step == 1


def test_close_is_idempotent_and_final(ws_url: str) -> None:
    env = CounterEnv(ws_url)
    env.reset()
    env.close()
    env.close()
    assert env.closed
    with pytest.raises(EnvgenRuntimeError, match="closed"):
        env.step(CounterAction(message="late"))
    with pytest.raises(EnvgenRuntimeError, match="closed"):
        env.state()


def test_http_only_server_handshake_fails_clearly(legacy_url: str) -> None:
    with CounterEnv(legacy_url, transport="websocket") as env, pytest.raises(ServerError) as info:
        env.reset()
    assert info.value.status in (403, 404)  # starlette refuses unknown WebSocket routes
    assert "transport='http'" in str(info.value)


# --------------------------------------------------------------------------- fakes


def test_protocol_messages_and_headers() -> None:
    received: list[Any] = []
    headers: list[str | None] = []

    def handler(conn: Any) -> None:
        headers.append(conn.request.headers.get("Authorization"))
        obs = {"observation": {"echoed": "", "total": 0, "step": 0}, "reward": None, "done": False}
        replies = [
            {"type": "observation", "data": obs},
            {"type": "observation", "data": obs},
            {"type": "state", "data": {"step_count": 0}},
        ]
        try:
            for reply in replies:
                received.append(json.loads(conn.recv(timeout=5)))
                conn.send(json.dumps(reply))
            received.append(json.loads(conn.recv(timeout=5)))
        except Exception:
            return

    with fake_ws(handler) as url:
        env = CounterEnv(url, default_headers={"Authorization": SECRET})
        env.reset(seed=1)
        env.step(CounterAction(message="m"))
        env.state()
        env.close()
        deadline = time.monotonic() + 2
        while len(received) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert headers == [SECRET]
    assert received == [
        {"type": "reset", "data": {"seed": 1}},
        {"type": "step", "data": {"message": "m", "delta": 1}},
        {"type": "state"},
        {"type": "close"},
    ]


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        ("this is not json", "not valid JSON"),
        ('{"type": "mcp", "data": {}}', "got a message of type 'mcp'"),
        ('{"type": "observation", "data": [1, 2]}', "'data' of type list"),
        ("[1, 2, 3]", "must be a JSON object"),
        (b"\xff\xfe\x00binary", "not UTF-8"),
    ],
)
def test_malformed_replies_are_protocol_errors(reply: str | bytes, fragment: str) -> None:
    with fake_ws(scripted_ws([reply])) as url:
        transport = WebSocketTransport(url, timeout_s=5)
        with pytest.raises(ProtocolError) as info:
            transport.request("reset", {})
        assert fragment in str(info.value)
        assert info.value.op == "reset" and info.value.received
        assert not transport.connected  # a desynchronised stream is never reused
        transport.close()


def test_protocol_error_quote_is_truncated() -> None:
    with fake_ws(scripted_ws(["z" * 5000])) as url:
        transport = WebSocketTransport(url, timeout_s=5)
        with pytest.raises(ProtocolError) as info:
            transport.request("state", {})
        transport.close()
    assert len(info.value.received) < 600 and "more characters" in info.value.received


def test_error_then_close_is_reported_with_code() -> None:
    # What a server at capacity does: send an error right away, then close.
    def handler(conn: Any) -> None:
        error = {"type": "error", "data": {"message": "full", "code": "CAPACITY_REACHED"}}
        conn.send(json.dumps(error))
        conn.close()

    with fake_ws(handler) as url:
        transport = WebSocketTransport(url, timeout_s=5)
        time.sleep(0.2)  # let the close arrive before we send
        with pytest.raises(ServerError) as info:
            transport.request("reset", {})
        assert info.value.code == "CAPACITY_REACHED"
        assert not transport.connected
        transport.close()


def test_error_sent_before_close_on_an_open_session_is_reported() -> None:
    # The server answers once, then ends the session with an error and closes; the next
    # send fails, and the error the server left behind is what the caller sees.
    def handler(conn: Any) -> None:
        conn.recv(timeout=5)
        conn.send(json.dumps({"type": "state", "data": {"step_count": 0}}))
        error = {"type": "error", "data": {"message": "session ended", "code": "SESSION_ERROR"}}
        conn.send(json.dumps(error))
        conn.close()

    with fake_ws(handler) as url:
        transport = WebSocketTransport(url, timeout_s=5)
        assert transport.request("state", {}) == {"step_count": 0}
        time.sleep(0.2)  # the error and the close frame arrive while we are idle
        with pytest.raises(ServerError) as info:
            transport.request("state", {})
        assert info.value.code == "SESSION_ERROR" and "session ended" in str(info.value)
        assert not transport.connected
        transport.close()


def test_server_closing_mid_request_is_connection_error() -> None:
    def handler(conn: Any) -> None:
        conn.recv(timeout=5)
        conn.close(code=1011, reason="crashed")

    with fake_ws(handler) as url:
        transport = WebSocketTransport(url, timeout_s=5)
        with pytest.raises(EnvConnectionError) as info:
            transport.request("reset", {})
        assert "1011" in str(info.value) and "crashed" in str(info.value)
        assert "new session" in str(info.value)
        assert not transport.connected
        transport.close()


def test_lost_session_needs_reconnect_or_reset() -> None:
    connections: list[int] = []
    lock = threading.Lock()

    def handler(conn: Any) -> None:
        with lock:
            connections.append(1)
            count = len(connections)
        conn.recv(timeout=5)
        if count == 1:
            conn.close()
            return
        conn.send(json.dumps({"type": "state", "data": {"step_count": 7}}))
        try:
            conn.recv(timeout=5)
        except Exception:
            return

    with fake_ws(handler) as url:
        transport = WebSocketTransport(url, timeout_s=5)
        with pytest.raises(EnvConnectionError):
            transport.request("state", {})
        assert transport.session_lost
        # A new session would be a fresh server-side env: state() refuses, sends nothing.
        with pytest.raises(SessionLostError, match="call reset"):
            transport.request("state", {})
        assert transport.sessions_opened == 1
        transport.reconnect()  # the caller asks for a new session
        assert transport.request("state", {}) == {"step_count": 7}
        assert transport.sessions_opened == 2 and not transport.session_lost
        transport.close()


def test_reset_reopens_a_session_the_server_closed_while_idle() -> None:
    def handler(conn: Any) -> None:
        obs = {"observation": {"echoed": "", "total": 0, "step": 0}}
        conn.recv(timeout=5)
        conn.send(json.dumps({"type": "observation", "data": obs}))
        time.sleep(0.05)
        conn.close()  # an idle close: no error message

    with fake_ws(handler) as url:
        env = CounterEnv(url)
        with env:
            env.reset()
            time.sleep(0.3)
            env.reset()  # transparently on a new session
            assert isinstance(env.transport, WebSocketTransport)
            assert env.transport.sessions_opened == 2


def test_connection_refused() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    env = CounterEnv(url, default_headers={"Authorization": SECRET})
    with env, pytest.raises(EnvConnectionError) as info:
        env.reset()
    assert "connection refused" in str(info.value)
    assert SECRET not in str(info.value)


def test_open_timeout() -> None:
    # A listening socket that never answers the handshake.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        transport = WebSocketTransport(url, timeout_s=0.3)
        with pytest.raises(EnvTimeoutError):
            transport.request("reset", {})
        transport.close()


def test_websocket_url() -> None:
    assert websocket_url("http://127.0.0.1:8000") == "ws://127.0.0.1:8000/ws"
    assert websocket_url("https://h/prefix/") == "wss://h/prefix/ws"
    assert websocket_url("ws://h:1/ws") == "ws://h:1/ws"
    with pytest.raises(ValueError):
        websocket_url("ftp://h")
    with pytest.raises(ValueError):
        WebSocketTransport("http://h", timeout_s=0)
