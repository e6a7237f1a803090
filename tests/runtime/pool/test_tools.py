"""Pool tool calls without servers: actions built and validated, each slot's outcome read.

The pools here are the generated calc_env pools with ``step`` replaced by a script of
``SlotResult``s (as the pool's own step returns them), so what is checked is what
``envgen_runtime.pool.tools`` adds: the actions it hands ``step`` and how it reads each
slot's result. The wire and the pool's own rules run against real servers in
tests/e2e/test_pool_tools.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from envgen_runtime import (
    EnvValidationError,
    ProtocolError,
    SlotLostError,
    SlotResult,
    SlotToolResult,
    ToolCallDroppedError,
    ToolError,
    ToolResult,
)
from envgen_runtime.pool.tools import read_outcomes

from generated.calc_env import (
    AddCall,
    AsyncCalcEnvPool,
    CalcAction,
    CalcEnvPool,
    CalcObservation,
    CalcToolCall,
    DivideCall,
    FormatNumberCall,
    StatsCall,
)
from generated.calc_env.models import (
    AddArguments,
    DivideArguments,
    FormatNumberArguments,
    StatsArguments,
    StatsResult,
)
from generated.calc_env.tools import _TOOL_add, _TOOL_stats


def _answer(
    slot: int, tool: str, structured: dict[str, Any] | None, **extra: Any
) -> SlotResult[Any]:
    """A slot's step result for a call of ``tool`` that returned ``structured``."""
    result = {
        "content": [{"type": "text", "text": "ok"}],
        "structured_content": structured,
        "meta": None,
        "data": None,
        "is_error": False,
    }
    observation = CalcObservation.model_validate(
        {"tool_name": tool, "result": result, "error": None, "metadata": {}}
    )
    return SlotResult(
        slot, observation, extra.pop("reward", 0.5), extra.pop("done", False), **extra
    )


def _failed(slot: int, tool: str, message: str) -> SlotResult[Any]:
    observation = CalcObservation.model_validate(
        {
            "tool_name": tool,
            "result": None,
            "error": {"error_type": "execution_error", "message": message},
            "metadata": {},
        }
    )
    return SlotResult(slot, observation, None, False)


class ScriptedPool(AsyncCalcEnvPool):
    """An asyncio calc_env pool whose ``step`` answers from a script and records actions."""

    def __init__(self, size: int, script: list[list[SlotResult[Any]]], **options: Any) -> None:
        super().__init__(size, **options)
        self.script = script
        self.sent: list[Sequence[CalcAction]] = []

    async def step(self, actions: Sequence[CalcAction]) -> list[SlotResult[CalcObservation]]:
        self.sent.append(list(actions))
        return self.script.pop(0)


class ScriptedSyncPool(CalcEnvPool):
    """The blocking calc_env pool with the same scripted ``step``."""

    def __init__(self, size: int, script: list[list[SlotResult[Any]]]) -> None:
        super().__init__(size)
        self.script = script
        self.sent: list[Sequence[CalcAction]] = []

    def step(self, actions: Sequence[CalcAction]) -> list[SlotResult[CalcObservation]]:
        self.sent.append(list(actions))
        return self.script.pop(0)


@pytest.fixture
def sync_pool() -> Iterator[ScriptedSyncPool]:
    pool = ScriptedSyncPool(3, [])
    try:
        yield pool
    finally:
        pool.close()


def test_a_broadcast_call_sends_one_validated_action_per_slot_and_reads_each(
    sync_pool: ScriptedSyncPool,
) -> None:
    sync_pool.script.append(
        [
            _answer(0, "add", {"result": 3.0}, reward=1.0),
            _failed(1, "add", "overflow"),
            _answer(2, "add", {"result": 3.0}, done=True),
        ]
    )
    outcomes = sync_pool.tools.add(a=1, b=2)
    (sent,) = sync_pool.sent
    assert [a.model_dump() for a in sent] == [
        {
            "type": "call_tool",
            "tool_name": "add",
            "arguments": {"a": 1.0, "b": 2.0},
            "metadata": None,
        }
    ] * 3
    assert [o.slot for o in outcomes] == [0, 1, 2]
    assert outcomes[0].value == 3.0 and outcomes[0].ok
    assert (outcomes[0].reward, outcomes[0].done, outcomes[2].done) == (1.0, False, True)
    assert isinstance(outcomes[1].error, ToolError) and outcomes[1].value is None
    assert outcomes[1].error.tool == "add" and outcomes[1].error.tool_message == "overflow"
    assert outcomes[1].step.ok  # the step itself went through; the tool failed
    assert outcomes[2].unwrap() == 3.0
    with pytest.raises(ToolError, match="overflow"):
        outcomes[1].unwrap()


def test_arguments_left_at_their_default_are_not_sent(sync_pool: ScriptedSyncPool) -> None:
    sync_pool.script.append([_answer(i, "add", {"result": 4.0}) for i in range(3)])
    sync_pool.tools.add(a=4)
    assert {a.arguments == {"a": 4.0} for a in sync_pool.sent[0]} == {True}


def test_a_bad_broadcast_argument_raises_naming_it_and_nothing_steps(
    sync_pool: ScriptedSyncPool,
) -> None:
    with pytest.raises(EnvValidationError) as caught:
        sync_pool.tools.stats(values=[])
    assert [issue.loc for issue in caught.value.errors] == [("values",)]
    assert caught.value.role == "stats arguments" and "nothing was sent" in str(caught.value)
    assert sync_pool.sent == []


def test_per_slot_calls_of_different_tools_read_each_slot_by_its_own_tool(
    sync_pool: ScriptedSyncPool,
) -> None:
    calls: list[CalcToolCall] = [
        AddCall(arguments=AddArguments(a=1, b=1)),
        StatsCall(arguments=StatsArguments(values=[1, 3])),
        sync_pool.tools.parse_call('{"tool_name": "format-number", "arguments": {"value": 1}}'),
    ]
    sync_pool.script.append(
        [
            _answer(0, "add", {"result": 2.0}),
            _answer(1, "stats", {"count": 2, "mean": 2.0, "maximum": 3.0}),
            _answer(2, "format-number", None),
        ]
    )
    first, second, third = sync_pool.tools.call(calls)
    assert [a.tool_name for a in sync_pool.sent[0]] == ["add", "stats", "format-number"]
    assert sync_pool.sent[0][1].arguments == {"values": [1.0, 3.0]}
    assert first.value == 2.0 and first.tool == "add"
    assert second.value == StatsResult(count=2, mean=2.0, maximum=3.0)
    assert isinstance(third.value, ToolResult) and third.value.text == "ok"


def test_a_reply_for_another_tool_is_that_slots_protocol_error(
    sync_pool: ScriptedSyncPool,
) -> None:
    sync_pool.script.append([_answer(0, "add", {"result": 2.0})] * 3)
    calls = [DivideCall(arguments=DivideArguments(numerator=1, denominator=2))] * 3
    outcomes = sync_pool.tools.call(calls)
    assert all(isinstance(o.error, ProtocolError) for o in outcomes)
    assert "called tool 'divide' but the reply is for 'add'" in str(outcomes[0].error)


def test_a_bad_per_slot_call_raises_led_by_its_slot_and_nothing_steps(
    sync_pool: ScriptedSyncPool,
) -> None:
    good = StatsCall(arguments=StatsArguments(values=[1]))
    bad = StatsCall(arguments=StatsArguments.model_construct(values=[]))  # never validated
    with pytest.raises(EnvValidationError) as caught:
        sync_pool.tools.call([good, bad, good])
    assert [issue.loc for issue in caught.value.errors] == [(1, "values")]
    assert "the call for slot 1; nothing was sent to any slot" in str(caught.value)
    with pytest.raises(ValueError, match=r"tools\.call needs 3 calls"):
        sync_pool.tools.call([good, good])
    assert sync_pool.sent == []


def test_step_errors_and_resets_instead_of_calls_are_the_slots_errors() -> None:
    lost = SlotLostError("server gone", slot=1, server_lost=True)
    reset = CalcObservation.model_validate({"metadata": {}})
    steps: list[SlotResult[Any]] = [
        _answer(0, "stats", {"count": 1, "mean": 1.0, "maximum": 1.0}),
        SlotResult(1, None, None, True, error=lost),
        SlotResult(2, reset, None, False, reset=True, action_dropped=True),
    ]
    ok, gone, dropped = read_outcomes([_TOOL_stats] * 3, steps)
    assert ok.ok and isinstance(ok.value, StatsResult)
    assert gone.error is lost and gone.done and gone.step is steps[1]
    assert isinstance(dropped.error, ToolCallDroppedError)
    assert (dropped.error.slot, dropped.error.tool) == (2, "stats")
    assert "call again" in str(dropped.error) and dropped.step.observation is reset


def test_observations_as_objects_are_read_and_other_values_are_protocol_errors() -> None:
    reply = {"tool_name": "add", "result": {"structured_content": {"result": 1.0}}}
    steps: list[SlotResult[Any]] = [
        SlotResult(0, reply, None, False),
        SlotResult(1, 7, None, False),
    ]
    read, odd = read_outcomes([_TOOL_add] * 2, steps)
    assert read.value == 1.0
    assert isinstance(odd.error, ProtocolError) and "neither an object nor a model" in str(
        odd.error
    )


def test_results_are_read_strictly_when_the_pools_clients_are_strict() -> None:
    extra = {"count": 1, "mean": 1.0, "maximum": 1.0, "median": 1.0}

    async def run(strict: bool) -> SlotToolResult[StatsResult]:
        pool = ScriptedPool(1, [[_answer(0, "stats", extra)]], client_options={"strict": strict})
        (outcome,) = await pool.tools.stats(values=[1])
        return outcome

    lenient = asyncio.run(run(False))
    assert lenient.ok and lenient.value is not None and lenient.value.count == 1
    strict = asyncio.run(run(True))
    assert isinstance(strict.error, EnvValidationError) and "median" in str(strict.error)


def test_the_asyncio_pool_tools_are_the_same_calls_awaited() -> None:
    async def run() -> None:
        pool = ScriptedPool(
            2,
            [
                [_answer(0, "add", {"result": 1.0}), _failed(1, "add", "no")],
                [_answer(0, "format-number", None), _answer(1, "divide", {"result": 0.5})],
            ],
        )
        added = await pool.tools.add(a=1)
        assert added[0].value == 1.0 and isinstance(added[1].error, ToolError)
        calls: list[CalcToolCall] = [
            FormatNumberCall(arguments=FormatNumberArguments(value=1.0)),
            DivideCall(arguments=DivideArguments(numerator=1, denominator=2)),
        ]
        text, half = await pool.tools.call(calls)
        assert isinstance(text.value, ToolResult) and half.unwrap() == 0.5
        assert [len(actions) for actions in pool.sent] == [2, 2]
        with pytest.raises(EnvValidationError, match="digits"):
            await pool.tools.format_number(value=1.0, digits=11)
        assert len(pool.sent) == 2

    asyncio.run(run())
