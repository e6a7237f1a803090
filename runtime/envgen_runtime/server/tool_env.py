# mypy: disallow-subclassing-any=False
"""Serving a tool environment on its committed tools: FastMCP and openenv's MCPEnvironment.

``tool_server`` puts an author's plain functions on a FastMCP server as the env's committed
tools (the generated ``server.py``'s ``TOOLS``): each tool publishes the tool file's own
description and schemas (so ``tools/list`` is the committed files, byte for byte as ``envgen
pull`` writes them), validates a call's arguments with the generated arguments model before
its function runs (a refusal is a tool error naming each argument, in the client's words),
and checks the function's return against the output schema's model. The functions are
matched to the tools at start-up (``tools.resolve_functions``).

``ToolEnvironment`` is openenv 0.10's ``MCPEnvironment`` over that server, with what every
tool env here needs: tool calls counted as steps in its state, reset starting a fresh count,
any other action refused. ``tool_app`` and ``tool_main`` serve it: ``websocket`` on
openenv's own ``create_app`` (``/ws``, ``POST /step``, ``/mcp``), ``http`` on envgen's
stateful HTTP app, both with openenv's ``CallToolAction`` and ``CallToolObservation``, which
``MCPEnvironment`` routes by. Needs the ``openenv`` extra (openenv brings fastmcp).
"""

from __future__ import annotations

import argparse
import functools
import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import anyio.to_thread
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError, ValidationError
from fastmcp.tools import Tool, ToolResult
from mcp.types import Tool as MCPTool
from mcp.types import ToolAnnotations
from openenv.core.env_server.mcp_environment import MCPEnvironment
from openenv.core.env_server.types import EnvironmentMetadata, Observation, State
from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from ..core.errors import EnvValidationError
from .serving import DEFAULT_MAX_CONCURRENT_ENVS
from .tools import (
    ServerTool,
    ToolFunctions,
    call_arguments,
    checked_result,
    resolve_functions,
    takes_extras,
)

OUTPUT_REFUSED = "Output validation error: "
"""How a refused return begins: FastMCP's own words for it, which `envgen verify` reads."""


class CommittedTool(Tool):
    """One committed tool on FastMCP: its file's schemas, its function, the generated models."""

    fn: SkipJsonSchema[Callable[..., Any]]
    """The author's function (openenv's code mode calls it directly, as FastMCP's own)."""
    committed: SkipJsonSchema[Any] = Field(exclude=True)
    """The ``ServerTool``."""

    @classmethod
    def of(cls, tool: ServerTool, fn: Callable[..., Any]) -> CommittedTool:
        annotations = tool.annotations_document()
        return cls(
            name=tool.name,
            title=tool.title,
            description=tool.description,
            parameters=tool.input_document(),
            output_schema=tool.output_document(),
            annotations=ToolAnnotations(**annotations) if annotations is not None else None,
            fn=fn,
            committed=tool,
        )

    def to_mcp_tool(self, **overrides: Any) -> MCPTool:
        """MCP's `Tool` as listed: the file's own `title`, even when absent (FastMCP would
        copy `annotations.title` up, a key the file lacks)."""
        tool: ServerTool = self.committed
        return super().to_mcp_tool(**{"title": tool.title, **overrides})

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        tool: ServerTool = self.committed
        try:
            kwargs = call_arguments(tool, arguments, extras=takes_extras(self.fn))
        except EnvValidationError as exc:  # a bad call, logged as FastMCP logs its own
            raise ValidationError(str(exc), log_level=logging.WARNING) from None
        if inspect.iscoroutinefunction(self.fn):
            value = await self.fn(**kwargs)
        else:
            value = await anyio.to_thread.run_sync(functools.partial(self.fn, **kwargs))
            if inspect.isawaitable(value):  # a partial or callable object over a coroutine
                value = await value
        try:
            data = checked_result(tool, value)
        except EnvValidationError as exc:
            raise ToolError(f"{OUTPUT_REFUSED}the function of tool {tool.name!r}: {exc}") from None
        return self.convert_result(data)


def add_tools(
    mcp: FastMCP, tools: Sequence[ServerTool], functions: ToolFunctions, *, env: str = ""
) -> None:
    """Register ``functions`` on ``mcp`` as the committed ``tools`` (checked first: a
    ``tools.ToolMismatchError`` names a tool missing, extra or with other parameters)."""
    resolved = resolve_functions(tools, functions, env=env)
    for tool in tools:
        mcp.add_tool(CommittedTool.of(tool, resolved[tool.name]))


def tool_server(name: str, tools: Sequence[ServerTool], functions: ToolFunctions) -> FastMCP:
    """A FastMCP server named ``name`` holding ``functions`` as the committed ``tools``."""
    mcp: FastMCP = FastMCP(name)
    add_tools(mcp, tools, functions, env=name)
    return mcp


class ToolEnvironment(MCPEnvironment):
    """An ``MCPEnvironment`` over the committed tools. A subclass sets ``TOOLS`` (the
    generated ``server.py``'s), ``NAME``, ``DESCRIPTION`` and ``VERSION``, and returns its
    functions from ``tool_functions`` (called once per environment: methods and closures
    may keep per-session state). Tool calls are its steps, counted in ``state``; ``reset``
    starts a fresh count (an override calls it); any other action is refused."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    TOOLS: ClassVar[Sequence[ServerTool]]
    NAME: ClassVar[str]
    DESCRIPTION: ClassVar[str] = ""
    VERSION: ClassVar[str] = "0.1.0"

    def __init__(self) -> None:
        super().__init__(tool_server(self.NAME, self.TOOLS, self.tool_functions()))
        self._state = State(episode_id=None, step_count=0)

    def tool_functions(self) -> ToolFunctions:
        """The tools' functions: by wire name, or named as the tools' Python names."""
        raise NotImplementedError(f"{type(self).__name__} must define tool_functions")

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> Any:
        self._state = State(episode_id=episode_id, step_count=0)
        return Observation(done=False, reward=0.0)

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
        self._state.step_count += 1  # the base class routes tool calls but counts nothing
        return super().step(action, timeout_s=timeout_s, **kwargs)

    async def step_async(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
        self._state.step_count += 1
        return await super().step_async(action, timeout_s=timeout_s, **kwargs)

    def _step_impl(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
        error = f"{self.NAME} takes tool calls"  # a step that is not a tool call
        return Observation(done=False, reward=0.0, metadata={"error": error})

    @property
    def state(self) -> State:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=self.NAME, description=self.DESCRIPTION, version=self.VERSION
        )


def tool_app(
    environment_cls: type[ToolEnvironment],
    protocol: str = "websocket",
    *,
    max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT_ENVS,
) -> Any:
    """The ASGI app: ``websocket`` openenv's own (``/ws``, a fresh environment per ``POST
    /step``, ``/mcp``); ``http`` envgen's stateful HTTP app (one environment kept across
    ``/reset`` and ``/step``), which an HTTP episode needs.

    One environment is made and closed first, so functions that do not match the committed
    tools stop the server before it listens (both apps make environments only per session).
    """
    from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation

    environment_cls().close()

    if protocol == "http":
        from .apps import http_app

        return http_app(
            environment_cls,
            CallToolAction,
            CallToolObservation,
            State,
            name=environment_cls.NAME,
            description=environment_cls.DESCRIPTION,
            version=environment_cls.VERSION,
        )
    if protocol != "websocket":
        raise ValueError(f"protocol must be websocket or http, not {protocol!r}")
    from openenv.core.env_server.http_server import create_app

    return create_app(
        environment_cls,
        CallToolAction,
        CallToolObservation,
        env_name=environment_cls.NAME,
        max_concurrent_envs=max_concurrent_envs,
    )


def tool_main(
    environment_cls: type[ToolEnvironment],
    argv: Sequence[str] | None = None,
    *,
    max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT_ENVS,
) -> None:
    """Serve ``environment_cls`` as env.toml's ``[server] command`` runs it (``--host``,
    ``--port``, ``--protocol websocket|http``) until the process is stopped."""
    import uvicorn

    parser = argparse.ArgumentParser(
        prog=environment_cls.NAME, description=environment_cls.DESCRIPTION
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--protocol", choices=("websocket", "http"), default="websocket")
    args = parser.parse_args(argv)
    app = tool_app(environment_cls, args.protocol, max_concurrent_envs=max_concurrent_envs)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
