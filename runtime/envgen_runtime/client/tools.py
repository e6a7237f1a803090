"""Typed tool calls for tool environments: MCP tools called as steps of a session.

A tool environment (openenv's ``MCPEnvironment``) takes ``{"type": "call_tool", "tool_name":
..., "arguments": {...}}`` as its step action and answers with an observation holding
``tool_name``, ``result`` (MCP's ``CallToolResult`` in OpenEnv's spelling: ``content``,
``structured_content``, ``data``, ``is_error``) and ``error`` (``error_type``, ``message``).
A generated env's ``tools`` namespace (a ``Toolbox`` or ``AsyncToolbox`` subclass) has one
typed method per tool; each builds its arguments model (validated before anything is sent,
the failing argument named), sends the call as a step through the client (so rewards and
``done`` arrive as for any step, in ``last_step``) and reads the result: the output schema's
model from ``structured_content`` when the tool has one, else a ``ToolResult``. A failed call
is a ``ToolError``; the session goes on. ``ToolSpec`` is all the per-tool data, shared by
both flavours, so the sync and asyncio namespaces differ only in awaiting the step.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import Field

from ..core.codec import EnvModel, ModelCodec
from ..core.errors import EnvValidationError, ProtocolError, ToolError, ValidationIssue
from ..core.text import quote, truncate

if TYPE_CHECKING:
    from ..core.result import StepResult
    from .aio import AsyncEnvClient
    from .sync import EnvClient

ResT = TypeVar("ResT")

ActionMaker = Callable[[str, dict[str, Any]], Any]
"""Builds the env's step action for a call: (tool wire name, encoded arguments) -> action."""


class ToolResult(EnvModel):
    """What a tool without an output schema returned: MCP's ``CallToolResult``.

    ``content`` is MCP's content list (``{"type": "text", "text": ...}`` and other kinds),
    ``structured_content`` the JSON object a tool may add, ``meta`` MCP's ``_meta``,
    ``data`` FastMCP's decoded value.
    """

    content: list[dict[str, Any]] = Field(default_factory=list)
    structured_content: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    data: Any = None
    is_error: bool = False

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


@dataclass(frozen=True)
class ToolSpec(Generic[ResT]):
    """One tool of a generated client: its wire name, argument and result codecs.

    ``structured``: the result is the output schema's model, read from
    ``structured_content``; otherwise the whole ``CallToolResult`` as ``result`` reads it
    (``TOOL_RESULT``). ``defaults``: arguments left at these values are not sent, so the
    server applies its own default (as the generated ``reset()`` does).
    """

    name: str
    arguments: ModelCodec[Any]
    result: ModelCodec[ResT]
    structured: bool
    defaults: Mapping[str, Any] = field(default_factory=dict)

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
        observation = reply.get("observation")
        if not isinstance(observation, Mapping):
            raise ProtocolError(
                f"tool {self.name!r}: the reply holds no observation object",
                received=quote(str(reply)),
            )
        error = observation.get("error")
        if isinstance(error, Mapping):
            raise ToolError(
                self.name,
                str(error.get("message", "")),
                error_type=str(error.get("error_type") or "execution_error"),
            )
        answered = observation.get("tool_name")
        if answered is not None and answered != self.name:
            raise ProtocolError(
                f"called tool {self.name!r} but the reply is for {answered!r}",
                received=quote(str(answered)),
            )
        result = observation.get("result")
        if not isinstance(result, Mapping):
            raise ToolError(self.name, "the server sent no result", error_type="no_result")
        if result.get("is_error", result.get("isError")):
            text = TOOL_RESULT.decode(result).text
            raise ToolError(self.name, text or "the tool reported an error")
        if not self.structured:
            return self.result.decode(result, strict=strict)
        structured = result.get("structured_content", result.get("structuredContent"))
        return self.result.decode(structured, strict=strict)


class Toolbox:
    """Base of a generated blocking client's ``tools``: one typed method per tool."""

    def __init__(self, client: EnvClient[Any, Any, Any], action: ActionMaker) -> None:
        self._client = client
        self._action = action
        self.last_step: StepResult[Any] | None = None
        """The step result of the last call (reward, done, the observation as sent)."""

    def _call(self, spec: ToolSpec[ResT], arguments: Mapping[str, Any]) -> ResT:
        return self._send(spec, spec.encode(arguments))

    def _call_model(self, spec: ToolSpec[ResT], arguments: Any) -> ResT:
        return self._send(spec, spec.arguments.encode(arguments))

    def _send(self, spec: ToolSpec[ResT], payload: dict[str, Any]) -> ResT:
        step = self._client.step(self._action(spec.name, payload))
        self.last_step = step
        return spec.read(step.raw, strict=self._client.strict)


class AsyncToolbox:
    """Base of a generated asyncio client's ``tools``: the methods of ``Toolbox``, awaited."""

    def __init__(self, client: AsyncEnvClient[Any, Any, Any], action: ActionMaker) -> None:
        self._client = client
        self._action = action
        self.last_step: StepResult[Any] | None = None
        """The step result of the last call (reward, done, the observation as sent)."""

    async def _call(self, spec: ToolSpec[ResT], arguments: Mapping[str, Any]) -> ResT:
        return await self._send(spec, spec.encode(arguments))

    async def _call_model(self, spec: ToolSpec[ResT], arguments: Any) -> ResT:
        return await self._send(spec, spec.arguments.encode(arguments))

    async def _send(self, spec: ToolSpec[ResT], payload: dict[str, Any]) -> ResT:
        step = await self._client.step(self._action(spec.name, payload))
        self.last_step = step
        return spec.read(step.raw, strict=self._client.strict)
