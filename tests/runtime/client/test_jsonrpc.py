"""MCP's JSON-RPC 2.0 as the tool callers speak it: requests, replies, and each error mapped.

The error messages are the ones openenv 0.10's ``POST /mcp`` sends for calc_env (measured:
a tool that raised, an unknown tool, refused arguments, a method it does not serve); the
wire itself is covered in tests/e2e/test_tool_mcp.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from envgen_runtime import EnvgenRuntimeError, ProtocolError, ServerError, ToolError
from envgen_runtime.client.jsonrpc import (
    call_result,
    error_type,
    rpc_error,
    rpc_request,
    rpc_result,
    tools_of,
)

VALIDATION = (
    "1 validation error for call[add]\na\n  Input should be a valid number, unable to parse "
    "string as a number [type=float_parsing, input_value='x', input_type=str]"
)


def _error(code: int, message: str, request_id: Any = 7) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def test_a_request_is_a_jsonrpc_2_object() -> None:
    params = {"name": "add", "arguments": {"a": 1}}
    assert rpc_request(3, "tools/call", params) == {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": params,
    }


def test_the_result_of_the_reply_to_this_request() -> None:
    result = {"content": [], "structured_content": {"result": 3.0}, "is_error": False}
    assert rpc_result({"jsonrpc": "2.0", "id": 7, "result": result}, 7, method="m") == result
    assert rpc_result({"jsonrpc": "2.0", "id": 7, "result": None}, 7, method="m") is None


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        ({"id": 7, "result": {}}, "not a JSON-RPC 2.0 object"),
        ([1], "not a JSON-RPC 2.0 object"),
        ({"jsonrpc": "2.0", "id": 8, "result": {}}, "request id 8, not 7"),
        ({"jsonrpc": "2.0", "id": 7}, "neither result nor error"),
        ({"jsonrpc": "2.0", "id": 7, "error": "boom"}, "error is no object"),
    ],
)
def test_a_reply_of_the_wrong_shape_is_a_protocol_error(reply: Any, match: str) -> None:
    with pytest.raises(ProtocolError, match=match):
        rpc_result(reply, 7, method="tools/call", tool="add")


@pytest.mark.parametrize(
    ("code", "message", "kind"),
    [
        (-32603, "Error calling tool 'divide': division by zero", "execution_error"),
        (-32603, "Unknown tool: 'nope'", "tool_not_found"),
        (-32603, VALIDATION, "invalid_args"),
        (-32602, "Tool not found: nope", "tool_not_found"),
        (-32602, "Invalid arguments", "invalid_args"),
        (-32603, "the tool timed out after 5 s", "timeout"),
    ],
)
def test_a_tool_problem_is_a_tool_error_with_its_category(
    code: int, message: str, kind: str
) -> None:
    with pytest.raises(ToolError) as caught:
        rpc_result(_error(code, message), 7, method="tools/call", tool="divide")
    error = caught.value
    assert (error.tool, error.tool_message, error.error_type) == ("divide", message, kind)
    assert error.rpc_code == code and error.code == kind
    assert isinstance(error, ServerError)  # a server's answer, as over steps


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (-32601, "Method not found: tools/call"),
        (-32700, "Parse error"),
        (-32600, "Invalid Request"),
        (-32603, "Environment does not support MCP"),
        (-32603, "MCP server not available"),
        (-32602, "Unknown session_id: 123"),
    ],
)
def test_a_request_the_route_refuses_is_a_protocol_error(code: int, message: str) -> None:
    with pytest.raises(ProtocolError, match=f"JSON-RPC error {code}") as caught:
        rpc_result(_error(code, message), 7, method="tools/call", tool="add")
    assert not isinstance(caught.value, ToolError)
    assert message[:20] in caught.value.received


def test_other_errors_are_server_errors_with_the_code() -> None:
    # openenv/session/create at capacity: a server-defined code, no tool involved.
    error = rpc_error(-32000, "Server at capacity (8/8)", {"max_sessions": 8}, method="create")
    assert type(error) is ServerError and error.code == "-32000" and error.op == "create"
    assert "capacity" in str(error) and "max_sessions" in error.body
    # An internal error of a method that is not a tool call is no tool's failure.
    internal = rpc_error(-32603, "boom", None, method="tools/list")
    assert type(internal) is ServerError and internal.code == "-32603"
    assert isinstance(rpc_error(None, "", None, method="m"), EnvgenRuntimeError)


def test_error_type_reads_fastmcp_prefixes_first() -> None:
    # A tool that raised with "not found" in its own message is still an execution error.
    assert error_type(-32603, "Error calling tool 'get': key not found") == "execution_error"
    assert error_type(-32603, "something else") == "execution_error"
    # envgen's tool server (envgen_runtime.server.tools) refusing arguments, over /mcp
    refused = "add arguments failed validation (1 error):\n  - a: Input should be a number"
    assert error_type(-32603, refused) == "invalid_args"


def test_listing_and_call_results_must_be_objects() -> None:
    assert tools_of({"tools": [{"name": "add"}]}) == [{"name": "add"}]
    for bad in (None, {"tools": None}, {"tools": ["add"]}):
        with pytest.raises(ProtocolError, match="no list of tools"):
            tools_of(bad)
    assert call_result({"content": []}, tool="add") == {"content": []}
    with pytest.raises(ProtocolError, match="not a CallToolResult"):
        call_result([1], tool="add")


def test_the_mcp_websocket_of_a_base_url() -> None:
    from envgen_runtime.client.mcp_ws import mcp_websocket_url

    assert mcp_websocket_url("http://127.0.0.1:8000") == "ws://127.0.0.1:8000/mcp"
    assert mcp_websocket_url("https://h.example/env/") == "wss://h.example/env/mcp"
    assert mcp_websocket_url("http://h:1/mcp?t=1") == "ws://h:1/mcp?t=1"
    with pytest.raises(ValueError, match="http"):
        mcp_websocket_url("ftp://h/")
