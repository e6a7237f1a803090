"""MCP's JSON-RPC 2.0 without I/O: requests out, replies in, errors as the runtime's.

A ``tools/call`` error reply is the tool's failure (``ToolError``, the connection goes on)
when the server names a tool problem: invalid params (``-32602``: MCP's code for an unknown
tool or bad arguments) or an internal error (``-32603``), which is where OpenEnv 0.10's
``/mcp`` puts a tool that raised (``Error calling tool 'x': ...``), an unknown tool
(``Unknown tool: 'x'``) and refused arguments (``1 validation error for call[x]``). Its
``error_type`` is OpenEnv's category, read from those messages; ``rpc_code`` keeps the code.
A method the server does not serve, a request it could not read, or an ``/mcp`` without MCP
behind it is a ``ProtocolError``; any other error a ``ServerError`` with the code.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..core.errors import EnvgenRuntimeError, ProtocolError, ServerError, ToolError
from ..core.text import RECEIVED_LIMIT, quote, truncate

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32603,
)
_NOT_A_TOOL_ANSWER = ("does not support MCP", "MCP server not available", "Unknown session_id")
"""OpenEnv's error messages that are about its ``/mcp`` route, not about a tool."""


def rpc_request(request_id: int, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """One JSON-RPC 2.0 request object."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)}


def rpc_result(reply: Any, request_id: int, *, method: str, tool: str | None = None) -> Any:
    """The ``result`` of the reply to request ``request_id``; its error as the runtime's.

    ``tool``: the tool a ``tools/call`` named (its errors may be ``ToolError``).
    """
    if not isinstance(reply, Mapping) or reply.get("jsonrpc") != "2.0":
        raise ProtocolError(
            f"{method}: the reply is not a JSON-RPC 2.0 object", received=_shown(reply)
        )
    error = reply.get("error")
    if error is not None:
        if not isinstance(error, Mapping):
            raise ProtocolError(f"{method}: the reply's error is no object", received=_shown(error))
        code = error.get("code")
        message = error.get("message")
        raise rpc_error(
            code if isinstance(code, int) and not isinstance(code, bool) else None,
            message if isinstance(message, str) else "",
            error.get("data"),
            method=method,
            tool=tool,
        )
    if reply.get("id") != request_id:
        raise ProtocolError(
            f"{method}: the reply is for request id {reply.get('id')!r}, not {request_id}",
            received=_shown(reply),
        )
    if "result" not in reply:
        raise ProtocolError(
            f"{method}: the reply has neither result nor error", received=_shown(reply)
        )
    return reply["result"]


def rpc_error(
    code: int | None, message: str, data: Any, *, method: str, tool: str | None = None
) -> EnvgenRuntimeError:
    """The runtime's error for a JSON-RPC error (see the module docstring)."""
    shown = truncate(message, RECEIVED_LIMIT) or "<no message>"
    about_route = any(marker in message for marker in _NOT_A_TOOL_ANSWER)
    if tool is not None and code in (INVALID_PARAMS, INTERNAL_ERROR) and not about_route:
        return ToolError(tool, message, error_type=error_type(code, message), rpc_code=code)
    received = _shown({"code": code, "message": message, "data": data})
    if code in (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND) or about_route:
        return ProtocolError(
            f"{method}: the server refused the request (JSON-RPC error {code}): {shown}",
            received=received,
            op=method,
        )
    text = f"{method} failed: the server answered JSON-RPC error {code}: {shown}"
    return ServerError(None, received, method, code=str(code), message=text)


def error_type(code: int | None, message: str) -> str:
    """OpenEnv's category of a failed ``tools/call`` from its code and message."""
    lowered = message.lower()
    if "unknown tool" in lowered or "tool not found" in lowered:
        return "tool_not_found"
    if message.startswith("Error calling tool "):  # FastMCP: the tool itself raised
        return "execution_error"
    if "validation error for call[" in lowered or code == INVALID_PARAMS:
        return "invalid_args"
    if re.match(r"\S+ arguments failed validation \(", message):  # envgen's tool server
        return "invalid_args"
    if "timed out" in lowered or "timeout" in lowered:
        return "timeout"
    return "execution_error"


def tools_of(result: Any, *, method: str = "tools/list") -> list[dict[str, Any]]:
    """The tool entries of a ``tools/list`` result."""
    tools = result.get("tools") if isinstance(result, Mapping) else None
    if not isinstance(tools, list) or not all(isinstance(t, Mapping) for t in tools):
        raise ProtocolError(f"{method}: the result holds no list of tools", received=_shown(result))
    return [dict(t) for t in tools]


def call_result(result: Any, *, tool: str) -> Mapping[str, Any]:
    """A ``tools/call`` result, which must be a ``CallToolResult`` object."""
    if not isinstance(result, Mapping):
        raise ProtocolError(
            f"tools/call {tool!r}: the result is not a CallToolResult object",
            received=_shown(result),
        )
    return result


def _shown(value: Any) -> str:
    return quote(value)
