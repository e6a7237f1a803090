"""Typed tool calls for tool environments, over a session's steps or MCP's JSON-RPC.

A generated env's ``tools`` namespace (a ``Toolbox`` or ``AsyncToolbox`` subclass) has one
typed method per tool; each builds its arguments model (validated before anything is sent,
the failing argument named), hands the call to its *caller* and reads the result: the
output schema's value when the tool has one (FastMCP's ``{"result": value}`` wrapper of a
non-object return taken off), else a ``ToolResult``. A failed call is a ``ToolError``; the
session or connection goes on. ``ToolSpec`` is all the per-tool data, shared by both
flavours and every caller, so the namespaces differ only in awaiting the call.

A caller (``ToolCaller``, ``AsyncToolCaller``) is how a call travels; it returns MCP's
``CallToolResult`` as a mapping, in OpenEnv's snake_case or MCP's camelCase:

- ``StepCaller``: a step of the client's session (OpenEnv's "simulation" mode: the action
  ``{"type": "call_tool", "tool_name": ..., "arguments": {...}}``; the observation holds
  ``tool_name``, ``result`` and ``error``), so rewards and ``done`` arrive, in ``last_step``;
- ``client.mcp_http``: OpenEnv's JSON-RPC ``POST /mcp`` ("production" mode), no extra;
- ``client.mcp_ws``: OpenEnv's ``/mcp`` WebSocket, the same JSON-RPC;
- ``client.mcp_sdk``: any MCP server over streamable HTTP, with the ``mcp`` SDK (extra
  ``envgen-runtime[mcp]``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, Self, TypeVar

from pydantic import AliasChoices, Field

from ..core.codec import EnvModel, ModelCodec
from ..core.errors import EnvValidationError, ProtocolError, ToolError, ValidationIssue
from ..core.text import quote, truncate

if TYPE_CHECKING:
    from types import TracebackType

    from ..core.result import StepResult
    from .aio import AsyncEnvClient
    from .sync import EnvClient

ResT = TypeVar("ResT")

ActionMaker = Callable[[str, dict[str, Any]], Any]
"""Builds the env's step action for a call: (tool wire name, encoded arguments) -> action."""

WRAP_KEY = "result"
"""The key FastMCP (and the ``mcp`` SDK's FastMCP) wraps a non-object tool return under."""


class ToolResult(EnvModel):
    """What a tool without an output schema returned: MCP's ``CallToolResult``.

    ``content`` is MCP's content list (``{"type": "text", "text": ...}`` and other kinds),
    ``structured_content`` the JSON object a tool may add, ``meta`` MCP's ``_meta``,
    ``data`` FastMCP's decoded value. Read from either spelling: OpenEnv's snake_case or
    MCP's camelCase (``structuredContent``, ``isError``, ``_meta``).
    """

    content: list[dict[str, Any]] = Field(default_factory=list)
    structured_content: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("structured_content", "structuredContent")
    )
    meta: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("meta", "_meta")
    )
    data: Any = None
    is_error: bool = Field(default=False, validation_alias=AliasChoices("is_error", "isError"))

    @property
    def text(self) -> str:
        """The text items of ``content``, joined by newlines."""
        return "\n".join(
            str(item.get("text", "")) for item in self.content if item.get("type") == "text"
        )


TOOL_RESULT: ModelCodec[ToolResult] = ModelCodec(ToolResult, "tool result")
CallT = TypeVar("CallT")


def parse_tool_call(calls: ModelCodec[CallT], value: str | bytes | Mapping[str, Any]) -> CallT:
    """A typed tool call from a policy's output: JSON text or an already decoded object.

    Whatever is wrong (not JSON, an unknown ``tool_name``, a bad argument) is one
    ``EnvValidationError`` naming the place, so a trainer can score the output and go on.
    """
    data: Any = value
    if isinstance(value, str | bytes):
        try:
            data = json.loads(value)
        except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
            issue = ValidationIssue(loc=(), message=truncate(str(exc), 300), type="json_invalid")
            raise EnvValidationError(calls.role, [issue], hint="the text is not JSON") from exc
    return calls.decode(data)


def step_result_of(tool: str, reply: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``CallToolResult`` in a call_tool step's reply; ``ToolError`` when it failed."""
    observation = reply.get("observation")
    if not isinstance(observation, Mapping):
        raise ProtocolError(
            f"tool {tool!r}: the reply holds no observation object", received=quote(str(reply))
        )
    error = observation.get("error")
    if isinstance(error, Mapping):
        raise ToolError(
            tool,
            str(error.get("message", "")),
            error_type=str(error.get("error_type") or "execution_error"),
        )
    answered = observation.get("tool_name")
    if answered is not None and answered != tool:
        raise ProtocolError(
            f"called tool {tool!r} but the reply is for {answered!r}",
            received=quote(str(answered)),
        )
    result = observation.get("result")
    if not isinstance(result, Mapping):
        raise ToolError(tool, "the server sent no result", error_type="no_result")
    return result


@dataclass(frozen=True)
class ToolSpec(Generic[ResT]):
    """One tool of a generated client: its wire name, argument and result codecs.

    ``structured``: the result is the output schema's value, read from the structured
    content; otherwise the whole ``CallToolResult`` as ``result`` reads it (``TOOL_RESULT``).
    ``wrapped``: the output schema is FastMCP's wrapper of a non-object return
    (``{"result": value}``, marked ``x-fastmcp-wrap-result``), and ``result`` decodes the
    value inside. ``defaults``: arguments left at these values are not sent, so the server
    applies its own default (as the generated ``reset()`` does).
    """

    name: str
    arguments: ModelCodec[Any]
    result: ModelCodec[ResT]
    structured: bool
    defaults: Mapping[str, Any] = field(default_factory=dict)
    wrapped: bool = False

    def encode(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments to send (wire keys), validated first: ``EnvValidationError``
        naming the argument, and nothing sent, when one is wrong."""
        given = {
            key: value
            for key, value in values.items()
            if key not in self.defaults or value != self.defaults[key]
        }
        return self.arguments.encode(given)

    def read(self, reply: Mapping[str, Any], *, strict: bool = False) -> ResT:
        """The typed result of one call from its step reply; ``ToolError`` when it failed."""
        return self.read_result(step_result_of(self.name, reply), strict=strict)

    def read_result(self, result: Mapping[str, Any], *, strict: bool = False) -> ResT:
        """The typed result from a ``CallToolResult`` in either spelling (OpenEnv's
        snake_case, MCP's camelCase); ``ToolError`` when it says ``is_error``."""
        if result.get("isError", result.get("is_error")):
            text = TOOL_RESULT.decode(result).text
            raise ToolError(self.name, text or "the tool reported an error")
        if not self.structured:
            return self.result.decode(result, strict=strict)
        structured = result.get("structuredContent", result.get("structured_content"))
        if not self.wrapped:
            return self.result.decode(structured, strict=strict)
        if not isinstance(structured, Mapping) or WRAP_KEY not in structured:
            raise ProtocolError(
                f"tool {self.name!r}: its output schema wraps the value as "
                f'{{"{WRAP_KEY}": ...}}, but the structured content has no {WRAP_KEY!r}',
                received=quote(str(structured)),
            )
        return self.result.decode(structured[WRAP_KEY], strict=strict)


def _check_transport(transport: str) -> None:
    if transport != "http":
        raise ValueError(f"transport must be 'http' or 'websocket', got {transport!r}")


class ToolCaller(Protocol):
    """How a blocking ``Toolbox`` sends a call: the ``CallToolResult`` back as a mapping,
    or ``ToolError`` when the server said the call failed."""

    @property
    def strict(self) -> bool:
        """Whether results are parsed strictly (unknown fields, wrong JSON types refused)."""
        ...

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Mapping[str, Any]: ...

    def close(self) -> None: ...


class AsyncToolCaller(Protocol):
    """``ToolCaller`` for an ``AsyncToolbox``: the same, awaited."""

    @property
    def strict(self) -> bool: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Mapping[str, Any]: ...

    async def close(self) -> None: ...


class StepCaller:
    """A call as one step of a blocking client's session (the client owns the session)."""

    def __init__(self, client: EnvClient[Any, Any, Any], action: ActionMaker) -> None:
        self._client = client
        self._action = action
        self.last_step: StepResult[Any] | None = None

    @property
    def strict(self) -> bool:
        return self._client.strict

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        step = self._client.step(self._action(name, arguments))
        self.last_step = step
        return step_result_of(name, step.raw)

    def close(self) -> None:
        """Nothing to close: the session is the client's."""


class AsyncStepCaller:
    """``StepCaller`` for an asyncio client."""

    def __init__(self, client: AsyncEnvClient[Any, Any, Any], action: ActionMaker) -> None:
        self._client = client
        self._action = action
        self.last_step: StepResult[Any] | None = None

    @property
    def strict(self) -> bool:
        return self._client.strict

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        step = await self._client.step(self._action(name, arguments))
        self.last_step = step
        return step_result_of(name, step.raw)

    async def close(self) -> None:
        """Nothing to close: the session is the client's."""


class Toolbox:
    """Base of a generated blocking client's ``tools``: one typed method per tool.

    ``env.tools`` calls as steps of the client's session (``over_steps``);
    ``over_openenv_mcp`` and ``over_mcp`` call over MCP's JSON-RPC instead, on a connection
    of their own that ``close()`` (or a ``with`` block) ends.
    """

    def __init__(self, caller: ToolCaller) -> None:
        self._caller = caller

    @classmethod
    def over_steps(cls, client: EnvClient[Any, Any, Any], action: ActionMaker) -> Self:
        """Each call one step of ``client``'s session (rewards and done in ``last_step``)."""
        return cls(StepCaller(client, action))

    @classmethod
    def over_openenv_mcp(
        cls,
        base_url: str,
        *,
        timeout_s: float = 15.0,
        headers: Mapping[str, str] | None = None,
        session: bool = True,
        strict: bool = False,
        transport: Literal["http", "websocket"] = "http",
    ) -> Self:
        """Calls over OpenEnv's MCP JSON-RPC at ``{base_url}/mcp`` ("production" mode).

        ``transport="http"``: ``POST /mcp``; ``session``: the calls share one server
        environment (``openenv/session/create`` on the first call, closed by ``close()``),
        else each call gets a fresh one. ``transport="websocket"``: the ``/mcp`` WebSocket,
        whose connection is the session (``session`` does not apply).
        """
        if transport == "websocket":
            from .mcp_ws import McpWebSocketCaller

            return cls(
                McpWebSocketCaller(base_url, timeout_s=timeout_s, headers=headers, strict=strict)
            )
        from .mcp_http import McpHttpCaller

        _check_transport(transport)
        caller = McpHttpCaller(
            base_url, timeout_s=timeout_s, headers=headers, session=session, strict=strict
        )
        return cls(caller)

    @classmethod
    def over_mcp(
        cls,
        url: str,
        *,
        timeout_s: float = 30.0,
        headers: Mapping[str, str] | None = None,
        strict: bool = False,
    ) -> Self:
        """Calls to an MCP server over streamable HTTP (``url`` is its endpoint, e.g.
        ``http://host:port/mcp``), through the ``mcp`` SDK: ``envgen-runtime[mcp]``."""
        from .mcp_sdk import McpSdkCaller

        return cls(McpSdkCaller(url, timeout_s=timeout_s, headers=headers, strict=strict))

    @property
    def last_step(self) -> StepResult[Any] | None:
        """The step result of the last call (reward, done, the observation as sent); None
        over MCP, where a call is no step."""
        caller = self._caller
        return caller.last_step if isinstance(caller, StepCaller) else None

    def close(self) -> None:
        """End the caller's connection (an MCP session); nothing for steps."""
        self._caller.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _call(self, spec: ToolSpec[ResT], arguments: Mapping[str, Any]) -> ResT:
        return self._send(spec, spec.encode(arguments))

    def _call_model(self, spec: ToolSpec[ResT], arguments: Any) -> ResT:
        return self._send(spec, spec.arguments.encode(arguments))

    def _send(self, spec: ToolSpec[ResT], payload: dict[str, Any]) -> ResT:
        result = self._caller.call_tool(spec.name, payload)
        return spec.read_result(result, strict=self._caller.strict)


class AsyncToolbox:
    """Base of a generated asyncio client's ``tools``: the methods of ``Toolbox``, awaited."""

    def __init__(self, caller: AsyncToolCaller) -> None:
        self._caller = caller

    @classmethod
    def over_steps(cls, client: AsyncEnvClient[Any, Any, Any], action: ActionMaker) -> Self:
        """Each call one step of ``client``'s session (rewards and done in ``last_step``)."""
        return cls(AsyncStepCaller(client, action))

    @classmethod
    def over_openenv_mcp(
        cls,
        base_url: str,
        *,
        timeout_s: float = 15.0,
        headers: Mapping[str, str] | None = None,
        session: bool = True,
        strict: bool = False,
        transport: Literal["http", "websocket"] = "http",
    ) -> Self:
        """``Toolbox.over_openenv_mcp``, awaited: ``await tools.close()`` (or ``async with``)."""
        if transport == "websocket":
            from .mcp_ws import AsyncMcpWebSocketCaller

            ws = AsyncMcpWebSocketCaller(
                base_url, timeout_s=timeout_s, headers=headers, strict=strict
            )
            return cls(ws)
        from .mcp_http import AsyncMcpHttpCaller

        _check_transport(transport)
        caller = AsyncMcpHttpCaller(
            base_url, timeout_s=timeout_s, headers=headers, session=session, strict=strict
        )
        return cls(caller)

    @classmethod
    def over_mcp(
        cls,
        url: str,
        *,
        timeout_s: float = 30.0,
        headers: Mapping[str, str] | None = None,
        strict: bool = False,
    ) -> Self:
        """``Toolbox.over_mcp``, awaited: the MCP session opens on the first call, in the
        running event loop; ``await tools.close()`` (or ``async with``) ends it."""
        from .mcp_sdk import AsyncMcpSdkCaller

        return cls(AsyncMcpSdkCaller(url, timeout_s=timeout_s, headers=headers, strict=strict))

    @property
    def last_step(self) -> StepResult[Any] | None:
        """The step result of the last call; None over MCP."""
        caller = self._caller
        return caller.last_step if isinstance(caller, AsyncStepCaller) else None

    async def close(self) -> None:
        """End the caller's connection (an MCP session); nothing for steps."""
        await self._caller.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _call(self, spec: ToolSpec[ResT], arguments: Mapping[str, Any]) -> ResT:
        return await self._send(spec, spec.encode(arguments))

    async def _call_model(self, spec: ToolSpec[ResT], arguments: Any) -> ResT:
        return await self._send(spec, spec.arguments.encode(arguments))

    async def _send(self, spec: ToolSpec[ResT], payload: dict[str, Any]) -> ResT:
        result = await self._caller.call_tool(spec.name, payload)
        return spec.read_result(result, strict=self._caller.strict)
