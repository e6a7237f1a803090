"""calc_env's tools through the generated sync and asyncio clients, against real servers.

One server per protocol for this module, started through the runtime's LocalProcessProvider
with the command in the client's SPEC and stopped by its handle: over WebSocket openenv's own
app for an ``MCPEnvironment`` (tool calls as steps of a ``/ws`` session), over HTTP the same
environment on envgen's stateful HTTP app. Each test checks typed results, ``ToolError`` with
the tool's message (and that the session goes on), and validation before sending.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from envgen_runtime import (
    EnvModel,
    EnvValidationError,
    LocalProcessProvider,
    ModelCodec,
    ServerError,
    ToolError,
    ToolResult,
    ToolSpec,
)
from pydantic import ConfigDict

from generated.calc_env import (
    AddCall,
    AsyncCalcEnv,
    CalcEnv,
    CalcToolCall,
    StatsCall,
)
from generated.calc_env.models import StatsArguments, StatsResult
from tests.helpers import REPO

pytestmark = [
    pytest.mark.e2e,
    # The committed observation lets tool_name be absent (reset's observation has none),
    # where the server's /schema requires it: a compatible difference, warned once. A
    # breaking one would be a SchemaDriftError at every first reset here.
    pytest.mark.filterwarnings("ignore::envgen_runtime.SchemaDriftWarning"),
]
TRANSPORTS = ("websocket", "http")


@pytest.fixture(scope="module")
def calc_servers() -> Iterator[dict[str, str]]:
    """Base URL of calc_env's server per protocol; both stopped when the module ends."""
    spec = CalcEnv.SPEC
    providers: dict[str, LocalProcessProvider] = {}
    try:
        for transport in TRANSPORTS:
            provider = LocalProcessProvider(
                spec.server_command,
                health_path=spec.health_path,
                startup_timeout_s=spec.startup_timeout_s,
                cwd=REPO,
                transport=transport,
            )
            providers[transport] = provider
            provider.start()
        yield {t: p.base_url for t, p in providers.items() if p.base_url}
    finally:
        for provider in providers.values():
            provider.stop()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_typed_results_over_both_protocols(calc_servers: dict[str, str], transport: str) -> None:
    with CalcEnv(calc_servers[transport], transport=transport) as env:
        env.reset()
        added = env.tools.add(a=2, b=3.5)  # FastMCP wraps the float: the method unwraps it
        assert isinstance(added, float) and added == 5.5
        assert env.tools.add(a=4) == 4.0  # b left at its default: the server's applies
        stats = env.tools.stats(values=[1, 2, 6])
        assert isinstance(stats, StatsResult)
        assert (stats.count, stats.mean, stats.maximum) == (3, 3.0, 6.0)
        text = env.tools.format_number(value=3.14159, digits=3)  # wire name "format-number"
        assert isinstance(text, ToolResult) and text.text == "3.142" and not text.is_error
        assert env.tools.last_step is not None
        assert env.tools.last_step.raw["observation"]["tool_name"] == "format-number"
        assert env.state().step_count == 4  # every call was a step of this one session


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_tool_error_carries_the_message_and_the_session_goes_on(
    calc_servers: dict[str, str], transport: str
) -> None:
    with CalcEnv(calc_servers[transport], transport=transport) as env:
        env.reset()
        with pytest.raises(ToolError) as caught:
            env.tools.divide(numerator=1, denominator=0)
        error = caught.value
        assert isinstance(error, ServerError)
        assert error.tool == "divide" and error.error_type == "execution_error"
        assert "division by zero" in error.tool_message and "division by zero" in str(error)
        assert env.tools.divide(numerator=1, denominator=4) == 0.25
        assert env.state().step_count == 2


def test_arguments_are_validated_before_sending(calc_servers: dict[str, str]) -> None:
    with CalcEnv(calc_servers["websocket"]) as env:
        env.reset()
        with pytest.raises(EnvValidationError) as caught:
            env.tools.stats(values=[])  # minItems 1 in stats' inputSchema
        assert [issue.loc for issue in caught.value.errors] == [("values",)]
        assert caught.value.role == "stats arguments"
        assert "nothing was sent" in str(caught.value)
        with pytest.raises(EnvValidationError, match="digits"):
            env.tools.format_number(value=1.0, digits=11)
        assert env.state().step_count == 0  # neither call reached the server


def test_a_policys_json_parses_into_one_typed_call(calc_servers: dict[str, str]) -> None:
    with CalcEnv(calc_servers["websocket"]) as env:
        env.reset()
        call: CalcToolCall = env.tools.parse_call(
            '{"tool_name": "stats", "arguments": {"values": [4, 8]}}'
        )
        assert isinstance(call, StatsCall) and call.arguments == StatsArguments(values=[4, 8])
        assert env.tools.call(call).mean == 6.0
        assert env.tools.call(AddCall.model_validate({"arguments": {"a": 1}})) == 1.0
        with pytest.raises(EnvValidationError, match="tool_name"):
            env.tools.parse_call({"tool_name": "nope", "arguments": {}})
        with pytest.raises(EnvValidationError, match="values"):
            env.tools.parse_call({"tool_name": "stats", "arguments": {"values": "x"}})


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_async_client_calls_tools(calc_servers: dict[str, str], transport: str) -> None:
    async def episode() -> None:
        async with AsyncCalcEnv(calc_servers[transport], transport=transport) as env:
            await env.reset()
            assert await env.tools.add(a=1, b=2) == 3.0
            stats = await env.tools.stats(values=[5])
            assert isinstance(stats, StatsResult) and stats.count == 1
            with pytest.raises(ToolError, match="division by zero"):
                await env.tools.divide(numerator=2, denominator=0)
            call = env.tools.parse_call(
                {"tool_name": "divide", "arguments": {"numerator": 9, "denominator": 3}}
            )
            assert await env.tools.call(call) == 3.0
            assert (await env.state()).step_count == 4

    asyncio.run(episode())


def test_a_tool_the_server_lacks_is_a_tool_error(calc_servers: dict[str, str]) -> None:
    """A client generated from schemas naming a tool the server dropped: told by name."""

    class NoArgs(EnvModel):
        pass

    gone: ToolSpec[ToolResult] = ToolSpec(
        "sqrt", ModelCodec(NoArgs, "sqrt arguments"), ModelCodec(ToolResult, "r"), False
    )
    with CalcEnv(calc_servers["websocket"]) as env:
        env.reset()
        with pytest.raises(ToolError) as caught:
            env.tools._call(gone, {})
        assert caught.value.error_type == "tool_not_found"
        assert "sqrt" in caught.value.tool_message
        assert env.tools.add(a=1, b=1) == 2.0


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_server_refuses_bad_arguments_the_client_did_not_check(
    calc_servers: dict[str, str], transport: str
) -> None:
    """Arguments sent raw, past the client's models: the server's generated models refuse
    them before the tool runs, naming each argument in the client's words."""

    class Unchecked(EnvModel):
        model_config = ConfigDict(extra="allow")

    raw: ToolSpec[ToolResult] = ToolSpec(
        "stats", ModelCodec(Unchecked, "raw"), ModelCodec(ToolResult, "r"), False
    )
    with CalcEnv(calc_servers[transport], transport=transport) as env:
        env.reset()
        with pytest.raises(ToolError) as caught:
            env.tools._call(raw, {"values": [], "extra": 1})
        error = caught.value
        assert error.tool == "stats" and error.error_type == "invalid_args"
        assert error.tool_message.startswith("stats arguments failed validation (2 errors):")
        assert "\n  - values: List should have at least 1 item" in error.tool_message
        assert "\n  - extra: Extra inputs are not permitted" in error.tool_message
        assert env.tools.stats(values=[1, 3]).mean == 2.0  # the session goes on
        assert env.state().step_count == 2


def test_a_strict_client_reads_what_openenv_sends(calc_servers: dict[str, str]) -> None:
    with CalcEnv(calc_servers["websocket"], strict=True) as env:
        env.reset()
        assert env.tools.format_number(value=2.5, digits=1).text == "2.5"
        assert env.tools.stats(values=[2]).maximum == 2.0
