"""ToolSpec: arguments validated before sending, replies read into typed results or ToolError.

Replies here are the shapes openenv 0.10's MCPEnvironment sends (recorded from calc_env);
the wire itself is covered end to end in tests/e2e/test_tool_env.py.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from envgen_runtime import (
    EnvModel,
    EnvValidationError,
    ModelCodec,
    ProtocolError,
    ServerError,
    ToolError,
    ToolResult,
    ToolSpec,
    parse_tool_call,
)
from pydantic import ConfigDict, Field


class Args(EnvModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1)
    limit: int = 5


class Found(EnvModel):
    hits: list[str]


STRUCTURED: ToolSpec[Found] = ToolSpec(
    "search",
    ModelCodec(Args, "search arguments"),
    ModelCodec(Found, "search result"),
    structured=True,
    defaults={"limit": 5},
)
PLAIN: ToolSpec[ToolResult] = ToolSpec(
    "search",
    ModelCodec(Args, "search arguments"),
    ModelCodec(ToolResult, "search result"),
    structured=False,
)


def _reply(**observation: Any) -> dict[str, Any]:
    return {"observation": {"tool_name": "search", **observation}, "reward": None, "done": False}


def _result(**fields: Any) -> dict[str, Any]:
    base = {"content": [{"type": "text", "text": "a\nb"}], "structured_content": None}
    return {**base, "meta": None, "data": None, "is_error": False, **fields}


def test_encode_drops_defaults_and_names_the_bad_argument() -> None:
    assert STRUCTURED.encode({"query": "x", "limit": 5}) == {"query": "x"}
    assert STRUCTURED.encode({"query": "x", "limit": 2}) == {"query": "x", "limit": 2}
    with pytest.raises(EnvValidationError) as caught:
        STRUCTURED.encode({"query": "", "limit": 5})
    assert [e.loc for e in caught.value.errors] == [("query",)]
    assert caught.value.role == "search arguments"
    with pytest.raises(EnvValidationError, match="limit"):
        STRUCTURED.encode({"query": "x", "limit": "many"})


def test_structured_and_plain_results() -> None:
    reply = _reply(result=_result(structured_content={"hits": ["a", "b"]}), error=None)
    assert STRUCTURED.read(reply) == Found(hits=["a", "b"])
    plain = PLAIN.read(reply)
    assert plain.text == "a\nb" and plain.structured_content == {"hits": ["a", "b"]}
    camel = _reply(result={"content": [], "structuredContent": {"hits": []}})
    assert STRUCTURED.read(camel) == Found(hits=[])


def test_server_error_field_is_a_tool_error() -> None:
    error = {"error_type": "tool_not_found", "message": "Unknown tool: 'search'"}
    with pytest.raises(ToolError) as caught:
        STRUCTURED.read(_reply(result=None, error=error))
    exc = caught.value
    assert isinstance(exc, ServerError)
    assert (exc.tool, exc.error_type, exc.code) == ("search", "tool_not_found", "tool_not_found")
    assert exc.tool_message == "Unknown tool: 'search'" and exc.op == "step"
    assert str(exc) == "tool 'search' failed (tool_not_found): Unknown tool: 'search'"
    again = pickle.loads(pickle.dumps(exc))
    assert (again.tool, again.tool_message, str(again)) == (exc.tool, exc.tool_message, str(exc))


def test_a_result_marked_is_error_is_a_tool_error_with_its_text() -> None:
    reply = _reply(result=_result(is_error=True, content=[{"type": "text", "text": "bad q"}]))
    with pytest.raises(ToolError) as caught:
        PLAIN.read(reply)
    assert caught.value.tool_message == "bad q" and caught.value.error_type == "tool_error"


def test_replies_that_break_the_protocol() -> None:
    with pytest.raises(ProtocolError, match="no observation"):
        STRUCTURED.read({"observation": None})
    with pytest.raises(ProtocolError, match="reply is for 'other'"):
        STRUCTURED.read({"observation": {"tool_name": "other", "result": _result()}})
    with pytest.raises(ToolError, match="no result"):
        STRUCTURED.read(_reply(result=None, error=None))
    with pytest.raises(EnvValidationError, match="search result"):
        STRUCTURED.read(_reply(result=_result(structured_content={"hits": "x"})))
    with pytest.raises(EnvValidationError, match="search result"):
        STRUCTURED.read(_reply(result=_result()))  # an output schema, but no structured content


def test_parse_tool_call_refuses_text_that_is_not_json() -> None:
    calls = ModelCodec(Args, "tool call")
    assert parse_tool_call(calls, '{"query": "x"}') == Args(query="x")
    assert parse_tool_call(calls, b'{"query": "y"}') == Args(query="y")
    assert parse_tool_call(calls, {"query": "z"}) == Args(query="z")
    for bad in ("{not json", b"\xff"):
        with pytest.raises(EnvValidationError, match="not JSON") as caught:
            parse_tool_call(calls, bad)
        assert caught.value.role == "tool call" and caught.value.errors[0].type == "json_invalid"
    with pytest.raises(EnvValidationError, match="query"):
        parse_tool_call(calls, "{}")


def test_strict_reading_accepts_every_key_openenv_sends() -> None:
    """A strict client (``strict=True``) reads openenv's CallToolResult, `meta` included."""
    meta = {"fastmcp": {"wrap_result": True}}
    reply = _reply(result=_result(structured_content={"hits": []}, meta=meta), error=None)
    assert PLAIN.read(reply, strict=True).meta == meta
    assert STRUCTURED.read(reply, strict=True) == Found(hits=[])


WRAPPED: ToolSpec[float] = ToolSpec(
    "add",
    ModelCodec(Args, "add arguments"),
    ModelCodec(float, "add result"),
    structured=True,
    wrapped=True,
)


def test_a_wrapped_result_is_its_value_in_either_spelling() -> None:
    """FastMCP's ``{"result": value}`` (OpenEnv's snake_case step or /mcp reply, the mcp
    SDK's camelCase) is unwrapped; the value is checked against its type."""
    assert WRAPPED.read_result({"structured_content": {"result": 3.5}, "is_error": False}) == 3.5
    assert WRAPPED.read_result({"structuredContent": {"result": 2}, "isError": False}) == 2.0
    assert WRAPPED.read_result({"structuredContent": {"result": 2}}, strict=True) == 2.0
    with pytest.raises(EnvValidationError, match="add result"):
        WRAPPED.read_result({"structuredContent": {"result": "many"}})
    for structured in (None, {"value": 1.0}, [1.0]):
        with pytest.raises(ProtocolError, match="has no 'result'"):
            WRAPPED.read_result({"structuredContent": structured})


def test_mcp_camel_case_results() -> None:
    camel = {
        "content": [{"type": "text", "text": "bad q"}],
        "structuredContent": {"hits": ["a"]},
        "_meta": {"k": 1},
        "isError": False,
    }
    plain = PLAIN.read_result(camel, strict=True)
    assert plain.structured_content == {"hits": ["a"]} and plain.meta == {"k": 1}
    assert STRUCTURED.read_result(camel) == Found(hits=["a"])
    with pytest.raises(ToolError, match="bad q") as caught:
        STRUCTURED.read_result({**camel, "isError": True})
    assert caught.value.error_type == "tool_error" and caught.value.rpc_code is None


class _Recorder:
    """A ToolCaller that answers from a list and records what it was sent."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        self.answers = list(answers)
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.closed = 0

    @property
    def strict(self) -> bool:
        return True

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.sent.append((name, arguments))
        return self.answers.pop(0)


def test_a_toolbox_sends_through_any_caller_and_reads_what_it_returns() -> None:
    from envgen_runtime import Toolbox

    class Recorder(_Recorder):
        def close(self) -> None:
            self.closed += 1

    caller = Recorder({"structuredContent": {"hits": ["x"]}}, {"isError": True, "content": []})
    with Toolbox(caller) as tools:
        assert tools._call(STRUCTURED, {"query": "q", "limit": 5}) == Found(hits=["x"])
        with pytest.raises(ToolError, match="the tool reported an error"):
            tools._call(STRUCTURED, {"query": "q", "limit": 9})
        with pytest.raises(EnvValidationError, match="query"):
            tools._call(STRUCTURED, {"query": ""})  # refused here: nothing sent
        assert tools.last_step is None  # no step: not a session's call
    assert caller.sent == [("search", {"query": "q"}), ("search", {"query": "q", "limit": 9})]
    assert caller.closed == 1


def test_an_async_toolbox_awaits_its_caller() -> None:
    import asyncio

    from envgen_runtime import AsyncToolbox

    class Recorder(_Recorder):
        async def call_tool(  # type: ignore[override]
            self, name: str, arguments: dict[str, Any]
        ) -> dict[str, Any]:
            return super().call_tool(name, arguments)

        async def close(self) -> None:
            self.closed += 1

    caller = Recorder({"structuredContent": {"result": 4}})

    async def run() -> float:
        async with AsyncToolbox(caller) as tools:
            return await tools._call(WRAPPED, {"query": "x"})

    assert asyncio.run(run()) == 4.0 and caller.closed == 1


def test_the_mcp_sdk_caller_names_its_extra_when_mcp_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from envgen_runtime import MissingExtraError, Toolbox

    monkeypatch.setitem(sys.modules, "mcp", None)  # as if it were not installed
    with pytest.raises(MissingExtraError, match=r"envgen-runtime\[mcp\]") as caught:
        Toolbox.over_mcp("http://127.0.0.1:1/mcp")
    assert caught.value.extra == "mcp"
