"""What `envgen new --tools` writes into schemas/<env>/: a tool env's schemas and two tools.

The action, observation and state schemas are the shapes calc_env's committed schemas use
(OpenEnv's `CallToolAction`, `CallToolObservation` with `tool_name` optional, as reset's
observation has none, and `State`), so the generated client's tool calls and openenv's
`MCPEnvironment` agree. The two tool files are what FastMCP would list for `echo(text: str)
-> str` and `add(a: float, b: float = 0.0) -> float`, in `envgen pull`'s layout; the
scaffolded server (`tool_server_module`) publishes them as they are, through the generated
`server.TOOLS`, so `envgen verify` and a later pull agree with the committed files.
"""

from __future__ import annotations

from typing import Any

ACTION: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "additionalProperties": False,
    "description": "Call a specific tool via MCP.\n"
    "\n"
    "This action triggers MCP's tools/call operation with the\n"
    "specified tool name and arguments.",
    "properties": {
        "arguments": {
            "additionalProperties": True,
            "description": "Arguments to pass to the tool",
            "title": "Arguments",
            "type": "object",
        },
        "metadata": {
            "additionalProperties": True,
            "description": "Additional metadata for the action",
            "title": "Metadata",
            "type": "object",
        },
        "tool_name": {
            "description": "Name of the tool to call",
            "title": "Tool Name",
            "type": "string",
        },
        "type": {
            "const": "call_tool",
            "default": "call_tool",
            "description": "Action type discriminator",
            "title": "Type",
            "type": "string",
        },
    },
    "required": ["tool_name"],
    "title": "CallToolAction",
    "type": "object",
}

OBSERVATION: dict[str, Any] = {
    "$defs": {
        "CallToolError": {
            "additionalProperties": False,
            "description": "Structured error for tool execution failures.\n"
            "\n"
            "This is used for transport/framework errors, NOT "
            "for errors returned\n"
            "by the tool itself (those go in the result "
            "field).",
            "properties": {
                "error_type": {
                    "$ref": "#/$defs/CallToolErrorType",
                    "description": "Category of the error",
                },
                "message": {
                    "description": "Human-readable error message",
                    "title": "Message",
                    "type": "string",
                },
            },
            "required": ["error_type", "message"],
            "title": "CallToolError",
            "type": "object",
        },
        "CallToolErrorType": {
            "description": "Types of errors that can occur during tool execution.",
            "enum": [
                "execution_error",
                "invalid_args",
                "transport_error",
                "tool_not_found",
                "timeout",
            ],
            "title": "CallToolErrorType",
            "type": "string",
        },
    },
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "additionalProperties": False,
    "description": "Response from tool execution.\n"
    "\n"
    "Contains the tool's result or an error if the call failed.\n"
    "Tool-specific errors (from the tool itself) are included in the result.\n"
    "Transport/framework errors use the error field.",
    "properties": {
        "error": {
            "anyOf": [{"$ref": "#/$defs/CallToolError"}, {"type": "null"}],
            "default": None,
            "description": "Transport/framework error if call failed",
        },
        "metadata": {
            "additionalProperties": True,
            "description": "Additional metadata for the observation",
            "title": "Metadata",
            "type": "object",
        },
        "result": {
            "default": None,
            "description": "Tool-specific result (may include tool errors)",
            "title": "Result",
        },
        "tool_name": {
            "description": "Name of the tool that was called; absent from "
            "reset's observation (openenv's plain "
            "Observation, its reset_observation schema).",
            "title": "Tool Name",
            "type": "string",
        },
    },
    "title": "CallToolObservation",
    "type": "object",
}

STATE: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "additionalProperties": True,
    "description": "Base class for environment state.\n"
    "\n"
    "Represents internal environment state, separate from observations.",
    "properties": {
        "episode_id": {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "default": None,
            "description": "Unique identifier for the current episode",
            "title": "Episode Id",
        },
        "step_count": {
            "default": 0,
            "description": "Number of steps taken in the current episode",
            "minimum": 0,
            "title": "Step Count",
            "type": "integer",
        },
    },
    "title": "State",
    "type": "object",
}

TOOLS: dict[str, dict[str, Any]] = {
    "echo": {
        "name": "echo",
        "description": "Return the text it is given.",
        "inputSchema": {
            "additionalProperties": False,
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "type": "object",
        },
        "outputSchema": {
            "properties": {"result": {"type": "string"}},
            "required": ["result"],
            "type": "object",
            "x-fastmcp-wrap-result": True,
        },
    },
    "add": {
        "name": "add",
        "description": "Add two numbers.",
        "inputSchema": {
            "additionalProperties": False,
            "properties": {"a": {"type": "number"}, "b": {"default": 0.0, "type": "number"}},
            "required": ["a"],
            "type": "object",
        },
        "outputSchema": {
            "properties": {"result": {"type": "number"}},
            "required": ["result"],
            "type": "object",
            "x-fastmcp-wrap-result": True,
        },
    },
}
"""Tool name -> its tools/<name>.json (MCP `tools/list` shape)."""
