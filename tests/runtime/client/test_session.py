"""Episode ids, lost WebSocket sessions, connect and read timeouts, strict parsing.

Real servers for the behaviour; fakes and synthetic library exceptions only for paths that
real servers cannot be made to take (a handshake that never completes, connect timeouts).
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from envgen_runtime import (
    EnvModel,
    EnvTimeoutError,
    EnvValidationError,
    HttpTransport,
    ModelCodec,
    RetryPolicy,
    SessionLostError,
    WebSocketTransport,
)
from pydantic import ConfigDict, Field
from pydantic.dataclasses import dataclass

from tests.runtime.clients import (
    AsyncCounterEnv,
    AsyncLegacyCounterEnv,
    CounterAction,
    CounterEnv,
    LegacyCounterEnv,
)
from tests.runtime.fakes import Reply, fake_http

NO_RETRY = RetryPolicy.never()


@contextmanager
def silent_listener() -> Iterator[str]:
    """A port that accepts TCP connections but never answers (handshakes hang)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


# --------------------------------------------------------------------------- episode ids


def test_episode_id_over_websocket(ws_url: str) -> None:
    with CounterEnv(ws_url) as env:
        assert env.episode_id is None
        env.reset(episode_id="given")
        assert env.episode_id == "given"
        env.step(CounterAction(message="m"))
        assert env.state().episode_id == env.episode_id == "given"
        first = env.reset()  # no id given: the server's (reported in the observation)
        reported = first.observation.episode_id
        assert reported and reported != "given" and env.episode_id == reported
        assert env.state().episode_id == reported
        env.reconnect()  # a new session has no episode yet
        assert env.episode_id is None


def test_episode_id_over_stateful_http(legacy_url: str) -> None:
    with LegacyCounterEnv(legacy_url) as env:
        env.reset()
        assert env.episode_id is None  # this server's observation does not say
        server_id = env.state().episode_id
        assert server_id and env.episode_id == server_id  # ...but its state does
        env.reset(episode_id="mine")  # openenv-core 0.1 ignores it; the argument still wins
        assert env.episode_id == "mine"
        env.state()
        assert env.episode_id == "mine"
        env.reconnect()  # HTTP: the server keeps its one environment
        assert env.episode_id == "mine"


def test_episode_id_async(ws_url: str, legacy_url: str) -> None:
    async def go() -> tuple[str | None, str | None]:
        async with AsyncCounterEnv(ws_url) as ws_env:
            await ws_env.reset(episode_id="async-ep")
            ws_id = ws_env.episode_id
        async with AsyncLegacyCounterEnv(legacy_url) as http_env:
            await http_env.reset()
            state = await http_env.state()
            assert http_env.episode_id == state.episode_id
        return ws_id, http_env.episode_id

    ws_id, http_id = asyncio.run(go())
    assert ws_id == "async-ep" and http_id


def test_reset_body_reaches_the_server(ws_url: str) -> None:
    # seed and episode_id are sent on both transports (openenv 0.10 serves both).
    for transport in ("websocket", "http"):
        with CounterEnv(ws_url, transport=transport) as env:
            result = env.reset(seed=7, episode_id=f"ep-{transport}")
            assert result.observation.seed == 7
            assert result.observation.episode_id == f"ep-{transport}"


# --------------------------------------------------------------------------- lost sessions


def test_after_a_timeout_step_and_state_refuse_until_reset(ws_url: str) -> None:
    with CounterEnv(ws_url, read_timeout_s=0.4) as env:
        env.reset(episode_id="before")
        env.step(CounterAction(message="one", delta=3))
        with pytest.raises(EnvTimeoutError):
            env.step(CounterAction(message="slow", sleep_s=1.0))
        transport = env.transport
        assert isinstance(transport, WebSocketTransport) and transport.session_lost
        for call in (lambda: env.state(), lambda: env.step(CounterAction(message="x"))):
            with pytest.raises(SessionLostError) as info:
                call()
            message = str(info.value)
            assert "no reply in time" in message and "reset()" in message
            assert info.value.attempts == 1  # not retried either
        assert transport.sessions_opened == 1  # nothing was sent on a fresh session
        env.reset(episode_id="after")
        assert env.state().total == 0 and env.episode_id == "after"


def test_reconnect_opens_a_fresh_session_on_request(ws_url: str) -> None:
    with CounterEnv(ws_url, read_timeout_s=0.4) as env:
        env.reset()
        env.step(CounterAction(message="a", delta=4))
        with pytest.raises(EnvTimeoutError):
            env.step(CounterAction(message="slow", sleep_s=1.0))
        env.reconnect()
        assert isinstance(env.transport, WebSocketTransport)
        assert env.transport.connected and env.transport.sessions_opened == 2
        assert env.state().step_count == 0  # a new server-side environment, as asked
        env.reconnect()  # also fine on a healthy session
        assert env.transport.sessions_opened == 3


def test_fresh_client_may_start_with_state(ws_url: str) -> None:
    # Nothing was lost yet: the first session opens on any call.
    with CounterEnv(ws_url) as env:
        assert env.state().step_count == 0


# --------------------------------------------------------------------------- timeouts


def test_timeout_arguments() -> None:
    env = CounterEnv("http://127.0.0.1:9", request_timeout_s=4)
    assert (env.request_timeout_s, env.connect_timeout_s, env.read_timeout_s) == (4, 4, 4)
    env = CounterEnv("http://127.0.0.1:9", connect_timeout_s=1.5, read_timeout_s=30)
    assert (env.request_timeout_s, env.connect_timeout_s, env.read_timeout_s) == (15, 1.5, 30)
    transport = env.transport
    assert isinstance(transport, WebSocketTransport)
    assert (transport.connect_timeout_s, transport.read_timeout_s) == (1.5, 30)
    http = CounterEnv("http://127.0.0.1:9", transport="http", connect_timeout_s=2).transport
    assert isinstance(http, HttpTransport)
    assert (http.connect_timeout_s, http.read_timeout_s) == (2, 15)
    for name in ("connect_timeout_s", "read_timeout_s", "request_timeout_s"):
        with pytest.raises(ValueError, match=name):
            kwargs: dict[str, Any] = {name: 0}
            CounterEnv("http://127.0.0.1:9", **kwargs)
    with pytest.raises(ValueError, match="connect_timeout_s"):
        HttpTransport("http://127.0.0.1:9", connect_timeout_s=-1)
    with pytest.raises(ValueError, match="connect_timeout_s"):
        WebSocketTransport("http://127.0.0.1:9", connect_timeout_s=0)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_websocket_connect_timeout_is_separate(asynchronous: bool) -> None:
    with silent_listener() as url:
        started = time.monotonic()
        with pytest.raises(EnvTimeoutError) as info:
            if asynchronous:

                async def go() -> None:
                    async with AsyncCounterEnv(
                        url, connect_timeout_s=0.3, read_timeout_s=30, retry=NO_RETRY
                    ) as env:
                        await env.reset()

                asyncio.run(go())
            else:
                with CounterEnv(
                    url, connect_timeout_s=0.3, read_timeout_s=30, retry=NO_RETRY
                ) as env:
                    env.reset()
        assert time.monotonic() - started < 5
    err = info.value
    assert err.during_connect and err.timeout_s == 0.3
    assert "could not connect" in str(err) and "episode" not in str(err)


def test_connect_timeouts_are_retried_for_reset() -> None:
    sleeps: list[float] = []
    with silent_listener() as url:
        env = CounterEnv(url, connect_timeout_s=0.2, retry=RetryPolicy(sleep=sleeps.append))
        with env, pytest.raises(EnvTimeoutError) as info:
            env.reset()
    assert len(sleeps) == 2 and info.value.attempts == 3


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_http_read_timeout_is_separate(asynchronous: bool) -> None:
    with fake_http({("GET", "/state"): Reply(body={}, delay_s=1.0)}) as server:
        url = server.url
        with pytest.raises(EnvTimeoutError) as info:
            if asynchronous:

                async def go() -> None:
                    async with AsyncCounterEnv(
                        url, transport="http", connect_timeout_s=5, read_timeout_s=0.2
                    ) as env:
                        await env.state()

                asyncio.run(go())
            else:
                with CounterEnv(
                    url, transport="http", connect_timeout_s=5, read_timeout_s=0.2
                ) as env:
                    env.state()
    assert info.value.timeout_s == 0.2 and not info.value.during_connect


def test_websocket_read_timeout_is_separate(ws_url: str) -> None:
    with CounterEnv(ws_url, connect_timeout_s=10, read_timeout_s=0.3) as env:
        env.reset()
        with pytest.raises(EnvTimeoutError) as info:
            env.step(CounterAction(message="slow", sleep_s=1.0))
    assert info.value.timeout_s == 0.3 and not info.value.during_connect


# --------------------------------------------------------------------------- strict parsing


class Inner(EnvModel):
    n: int


class Outer(EnvModel):
    x: float
    flag: bool = False
    inner: Inner
    items: list[Inner] = Field(default_factory=list)


@dataclass(config=ConfigDict())
class DataObs:
    a: int


def test_lenient_decode_keeps_unknown_fields_and_converts() -> None:
    codec: ModelCodec[Outer] = ModelCodec(Outer, "observation")
    value = codec.decode({"x": "1.5", "inner": {"n": 2, "deep": 1}, "top": True})
    assert value.x == 1.5 and value.model_extra == {"top": True}
    assert value.inner.model_extra == {"deep": 1}


@pytest.mark.parametrize(
    ("payload", "paths"),
    [
        ({"x": 1.0, "inner": {"n": 1}, "top": 1}, {"top"}),
        ({"x": 1.0, "inner": {"n": 1, "deep": 1}}, {"inner.deep"}),
        ({"x": 1.0, "inner": {"n": 1}, "items": [{"n": 1}, {"n": 2, "q": 0}]}, {"items[1].q"}),
        ({"x": "1.5", "inner": {"n": 1}}, {"x"}),
        ({"x": 1.0, "inner": {"n": "2"}}, {"inner.n"}),
        ({"x": 1.0, "inner": {"n": 2.5}}, {"inner.n"}),
        ({"x": 1.0, "flag": "true", "inner": {"n": 1}}, {"flag"}),
    ],
)
def test_strict_decode_names_the_field(payload: dict[str, Any], paths: set[str]) -> None:
    codec: ModelCodec[Outer] = ModelCodec(Outer, "observation")
    with pytest.raises(EnvValidationError) as info:
        codec.decode(payload, strict=True)
    assert {issue.path for issue in info.value.errors} == paths
    assert info.value.role == "observation" and "strict" in str(info.value)
    strict_ok = codec.decode({"x": 1, "inner": {"n": 1}}, strict=True)  # an int is a number
    assert strict_ok.x == 1.0


def test_strict_decode_of_dataclass_models() -> None:
    codec: ModelCodec[DataObs] = ModelCodec(DataObs, "state")
    assert codec.decode({"a": 1, "b": 2}).a == 1
    with pytest.raises(EnvValidationError) as info:
        codec.decode({"a": 1, "b": 2}, strict=True)
    assert [issue.path for issue in info.value.errors] == ["b"]


def test_strict_client_rejects_what_the_lenient_one_keeps(ws_url: str, legacy_url: str) -> None:
    with CounterEnv(ws_url) as lenient:
        assert lenient.reset().observation.model_extra == {
            "metadata": {"phase": "reset"},
            "server_only": "kept",
        }
    with CounterEnv(ws_url, strict=True) as strict:
        assert strict.strict
        with pytest.raises(EnvValidationError) as info:
            strict.reset()
        assert {issue.path for issue in info.value.errors} == {"metadata", "server_only"}
        with pytest.raises(EnvValidationError) as state_info:
            strict.state()  # the server's state has fields the model does not name
        assert {issue.path for issue in state_info.value.errors} == {"seed", "label"}

    async def go() -> set[str]:
        async with AsyncLegacyCounterEnv(legacy_url, strict=True) as env:
            with pytest.raises(EnvValidationError) as info:
                await env.reset()
            return {issue.path for issue in info.value.errors}

    assert asyncio.run(go()) == {"server_only"}
