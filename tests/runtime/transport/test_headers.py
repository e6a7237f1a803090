"""Headers: defaults, per call, the bearer token named by the spec, W3C traceparent.

What headers reach the wire is checked on fakes that record every request (real servers do
not echo headers back); that secrets stay out of messages, reprs and logs is checked against
both real servers and fakes, at DEBUG log level for every library involved.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from typing import Any, ClassVar

import pytest
from envgen_runtime import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvSpec,
    RetryPolicy,
    ServerError,
)
from envgen_runtime.core.spec import TransportName
from envgen_runtime.transport.headers import (
    TraceContext,
    bearer_headers,
    check_headers,
    has_header,
    merge_headers,
)

from tests.runtime.clients import AsyncCounterEnv, CounterAction, CounterEnv
from tests.runtime.fakes import Reply, fake_http, fake_ws

TOKEN = "tok-3x4mpl3-s3cr3t"
TOKEN_ENV = "ENVGEN_TEST_TOKEN"
HEADER_SECRET = "hdr-v4lu3-s3cr3t"
TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-01$")
OBS = {"observation": {"echoed": "", "total": 0, "step": 0}, "reward": None, "done": False}


class TokenEnv(CounterEnv):
    SPEC: ClassVar[EnvSpec] = EnvSpec(
        name="counter", version="0.1.0", transport="http", auth_token_env=TOKEN_ENV
    )


class AsyncTokenEnv(AsyncCounterEnv):
    SPEC: ClassVar[EnvSpec] = TokenEnv.SPEC


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def lower(headers: dict[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


def http_routes() -> dict[tuple[str, str], Reply]:
    return {
        ("POST", "/reset"): Reply(body=OBS),
        ("POST", "/step"): Reply(body=OBS),
        # after one step, as a stateful server reports (the client checks it once)
        ("GET", "/state"): Reply(body={"step_count": 1}),
    }


def ws_recorder(handshakes: list[dict[str, str]]) -> Any:
    """A WebSocket handler recording each handshake's headers and answering every message."""

    def handler(conn: Any) -> None:
        handshakes.append(dict(conn.request.headers.raw_items()))
        while True:
            try:
                message = json.loads(conn.recv(timeout=5))
            except Exception:
                return
            if message["type"] == "state":
                conn.send(json.dumps({"type": "state", "data": {"step_count": 0}}))
            elif message["type"] != "close":
                conn.send(json.dumps({"type": "observation", "data": OBS}))

    return handler


# --------------------------------------------------------------------------- helpers


def test_check_headers_never_quotes_values() -> None:
    assert check_headers({"X-A": "1", "Authorization": "Bearer x"}) == {
        "X-A": "1",
        "Authorization": "Bearer x",
    }
    assert check_headers(None) == {}
    for bad in (
        {"X-A": f"{HEADER_SECRET}\r\nInjected: 1"},
        {"X-A": f"{HEADER_SECRET}\n"},
        {"X-A": f" {HEADER_SECRET}"},
        {"X-A": f"{HEADER_SECRET}é"},
        {"X-A": 5},
    ):
        with pytest.raises(ValueError) as info:
            check_headers(bad)  # type: ignore[arg-type]
        assert "X-A" in str(info.value) and HEADER_SECRET not in str(info.value)
    for name in ("Bad Name", "", "X:Y", "Ümlaut"):
        with pytest.raises(ValueError, match="not a valid header name"):
            check_headers({name: "v"})
    with pytest.raises(TypeError):
        check_headers([("X-A", "1")])  # type: ignore[arg-type]


def test_merge_and_lookup_ignore_case() -> None:
    merged = merge_headers({"Accept": "a", "X-Id": "1"}, None, {"x-id": "2"}, {"ACCEPT": "b"})
    assert merged == {"x-id": "2", "ACCEPT": "b"}
    assert has_header(merged, "accept") and not has_header(merged, "authorization")


def test_bearer_token_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, f"  {TOKEN}\n")
    assert bearer_headers(TOKEN_ENV) == {"Authorization": f"Bearer {TOKEN}"}
    assert bearer_headers(None) == {}
    monkeypatch.setenv(TOKEN_ENV, "")
    assert bearer_headers(TOKEN_ENV) == {}
    monkeypatch.delenv(TOKEN_ENV)
    assert bearer_headers(TOKEN_ENV) == {}
    monkeypatch.setenv(TOKEN_ENV, f"{TOKEN}\r\nX-Evil: 1")
    with pytest.raises(ValueError) as info:
        bearer_headers(TOKEN_ENV)
    assert TOKEN_ENV in str(info.value) and TOKEN not in str(info.value)


def test_trace_context_format_and_propagation() -> None:
    trace = TraceContext()
    values = [trace.traceparent() for _ in range(50)]
    matches = [TRACEPARENT.match(v) for v in values]
    assert all(matches)
    assert {m.group(1) for m in matches if m} == {trace.trace_id}
    assert len({m.group(2) for m in matches if m}) == 50  # a fresh span id every time
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
    child = TraceContext(parent)
    value = child.traceparent()
    assert value.startswith("00-4bf92f3577b34da6a3ce929d0e0e4736-") and value.endswith("-00")
    assert "00f067aa0ba902b7" not in value and child.trace_id in repr(child)
    for bad in (
        "nonsense",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
    ):
        with pytest.raises(ValueError) as info:
            TraceContext(bad)
        assert bad not in str(info.value)


# --------------------------------------------------------------------------- HTTP wire


def test_http_default_token_per_call_and_trace_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with fake_http(http_routes()) as server:
        with TokenEnv(server.url, default_headers={"X-Team": "rl"}, trace=True) as env:
            env.reset(headers={"X-Call": "reset", "x-team": "override"})
            env.step(CounterAction(message="m"), headers={"X-Call": "step"})
            env.state()
            trace_id = env.trace_id
        sent = [lower(headers) for *_, headers in server.seen]
    # reset, step, the client's one-off GET /state after the first step (it belongs to that
    # call, so it carries the call's headers), state
    assert [path for _, path, *_ in server.seen] == ["/reset", "/step", "/state", "/state"]
    assert all(h["authorization"] == f"Bearer {TOKEN}" for h in sent)
    assert [h.get("x-call") for h in sent] == ["reset", "step", "step", None]
    assert [h["x-team"] for h in sent] == ["override", "rl", "rl", "rl"]
    spans = []
    for headers in sent:
        match = TRACEPARENT.match(headers["traceparent"])
        assert match is not None and match.group(1) == trace_id
        spans.append(match.group(2))
    assert len(set(spans)) == 4


def test_explicit_headers_beat_the_token_and_generated_traceparent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    given = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    with fake_http(http_routes()) as server:
        env = TokenEnv(server.url, default_headers={"authorization": "Basic abc"}, trace=True)
        with env:
            env.reset(headers={"traceparent": given})
            env.state()
        first, second = (lower(h) for *_, h in server.seen)
    assert first["authorization"] == second["authorization"] == "Basic abc"
    assert first["traceparent"] == given and second["traceparent"] != given


def test_trace_continues_a_callers_trace() -> None:
    parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    with fake_http(http_routes()) as server:
        with CounterEnv(server.url, transport="http", trace=parent) as env:
            assert env.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
            env.reset()
        ((*_, headers),) = server.seen
    assert lower(headers)["traceparent"].startswith("00-4bf92f3577b34da6a3ce929d0e0e4736-")
    with pytest.raises(ValueError, match="traceparent"):
        CounterEnv("http://127.0.0.1:9", trace="bogus")
    with pytest.raises(TypeError):
        CounterEnv("http://127.0.0.1:9", trace=5)  # type: ignore[arg-type]
    assert CounterEnv("http://127.0.0.1:9").trace_id is None


def test_no_token_variable_sends_no_authorization(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with fake_http(http_routes()) as server:
        with TokenEnv(server.url) as env:
            env.state()
        ((*_, headers),) = server.seen
    assert "authorization" not in lower(headers) and "traceparent" not in lower(headers)


def test_http_reconnect_headers_stick_to_later_requests() -> None:
    with fake_http(http_routes()) as server:
        with CounterEnv(server.url, transport="http") as env:
            env.state()
            env.reconnect(headers={"X-Run": "2"})
            env.state()
            env.state(headers={"X-Run": "3"})
        runs = [lower(h).get("x-run") for *_, h in server.seen]
    assert runs == [None, "2", "3"]


def test_async_http_sends_the_same_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)

    async def go(url: str) -> str | None:
        async with AsyncTokenEnv(url, default_headers={"X-Team": "rl"}, trace=True) as env:
            await env.reset(headers={"X-Call": "reset"})
            await env.step(CounterAction(message="m"))
            return env.trace_id

    with fake_http(http_routes()) as server:
        trace_id = asyncio.run(go(server.url))
        sent = [lower(h) for *_, h in server.seen]
    # reset, step, the client's one-off GET /state after the first step
    assert [h["authorization"] for h in sent] == [f"Bearer {TOKEN}"] * 3
    assert [h.get("x-call") for h in sent] == ["reset", None, None]
    assert all(h["x-team"] == "rl" for h in sent)
    spans = {h["traceparent"] for h in sent}
    assert len(spans) == 3 and all(trace_id and trace_id in s for s in spans)


# --------------------------------------------------------------------------- WebSocket wire


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_websocket_headers_travel_with_the_handshake(
    monkeypatch: pytest.MonkeyPatch, asynchronous: bool
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    handshakes: list[dict[str, str]] = []

    def sync_flow(url: str) -> str | None:
        with TokenEnv(url, transport="websocket", trace=True) as env:
            env.reset(headers={"X-Session": "a"})  # opens the session: sent
            env.step(CounterAction(message="m"), headers={"x-session": "a"})  # already sent
            with pytest.raises(ValueError, match="handshake") as info:
                env.state(headers={"X-Session": "b"})
            assert "'b'" not in str(info.value)
            env.reconnect(headers={"X-Session": "c"})
            env.state(headers={"X-Session": "c"})
            return env.trace_id

    async def async_flow(url: str) -> str | None:
        async with AsyncTokenEnv(url, transport="websocket", trace=True) as env:
            await env.reset(headers={"X-Session": "a"})
            await env.step(CounterAction(message="m"), headers={"x-session": "a"})
            with pytest.raises(ValueError, match="handshake"):
                await env.state(headers={"X-Session": "b"})
            await env.reconnect(headers={"X-Session": "c"})
            await env.state(headers={"X-Session": "c"})
            return env.trace_id

    with fake_ws(ws_recorder(handshakes)) as url:
        trace_id = asyncio.run(async_flow(url)) if asynchronous else sync_flow(url)
    assert [lower(h)["x-session"] for h in handshakes] == ["a", "c"]
    assert all(lower(h)["authorization"] == f"Bearer {TOKEN}" for h in handshakes)
    parents = [TRACEPARENT.match(lower(h)["traceparent"]) for h in handshakes]
    assert all(p is not None and p.group(1) == trace_id for p in parents)
    assert len({p.group(2) for p in parents if p}) == 2  # one span per session


# --------------------------------------------------------------------------- secrets


def _assert_secret_free(*texts: str) -> None:
    for text in texts:
        assert TOKEN not in text and HEADER_SECRET not in text, text


def test_secrets_stay_out_of_errors_reprs_and_logs(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    ws_url: str,
    legacy_url: str,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    caplog.set_level("DEBUG")  # every library's debug logging on, websockets' included
    secret_headers = {"X-Api-Key": HEADER_SECRET}
    seen: list[str] = []
    quick = RetryPolicy(sleep=lambda _: None)

    def record(exc: BaseException) -> None:
        seen.extend([str(exc), repr(exc), repr(exc.__dict__)])

    # Real servers, both transports, sync and async: an episode, and a server-side error.
    for transport, url in (("websocket", ws_url), ("http", legacy_url)):
        with TokenEnv(url, transport=transport, default_headers=secret_headers, trace=True) as env:  # type: ignore[arg-type]
            seen.extend([repr(env), repr(env.transport)])
            env.reset(headers=secret_headers)
            env.step(CounterAction(message="m"), headers=secret_headers)
            try:
                env.step(CounterAction(message="boom", fail=True), headers=secret_headers)
            except ServerError as exc:
                record(exc)

        async def episode(url: str = url, transport: str = transport) -> None:
            env = AsyncTokenEnv(url, transport=transport, default_headers=secret_headers)  # type: ignore[arg-type]
            async with env:
                seen.extend([repr(env), repr(env.transport)])
                await env.reset(headers=secret_headers)
                await env.state(headers=secret_headers)

        asyncio.run(episode())

    # Error paths: a refused connection, a gateway error, a rejected header.
    refused = f"http://127.0.0.1:{closed_port()}"
    transports: list[TransportName] = ["http", "websocket"]
    for name in transports:
        with TokenEnv(refused, transport=name, default_headers=secret_headers, retry=quick) as env:
            with pytest.raises(EnvConnectionError) as info:
                env.reset(headers=secret_headers)
            record(info.value)
    with (
        fake_http({("GET", "/state"): Reply(503, "down")}) as server,
        TokenEnv(server.url, default_headers=secret_headers, retry=quick) as env,
    ):
        with pytest.raises(ServerError) as info_503:
            env.state(headers=secret_headers)
        record(info_503.value)
    with pytest.raises(ValueError) as bad:
        TokenEnv(ws_url).state(headers={"X-Api-Key": HEADER_SECRET + "\n"})
    record(bad.value)

    assert "> Authorization: <redacted>" in caplog.text  # websockets did log the handshake
    _assert_secret_free(caplog.text, *seen)


def test_closed_client_error_is_plain() -> None:
    env = CounterEnv("http://127.0.0.1:9", default_headers={"X-Api-Key": HEADER_SECRET})
    env.close()
    with pytest.raises(EnvgenRuntimeError) as info:
        env.state()
    _assert_secret_free(str(info.value), repr(env))
