# mypy: disallow-subclassing-any=False
"""Serve calc_env: `python -m examples.calc_env.server --protocol websocket|http`.

A tool environment: its tools are plain functions, served as the committed tools
(`schemas/calc_env/tools/`, the generated `server.TOOLS`) by envgen_runtime.server's
`ToolEnvironment`, an openenv 0.10 `MCPEnvironment` over FastMCP. Each call's arguments are
validated by the generated server models before a function runs (a bad argument is a tool
error naming it, as the client's `EnvValidationError` does), each return is checked against
the tool's output schema, and `tools/list` publishes the committed files as they are.

`--protocol websocket` serves on openenv's own `create_app` (`/ws` tool calls as steps,
OpenEnv's simulation mode; `POST /step`, a fresh environment per request; `/mcp` JSON-RPC
`tools/list` and `tools/call`); `--protocol http` the same environment on envgen's stateful
HTTP app (see `envgen_runtime.server.tool_app`). `tests/examples/test_calc_env.py` holds the
published schemas and the committed ones together.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from envgen_runtime.server import ToolEnvironment, tool_app, tool_main

from generated.calc_env import CalcEnv
from generated.calc_env.server import TOOLS, StatsResult

NAME = "calc_env"
DESCRIPTION = "A calculator tool environment: add, divide, stats and format-number."
VERSION = CalcEnv.SPEC.version  # env.toml's, through `envgen generate`
MAX_CONCURRENT_ENVS = 8


def finite(value: float) -> float:
    """`value`, or a tool error when it overflowed to infinity: JSON has no infinity, so the
    reply would carry null where the output schema says number (`envgen verify` found it)."""
    if not math.isfinite(value):
        raise ValueError("the result is too large for a float")
    return value


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return finite(a + b)


def divide(numerator: float, denominator: float) -> float:
    """Divide one number by another; dividing by zero is a tool error."""
    if denominator == 0:
        raise ValueError("division by zero")
    return finite(numerator / denominator)


def stats(values: list[float]) -> StatsResult:
    """Count, mean and maximum of a non-empty list of numbers (minItems 1: checked before)."""
    mean = finite(sum(values) / len(values))
    return StatsResult(count=len(values), mean=mean, maximum=max(values))


def format_number(value: float, digits: int) -> str:
    """Format a number with a fixed count of decimal digits (0 to 10: checked before)."""
    return f"{value:.{digits}f}"


class CalcEnvironment(ToolEnvironment):
    """calc_env's four tools; tool calls are its steps, counted in its state."""

    TOOLS = TOOLS
    NAME = NAME
    DESCRIPTION = DESCRIPTION
    VERSION = VERSION

    def tool_functions(self) -> Sequence[Any]:
        return [add, divide, stats, format_number]


def build_app(protocol: str = "websocket") -> Any:
    """calc_env's app: `websocket` openenv's own, `http` envgen's stateful HTTP app (an HTTP
    episode needs one environment kept across requests)."""
    return tool_app(CalcEnvironment, protocol, max_concurrent_envs=MAX_CONCURRENT_ENVS)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line env.toml's `[server] command` fills in, and serve."""
    tool_main(CalcEnvironment, argv, max_concurrent_envs=MAX_CONCURRENT_ENVS)


if __name__ == "__main__":
    main()
