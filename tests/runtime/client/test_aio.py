"""AsyncEnvClient and the asyncio transports, against the same real servers as the sync tests.

Each test drives one coroutine with ``asyncio.run`` (no pytest plugin needed). Fakes only
supply what real servers never send.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
import socket
import ssl
import threading
import time
import tracemalloc
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import pytest
from envgen_runtime import (
    AsyncClientStart,
    AsyncEnvClient,
    AsyncHttpTransport,
    AsyncTransport,
    AsyncWebSocketTransport,
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvSpec,
    EnvTimeoutError,
    EnvValidationError,
    ProtocolError,
    RetryPolicy,
    ServerError,
    ServerValidationError,
    SessionLostError,
)

from generated.echo_env import AsyncEchoEnv
from tests.helpers import REPO
from tests.runtime.clients import (
    AsyncCounterEnv,
    AsyncLegacyCounterEnv,
    CounterAction,
    CounterState,
    MiniEnv,
)
from tests.runtime.fakes import (
    Reply,
    connections_to,
    fake_http,
    fake_ws,
    pid_alive,
    scripted_ws,
    wait_gone,
)
from tests.runtime.transport.websocket import test_direct as wsdirect_tests

T = TypeVar("T")
tls_files = wsdirect_tests.tls_files  # the fixture: a self-signed certificate for 127.0.0.1
NO_RETRY = RetryPolicy.never()


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class AsyncMiniEnv(AsyncCounterEnv):
    """Points at the health-only mini server: lifecycle tests that never call the env."""

    SPEC: ClassVar[EnvSpec] = MiniEnv.SPEC


# --------------------------------------------------------------------------- real servers


def test_full_episode_over_websocket(ws_url: str) -> None:
    async def episode() -> None:
        async with AsyncCounterEnv(ws_url) as env:
            assert isinstance(env.transport, AsyncWebSocketTransport)
            assert isinstance(env.transport, AsyncTransport)
            first = await env.reset(seed=42, episode_id="ep-a1")
            assert first.observation.seed == 42 and first.observation.episode_id == "ep-a1"
            assert first.reward is None and first.done is False
            assert first.metadata == {"phase": "reset"}
            for i, delta in enumerate((1, 2, 3), start=1):
                result = await env.step(CounterAction(message=f"hello {i}", delta=delta))
                assert result.observation.step == i and result.observation.echoed == f"hello {i}"
                assert result.reward == float(delta) and isinstance(result.reward, float)
            assert result.extra == {"metadata": {"step": 3}}
            assert result.observation.model_extra == {
                "metadata": {"step": 3},
                "server_only": "kept",
            }
            state = await env.state()
            assert isinstance(state, CounterState)
            assert (state.episode_id, state.step_count, state.total) == ("ep-a1", 3, 6)
            assert state.model_extra == {"seed": 42, "label": "counter"}
            assert (await env.step(CounterAction(message="big", delta=10))).done is True
        assert env.closed

    run(episode())


def test_full_episode_over_stateful_http(legacy_url: str) -> None:
    async def episode() -> None:
        async with AsyncLegacyCounterEnv(legacy_url) as env:
            assert isinstance(env.transport, AsyncHttpTransport)
            first = await env.reset(seed=1, episode_id="ep-http")
            assert first.observation.total == 0 and first.reward is None
            totals = [
                (await env.step(CounterAction(message="m", delta=d))).observation.total
                for d in (2, 3, 4)
            ]
            assert totals == [2, 5, 9]
            state = await env.state()
            assert state.step_count == 3 and state.total == 9
            last = await env.step(CounterAction(message="end", delta=1))
            assert last.done is True and last.observation.model_extra == {"server_only": "kept"}

    run(episode())


def test_a_full_episode_runs_on_uvloop(ws_url: str, legacy_url: str) -> None:
    """uvloop's transports are not ``asyncio.Transport`` subclasses; the connections must not
    ask that (they did: every WebSocket handshake on uvloop failed as a closed connection)."""
    uvloop = pytest.importorskip("uvloop")

    async def episode(env: AsyncCounterEnv) -> list[int]:
        async with env:
            await env.reset(seed=1)
            return [
                (await env.step(CounterAction(message="m", delta=d))).observation.total
                for d in (2, 3)
            ]

    assert uvloop.run(episode(AsyncCounterEnv(ws_url, retry=NO_RETRY))) == [2, 5]
    assert uvloop.run(episode(AsyncLegacyCounterEnv(legacy_url, retry=NO_RETRY))) == [2, 5]


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_replies_are_read_into_one_buffer(ws_url: str, legacy_url: str, transport: str) -> None:
    """A step allocates no read buffer, and a reply longer than the buffer arrives whole.

    A plain asyncio ``Protocol`` gets every read as a fresh 256 KiB ``recv`` (mapped, shrunk
    and unmapped per reply, the largest CPU cost the async client had over the sync one).
    """

    big = "".join(chr(ord("a") + i % 26) for i in range(300_000))

    async def go() -> tuple[int, str]:
        env_class = AsyncCounterEnv if transport == "websocket" else AsyncLegacyCounterEnv
        async with env_class(ws_url if transport == "websocket" else legacy_url) as env:
            await env.reset()
            await env.step(CounterAction(message="warm", delta=0))
            tracemalloc.start()
            try:
                for _ in range(10):
                    await env.step(CounterAction(message="m", delta=0))
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            return peak, (await env.step(CounterAction(message=big, delta=0))).observation.echoed

    peak, echoed = run(go())
    assert peak < 128 * 1024
    assert len(echoed) == len(big) and echoed == big


def test_concurrent_clients_are_separate_sessions(ws_url: str) -> None:
    async def play(name: str, delta: int) -> tuple[str | None, int]:
        async with AsyncCounterEnv(ws_url) as env:
            await env.reset(episode_id=name)
            for _ in range(3):
                await env.step(CounterAction(message=name, delta=delta))
            state = await env.state()
            return state.episode_id, state.total

    async def both() -> list[tuple[str | None, int]]:
        return list(await asyncio.gather(play("a", 1), play("b", 2), play("c", 3)))

    assert run(both()) == [("a", 3), ("b", 6), ("c", 9)]


def test_concurrent_calls_on_one_client_are_serialised(ws_url: str) -> None:
    async def go() -> list[int]:
        async with AsyncCounterEnv(ws_url) as env:
            await env.reset()
            results = await asyncio.gather(
                *(env.step(CounterAction(message=str(i))) for i in range(5))
            )
            return sorted(r.observation.step for r in results)

    assert run(go()) == [1, 2, 3, 4, 5]


def test_receive_timeout_drops_the_session(ws_url: str) -> None:
    async def go() -> None:
        async with AsyncCounterEnv(ws_url, request_timeout_s=0.4) as env:
            await env.reset(episode_id="slow")
            transport = env.transport
            assert isinstance(transport, AsyncWebSocketTransport)
            started = time.monotonic()
            with pytest.raises(EnvTimeoutError) as info:
                await env.step(CounterAction(message="slow", sleep_s=1.2))
            assert time.monotonic() - started < 1.0
            assert info.value.timeout_s == 0.4 and not info.value.during_connect
            assert not transport.connected and transport.session_lost
            with pytest.raises(SessionLostError, match="no reply in time"):
                await env.state()
            with pytest.raises(SessionLostError):
                await env.step(CounterAction(message="x"))
            fresh = await env.reset(episode_id="after")
            assert fresh.observation.episode_id == "after" and fresh.observation.total == 0
            assert transport.sessions_opened == 2
            quick = await env.step(CounterAction(message="quick", delta=2))
            assert quick.observation.echoed == "quick" and quick.observation.total == 2

    run(go())


def test_cancelled_step_drops_the_session(ws_url: str) -> None:
    # A cancelled wait is a timeout the transport did not see: the reply still comes later
    # and must never be read as the answer to the next request.
    async def go() -> None:
        async with AsyncCounterEnv(ws_url) as env:
            await env.reset(episode_id="cancel")
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(env.step(CounterAction(message="late", sleep_s=1.0)), 0.2)
            with pytest.raises(SessionLostError, match="cancelled"):
                await env.state()
            await env.reset(episode_id="next")
            await asyncio.sleep(1.0)  # the late reply would have arrived by now
            result = await env.step(CounterAction(message="now"))
            assert result.observation.echoed == "now" and result.observation.step == 1

    run(go())


def test_execution_error_keeps_the_session(ws_url: str) -> None:
    async def go() -> None:
        async with AsyncCounterEnv(ws_url) as env:
            await env.reset(episode_id="boom")
            await env.step(CounterAction(message="ok"))
            with pytest.raises(ServerError) as info:
                await env.step(CounterAction(message="fail", fail=True))
            assert info.value.code == "EXECUTION_ERROR" and info.value.op == "step"
            assert (await env.state()).step_count == 1
            assert isinstance(env.transport, AsyncWebSocketTransport)
            assert env.transport.sessions_opened == 1

    run(go())


def test_server_validation_error_names_fields(ws_url: str) -> None:
    async def go() -> None:
        transport = AsyncWebSocketTransport(ws_url, timeout_s=10)
        try:
            await transport.request("reset", {})
            with pytest.raises(ServerValidationError) as info:
                await transport.request("step", {"message": 5, "delta": "x"})
            assert sorted(i.path for i in info.value.errors) == ["delta", "message"]
            assert (await transport.request("state", {}))["step_count"] == 0
        finally:
            await transport.close()

    run(go())


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_client_side_validation_sends_nothing(ws_url: str, transport: str) -> None:
    async def go() -> None:
        async with AsyncCounterEnv(ws_url, transport=transport) as env:  # type: ignore[arg-type]
            bad = CounterAction.model_construct(message=3)  # type: ignore[arg-type]
            with pytest.raises(EnvValidationError) as info:
                await env.step(bad)
            assert not isinstance(info.value, ServerError)
            assert info.value.errors[0].path == "message"
            if isinstance(env.transport, AsyncWebSocketTransport):
                assert not env.transport.connected

    run(go())


def test_http_422_and_500(ws_url: str, legacy_url: str) -> None:
    async def go() -> None:
        async with AsyncCounterEnv(ws_url, transport="http") as env:
            with pytest.raises(ServerValidationError) as info:
                await env.reset(seed=-1)
            assert info.value.status == 422 and info.value.errors[0].path == "body.seed"
        async with AsyncLegacyCounterEnv(legacy_url) as env:
            await env.reset()
            with pytest.raises(ServerError) as info500:
                await env.step(CounterAction(message="x", fail=True))
            assert info500.value.status == 500 and "HTTP 500" in str(info500.value)

    run(go())


def test_capacity_reached(ws_cap1_url: str) -> None:
    async def go() -> None:
        async with AsyncCounterEnv(ws_cap1_url) as first:
            await first.reset()
            async with AsyncCounterEnv(ws_cap1_url) as second:
                with pytest.raises(ServerError) as info:
                    await second.reset()
                assert info.value.code == "CAPACITY_REACHED"
                assert isinstance(second.transport, AsyncWebSocketTransport)
                assert not second.transport.connected
            assert (await first.step(CounterAction(message="mine"))).observation.step == 1

    run(go())


def test_closed_client_refuses_requests(ws_url: str) -> None:
    async def go() -> None:
        env = AsyncCounterEnv(ws_url)
        await env.reset()
        await env.close()
        await env.close()
        assert env.closed
        with pytest.raises(EnvgenRuntimeError, match="closed"):
            await env.step(CounterAction(message="late"))
        with pytest.raises(EnvgenRuntimeError, match="closed"):
            await env.state()

    run(go())


def test_http_only_server_handshake_fails_clearly(legacy_url: str) -> None:
    async def go() -> None:
        async with AsyncCounterEnv(legacy_url) as env:
            with pytest.raises(ServerError) as info:
                await env.reset()
        assert info.value.status in (403, 404) and "transport='http'" in str(info.value)

    run(go())


# --------------------------------------------------------------------------- from_local_process


def test_from_local_process_with_async_with() -> None:
    async def go() -> int:
        starter = AsyncMiniEnv.from_local_process(transport="http")
        assert isinstance(starter, AsyncClientStart)
        async with starter as env:
            assert isinstance(env, AsyncMiniEnv)
            assert env.provider is not None
            pid = env.provider.pid  # type: ignore[attr-defined]
            assert isinstance(pid, int) and pid_alive(pid)
        assert env.closed and env.provider.base_url is None
        return pid

    assert wait_gone(run(go()))


def test_a_close_cancelled_while_the_server_is_silent_still_closes_the_socket() -> None:
    # The closing handshake waits for the server's close frame; cancelled meanwhile (a
    # caller's timeout, a pool closing), the socket must be closed all the same.
    async def go() -> int:
        command = [*AsyncEchoEnv.SPEC.server_command, "--backend", "lean"]
        async with await AsyncEchoEnv.from_local_process(command=command, cwd=REPO) as env:
            await env.reset()
            pid = env.provider.pid  # type: ignore[union-attr]
            port = int(env.base_url.rsplit(":", 1)[1])
            assert connections_to(port) == 1
            os.kill(pid, signal.SIGSTOP)
            try:
                with pytest.raises(TimeoutError):
                    async with asyncio.timeout(0.3):
                        await env.transport.close()  # no close frame ever comes back
                await asyncio.sleep(0.05)  # asyncio closes a socket on a later turn of the loop
                return connections_to(port)
            finally:
                os.kill(pid, signal.SIGCONT)

    gc.disable()  # a collection must not close what the close left open
    try:
        assert run(go()) == 0
    finally:
        gc.enable()


def test_from_local_process_awaited() -> None:
    async def go() -> int:
        env = await AsyncMiniEnv.from_local_process(transport="http", request_timeout_s=3)
        try:
            assert env.request_timeout_s == 3 and env.transport_name == "http"
            pid: int = env.provider.pid  # type: ignore[union-attr]
            assert pid_alive(pid)
        finally:
            await env.close()
        return pid

    assert wait_gone(run(go()))


def test_from_local_process_does_not_block_the_event_loop() -> None:
    async def go() -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        try:
            async with AsyncMiniEnv.from_local_process(transport="http"):
                pass
        finally:
            task.cancel()
        return ticks

    assert run(go()) >= 3


def test_cancelled_start_stops_the_server(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    code = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)"
    command = ["{python}", "-c", code, str(pid_file)]

    async def go() -> None:
        start = AsyncMiniEnv.from_local_process(command, startup_timeout_s=1.5)
        task = asyncio.ensure_future(start)
        while not pid_file.exists():
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(go())
    assert wait_gone(int(pid_file.read_text()), timeout_s=10)


def test_from_local_process_without_command() -> None:
    class NoCommand(AsyncCounterEnv):
        SPEC: ClassVar[EnvSpec] = EnvSpec(name="none", version="0.0.0", transport="http")

    with pytest.raises(ValueError, match="server_command"):
        NoCommand.from_local_process()


def test_subclass_without_spec() -> None:
    class NoSpec(AsyncEnvClient[Any, Any, Any]):
        def _step_payload(self, action: Any) -> dict[str, Any]:
            return {}

        def _parse_result(self, payload: Any) -> Any:
            raise NotImplementedError

        def _parse_state(self, payload: Any) -> Any:
            return payload

    with pytest.raises(TypeError, match="SPEC"):
        NoSpec("http://h")


# --------------------------------------------------------------------------- fakes


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        ("this is not json", "not valid JSON"),
        ('{"type": "mcp", "data": {}}', "got a message of type 'mcp'"),
        ('{"type": "observation", "data": [1, 2]}', "'data' of type list"),
        ("[1, 2, 3]", "must be a JSON object"),
        (b"\xff\xfe\x00binary", "not UTF-8"),
        ("z" * 5000, "more characters"),
    ],
)
def test_malformed_websocket_replies_are_protocol_errors(reply: str | bytes, fragment: str) -> None:
    async def go() -> None:
        transport = AsyncWebSocketTransport(url, timeout_s=5)
        try:
            with pytest.raises(ProtocolError) as info:
                await transport.request("reset", {})
            assert fragment in str(info.value)
            assert info.value.op == "reset" and 0 < len(info.value.received) < 600
            assert not transport.connected and transport.session_lost
        finally:
            await transport.close()

    with fake_ws(scripted_ws([reply])) as url:
        run(go())


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (Reply(body="<html>oops</html>", content_type="text/html"), "not valid JSON"),
        (Reply(body=[1, 2]), "must be a JSON object"),
        (Reply(body="x" * 2000, content_type="text/plain"), "more characters"),
    ],
)
def test_malformed_http_replies_are_protocol_errors(reply: Reply, fragment: str) -> None:
    async def go(url: str) -> None:
        transport = AsyncHttpTransport(url, timeout_s=5)
        try:
            with pytest.raises(ProtocolError) as info:
                await transport.request("state", {})
        finally:
            await transport.close()
        assert fragment in str(info.value)
        assert len(info.value.received) < 600 and info.value.op == "state"

    with fake_http({("GET", "/state"): reply}) as server:
        run(go(server.url))


def _tls_http_server(context: ssl.SSLContext, body: bytes) -> tuple[str, threading.Thread]:
    """A one-connection HTTPS server answering every request with ``body`` (JSON)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        with listener, context.wrap_socket(listener.accept()[0], server_side=True) as conn:
            conn.settimeout(5)
            data = b""
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
                while b"\r\n\r\n" in data:
                    head, data = data.split(b"\r\n\r\n", 1)
                    length = 0
                    for line in head.split(b"\r\n")[1:]:
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
                    data = data[length:]
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        + f"Content-Length: {len(body)}\r\n\r\n".encode()
                        + body
                    )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return f"https://127.0.0.1:{port}", thread


def test_tls_replies_longer_than_the_read_buffer_arrive_whole(
    tls_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # TLS transports hand the protocol's buffer to the TLS layer: many reads, many records.
    cert, key = tls_files
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the WebSocket client trusts it
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))  # ... and so does the HTTP one
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    big = "".join(chr(ord("a") + i % 26) for i in range(300_000))
    state = json.dumps({"type": "state", "data": {"big": big}})

    def handler(conn: Any) -> None:
        try:
            while True:
                conn.recv()
                conn.send(state)
        except Exception:
            return

    async def go(transport: AsyncWebSocketTransport | AsyncHttpTransport) -> None:
        try:
            for _ in range(2):
                assert (await transport.request("state", {}))["big"] == big
        finally:
            await transport.close()

    with wsdirect_tests.ws_server(handler, ssl=context) as url:
        run(go(AsyncWebSocketTransport(url.replace("http", "https"), timeout_s=5)))
    url, thread = _tls_http_server(context, json.dumps({"big": big}).encode())
    run(go(AsyncHttpTransport(url, timeout_s=5)))
    thread.join(5)


def test_bad_envelope_is_protocol_error_with_op() -> None:
    async def go(url: str) -> None:
        async with AsyncCounterEnv(url, transport="http") as env:
            with pytest.raises(ProtocolError) as info:
                await env.reset()
        assert info.value.op == "reset" and "no 'observation' key" in str(info.value)

    with fake_http({("POST", "/reset"): Reply(body={"obs": {}})}) as server:
        run(go(server.url))


def test_http_wire_format_matches_the_sync_transport() -> None:
    obs = {"observation": {"echoed": "", "total": 0, "step": 0}, "reward": None, "done": False}
    routes = {("POST", "/step"): Reply(body=obs), ("POST", "/reset"): Reply(body=obs)}

    async def go(url: str) -> None:
        async with AsyncCounterEnv(url, transport="http", step_timeout_s=2.5) as env:
            await env.reset(seed=4)
            await env.step(CounterAction(message="a"))
            await env.step(CounterAction(message="b"))

    with fake_http(routes) as server:
        run(go(server.url))
        # (the client's one-off GET /state after the first step is not asserted on here)
        posts = [request for request in server.seen if request[0] == "POST"]
        (_, path0, body0, _), (_, _, body1, _), (_, _, body2, _) = posts
    assert path0 == "/reset" and json.loads(body0) == {"seed": 4}
    step1, step2 = json.loads(body1), json.loads(body2)
    assert step1["action"] == {"message": "a", "delta": 1} and step1["timeout_s"] == 2.5
    assert len(step1["request_id"]) == 32 and step1["request_id"] != step2["request_id"]


def test_websocket_wire_format_matches_the_sync_transport() -> None:
    received: list[Any] = []

    def handler(conn: Any) -> None:
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

    async def go(url: str) -> None:
        env = AsyncCounterEnv(url)
        await env.reset(seed=1)
        await env.step(CounterAction(message="m"))
        await env.state()
        await env.close()

    with fake_ws(handler) as url:
        run(go(url))
        deadline = time.monotonic() + 2
        while len(received) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert received == [
        {"type": "reset", "data": {"seed": 1}},
        {"type": "step", "data": {"message": "m", "delta": 1}},
        {"type": "state"},
        {"type": "close"},
    ]


def test_error_then_close_is_reported_with_code() -> None:
    def handler(conn: Any) -> None:
        error = {"type": "error", "data": {"message": "full", "code": "CAPACITY_REACHED"}}
        conn.send(json.dumps(error))
        conn.close()

    async def go(url: str) -> None:
        transport = AsyncWebSocketTransport(url, timeout_s=5)
        try:
            with pytest.raises(ServerError) as info:
                await transport.request("reset", {})
            assert info.value.code == "CAPACITY_REACHED"
            assert not transport.connected
        finally:
            await transport.close()

    with fake_ws(handler) as url:
        run(go(url))


def test_server_closing_mid_request_is_connection_error() -> None:
    def handler(conn: Any) -> None:
        conn.recv(timeout=5)
        conn.close(code=1011, reason="crashed")

    async def go(url: str) -> None:
        transport = AsyncWebSocketTransport(url, timeout_s=5)
        try:
            with pytest.raises(EnvConnectionError) as info:
                await transport.request("reset", {})
            assert "1011" in str(info.value) and "crashed" in str(info.value)
            assert not info.value.during_connect
            with pytest.raises(SessionLostError):
                await transport.request("step", {"message": "x"})
        finally:
            await transport.close()

    with fake_ws(handler) as url:
        run(go(url))


def test_reset_reopens_a_session_the_server_closed_while_idle() -> None:
    def handler(conn: Any) -> None:
        conn.recv(timeout=5)
        conn.send(json.dumps({"type": "observation", "data": {"observation": {}}}))
        time.sleep(0.05)
        conn.close()

    async def go(url: str) -> None:
        transport = AsyncWebSocketTransport(url, timeout_s=5)
        try:
            await transport.request("reset", {})
            await asyncio.sleep(0.3)
            await transport.request("reset", {})  # transparently on a new session
            assert transport.sessions_opened == 2
        finally:
            await transport.close()

    with fake_ws(handler) as url:
        run(go(url))


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_connection_refused(transport: str) -> None:
    async def go() -> None:
        url = f"http://127.0.0.1:{closed_port()}"
        async with AsyncCounterEnv(url, transport=transport, retry=NO_RETRY) as env:  # type: ignore[arg-type]
            with pytest.raises(EnvConnectionError) as info:
                await env.reset()
        assert "connection refused" in str(info.value) and info.value.during_connect
        assert "AsyncCounterEnv.from_local_process(...)" in str(info.value)

    run(go())


def test_http_read_deadline_holds_after_a_later_step_deadline() -> None:
    """A keep-alive connection's deadline timer, left armed by a step's read (stretched by
    step_timeout_s), must not push a later read's shorter deadline back to the step's."""
    obs = {"observation": {"echoed": "", "total": 0, "step": 0}, "reward": None, "done": False}
    states = iter([Reply(body={"step_count": 1}), Reply(body={"step_count": 1}, delay_s=3.0)])
    routes = {
        ("POST", "/reset"): Reply(body=obs),
        ("POST", "/step"): Reply(body=obs),
        ("GET", "/state"): lambda path, body: next(states),
    }

    async def go(url: str) -> float:
        async with AsyncCounterEnv(
            url, transport="http", request_timeout_s=0.3, step_timeout_s=5.0, retry=NO_RETRY
        ) as env:
            await env.reset()
            await asyncio.sleep(0.5)  # the timer reset's read armed has fired: none is left
            await env.step(CounterAction(message="a"))  # arms one for its deadline, 10 s away
            started = time.monotonic()
            with pytest.raises(EnvTimeoutError):
                await env.state()
            return time.monotonic() - started

    with fake_http(routes, http11=True) as server:
        assert run(go(server.url)) < 2.0
        assert [request[1] for request in server.seen] == ["/reset", "/step", "/state", "/state"]


def test_http_read_timeout_and_step_hint() -> None:
    routes = {
        ("GET", "/state"): Reply(body={}, delay_s=1.0),
        ("POST", "/step"): Reply(body={}, delay_s=1.0),
    }

    async def go(url: str) -> None:
        async with AsyncCounterEnv(url, transport="http", request_timeout_s=0.2) as env:
            with pytest.raises(EnvTimeoutError) as info:
                await env.state()
            assert info.value.timeout_s == 0.2 and not info.value.during_connect
            assert info.value.attempts == 1  # a read timeout is never retried
            with pytest.raises(EnvTimeoutError, match="may still complete this step"):
                await env.step(CounterAction(message="slow"))

    with fake_http(routes) as server:
        run(go(server.url))
