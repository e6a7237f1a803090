# mypy: disallow-subclassing-any=False
"""Serve calc_env: `python -m examples.calc_env.server --protocol websocket|http`.

A tool environment as OpenEnv builds and serves one: an `MCPEnvironment` (openenv 0.10's MCP
environment base) over a FastMCP server whose tools are plain functions, served by openenv's
own `create_app` with its `CallToolAction` and `CallToolObservation`. That app answers on
`/ws` (tool calls as steps, OpenEnv's simulation mode), `POST /step` (a fresh environment per
request) and `/mcp` (JSON-RPC `tools/list` and `tools/call`). `--protocol http` serves the
same environment and models on envgen's stateful HTTP app instead (see `build_app`).

The committed tool schemas (`schemas/calc_env/tools/`) are what this server's `tools/list`
publishes; `tests/examples/test_calc_env.py` holds the two together.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any

from fastmcp import FastMCP
from openenv.core.env_server.mcp_environment import MCPEnvironment
from openenv.core.env_server.types import EnvironmentMetadata, Observation, State
from pydantic import BaseModel, Field

from generated.calc_env import CalcEnv

NAME = "calc_env"
DESCRIPTION = "A calculator tool environment: add, divide, stats and format-number."
VERSION = CalcEnv.SPEC.version  # env.toml's, through `envgen generate`
MAX_CONCURRENT_ENVS = 8


class Stats(BaseModel):
    """Summary statistics of a list of numbers."""

    count: int = Field(description="How many values there were.")
    mean: float = Field(description="Their arithmetic mean.")
    maximum: float = Field(description="The largest value.")


def finite(value: float) -> float:
    """`value`, or a tool error when it overflowed to infinity: JSON has no infinity, so the
    reply would carry null where the output schema says number (`envgen verify` found it)."""
    if not math.isfinite(value):
        raise ValueError("the result is too large for a float")
    return value


def build_tools() -> FastMCP:
    """The FastMCP server holding calc_env's tools."""
    mcp: FastMCP = FastMCP(NAME)

    @mcp.tool
    def add(a: float, b: float = 0.0) -> float:
        """Add two numbers."""
        return finite(a + b)

    @mcp.tool
    def divide(numerator: float, denominator: float) -> float:
        """Divide one number by another; dividing by zero is a tool error."""
        if denominator == 0:
            raise ValueError("division by zero")
        return finite(numerator / denominator)

    @mcp.tool
    def stats(values: list[float] = Field(min_length=1)) -> Stats:  # noqa: B008
        """Count, mean and maximum of a non-empty list of numbers."""
        mean = finite(sum(values) / len(values))
        return Stats(count=len(values), mean=mean, maximum=max(values))

    @mcp.tool(name="format-number", output_schema=None)
    def format_number(value: float, digits: int = Field(default=2, ge=0, le=10)) -> str:
        """Format a number with a fixed count of decimal digits, as text."""
        return f"{value:.{digits}f}"

    return mcp


class CalcEnvironment(MCPEnvironment):
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
        return Observation(done=False, reward=0.0, metadata={"error": "calc_env takes tool calls"})

    @property
    def state(self) -> State:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name=NAME, description=DESCRIPTION, version=VERSION)


def build_app(protocol: str = "websocket") -> Any:
    """calc_env's app. `websocket`: openenv's own (`/ws`, a fresh environment per `POST
    /step`, `/mcp`); `http`: envgen_runtime.server's stateful HTTP app (one environment kept
    across `/reset` and `/step`, openenv's request and reply shapes), which an HTTP episode
    needs (envgen's HTTP transport refuses a server that forgets its environment)."""
    from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation

    if protocol == "http":
        from envgen_runtime.server import http_app

        return http_app(
            CalcEnvironment,
            CallToolAction,
            CallToolObservation,
            State,
            name=NAME,
            description=DESCRIPTION,
            version=VERSION,
        )
    from openenv.core.env_server.http_server import create_app

    return create_app(
        CalcEnvironment,
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
