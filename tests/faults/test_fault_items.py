"""Issue 11's items one by one, where the matrix alone does not say enough."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from envgen_runtime import (
    EnvConnectionError,
    EnvTimeoutError,
    ProtocolError,
    RetryPolicy,
    SessionLostError,
)

from tests.runtime.clients import AsyncCounterEnv, CounterAction, CounterEnv

from .conftest import OwnFaultServer, fault_url

HI = CounterAction(message="hi")


def test_max_message_bytes_is_a_client_option(faultserver: str) -> None:
    """Item 3: a smaller limit refuses the 50 MB reply, saying which option raises it."""
    url = fault_url(faultserver, "big")
    with CounterEnv(url, request_timeout_s=5.0, max_message_bytes=10 * 1024 * 1024) as env:
        assert env.max_message_bytes == 10 * 1024 * 1024
        env.reset()
        with pytest.raises(ProtocolError, match="max_message_bytes") as info:
            env.step(HI)
        assert "1009" in info.value.message
        with pytest.raises(SessionLostError):
            env.state()


def test_max_message_bytes_none_lifts_the_limit(faultserver: str) -> None:
    """Item 3: the 120 MB reply the default refuses arrives with no limit."""

    async def scenario() -> int:
        url = fault_url(faultserver, "huge")
        async with AsyncCounterEnv(url, request_timeout_s=10.0, max_message_bytes=None) as env:
            await env.reset()
            return len((await env.step(HI)).observation.echoed)

    assert asyncio.run(scenario()) == 120 * 1024 * 1024


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_max_message_bytes_is_checked(bad: object) -> None:
    with pytest.raises(ValueError, match="max_message_bytes"):
        CounterEnv("http://127.0.0.1:9", max_message_bytes=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_state_on_a_reset_connection_is_retried(faultserver: str, asynchronous: bool) -> None:
    """Item 8: 'connection reset by peer' on state() is retried like 'refused' is."""
    url = fault_url(faultserver, "reset-state")
    sleeps: list[float] = []
    retry = RetryPolicy(attempts=3, base_delay_s=0.01, sleep=sleeps.append)

    async def scenario() -> EnvConnectionError:
        async with AsyncCounterEnv(url, transport="http", retry=retry) as env:
            await env.reset()
            await env.step(HI)
            with pytest.raises(EnvConnectionError) as info:
                await env.state()
            return info.value

    if asynchronous:
        error = asyncio.run(scenario())
    else:
        with CounterEnv(url, transport="http", retry=retry) as env:
            env.reset()
            env.step(HI)
            with pytest.raises(EnvConnectionError) as info:
                env.state()
            error = info.value
    assert not isinstance(error, SessionLostError)
    assert error.attempts == 3 and len(sleeps) == 2
    assert "gave up after 3 attempts" in error.message


@pytest.mark.parametrize("transport", ["http", "websocket"])
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_server_restarted_mid_episode_is_noticed(transport: str, asynchronous: bool) -> None:
    """Item 4 (and 6): after SIGKILL and a restart on the same port, the next step raises
    SessionLostError and the episode id is forgotten; reset() starts a new episode."""
    first = OwnFaultServer()
    second: OwnFaultServer | None = None
    url = f"{first.url}/ok/restart"
    options: dict[str, Any] = {"transport": transport, "request_timeout_s": 5.0}

    def restart() -> None:
        nonlocal second
        first.kill()
        second = OwnFaultServer(first.port)

    async def scenario() -> None:
        async with AsyncCounterEnv(url, **options) as env:
            await env.reset(episode_id="ep-1")
            await env.step(HI)
            await env.step(HI)
            restart()
            with pytest.raises(SessionLostError):
                await env.step(HI)
            assert env.episode_id is None
            with pytest.raises(SessionLostError):
                await env.step(HI)
            await env.reset(episode_id="ep-2")
            assert (await env.step(HI)).observation.step == 1
            assert (await env.state()).step_count == 1

    try:
        if asynchronous:
            asyncio.run(scenario())
        else:
            with CounterEnv(url, **options) as env:
                env.reset(episode_id="ep-1")
                env.step(HI)
                env.step(HI)
                restart()
                with pytest.raises(SessionLostError):
                    env.step(HI)
                assert env.episode_id is None
                with pytest.raises(SessionLostError):
                    env.step(HI)
                env.reset(episode_id="ep-2")
                assert env.step(HI).observation.step == 1
                assert env.state().step_count == 1
    finally:
        first.stop()
        if second is not None:
            second.stop()


@pytest.mark.parametrize("transport", ["http", "websocket"])
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_frozen_server_times_out_within_the_bound(transport: str, asynchronous: bool) -> None:
    """Item 2 (and 1) as the issue measured it: a SIGSTOPped server, TCP still up. The
    timeout raises within its bound; closing the dead connection adds nothing."""
    server = OwnFaultServer()
    url = f"{server.url}/ok/frozen"
    options: dict[str, Any] = {"transport": transport, "request_timeout_s": 1.0}

    async def scenario() -> float:
        async with AsyncCounterEnv(url, **options) as env:
            await env.reset()
            await env.step(HI)
            server.freeze()
            started = time.monotonic()
            with pytest.raises(EnvTimeoutError):
                await env.step(HI)
            return time.monotonic() - started

    try:
        if asynchronous:
            elapsed = asyncio.run(scenario())
        else:
            with CounterEnv(url, **options) as env:
                env.reset()
                env.step(HI)
                server.freeze()
                started = time.monotonic()
                with pytest.raises(EnvTimeoutError):
                    env.step(HI)
                elapsed = time.monotonic() - started
        assert elapsed < 1.0 + 1.0, f"a 1 s timeout took {elapsed:.2f} s"
    finally:
        server.stop()
