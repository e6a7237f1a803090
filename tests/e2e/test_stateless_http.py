"""transport="http" against an example server on openenv 0.10 is refused (issue 11 item 5).

openenv 0.10's HTTP endpoints build a fresh environment per request: a generated client
must not play "episodes" that never advance over them, and must say to use the WebSocket.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from envgen_runtime import ProtocolError

from .conftest import client_class

pytestmark = pytest.mark.e2e


def _echo_action() -> Any:
    from generated.echo_env import EchoAction

    return EchoAction(message="hi")


def test_sync_http_on_an_openenv_0_10_example_is_refused(
    servers: dict[tuple[str, str], str],
) -> None:
    url = servers[("echo_env", "websocket")]  # openenv 0.10: WebSocket sessions only
    with client_class("echo_env")(url, transport="http") as env:
        env.reset()
        with pytest.raises(ProtocolError, match="transport='websocket'"):
            env.step(_echo_action())
        # The verdict lasts until the next reset, which is sent (the server may have been
        # replaced by a stateful one); that episode's first step is checked again.
        env.reset()
        with pytest.raises(ProtocolError, match="transport='websocket'"):
            env.step(_echo_action())


def test_async_http_on_an_openenv_0_10_example_is_refused(
    servers: dict[tuple[str, str], str],
) -> None:
    url = servers[("echo_env", "websocket")]

    async def scenario() -> None:
        async with client_class("echo_env", asynchronous=True)(url, transport="http") as env:
            await env.reset()
            with pytest.raises(ProtocolError, match="transport='websocket'"):
                await env.step(_echo_action())

    asyncio.run(scenario())
