"""Tool calls over OpenEnv's JSON-RPC ``POST /mcp`` (OpenEnv's "production" mode).

OpenEnv 0.10's app serves MCP's ``tools/list`` and ``tools/call`` as plain JSON-RPC 2.0 over
``POST /mcp`` (no MCP ``initialize``), plus ``openenv/session/create`` and ``.../close``: a
call that names a ``session_id`` runs on that session's environment, one that names none on
a fresh environment built (and closed) for it. A result is FastMCP's ``CallToolResult`` in
snake_case (``structured_content``, ``is_error``); a failed call is a JSON-RPC error
(``client.jsonrpc`` maps it). The requests go through the runtime's own HTTP transports (one
keep-alive connection, the same deadlines, proxies and error mapping as ``POST /step``).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Mapping
from typing import Any, cast

from ..core.errors import EnvConnectionError, ProtocolError
from ..core.jsonbody import dumps_body
from ..core.text import quote
from ..transport.base import Op
from ..transport.http.aio import AsyncHttpTransport
from ..transport.http.sync import HttpTransport
from .jsonrpc import call_result, rpc_request, rpc_result, tools_of

SESSION_CREATE = "openenv/session/create"
SESSION_CLOSE = "openenv/session/close"


class _PostMcp:
    """Routes every request of an HTTP transport to ``POST {base_url}/mcp``."""

    _base_url: str

    def _route(self, op: Op, body: Mapping[str, Any] | str) -> tuple[str, str, bytes | None]:
        data = body if isinstance(body, str) else dumps_body(body, op=op)
        return "POST", self._base_url + "/mcp", data.encode("utf-8")


class _McpTransport(_PostMcp, HttpTransport):
    def rpc(self, method: str, body: Mapping[str, Any]) -> dict[str, Any]:
        op = cast("Op", method)  # only named in messages: the route is always POST /mcp
        with self._lock:
            self._check_open(op)
            reply: dict[str, Any] = self._run(self._exchange(op, body, None))[0]
            return reply


class _AsyncMcpTransport(_PostMcp, AsyncHttpTransport):
    async def rpc(self, method: str, body: Mapping[str, Any]) -> dict[str, Any]:
        op = cast("Op", method)
        async with self._lock:
            self._check_open(op)
            reply: dict[str, Any] = (await self._run(self._exchange(op, body, None)))[0]
            return reply


def _session_id(result: Any) -> str:
    session = result.get("session_id") if isinstance(result, Mapping) else None
    if not isinstance(session, str) or not session:
        raise ProtocolError(
            f"{SESSION_CREATE}: the result names no session_id", received=quote(result)
        )
    return session


class _Calls:
    """What both callers share: request ids, the session, and the request each method sends."""

    def __init__(self, session: bool, strict: bool) -> None:
        self._ids = itertools.count(1)
        self._want_session = session
        self._session: str | None = None
        self._strict = strict

    @property
    def strict(self) -> bool:
        return self._strict

    @property
    def session_id(self) -> str | None:
        """The OpenEnv session the calls run on (None before the first, or without one)."""
        return self._session

    def _params(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "session_id": self._session} if self._session else params


class McpHttpCaller(_Calls):
    """A blocking ``ToolCaller`` over ``POST {base_url}/mcp``; not for several threads at once."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 15.0,
        headers: Mapping[str, str] | None = None,
        session: bool = True,
        strict: bool = False,
    ) -> None:
        super().__init__(session, strict)
        self._http = _McpTransport(base_url, timeout_s=timeout_s, headers=headers)

    def _rpc(self, method: str, params: dict[str, Any], tool: str | None = None) -> Any:
        request_id = next(self._ids)
        reply = self._http.rpc(method, rpc_request(request_id, method, params))
        return rpc_result(reply, request_id, method=method, tool=tool)

    def _ensure_session(self) -> None:
        if self._want_session and self._session is None:
            self._session = _session_id(self._rpc(SESSION_CREATE, {}))

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        self._ensure_session()
        params = self._params({"name": name, "arguments": arguments})
        return call_result(self._rpc("tools/call", params, name), tool=name)

    def list_tools(self) -> list[dict[str, Any]]:
        """The server's ``tools/list``: MCP's ``Tool`` entries as sent."""
        self._ensure_session()
        return tools_of(self._rpc("tools/list", self._params({})))

    def close(self) -> None:
        """Close the session (if one was opened) and the connection; idempotent. A server
        that cannot be reached any more has no session to close: that is no error."""
        session, self._session = self._session, None
        try:
            if session is not None:
                with contextlib.suppress(EnvConnectionError):
                    self._rpc(SESSION_CLOSE, {"session_id": session})
        finally:
            self._http.close()


class AsyncMcpHttpCaller(_Calls):
    """``McpHttpCaller`` for asyncio: the same requests, awaited, from one event loop."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 15.0,
        headers: Mapping[str, str] | None = None,
        session: bool = True,
        strict: bool = False,
    ) -> None:
        super().__init__(session, strict)
        self._http = _AsyncMcpTransport(base_url, timeout_s=timeout_s, headers=headers)

    async def _rpc(self, method: str, params: dict[str, Any], tool: str | None = None) -> Any:
        request_id = next(self._ids)
        reply = await self._http.rpc(method, rpc_request(request_id, method, params))
        return rpc_result(reply, request_id, method=method, tool=tool)

    async def _ensure_session(self) -> None:
        if self._want_session and self._session is None:
            self._session = _session_id(await self._rpc(SESSION_CREATE, {}))

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        await self._ensure_session()
        params = self._params({"name": name, "arguments": arguments})
        return call_result(await self._rpc("tools/call", params, name), tool=name)

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's ``tools/list``: MCP's ``Tool`` entries as sent."""
        await self._ensure_session()
        return tools_of(await self._rpc("tools/list", self._params({})))

    async def close(self) -> None:
        """Close the session (if one was opened) and the connection; idempotent (as
        ``McpHttpCaller.close``)."""
        session, self._session = self._session, None
        try:
            if session is not None:
                with contextlib.suppress(EnvConnectionError):
                    await self._rpc(SESSION_CLOSE, {"session_id": session})
        finally:
            await self._http.close()
