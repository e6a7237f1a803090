"""Tool calls over OpenEnv's MCP WebSocket (``/mcp``): JSON-RPC 2.0, one text frame each way.

openenv 0.10's app gives every ``/mcp`` WebSocket connection a session of its own (an
environment built when it opens, destroyed when it closes) and answers each JSON-RPC request
with one reply, in order, as its ``POST /mcp`` does (``client.jsonrpc`` reads them). The
connection is opened on the first call and closed by ``close()``; the ``websockets``
library (a base dependency) carries it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..core.errors import EnvConnectionError, EnvgenRuntimeError
from ..core.text import redact_url
from ..transport.errormap import map_exception
from .jsonrpc import call_result, rpc_request, rpc_result, tools_of

_SCHEMES = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}


def mcp_websocket_url(base_url: str) -> str:
    """The ``/mcp`` WebSocket of an OpenEnv server's base URL (http -> ws, https -> wss)."""
    parts = urlsplit(base_url)
    scheme = _SCHEMES.get(parts.scheme)
    if scheme is None:
        raise ValueError(
            f"an MCP WebSocket needs an http(s):// base URL, got {redact_url(base_url)}"
        )
    path = parts.path.rstrip("/")
    path = path if path.endswith("/mcp") else path + "/mcp"
    return urlunsplit((scheme, parts.netloc, path, parts.query, ""))


def _failure(exc: BaseException, op: str, url: str, timeout_s: float) -> EnvgenRuntimeError:
    """The runtime's error for what ``websockets`` raised."""
    from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

    where = redact_url(url)
    connect = op == "connect"
    if isinstance(exc, ConnectionClosed):
        return EnvConnectionError(
            f"{op} failed: {where} closed the MCP WebSocket ({exc}); its session is gone",
            op=op,
            url=where,
        )
    if isinstance(exc, InvalidHandshake | InvalidURI):
        return EnvConnectionError(
            f"{op} failed: {where} refused the WebSocket ({exc}); does it serve MCP at /mcp?",
            op=op,
            url=where,
            during_connect=True,
        )
    mapped = map_exception(exc, op=op, url=url, timeout_s=timeout_s, connect=connect)
    if mapped is not None:
        return mapped
    return EnvConnectionError(f"{op} failed: {where}: {exc!r}", op=op, url=where)


class McpWebSocketCaller:
    """A blocking ``ToolCaller`` over ``{base_url}/mcp`` as a WebSocket: one session for the
    connection's life. Calls from several threads are serialised."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 15.0,
        headers: Mapping[str, str] | None = None,
        strict: bool = False,
    ) -> None:
        self.url = mcp_websocket_url(base_url)
        self._timeout_s = timeout_s
        self._headers = dict(headers or {})
        self._strict = strict
        self._ids = itertools.count(1)
        self._conn: Any = None
        self._stack: contextlib.ExitStack | None = None
        self._lock = threading.Lock()

    @property
    def strict(self) -> bool:
        return self._strict

    def _rpc(self, method: str, params: dict[str, Any], tool: str | None = None) -> Any:
        with self._lock:
            if self._conn is None:
                from websockets.sync.client import connect

                stack = contextlib.ExitStack()  # websockets 17 wants connect() as a context
                try:
                    self._conn = stack.enter_context(
                        connect(
                            self.url,
                            open_timeout=self._timeout_s,
                            additional_headers=self._headers or None,
                            max_size=None,
                        )
                    )
                except Exception as exc:
                    raise _failure(exc, "connect", self.url, self._timeout_s) from exc
                self._stack = stack
            request_id = next(self._ids)
            try:
                self._conn.send(json.dumps(rpc_request(request_id, method, params)))
                text = self._conn.recv(timeout=self._timeout_s)
            except Exception as exc:
                self._drop()  # a reply may still come: this connection is out of step
                raise _failure(exc, method, self.url, self._timeout_s) from exc
        try:
            reply = json.loads(text)
        except ValueError as exc:
            raise _failure(exc, method, self.url, self._timeout_s) from exc
        return rpc_result(reply, request_id, method=method, tool=tool)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        params = {"name": name, "arguments": arguments}
        return call_result(self._rpc("tools/call", params, name), tool=name)

    def list_tools(self) -> list[dict[str, Any]]:
        """The server's ``tools/list``: MCP's ``Tool`` entries as sent."""
        return tools_of(self._rpc("tools/list", {}))

    def _drop(self) -> None:
        stack, self._stack, self._conn = self._stack, None, None
        if stack is not None:
            stack.close()

    def close(self) -> None:
        """Close the connection (the server ends its session); idempotent."""
        with self._lock:
            self._drop()


class AsyncMcpWebSocketCaller:
    """``McpWebSocketCaller`` for asyncio, from one event loop."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 15.0,
        headers: Mapping[str, str] | None = None,
        strict: bool = False,
    ) -> None:
        import asyncio

        self.url = mcp_websocket_url(base_url)
        self._timeout_s = timeout_s
        self._headers = dict(headers or {})
        self._strict = strict
        self._ids = itertools.count(1)
        self._conn: Any = None
        self._lock = asyncio.Lock()

    @property
    def strict(self) -> bool:
        return self._strict

    async def _rpc(self, method: str, params: dict[str, Any], tool: str | None = None) -> Any:
        import asyncio

        async with self._lock:
            if self._conn is None:
                from websockets.asyncio.client import connect

                try:
                    self._conn = await connect(
                        self.url,
                        open_timeout=self._timeout_s,
                        additional_headers=self._headers or None,
                        max_size=None,
                    )
                except Exception as exc:
                    raise _failure(exc, "connect", self.url, self._timeout_s) from exc
            request_id = next(self._ids)
            try:
                await self._conn.send(json.dumps(rpc_request(request_id, method, params)))
                async with asyncio.timeout(self._timeout_s):
                    text = await self._conn.recv()
            except Exception as exc:
                await self._drop()
                raise _failure(exc, method, self.url, self._timeout_s) from exc
        try:
            reply = json.loads(text)
        except ValueError as exc:
            raise _failure(exc, method, self.url, self._timeout_s) from exc
        return rpc_result(reply, request_id, method=method, tool=tool)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        params = {"name": name, "arguments": arguments}
        return call_result(await self._rpc("tools/call", params, name), tool=name)

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's ``tools/list``: MCP's ``Tool`` entries as sent."""
        return tools_of(await self._rpc("tools/list", {}))

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def close(self) -> None:
        """Close the connection (the server ends its session); idempotent."""
        async with self._lock:
            await self._drop()
