"""Load: many clients stepping at once, per transport, sync and async; no step may be lost.

The issue asks for 32 clients x 1,000 steps per transport and flavour. All 32 clients
always run; the steps per client default to a count that keeps this file within the fault
suite's time budget on a 2-core CI machine (100), and ``ENVGEN_LOAD_STEPS=1000`` runs the
full load. Every step
must succeed, every observation must count up by one, and the server must have counted
exactly the steps that were sent.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from envgen_runtime.core.spec import TransportName

from tests.runtime.clients import AsyncCounterEnv, CounterAction, CounterEnv

from .conftest import fault_url

CLIENTS = 32
STEPS = int(os.environ.get("ENVGEN_LOAD_STEPS", "100"))
ACTION = CounterAction(message="load", delta=1)


def server_steps(url: str) -> int:
    """How many step requests the fault server received for this client's case."""
    with urllib.request.urlopen(f"{url}/stats", timeout=10) as reply:  # loopback only
        return int(json.loads(reply.read())["steps"])


def play(url: str, transport: TransportName, steps: int) -> int:
    with CounterEnv(url, transport=transport, request_timeout_s=30.0) as env:
        env.reset()
        for expected in range(1, steps + 1):
            assert env.step(ACTION).observation.step == expected
        return env.state().step_count


async def play_async(url: str, transport: TransportName, steps: int) -> int:
    async with AsyncCounterEnv(url, transport=transport, request_timeout_s=30.0) as env:
        await env.reset()
        for expected in range(1, steps + 1):
            assert (await env.step(ACTION)).observation.step == expected
        return (await env.state()).step_count


@pytest.mark.load
@pytest.mark.parametrize("transport", ["http", "websocket"])
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_clients_step_concurrently_without_losing_a_step(
    faultserver: str, transport: TransportName, asynchronous: bool
) -> None:
    urls = [fault_url(faultserver, "ok") for _ in range(CLIENTS)]
    steps = STEPS
    if asynchronous:

        async def everyone() -> list[int]:
            return list(await asyncio.gather(*(play_async(u, transport, steps) for u in urls)))

        counts = asyncio.run(everyone())
    else:
        with ThreadPoolExecutor(CLIENTS) as pool:
            counts = list(pool.map(lambda u: play(u, transport, steps), urls))
    assert counts == [steps] * CLIENTS
    assert [server_steps(u) for u in urls] == [steps] * CLIENTS
