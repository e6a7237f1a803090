"""calc_env's tools through the generated sync and asyncio pools, against real servers.

Each pool starts its own calc_env servers (local processes, the command in the client's SPEC,
run from this checkout as ``tests/e2e/test_tool_env.py``'s fixture runs them) over WebSocket
(openenv's own app, three sessions on one server) and over HTTP (envgen's stateful HTTP app,
one server per slot). Checked: typed results in every slot, a tool error in one slot while
the others succeed (and that slot goes on), per-slot calls of different tools, validation
before sending, and a killed server's slots losing their call and then recovering.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator

import pytest
from envgen_runtime import (
    EnvValidationError,
    LocalProcessProvider,
    SlotLostError,
    ToolCallDroppedError,
    ToolError,
    ToolResult,
)
from envgen_runtime.client.base import ClientOptions

from generated.calc_env import (
    AddCall,
    AsyncCalcEnvPool,
    CalcEnvPool,
    CalcToolCall,
    StatsCall,
)
from generated.calc_env.models import (
    AddArguments,
    StatsArguments,
    StatsResult,
)
from tests.helpers import REPO

pytestmark = [
    pytest.mark.e2e,
    # As in test_tool_env.py: the committed observation lets tool_name be absent, which the
    # server's /schema requires; a compatible difference, warned at each first reset.
    pytest.mark.filterwarnings("ignore::envgen_runtime.SchemaDriftWarning"),
]
TRANSPORTS = ("websocket", "http")
SIZE = 3
CWD = {"cwd": str(REPO)}  # the server command runs examples.calc_env.server from here


def _options(transport: str) -> ClientOptions:
    return {"transport": transport}


def _per_server(transport: str) -> int | None:
    return SIZE if transport == "websocket" else None  # HTTP: always one per server


@pytest.fixture(scope="module", params=TRANSPORTS)
def pool(request: pytest.FixtureRequest) -> Iterator[CalcEnvPool]:
    transport: str = request.param
    with CalcEnvPool(
        SIZE,
        provider_options=CWD,
        sessions_per_server=_per_server(transport),
        client_options=_options(transport),
    ) as started:
        expected = 1 if transport == "websocket" else SIZE
        assert len(started.servers) == expected
        assert all(r.ok for r in started.reset())
        yield started


def test_a_broadcast_call_gives_every_slot_its_typed_result(pool: CalcEnvPool) -> None:
    added = pool.tools.add(a=2, b=3.5)
    assert [o.slot for o in added] == [0, 1, 2]
    assert [o.value for o in added] == [5.5] * SIZE
    assert all(o.ok and not o.done and o.step.ok for o in added)
    stats = pool.tools.stats(values=[1, 2, 6])
    assert all(isinstance(o.value, StatsResult) and o.value.maximum == 6.0 for o in stats)
    texts = pool.tools.format_number(value=3.14159, digits=3)
    assert [o.unwrap().text for o in texts] == ["3.142"] * SIZE
    assert all(isinstance(o.value, ToolResult) for o in texts)


def test_a_tool_error_stays_in_its_slot_and_that_slot_goes_on(pool: CalcEnvPool) -> None:
    calls: list[CalcToolCall] = [
        pool.tools.parse_call(
            {"tool_name": "divide", "arguments": {"numerator": 1, "denominator": d}}
        )
        for d in (4, 0, 2)
    ]
    quarter, failed, half = pool.tools.call(calls)
    assert quarter.value == 0.25 and half.value == 0.5
    assert isinstance(failed.error, ToolError) and failed.value is None
    assert failed.error.error_type == "execution_error"
    assert "division by zero" in failed.error.tool_message
    assert failed.step.ok and not failed.done  # the step went through; the episode goes on
    again = pool.tools.divide(numerator=9, denominator=3)
    assert [o.value for o in again] == [3.0] * SIZE


def test_per_slot_calls_of_different_tools_are_typed_per_slot(pool: CalcEnvPool) -> None:
    calls: list[CalcToolCall] = [
        AddCall(arguments=AddArguments(a=1)),
        StatsCall(arguments=StatsArguments(values=[4, 8])),
        pool.tools.parse_call(
            '{"tool_name": "format-number", "arguments": {"value": 2.5, "digits": 1}}'
        ),
    ]
    added, stats, text = pool.tools.call(calls)
    assert added.value == 1.0 and added.tool == "add"
    assert stats.value == StatsResult(count=2, mean=6.0, maximum=8.0)
    assert isinstance(text.value, ToolResult) and text.value.text == "2.5"
    assert text.tool == "format-number"


def test_bad_arguments_are_refused_before_any_slot_steps(pool: CalcEnvPool) -> None:
    with pytest.raises(EnvValidationError) as caught:
        pool.tools.stats(values=[])
    assert [issue.loc for issue in caught.value.errors] == [("values",)]
    good = StatsCall(arguments=StatsArguments(values=[1]))
    bad = StatsCall(arguments=StatsArguments.model_construct(values=[]))
    with pytest.raises(EnvValidationError) as per_slot:
        pool.tools.call([good, good, bad])
    assert [issue.loc for issue in per_slot.value.errors] == [(2, "values")]
    assert all(o.ok for o in pool.tools.add(a=1))  # the pool is as it was


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_asyncio_pool_calls_tools_in_every_slot(transport: str) -> None:
    async def run() -> None:
        async with AsyncCalcEnvPool(
            SIZE,
            provider_options=CWD,
            sessions_per_server=_per_server(transport),
            client_options=_options(transport),
        ) as pool:
            await pool.reset()
            added = await pool.tools.add(a=1, b=2)
            assert [o.unwrap() for o in added] == [3.0] * SIZE
            calls: list[CalcToolCall] = [
                pool.tools.parse_call(
                    {"tool_name": "divide", "arguments": {"numerator": 1, "denominator": 0}}
                ),
                pool.tools.parse_call({"tool_name": "stats", "arguments": {"values": [5]}}),
                AddCall(arguments=AddArguments(a=2, b=2)),
            ]
            failed, stats, four = await pool.tools.call(calls)
            assert isinstance(failed.error, ToolError) and "division by zero" in str(failed.error)
            assert isinstance(stats.value, StatsResult) and stats.value.count == 1
            assert four.value == 4.0

    asyncio.run(run())


def test_a_killed_servers_slots_lose_the_call_then_recover() -> None:
    with CalcEnvPool(2, provider_options=CWD, sessions_per_server=1) as pool:
        pool.reset()
        victim = pool.servers[0]
        assert isinstance(victim, LocalProcessProvider) and victim.pid is not None
        os.killpg(victim.pid, signal.SIGKILL)
        lost, alive = pool.tools.add(a=1)
        assert isinstance(lost.error, SlotLostError) and lost.error.server_lost
        assert alive.value == 1.0
        pool.wait_ready(timeout_s=120)
        recovered, alive = pool.tools.add(a=2)
        assert isinstance(recovered.error, ToolCallDroppedError) and recovered.step.reset
        assert alive.value == 2.0
        assert [o.value for o in pool.tools.add(a=3)] == [3.0] * 2
