"""HTTP against a current OpenEnv server (a fresh environment per HTTP request) is refused.

openenv 0.10.0's HTTP endpoints build a new environment for every request, so ``step()``
over HTTP never advances an episode. The client must say so (and point at the WebSocket
transport) instead of returning results from per-request environments (issue 11 item 5).
"""

from __future__ import annotations

import asyncio

import pytest
from envgen_runtime import ProtocolError

from tests.runtime.clients import AsyncCounterEnv, CounterAction, CounterEnv, LegacyCounterEnv


def test_sync_http_step_on_openenv_0_10_is_refused(ws_url: str) -> None:
    with CounterEnv(ws_url, transport="http") as env:
        env.reset(seed=1)
        with pytest.raises(ProtocolError, match="transport='websocket'") as info:
            env.step(CounterAction(message="a"))
        assert info.value.message.startswith("step failed: ")
        assert '"step_count": 0' in info.value.received
        # nothing more is played against per-request environments: state() is refused until
        # a reset, and the new episode's first step is checked (and refused) again
        with pytest.raises(ProtocolError, match="transport='websocket'") as refused:
            env.state()
        assert "nothing was sent" in refused.value.message
        env.reset()
        with pytest.raises(ProtocolError, match="transport='websocket'"):
            env.step(CounterAction(message="b"))


def test_async_http_step_on_openenv_0_10_is_refused(ws_url: str) -> None:
    async def scenario() -> None:
        async with AsyncCounterEnv(ws_url, transport="http") as env:
            await env.reset()
            with pytest.raises(ProtocolError, match="transport='websocket'"):
                await env.step(CounterAction(message="a"))
            with pytest.raises(ProtocolError, match="transport='websocket'"):
                await env.step(CounterAction(message="b"))

    asyncio.run(scenario())


def test_stateful_http_server_plays_a_whole_episode(legacy_url: str) -> None:
    """The check costs one GET /state per client; a stateful server passes it."""
    with LegacyCounterEnv(legacy_url) as env:
        env.reset()
        totals = [env.step(CounterAction(message="x", delta=1)).observation.total for _ in range(5)]
        assert totals == [1, 2, 3, 4, 5]
        assert env.state().step_count == 5
