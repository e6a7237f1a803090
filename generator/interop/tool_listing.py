"""A tool env's tools read from its live server: the `tools/<tool>.json` files `pull` writes.

A server is a tool env when its `/schema` action is OpenEnv's `CallToolAction` (the
`call_tool` tag, a `tool_name`): what `MCPEnvironment` servers publish. Non-tool envs are
never asked anything more. The tools come from MCP's `tools/list` on `POST /mcp` (openenv's
app serves it: the whole MCP `Tool`, output schemas included), else from OpenEnv's own
listing, a `list_tools` step on `POST /step` (no output schemas: a note says so; on a
stateful HTTP server, envgen's `http_app`, that step counts as one of its env's steps).

Each tool is written as the committed format holds it: the MCP entry's `name`, `title`,
`description`, `inputSchema`, `outputSchema` and `annotations` that are not null, in that
order, and each schema exactly as the server lists it (key order included: the order of
`properties` is the order of the generated method's arguments), two-space indented. Every
tool is checked as `schema/tools` checks a file before anything is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import SchemaError
from generator.interop.fetch import PullError, request_json
from generator.schema.tools import TOOLS_DIR, check_tool

TOOL_FILE_KEYS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
"""What a tool file keeps of an MCP `Tool`, in the order written (`schema/tools.TOOL_KEYS`)."""
LIST_REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


@dataclass(frozen=True)
class PulledTools:
    """The tool files (path under the env folder -> text) and what the listing lacked."""

    files: dict[str, str]
    origin: str
    """The URL the tools were read from."""
    notes: tuple[str, ...] = ()
    lists_outputs: bool = True
    """Whether the listing shows output schemas (MCP's `tools/list`; the step's does not)."""


def is_tool_env(action_schema: Any) -> bool:
    """Whether `/schema`'s action is OpenEnv's `CallToolAction` (an `MCPEnvironment`)."""
    if not isinstance(action_schema, dict):
        return False
    props = action_schema.get("properties")
    if not isinstance(props, dict) or "tool_name" not in props:
        return False
    tag = props.get("type")
    if not isinstance(tag, dict):
        return False
    return tag.get("const") == "call_tool" or tag.get("enum") == ["call_tool"]


def tool_file_text(tool: dict[str, Any]) -> str:
    """One tool as its `tools/<name>.json` holds it (see the module docstring)."""
    doc = {key: tool[key] for key in TOOL_FILE_KEYS if tool.get(key) is not None}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def pull_tools(base_url: str) -> PulledTools:
    """Every tool of the tool env at `base_url`, checked; a PullError or SchemaError naming
    the URL (and the tool's place in the reply) when the listing is unusable."""
    origin = base_url.rstrip("/") + "/mcp"
    reply = request_json("POST", base_url, "/mcp", body=LIST_REQUEST, optional=True)
    notes: tuple[str, ...] = ()
    if reply is not None:
        tools, prefix = _mcp_tools(reply, origin), "/result/tools"
    else:
        origin = base_url.rstrip("/") + "/step"
        step = {"action": {"type": "list_tools"}}
        tools, prefix = _step_tools(request_json("POST", base_url, "/step", body=step), origin)
        notes = (
            f"{base_url.rstrip('/')}/mcp is not served: the tools come from OpenEnv's "
            "list_tools step, which lists no output schemas (calls will return ToolResult)",
        )
    lists_outputs = reply is not None
    files: dict[str, str] = {}
    for index, tool in enumerate(tools):
        pointer = f"{prefix}/{index}"
        doc = {key: tool[key] for key in TOOL_FILE_KEYS if key in tool and tool[key] is not None}
        try:
            checked = check_tool(doc, origin, Path(f"{doc.get('name')}.json"))
        except SchemaError as exc:
            raise SchemaError(
                exc.detail, file=origin, pointer=pointer + (exc.pointer or ""), hint=exc.hint
            ) from None
        path = f"{TOOLS_DIR}/{checked.name}.json"
        if path in files:
            raise SchemaError(
                f"the server lists tool {checked.name!r} twice", file=origin, pointer=pointer
            )
        files[path] = tool_file_text(doc)
    if not files:
        notes += (f"{origin} lists no tools",)
    return PulledTools(files, origin, notes, lists_outputs)


def _mcp_tools(reply: Any, origin: str) -> list[dict[str, Any]]:
    """The tools of a JSON-RPC `tools/list` reply (a JSON-RPC error is a PullError)."""
    if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
        message = reply["error"].get("message", reply["error"])
        raise PullError(f"{origin} refused tools/list: {message}")
    result = reply.get("result") if isinstance(reply, dict) else None
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise SchemaError(
            "a tools/list reply holds a list of tool objects at result.tools",
            file=origin,
            pointer="/result/tools",
        )
    if isinstance(result, dict) and result.get("nextCursor"):
        raise PullError(
            f"{origin} pages its tools/list (nextCursor), which pull does not follow yet"
        )
    return tools


def _step_tools(reply: Any, origin: str) -> tuple[list[dict[str, Any]], str]:
    """OpenEnv's `ListToolsObservation` tools (`input_schema`), as MCP names the keys."""
    observation = reply.get("observation") if isinstance(reply, dict) else None
    tools = observation.get("tools") if isinstance(observation, dict) else None
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise SchemaError(
            "a list_tools step's reply holds a list of tool objects at observation.tools",
            file=origin,
            pointer="/observation/tools",
        )
    renamed = [
        {("inputSchema" if key == "input_schema" else key): value for key, value in t.items()}
        for t in tools
    ]
    return renamed, "/observation/tools"


RENAMED_DEFS = {"ToolError": "CallToolError", "ToolErrorType": "CallToolErrorType"}
"""openenv's observation defs whose models would shadow the runtime's `ToolError` exception
in the generated package (`from calc_env import ToolError`): given CallToolObservation's
prefix, as calc_env's committed observation names them."""


def tool_env_observation(observation: dict[str, Any]) -> dict[str, Any]:
    """A tool env's observation as envgen commits it: `tool_name` not required (reset's
    observation, openenv's plain `Observation`, has none, so a client holding it required
    would refuse every reset), and openenv's `ToolError` defs renamed (`RENAMED_DEFS`)."""
    out = dict(observation)
    required = out.pop("required", None)
    if isinstance(required, list):
        kept = [name for name in required if name != "tool_name"]
        if kept:
            out["required"] = kept
    defs = out.get("$defs")
    if isinstance(defs, dict) and not set(RENAMED_DEFS.values()) & set(defs):
        out = _renamed(out, {k: v for k, v in RENAMED_DEFS.items() if k in defs})
    return out


def _renamed(node: Any, names: dict[str, str]) -> Any:
    """`node` with each def in `names` renamed: its `$defs` key, the refs to it, its title."""
    if isinstance(node, list):
        return [_renamed(item, names) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "$defs" and isinstance(value, dict):
            out[key] = {names.get(k, k): _renamed(v, names) for k, v in value.items()}
        elif key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
            target = value.removeprefix("#/$defs/")
            out[key] = "#/$defs/" + names.get(target, target)
        elif key == "title" and isinstance(value, str) and value in names:
            out[key] = names[value]
        elif key in ("enum", "const", "default", "examples"):
            out[key] = value
        else:
            out[key] = _renamed(value, names)
    return out
