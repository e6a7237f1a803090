"""calc_env's generated toolboxes over MCP's JSON-RPC, against real servers.

Two servers for this module, started through the runtime's LocalProcessProvider and stopped
by their handles: calc_env on openenv 0.10's own app (its ``POST /mcp`` and its ``/mcp``
WebSocket, OpenEnv's "production" mode: ``CalcTools.over_openenv_mcp``), and calc_env's
tools on a plain MCP server, the ``mcp`` SDK's FastMCP over streamable HTTP
(``tests/e2e/mcp_calc_server.py``: ``CalcTools.over_mcp``). The same generated methods run
over all three, blocking and asyncio: typed results (FastMCP's wrapped floats unwrapped), a
tool error as ``ToolError`` with the next call served, and arguments refused before
anything is sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from envgen_runtime import (
    EnvConnectionError,
    EnvModel,
    EnvValidationError,
    LocalProcessProvider,
    ModelCodec,
    ProtocolError,
    ServerError,
    ToolError,
    ToolResult,
    ToolSpec,
)

from generated.calc_env import AsyncCalcTools, CalcEnv, CalcTools, StatsCall
from generated.calc_env.models import StatsResult
from tests.helpers import REPO

pytestmark = pytest.mark.e2e
MCP_SERVER = ["{python}", "-m", "tests.e2e.mcp_calc_server", "--host", "{host}", "--port", "{port}"]


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[str, str]]:
    """``openenv``: calc_env's base URL (openenv's app); ``mcp``: the MCP server's endpoint."""
    spec = CalcEnv.SPEC
    openenv = LocalProcessProvider(
        spec.server_command,
        health_path=spec.health_path,
        startup_timeout_s=spec.startup_timeout_s,
        cwd=REPO,
        transport="websocket",  # openenv's own create_app, which serves /mcp
    )
    plain = LocalProcessProvider(MCP_SERVER, health_path="/health", cwd=REPO)
    try:
        openenv.start()
        plain.start()
        assert openenv.base_url and plain.base_url
        yield {"openenv": openenv.base_url, "mcp": plain.base_url + "/mcp"}
    finally:
        plain.stop()
        openenv.stop()


def _tools(urls: dict[str, str], kind: str, **options: Any) -> CalcTools:
    if kind == "openenv":
        return CalcTools.over_openenv_mcp(urls["openenv"], **options)
    if kind == "openenv-ws":
        return CalcTools.over_openenv_mcp(urls["openenv"], transport="websocket", **options)
    return CalcTools.over_mcp(urls["mcp"], **options)


def _async_tools(urls: dict[str, str], kind: str) -> AsyncCalcTools:
    if kind == "openenv":
        return AsyncCalcTools.over_openenv_mcp(urls["openenv"])
    if kind == "openenv-ws":
        return AsyncCalcTools.over_openenv_mcp(urls["openenv"], transport="websocket")
    return AsyncCalcTools.over_mcp(urls["mcp"])


# OpenEnv's POST /mcp, OpenEnv's /mcp WebSocket, the mcp SDK's streamable HTTP.
KINDS = ("openenv", "openenv-ws", "mcp")


class _Loose(EnvModel):
    """Arguments the generated models would refuse, to reach the server's own check."""

    a: Any = None


@pytest.mark.parametrize("kind", KINDS)
def test_typed_results(urls: dict[str, str], kind: str) -> None:
    with _tools(urls, kind, strict=True) as tools:
        added = tools.add(a=2, b=3.5)
        assert isinstance(added, float) and added == 5.5
        assert tools.add(a=4) == 4.0  # b left at its default: the server's applies
        stats = tools.stats(values=[1, 2, 6])
        assert isinstance(stats, StatsResult)
        assert (stats.count, stats.mean, stats.maximum) == (3, 3.0, 6.0)
        text = tools.format_number(value=3.14159, digits=3)  # wire name "format-number"
        assert isinstance(text, ToolResult) and text.text == "3.142" and not text.is_error
        call = tools.parse_call('{"tool_name": "stats", "arguments": {"values": [4, 8]}}')
        assert isinstance(call, StatsCall) and tools.call(call).mean == 6.0
        assert tools.last_step is None  # no step: a call over MCP has no reward or done


@pytest.mark.parametrize("kind", KINDS)
def test_a_tool_error_is_typed_and_the_next_call_works(urls: dict[str, str], kind: str) -> None:
    with _tools(urls, kind) as tools:
        with pytest.raises(ToolError) as caught:
            tools.divide(numerator=1, denominator=0)
        error = caught.value
        assert error.tool == "divide" and "division by zero" in error.tool_message
        if kind != "mcp":  # openenv's /mcp: a JSON-RPC error, category from its message
            assert (error.error_type, error.rpc_code) == ("execution_error", -32603)
        else:  # the mcp SDK's server: a result marked isError
            assert (error.error_type, error.rpc_code) == ("tool_error", None)
        assert tools.divide(numerator=1, denominator=4) == 0.25


@pytest.mark.parametrize("kind", KINDS)
def test_unknown_tools_and_refused_arguments_are_tool_errors(
    urls: dict[str, str], kind: str
) -> None:
    """A client whose schemas name a tool the server dropped, or whose argument check
    the server's disagrees with: told by the tool's name, and the connection goes on."""
    gone: ToolSpec[ToolResult] = ToolSpec(
        "sqrt", ModelCodec(_Loose, "sqrt arguments"), ModelCodec(ToolResult, "r"), False
    )
    loose: ToolSpec[ToolResult] = ToolSpec(
        "add", ModelCodec(_Loose, "add arguments"), ModelCodec(ToolResult, "r"), False
    )
    with _tools(urls, kind) as tools:
        with pytest.raises(ToolError, match="sqrt") as missing:
            tools._call(gone, {})
        with pytest.raises(ToolError, match="add") as refused:
            tools._call(loose, {"a": "two"})
        if kind != "mcp":
            assert missing.value.error_type == "tool_not_found"
            assert refused.value.error_type == "invalid_args"
        assert tools.add(a=1, b=1) == 2.0


@pytest.mark.parametrize("kind", KINDS)
def test_arguments_are_validated_before_sending(urls: dict[str, str], kind: str) -> None:
    with _tools(urls, kind) as tools:
        with pytest.raises(EnvValidationError) as caught:
            tools.stats(values=[])  # minItems 1 in stats' inputSchema
        assert [issue.loc for issue in caught.value.errors] == [("values",)]


def test_openenv_calls_share_one_session_closed_at_the_end(urls: dict[str, str]) -> None:
    base = urls["openenv"]
    with CalcTools.over_openenv_mcp(base) as tools:
        assert tools.add(a=1) == 1.0
        session = tools._caller.session_id  # type: ignore[attr-defined]
        assert isinstance(session, str) and session
        assert tools.add(a=2) == 2.0
        assert tools._caller.session_id == session  # type: ignore[attr-defined]
    closed = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/close"}
    reply = requests.post(base + "/mcp", json={**closed, "params": {"session_id": session}})
    assert "Unknown session_id" in reply.json()["error"]["message"]  # close() ended it
    with CalcTools.over_openenv_mcp(base, session=False) as fresh:  # a new env per call
        assert fresh.add(a=3) == 3.0 and fresh._caller.session_id is None  # type: ignore[attr-defined]


def test_listings_are_the_servers(urls: dict[str, str]) -> None:
    # OpenEnv issue #1212 (tools missing from /mcp in production mode) is about tools
    # registered with a mode; calc_env's are plain FastMCP tools: all listed, both ways.
    for transport in ("http", "websocket"):
        with CalcTools.over_openenv_mcp(urls["openenv"], transport=transport) as tools:  # type: ignore[arg-type]
            names = {tool["name"] for tool in tools._caller.list_tools()}  # type: ignore[attr-defined]
        assert names == {"add", "divide", "stats", "format-number"}, transport
    with CalcTools.over_mcp(urls["mcp"]) as tools:
        listed = tools._caller.list_tools()  # type: ignore[attr-defined]
    add = next(tool for tool in listed if tool["name"] == "add")
    # The SDK's wrapper of a float: no x-fastmcp-wrap-result, yet unwrapped by shape.
    assert add["outputSchema"]["title"] == "addOutput"
    assert "x-fastmcp-wrap-result" not in add["outputSchema"]


@pytest.mark.parametrize("kind", KINDS)
def test_asyncio_toolboxes(urls: dict[str, str], kind: str) -> None:
    async def calls() -> None:
        async with _async_tools(urls, kind) as tools:
            assert await tools.add(a=1, b=2) == 3.0
            stats = await tools.stats(values=[5])
            assert isinstance(stats, StatsResult) and stats.count == 1
            with pytest.raises(ToolError, match="division by zero"):
                await tools.divide(numerator=2, denominator=0)
            call = tools.parse_call(
                {"tool_name": "divide", "arguments": {"numerator": 9, "denominator": 3}}
            )
            assert await tools.call(call) == 3.0
            assert (await tools.format_number(value=1.0, digits=0)).text == "1"

    asyncio.run(calls())


def test_a_server_that_is_not_there_is_a_connection_error() -> None:
    from tests.examples.serving import free_port

    port = free_port()
    with pytest.raises(EnvConnectionError):
        CalcTools.over_openenv_mcp(f"http://127.0.0.1:{port}", timeout_s=2).add(a=1)
    with pytest.raises(EnvConnectionError):
        CalcTools.over_openenv_mcp(f"http://127.0.0.1:{port}", transport="websocket").add(a=1)
    with pytest.raises(ValueError, match="transport must be"):
        CalcTools.over_openenv_mcp("http://127.0.0.1:1", transport="ws")  # type: ignore[arg-type]
    tools = CalcTools.over_mcp(f"http://127.0.0.1:{port}/mcp", timeout_s=2)
    with pytest.raises(EnvConnectionError):
        tools.add(a=1)
    with pytest.raises(EnvConnectionError):  # tried again: no half-open session kept
        tools.add(a=1)
    tools.close()  # nothing was opened: nothing to end

    async def aio() -> None:
        async with AsyncCalcTools.over_mcp(f"http://127.0.0.1:{port}/mcp", timeout_s=2) as t:
            with pytest.raises(EnvConnectionError):
                await t.add(a=1)

    asyncio.run(aio())


def test_the_wrong_constructor_for_a_server_says_so(urls: dict[str, str]) -> None:
    """OpenEnv's /mcp is plain JSON-RPC (no ``initialize``); an MCP server's streamable HTTP
    refuses plain JSON-RPC posts and WebSockets: each mix-up is one clear error."""
    with pytest.raises(ProtocolError, match="over_openenv_mcp"):
        CalcTools.over_mcp(urls["openenv"] + "/mcp").add(a=1)
    plain_base = urls["mcp"].removesuffix("/mcp")
    with pytest.raises(ServerError, match="HTTP 406"):
        CalcTools.over_openenv_mcp(plain_base).add(a=1)
    with pytest.raises(EnvConnectionError, match="refused the WebSocket"):
        CalcTools.over_openenv_mcp(plain_base, transport="websocket").add(a=1)


def test_a_server_gone_midway_is_a_connection_error_not_a_hang() -> None:
    """The MCP server stops between calls: each later call fails at once (the session
    ended: ``SessionLostError``, or the new one cannot connect), none waits for a timeout."""
    import time

    server = LocalProcessProvider(MCP_SERVER, health_path="/health", cwd=REPO)
    server.start()
    assert server.base_url
    url = server.base_url + "/mcp"
    tools = CalcTools.over_mcp(url, timeout_s=20)

    async def aio(atools: AsyncCalcTools) -> None:
        with pytest.raises(EnvConnectionError):
            await atools.add(a=1)
        with pytest.raises(EnvConnectionError):
            await atools.add(a=1)
        await atools.close()

    try:
        atools = AsyncCalcTools.over_mcp(url, timeout_s=20)
        assert tools.add(a=1) == 1.0
        loop = asyncio.new_event_loop()
        assert loop.run_until_complete(atools.add(a=2)) == 2.0
    finally:
        server.stop()
    started = time.monotonic()
    with pytest.raises(EnvConnectionError):
        tools.add(a=1)
    with pytest.raises(EnvConnectionError):
        tools.add(a=1)
    tools.close()
    try:
        loop.run_until_complete(aio(atools))
    finally:
        loop.close()
    assert time.monotonic() - started < 10


def test_openenv_gone_midway_is_a_connection_error() -> None:
    import time

    spec = CalcEnv.SPEC
    server = LocalProcessProvider(
        spec.server_command, health_path=spec.health_path, cwd=REPO, transport="websocket"
    )
    server.start()
    assert server.base_url
    over_http = CalcTools.over_openenv_mcp(server.base_url, timeout_s=20)
    over_ws = CalcTools.over_openenv_mcp(server.base_url, transport="websocket", timeout_s=20)
    try:
        assert over_http.add(a=1) == 1.0 and over_ws.add(a=2) == 2.0
    finally:
        server.stop()
    started = time.monotonic()
    for tools in (over_http, over_ws):
        with pytest.raises(EnvConnectionError):
            tools.add(a=1)
        with pytest.raises(EnvConnectionError):  # and again: nothing kept half-open
            tools.add(a=1)
    over_http.close()  # no server, so no session left to close: no error
    over_http.close()
    over_ws.close()
    assert time.monotonic() - started < 10
