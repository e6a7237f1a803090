"""The server module `envgen new --tools` writes: an openenv `MCPEnvironment` over FastMCP.

Built like examples/calc_env/server.py. Its tools' signatures and docstrings are what
FastMCP's `tools/list` turns into the scaffolded `tools/echo.json` and `tools/add.json`
(`tool_env.TOOLS`), so `envgen verify` and a later `envgen pull` agree with the committed
files; tests/generator/scaffold holds the two together. Only the env name and the class
prefix (checked identifiers) reach the text.

It serves on openenv's app (`backend = "openenv"`): envgen's lean app does not serve MCP
environments yet.
"""

from __future__ import annotations

import string

_SERVER = string.Template(
    '''# mypy: disallow-subclassing-any=False
"""The $name server: a tool environment, its tools plain functions on a FastMCP server.

Each tool here must match its schemas/$name/tools/<tool>.json (the name, the docstring as
the description, the parameters as inputSchema, the return type as outputSchema): edit both
together, or edit the tools here, serve, and run `envgen pull` to rewrite the files; then
`envgen generate $name` and `envgen verify $name`. env.toml's [server] command runs this
module (`python -m $module --port 8000 --protocol websocket|http`), which is what
`${prefix}Env.from_local_process()` starts.

It serves on openenv 0.10's app (`pip install 'envgen-runtime[openenv]'`, which brings
fastmcp): `websocket` is openenv's own `create_app` (`/ws`, `POST /step`, `/mcp`), `http` the
same environment on envgen's stateful HTTP app. envgen's lean backend does not serve MCP
environments yet, so env.toml says `backend = "openenv"`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from fastmcp import FastMCP
from openenv.core.env_server.mcp_environment import MCPEnvironment
from openenv.core.env_server.types import EnvironmentMetadata, Observation, State

from generated.$name import ${prefix}Env

NAME = "$name"
DESCRIPTION = "A tool environment: echo and add."
VERSION = ${prefix}Env.SPEC.version  # env.toml's, through `envgen generate`
MAX_CONCURRENT_ENVS = 8


def build_tools() -> FastMCP:
    """The FastMCP server holding $name's tools."""
    mcp: FastMCP = FastMCP(NAME)

    @mcp.tool
    def echo(text: str) -> str:
        """Return the text it is given."""
        return text

    @mcp.tool
    def add(a: float, b: float = 0.0) -> float:
        """Add two numbers."""
        return a + b

    return mcp


class ${prefix}Environment(MCPEnvironment):
    """Tool calls are its steps, counted in its state; reset starts a fresh count; any other
    action is refused."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__(build_tools())
        self._state = State(episode_id=None, step_count=0)

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
        error = "$name takes tool calls"  # a step that is not a tool call
        return Observation(done=False, reward=0.0, metadata={"error": error})

    @property
    def state(self) -> State:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name=NAME, description=DESCRIPTION, version=VERSION)


def build_app(protocol: str = "websocket") -> Any:
    """`websocket`: openenv's own app; `http`: envgen_runtime.server's stateful HTTP app (one
    environment kept across `/reset` and `/step`), which an HTTP episode needs."""
    from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation

    if protocol == "http":
        from envgen_runtime.server import http_app

        return http_app(
            ${prefix}Environment,
            CallToolAction,
            CallToolObservation,
            State,
            name=NAME,
            description=DESCRIPTION,
            version=VERSION,
        )
    from openenv.core.env_server.http_server import create_app

    return create_app(
        ${prefix}Environment,
        CallToolAction,
        CallToolObservation,
        env_name=NAME,
        max_concurrent_envs=MAX_CONCURRENT_ENVS,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line env.toml's `[server] command` fills in, and serve."""
    import uvicorn

    parser = argparse.ArgumentParser(prog=NAME, description=DESCRIPTION)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--protocol", choices=("websocket", "http"), default="websocket")
    args = parser.parse_args(argv)
    uvicorn.run(build_app(args.protocol), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
'''
)


def tool_server_module(name: str, prefix: str, module: str) -> str:
    """The text of the scaffolded tool server module for env `name`."""
    return _SERVER.substitute(name=name, prefix=prefix, module=module)
