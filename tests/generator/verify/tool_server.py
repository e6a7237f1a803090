# mypy: disallow-subclassing-any=False
"""A tool env server for `envgen verify`'s tests, with one fault planted per app.

    python -m tests.generator.verify.tool_server --port P

Serves every fault in one process, each at ``/<fault>`` (its base URL
``http://127.0.0.1:P/<fault>``), with ``/health`` for the process. Built as
examples/calc_env is: an openenv ``MCPEnvironment`` over a FastMCP server, served by
openenv's own ``create_app``. The committed schemas (tests/generator/verify/tool_env/) are
what the ``none`` app publishes (pulled with ``envgen pull``).

Tools: ``measure(text)`` (at most 8 characters) -> ``{length, kind}`` with ``kind`` "short"
or "long"; ``scale(value, factor=1)`` (``factor`` 0 to 10; 0 is a tool error, always);
``echo(message)`` (no output schema). Faults (each breaks the committed tools one way only):

- ``none``: conforms (``scale`` with factor 0 is a tool error: a note, not a violation).
- ``bad-output``: ``measure("")`` answers kind "empty", which the committed output schema
  does not allow; the server declares ``kind`` a plain string, so FastMCP lets it through.
- ``self-check``: the same result, but the server declares the committed output schema, so
  FastMCP's own check refuses it and the call fails with that message.
- ``rejects-valid``: the server takes ``factor`` up to 5 only: 10, which the committed
  input schema allows, is refused as invalid arguments.
- ``missing-tool``: the server has no ``echo``.
"""

from __future__ import annotations

import argparse
from typing import Any, Literal

FAULTS = ("none", "bad-output", "self-check", "rejects-valid", "missing-tool")
NAME = "tool_env"
VERSION = "0.1.0"


def build_tools(fault: str) -> Any:
    from fastmcp import FastMCP
    from pydantic import BaseModel, Field

    class Measure(BaseModel):
        length: int
        kind: Literal["short", "long"]

    class LooseMeasure(BaseModel):
        length: int
        kind: str

    mcp: FastMCP = FastMCP(NAME)
    shape = LooseMeasure if fault == "bad-output" else Measure

    @mcp.tool(output_schema=shape.model_json_schema())
    def measure(text: str = Field(max_length=8)) -> dict[str, Any]:
        """Length of a short text, and whether it is short (4 or fewer characters) or long."""
        kind = "short" if len(text) <= 4 else "long"
        if fault in ("bad-output", "self-check") and not text:
            kind = "empty"  # the planted fault
        return {"length": len(text), "kind": kind}

    top = 5 if fault == "rejects-valid" else 10

    @mcp.tool
    def scale(value: float, factor: int = Field(default=1, ge=0, le=top)) -> float:
        """Multiply a value by a factor from 0 to 10; a factor of 0 is refused (a tool error)."""
        if factor == 0:
            raise ValueError("a factor of 0 is refused")
        if abs(value * factor) > 1e300:
            raise ValueError("the result is too large")
        return value * factor

    if fault != "missing-tool":

        @mcp.tool(output_schema=None)
        def echo(message: str) -> str:
            """Say the message back."""
            return message

    return mcp


def build_app(fault: str) -> Any:
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.mcp_environment import MCPEnvironment
    from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation
    from openenv.core.env_server.types import EnvironmentMetadata, Observation, State

    class ToolEnvironment(MCPEnvironment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__(build_tools(fault))
            self._state = State(episode_id=None, step_count=0)

        def reset(self, seed: Any = None, episode_id: Any = None, **kwargs: Any) -> Any:
            self._state = State(episode_id=episode_id, step_count=0)
            return Observation(done=False, reward=0.0)

        def step(self, action: Any, timeout_s: Any = None, **kwargs: Any) -> Any:
            self._state.step_count += 1
            return super().step(action, timeout_s=timeout_s, **kwargs)

        async def step_async(self, action: Any, timeout_s: Any = None, **kwargs: Any) -> Any:
            self._state.step_count += 1
            return await super().step_async(action, timeout_s=timeout_s, **kwargs)

        def _step_impl(self, action: Any, timeout_s: Any = None, **kwargs: Any) -> Any:
            return Observation(done=False, reward=0.0, metadata={"error": "tool calls only"})

        @property
        def state(self) -> Any:
            return self._state

        def get_metadata(self) -> Any:
            return EnvironmentMetadata(name=NAME, description="", version=VERSION)

    return create_app(
        ToolEnvironment,
        CallToolAction,
        CallToolObservation,
        env_name=NAME,
        max_concurrent_envs=4,
    )


def build_all() -> Any:
    """Every fault's app under its own prefix, and a health check for the process."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Mount, Route

    async def health(request: Any) -> Any:
        return JSONResponse({"status": "healthy"})

    routes: list[Any] = [Route("/health", health)]
    routes += [Mount(f"/{fault}", app=build_app(fault)) for fault in FAULTS]
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.generator.verify.tool_server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    import uvicorn

    uvicorn.run(build_all(), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
