"""Every step fault, on both transports, met by a step sent in the pool's lock-step round.

``pool.lockstep.step_round`` splits each step (``post_step`` now, ``finish`` after one
``Round`` wait) instead of awaiting ``request``. The split must not change what a fault does:
each row of ``test_fault_once`` pinned to a step is played with both of its steps going
through a round, and must raise the same typed error within the same bound, then recover the
same way. A round of several sessions keeps each fault to its own slot.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

import pytest
from envgen_runtime import EnvgenRuntimeError, StepResult
from envgen_runtime.pool.lockstep import step_round
from envgen_runtime.pool.slots import Slot

from tests.runtime.clients import AsyncCounterEnv

from .conftest import fault_url
from .test_fault_once import HI, ROWS, Outcome, Row, _check, _ids, _options, _script

ROUND_ROWS = [row for row in ROWS if row.at == "step"]


def _slot(client: AsyncCounterEnv, index: int = 0) -> Slot:
    slot = Slot(index)
    slot.client = client
    return slot


async def _in_round(slots: list[Slot]) -> list[Any]:
    replies = await step_round([(slot, HI) for slot in slots])
    assert all(reply is not None for reply in replies), "a step on an open session was not sent"
    return replies


@pytest.mark.parametrize("row", ROUND_ROWS, ids=_ids)
def test_round(faultserver: str, row: Row) -> None:
    ops = _script(row)

    async def timed(env: AsyncCounterEnv, op: str) -> Outcome:
        started = time.monotonic()
        if op == "step":
            [outcome] = await _in_round([_slot(env)])
        else:
            try:
                outcome = await getattr(env, op)()
            except EnvgenRuntimeError as exc:
                outcome = exc
        return outcome, time.monotonic() - started

    async def scenario() -> list[Outcome]:
        url = fault_url(faultserver, row.fault, row.at)
        async with AsyncCounterEnv(url, **_options(row)) as env:
            return [await timed(env, op) for op in ops]

    _check(row, ops, asyncio.run(scenario()))


@pytest.mark.parametrize("fault", ["error", "closed", "frozen"])
def test_a_fault_in_a_round_stays_in_its_slot(faultserver: str, fault: str) -> None:
    row = next(r for r in ROUND_ROWS if r.fault == fault)

    async def scenario() -> tuple[list[Any], list[Any]]:
        urls = [fault_url(faultserver, "ok"), fault_url(faultserver, fault, "step")]
        urls.append(fault_url(faultserver, "ok"))
        clients = [AsyncCounterEnv(url, **_options(row)) for url in urls]
        try:
            for client in clients:
                await client.reset()
            slots = [_slot(client, i) for i, client in enumerate(clients)]
            first = await _in_round(slots)
            await clients[1].reset()  # the faulty slot starts again; the others go on
            return first, await _in_round(slots)
        finally:
            for client in clients:
                await client.close()

    first, second = asyncio.run(scenario())
    assert type(first[1]) is row.raises
    for replies, expected in ((first, (1, None, 1)), (second, (2, 1, 2))):
        for index, step in enumerate(expected):
            if step is not None:
                assert isinstance(replies[index], StepResult), replies[index]
                assert replies[index].observation.step == step


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_a_cancelled_round_drops_its_sessions_and_frees_their_turns(
    faultserver: str, transport: str
) -> None:
    row = next(r for r in ROUND_ROWS if r.fault == "slow" and r.transport == transport)

    async def scenario() -> tuple[bool, Any]:
        async with AsyncCounterEnv(fault_url(faultserver, "slow", "step"), **_options(row)) as env:
            await env.reset()
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2):
                    await step_round([(_slot(env), HI)])
            transport_ = cast("Any", env.transport)
            # the late reply must never be read: the session (WebSocket) or connection is gone
            lost = transport_.session_lost if transport == "websocket" else transport_._conn is None
            return lost, await env.reset()  # the turn is free: a reset goes through

    lost, result = asyncio.run(scenario())
    assert lost
    assert result.observation.step == 0
