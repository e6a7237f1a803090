"""calc_env's four tools on a plain MCP server: the ``mcp`` SDK's FastMCP over streamable HTTP.

No OpenEnv here: ``python -m tests.e2e.mcp_calc_server --port N`` serves ``/mcp`` (MCP's
streamable HTTP, sessions and ``initialize`` as the SDK does them) and ``GET /health`` for
the test's launcher. The tools are calc_env's, with the same names, arguments and
behaviour, so the generated ``CalcTools`` can call them (``CalcTools.over_mcp``). The SDK
writes its own output schemas: ``add`` and ``divide`` wrap their float as ``{"result": x}``
without FastMCP 3's ``x-fastmcp-wrap-result`` marker, and a tool that raises, an unknown
tool or refused arguments come back as ``isError`` results, not JSON-RPC errors.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

from mcp.server.fastmcp import FastMCP
from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response


class Stats(BaseModel):
    """Summary statistics of a list of numbers."""

    count: int = Field(description="How many values there were.")
    mean: float = Field(description="Their arithmetic mean.")
    maximum: float = Field(description="The largest value.")


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("the result is too large for a float")
    return value


def build(host: str, port: int) -> FastMCP:
    """The server, its tools registered."""
    mcp = FastMCP("calc_env", host=host, port=port, log_level="WARNING")

    @mcp.tool()
    def add(a: float, b: float = 0.0) -> float:
        """Add two numbers."""
        return _finite(a + b)

    @mcp.tool()
    def divide(numerator: float, denominator: float) -> float:
        """Divide one number by another; dividing by zero is a tool error."""
        if denominator == 0:
            raise ValueError("division by zero")
        return _finite(numerator / denominator)

    @mcp.tool()
    def stats(values: list[float] = Field(min_length=1)) -> Stats:  # noqa: B008
        """Count, mean and maximum of a non-empty list of numbers."""
        return Stats(count=len(values), mean=sum(values) / len(values), maximum=max(values))

    @mcp.tool(name="format-number", structured_output=False)
    def format_number(value: float, digits: int = Field(default=2, ge=0, le=10)) -> str:
        """Format a number with a fixed count of decimal digits, as text."""
        return f"{value:.{digits}f}"

    @mcp.custom_route("/health", methods=["GET"])
    async def health(request: Request) -> Response:
        return JSONResponse({"status": "healthy"})

    return mcp


def main(argv: Sequence[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(prog="mcp_calc_server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    app = build(args.host, args.port).streamable_http_app()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
