"""envgen_runtime.server's tool serving: committed tools checked at start-up, each call's
arguments and return checked by the server models, the committed schemas published as they
are (`tools` for the checks, `tool_env` for FastMCP and openenv's MCPEnvironment)."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from typing import Annotated, Any

import pytest
from envgen_runtime import EnvValidationError
from envgen_runtime.server import (
    ServerModel,
    ServerTool,
    ToolEnvironment,
    ToolMismatchError,
    tool_app,
    tool_server,
)
from envgen_runtime.server.tools import call_arguments, checked_result, resolve_functions
from fastmcp import Client
from fastmcp.exceptions import ToolError
from openenv.core.env_server.mcp_types import CallToolAction
from pydantic import ConfigDict, Field


class ScaleArguments(ServerModel):
    model_config = ConfigDict(extra="forbid")
    value: float
    factor: Annotated[int, Field(ge=1)] = 2
    from_: Annotated[str, Field(alias="from")] = "x"


class ScaleResult(ServerModel):
    result: float


class SummaryArguments(ServerModel):
    model_config = ConfigDict(extra="forbid")
    values: Annotated[list[float], Field(min_length=1)]


class SummaryResult(ServerModel):
    count: int
    total: float


class NoteArguments(ServerModel):
    text: str


# Key order on purpose not sorted: published as committed, not as pydantic would write it.
SCALE_INPUT = (
    '{"type": "object", "properties": {"value": {"type": "number"}, "factor": '
    '{"type": "integer", "minimum": 1, "default": 2}, "from": {"type": "string", '
    '"default": "x"}}, "required": ["value"], "additionalProperties": false}'
)
WRAPPED = (
    '{"properties": {"result": {"type": "number"}}, "required": ["result"], '
    '"type": "object", "x-fastmcp-wrap-result": true}'
)
SUMMARY_OUTPUT = (
    '{"type": "object", "properties": {"count": {"type": "integer"}, "total": '
    '{"type": "number"}}, "required": ["count", "total"]}'
)
TOOLS = (
    ServerTool(
        name="scale",
        function="scale",
        source="schemas/t/tools/scale.json",
        arguments=ScaleArguments,
        result=ScaleResult,
        input_schema=SCALE_INPUT,
        output_schema=WRAPPED,
        description="Scale a value.",
    ),
    ServerTool(
        name="sum-up",
        function="sum_up",
        source="schemas/t/tools/sum-up.json",
        arguments=SummaryArguments,
        result=SummaryResult,
        input_schema='{"type": "object", "properties": {"values": {"type": "array", '
        '"items": {"type": "number"}, "minItems": 1}}, "required": ["values"]}',
        output_schema=SUMMARY_OUTPUT,
        description="Count and total.",
        title="Sum up",
    ),
    ServerTool(
        name="note",
        function="note",
        source="schemas/t/tools/note.json",
        arguments=NoteArguments,
        result=None,
        input_schema='{"type": "object", "properties": {"text": {"type": "string"}}}',
        annotations='{"title": "Note it", "readOnlyHint": true}',
    ),
)


def scale(value: float, factor: int, from_: str) -> float:
    return value * factor


async def sum_up(values: list[float]) -> SummaryResult:
    return SummaryResult(count=len(values), total=sum(values))


def note(text: str) -> str:
    return f"noted: {text}"


FUNCTIONS = [scale, sum_up, note]


def test_functions_match_by_python_name_or_by_a_mapping_of_wire_names() -> None:
    assert resolve_functions(TOOLS, FUNCTIONS) == {"scale": scale, "sum-up": sum_up, "note": note}
    by_wire = {"note": note, "sum-up": sum_up, "scale": scale}
    assert list(resolve_functions(TOOLS, by_wire)) == ["scale", "sum-up", "note"]


def test_a_tool_without_a_function_is_named_with_its_file() -> None:
    with pytest.raises(ToolMismatchError) as caught:
        resolve_functions(TOOLS, [scale, note], env="t")
    assert str(caught.value) == (
        "t: tool 'sum-up' (schemas/t/tools/sum-up.json) has no implementation: "
        "define sum_up(values)"
    )


def test_a_function_for_no_committed_tool_is_refused() -> None:
    def multiply(a: float) -> float:
        return a

    with pytest.raises(ToolMismatchError, match=r"'multiply' is not one of the committed tools"):
        resolve_functions(TOOLS, [*FUNCTIONS, multiply])


@pytest.mark.parametrize(
    ("fn", "problem"),
    [
        (lambda value, factor: 0.0, "lacks the argument 'from_'"),
        (lambda value, factor, from_, extra: 0.0, "takes 'extra', which is no argument"),
        (lambda value, factor, frm: 0.0, "takes 'frm', which is no argument"),
        (lambda value, /, factor, from_: 0.0, "takes 'value' by position only"),
    ],
)
def test_a_function_whose_parameters_are_not_the_arguments_is_refused(
    fn: Any, problem: str
) -> None:
    with pytest.raises(ToolMismatchError) as caught:
        resolve_functions(TOOLS, {"scale": fn, "sum-up": sum_up, "note": note})
    message = str(caught.value)
    assert message.startswith("tool 'scale' (schemas/t/tools/scale.json): the function")
    assert problem in message
    assert message.endswith("ScaleArguments's fields: value, factor, from_")


def test_keyword_catch_all_takes_the_arguments_it_does_not_name() -> None:
    def loose(value: float, **rest: Any) -> float:
        return value

    assert resolve_functions(TOOLS, {"scale": loose, "sum-up": sum_up, "note": note})


def test_arguments_are_validated_defaults_filled_and_wire_names_read() -> None:
    assert call_arguments(TOOLS[0], {"value": 1.5, "from": "y"}) == {
        "value": 1.5,
        "factor": 2,
        "from_": "y",
    }
    assert call_arguments(TOOLS[0], {"value": 2})["value"] == 2.0  # an integer is a number
    # an in-process caller's Decimal is no JSON: validated as a Python value
    assert call_arguments(TOOLS[0], {"value": Decimal("1.5")})["value"] == 1.5
    with pytest.raises(EnvValidationError, match=r"value: Input should be a valid number"):
        call_arguments(TOOLS[0], {"value": "1.5"})  # JSON Schema's typing: no string numbers
    with pytest.raises(EnvValidationError, match=r"factor: Input should be a valid integer"):
        call_arguments(TOOLS[0], {"value": 1, "factor": True})
    with pytest.raises(EnvValidationError, match="from_: Extra inputs are not permitted"):
        call_arguments(TOOLS[0], {"value": 1.5, "from_": "y"})  # the wire name is `from`
    with pytest.raises(EnvValidationError) as caught:
        call_arguments(TOOLS[0], {"value": "big", "factor": 0, "other": 1})
    assert caught.value.role == "scale arguments"
    assert [issue.loc for issue in caught.value.errors] == [("value",), ("factor",), ("other",)]
    assert str(caught.value).startswith("scale arguments failed validation (3 errors):\n")


def test_arguments_the_schema_allows_unnamed_reach_a_keyword_catch_all_only() -> None:
    open_tool = TOOLS[2]  # NoArgs: extra fields ignored, as pydantic's default
    assert call_arguments(open_tool, {"text": "a", "more": 1}) == {"text": "a"}

    class Open(ServerModel):
        model_config = ConfigDict(extra="allow")
        text: str

    tool = ServerTool("open", "takes_all", "f", Open, None, '{"type": "object"}')
    assert call_arguments(tool, {"text": "a", "more": 1}) == {"text": "a"}
    assert call_arguments(tool, {"text": "a", "more": 1}, extras=True) == {"text": "a", "more": 1}

    def takes_all(text: str, **rest: Any) -> str:
        return json.dumps({"text": text, **rest})

    async def call() -> str:
        async with Client(tool_server("t", [tool], [takes_all])) as client:
            reply = await client.call_tool("open", {"text": "a", "more": 1})
        text: str = reply.content[0].text
        return text

    assert json.loads(_run(call())) == {"text": "a", "more": 1}


def test_a_wrapped_result_is_checked_as_the_value_of_result() -> None:
    assert checked_result(TOOLS[0], 3) == 3.0
    with pytest.raises(EnvValidationError) as caught:
        checked_result(TOOLS[0], "three")
    assert caught.value.role == "scale result"
    assert [issue.loc for issue in caught.value.errors] == [("result",)]


def test_an_object_result_is_the_object_itself() -> None:
    class Other(ServerModel):
        count: int
        total: float

    assert checked_result(TOOLS[1], Other(count=2, total=3)) == {"count": 2, "total": 3.0}
    assert checked_result(TOOLS[1], {"count": 1, "total": 1}) == {"count": 1, "total": 1.0}
    with pytest.raises(EnvValidationError) as caught:
        checked_result(TOOLS[1], {"count": 1})
    assert [issue.loc for issue in caught.value.errors] == [("total",)]
    with pytest.raises(EnvValidationError, match="the function returned int"):
        checked_result(TOOLS[1], 5)  # not wrapped: an object schema wants an object


def test_a_tool_without_output_schema_returns_anything() -> None:
    assert checked_result(TOOLS[2], "text") == "text"


def _run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


async def _listing_and_calls(functions: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with Client(tool_server("t", TOOLS, functions)) as client:
        out["tools"] = [tool.model_dump(mode="json") for tool in await client.list_tools()]
        out["scale"] = await client.call_tool("scale", {"value": 2})
        out["sum"] = await client.call_tool("sum-up", {"values": [1, 2.5]})
        out["note"] = await client.call_tool("note", {"text": "hi"})
        for key, name, arguments in (
            ("bad_args", "scale", {"value": 1, "factor": 0}),
            ("bad_list", "sum-up", {"values": []}),
        ):
            try:
                await client.call_tool(name, arguments)
            except ToolError as exc:
                out[key] = str(exc)
    return out


def test_the_server_publishes_the_committed_schemas_as_they_are() -> None:
    out = _run(_listing_and_calls(FUNCTIONS))
    listed = {tool["name"]: tool for tool in out["tools"]}
    assert list(listed) == ["scale", "sum-up", "note"]
    scale_tool = listed["scale"]
    assert json.dumps(scale_tool["inputSchema"]) == SCALE_INPUT  # key order kept
    assert json.dumps(scale_tool["outputSchema"]) == WRAPPED
    assert scale_tool["description"] == "Scale a value."
    assert listed["sum-up"]["title"] == "Sum up"
    assert listed["note"]["outputSchema"] is None and listed["note"]["description"] is None
    # annotations as the file has them; their title is not copied up as FastMCP would
    assert listed["note"]["title"] is None
    assert listed["note"]["annotations"]["title"] == "Note it"
    assert listed["note"]["annotations"]["readOnlyHint"] is True


def test_calls_return_wrapped_values_objects_and_text() -> None:
    out = _run(_listing_and_calls(FUNCTIONS))
    assert out["scale"].structured_content == {"result": 4.0}
    assert out["sum"].structured_content == {"count": 2, "total": 3.5}
    assert out["note"].structured_content is None
    assert out["note"].content[0].text == "noted: hi"


def test_a_callable_that_returns_a_coroutine_is_awaited() -> None:
    class Summer:
        async def __call__(self, values: list[float]) -> SummaryResult:
            return SummaryResult(count=len(values), total=sum(values))

    out = _run(_listing_and_calls({"scale": scale, "sum-up": Summer(), "note": note}))
    assert out["sum"].structured_content == {"count": 2, "total": 3.5}


def test_a_bad_argument_is_a_tool_error_naming_it_before_the_function_runs() -> None:
    ran: list[float] = []

    def watched(value: float, factor: int, from_: str) -> float:
        ran.append(value)
        return value

    out = _run(_listing_and_calls({"scale": watched, "sum-up": sum_up, "note": note}))
    assert out["bad_args"].startswith("scale arguments failed validation (1 error):\n  - factor:")
    assert "values: List should have at least 1 item" in out["bad_list"]
    assert ran == [2.0]  # the valid call only


def test_a_return_the_output_schema_refuses_is_an_output_error() -> None:
    async def call_mapped() -> str:
        def wrong(values: list[float]) -> dict[str, Any]:
            return {"count": "many", "total": 1.0}

        functions = {"scale": scale, "note": note, "sum-up": wrong}
        async with Client(tool_server("t", TOOLS, functions)) as client:
            with pytest.raises(ToolError) as caught:
                await client.call_tool("sum-up", {"values": [1.0]})
        return str(caught.value)

    message = _run(call_mapped())
    assert message.startswith("Output validation error: the function of tool 'sum-up': ")
    assert "sum-up result failed validation (1 error):\n  - count:" in message


class ScaleEnvironment(ToolEnvironment):
    TOOLS = TOOLS
    NAME = "t"

    def tool_functions(self) -> list[Any]:
        return FUNCTIONS


def test_the_environment_counts_calls_and_refuses_bad_arguments_as_invalid_args() -> None:
    env = ScaleEnvironment()
    env.reset()
    good = env.step(CallToolAction(tool_name="scale", arguments={"value": 1.5}))
    assert good.error is None and good.result.structured_content == {"result": 3.0}
    bad = env.step(CallToolAction(tool_name="scale", arguments={"value": "x"}))
    assert bad.error.error_type == "invalid_args"
    assert bad.error.message.startswith("scale arguments failed validation (1 error):\n  - value:")
    assert env.state.step_count == 2
    assert env.get_metadata().name == "t"


def test_an_environment_whose_functions_do_not_match_fails_to_start() -> None:
    class Short(ScaleEnvironment):
        def tool_functions(self) -> list[Any]:
            return [scale, note]

    with pytest.raises(ToolMismatchError, match="tool 'sum-up'"):
        Short()
    for protocol in ("websocket", "http"):  # before the app exists, not at a first session
        with pytest.raises(ToolMismatchError, match="tool 'sum-up'"):
            tool_app(Short, protocol)
    assert tool_app(ScaleEnvironment, "http") is not None
