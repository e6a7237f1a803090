"""Tool calls to any MCP server over streamable HTTP, through the ``mcp`` SDK's client.

Needs the ``mcp`` extra (``pip install 'envgen-runtime[mcp]'``), imported on first use.
One MCP session (``initialize`` first, as MCP requires) per caller, opened on the first call
and ended by ``close()``. The SDK's contexts are anyio task groups, which must be entered
and left by one task, so a task of the caller's own holds the session open while calls go
through it: in the running event loop for ``AsyncMcpSdkCaller``, in a loop on a thread of
its own for the blocking ``McpSdkCaller``. A result is MCP's ``CallToolResult``, dumped in
MCP's camelCase; a JSON-RPC error maps as in ``client.jsonrpc`` (the SDK's own servers answer
a tool that raised, an unknown tool or refused arguments with ``isError`` results instead).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine, Mapping
from datetime import timedelta
from typing import Any, TypeVar

from ..core.errors import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    ProtocolError,
    SessionLostError,
)
from ..core.extras import require
from ..core.text import quote, redact_url, truncate
from .jsonrpc import METHOD_NOT_FOUND, rpc_error

T = TypeVar("T")
_TIMEOUT = 408  # the SDK's error code for a reply that did not come in time (HTTP's)
_PURPOSE = "calling tools over MCP's streamable HTTP (Toolbox.over_mcp)"


class _Held:
    """One ``ClientSession`` kept open by a task of its own, in the loop that started it."""

    def __init__(self, url: str, headers: Mapping[str, str] | None, timeout_s: float) -> None:
        self.url = url
        self._headers = dict(headers or {})
        self._timeout_s = timeout_s
        self._session: Any = None
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Open the session; ``EnvConnectionError`` (or the server's refusal) when it fails."""
        client_mod = require("mcp.client.streamable_http", _PURPOSE)
        session_mod = require("mcp.client.session", _PURPOSE)
        httpx_utils = require("mcp.shared._httpx_utils", _PURPOSE)
        httpx = require("httpx", _PURPOSE)
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stop = stop = asyncio.Event()

        async def hold() -> None:
            timeout = httpx.Timeout(self._timeout_s)
            try:
                http = httpx_utils.create_mcp_http_client(headers=self._headers, timeout=timeout)
                async with (
                    http,
                    client_mod.streamable_http_client(self.url, http_client=http) as streams,
                    session_mod.ClientSession(
                        streams[0],
                        streams[1],
                        read_timeout_seconds=timedelta(seconds=self._timeout_s),
                    ) as session,
                ):
                    await session.initialize()
                    self._session = session
                    ready.set_result(None)
                    await stop.wait()
            except BaseException as exc:
                if not ready.done():
                    ready.set_exception(exc)
                    return
                raise
            finally:
                self._session = None

        self._task = asyncio.create_task(hold(), name=f"envgen mcp session {redact_url(self.url)}")
        try:
            async with asyncio.timeout(self._timeout_s):
                await ready
        except TimeoutError as exc:
            await self.stop()
            raise EnvTimeoutError(
                f"connecting to the MCP server at {redact_url(self.url)} timed out",
                op="initialize",
                url=redact_url(self.url),
                timeout_s=self._timeout_s,
                during_connect=True,
            ) from exc
        except BaseException as exc:
            await self.stop()
            raise self._failed(exc, "initialize") from exc

    async def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One ``tools/call``: MCP's ``CallToolResult`` as a camelCase mapping."""
        result = await self._request(self._live().call_tool(name, arguments), "tools/call", name)
        dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return dumped

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's ``tools/list`` entries (MCP's ``Tool``, camelCase)."""
        listed = await self._request(self._live().list_tools(), "tools/list", None)
        return [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools]

    async def stop(self) -> None:
        """End the session (the holding task leaves its contexts); idempotent."""
        task, self._task = self._task, None
        if self._stop is not None:
            self._stop.set()
        if task is not None:
            with contextlib.suppress(Exception):  # the session is over either way
                await task

    @property
    def alive(self) -> bool:
        """Whether the session is open (False once the server ended it or went away)."""
        return self._session is not None

    def lost(self, op: str, *, sent: bool = False) -> SessionLostError:
        """The error for a call after (``sent``: while) the session ended on its own."""
        fate = "the server may have run it" if sent else "nothing was sent"
        return SessionLostError(
            f"{op} failed: the MCP session with {redact_url(self.url)} ended (the server "
            f"closed it or went away); {fate}. The next call opens a new session",
            op=op,
            url=redact_url(self.url),
        )

    def _live(self) -> Any:
        if self._session is None:
            raise self.lost("tools/call")
        return self._session

    async def _request(self, call: Coroutine[Any, Any, T], method: str, tool: str | None) -> T:
        errors = require("mcp.shared.exceptions", _PURPOSE)
        try:
            return await self._unless_ended(call, method)
        except errors.McpError as exc:
            code, message = exc.error.code, exc.error.message
            if code == _TIMEOUT:
                raise EnvTimeoutError(
                    f"{method}: no reply from {redact_url(self.url)} in {self._timeout_s} s",
                    op=method,
                    url=redact_url(self.url),
                    timeout_s=self._timeout_s,
                ) from exc
            raise rpc_error(code, message, exc.error.data, method=method, tool=tool) from exc
        except RuntimeError as exc:  # the SDK's check of structured content against the schema
            raise ProtocolError(
                f"{method}: {truncate(str(exc), 500)}", received="", op=method
            ) from exc
        except Exception as exc:
            raise self._failed(exc, method) from exc

    async def _unless_ended(self, call: Coroutine[Any, Any, T], method: str) -> T:
        """``call``'s result, or ``SessionLostError`` as soon as the session ends under it.

        The SDK leaves a request waiting for its read timeout when the connection breaks
        (the server went away): the holding task ends then, and so does the wait here.
        """
        holder = self._task
        pending = asyncio.ensure_future(call)
        if holder is None:
            return await pending
        await asyncio.wait({pending, holder}, return_when=asyncio.FIRST_COMPLETED)
        if pending.done():
            return pending.result()
        pending.cancel()
        with contextlib.suppress(BaseException):
            await pending
        lost = self.lost(method, sent=True)
        cause = holder.exception() if not holder.cancelled() else None
        if cause is not None:
            raise lost from self._failed(cause, method)
        raise lost

    def _failed(self, exc: BaseException, op: str) -> EnvgenRuntimeError:
        """The runtime's error for a failure to reach the server (an ExceptionGroup's first)."""
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        if isinstance(exc, EnvgenRuntimeError):
            return exc
        where = redact_url(self.url)
        errors = require("mcp.shared.exceptions", _PURPOSE)
        if isinstance(exc, errors.McpError) and exc.error.code == METHOD_NOT_FOUND:
            return ProtocolError(
                f"{op} failed: {where} answers JSON-RPC but not MCP's {op} "
                f"({truncate(exc.error.message, 200)}); OpenEnv's own /mcp is no streamable "
                "HTTP endpoint: use Toolbox.over_openenv_mcp(base_url) for it",
                received=quote(exc.error.message),
                op=op,
            )
        hint = ""
        if op == "initialize":
            hint = " (is it an MCP streamable-HTTP endpoint, such as http://host:port/mcp?)"
        return EnvConnectionError(
            f"{op} failed: the MCP server at {where} could not be reached or broke off "
            f"({type(exc).__name__}: {truncate(str(exc), 300)}){hint}",
            op=op,
            url=redact_url(self.url),
            during_connect=op == "initialize",
        )


class McpSdkCaller:
    """A blocking ``ToolCaller`` over streamable HTTP; its session lives on a thread of its
    own (an event loop there), opened on the first call. Calls are serialised."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 30.0,
        headers: Mapping[str, str] | None = None,
        strict: bool = False,
    ) -> None:
        require("mcp", _PURPOSE)  # fail at construction when the extra is missing
        self._held = _Held(url, headers, timeout_s)
        self._strict = strict
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def strict(self) -> bool:
        return self._strict

    def _run(self, call: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """``call()`` run on the session's loop, the session opened first if need be."""
        if self._loop is not None and not self._held.alive:  # it ended on its own: say so
            try:
                asyncio.run_coroutine_threadsafe(self._held.stop(), self._loop).result()
            finally:
                self._end_loop()
            raise self._held.lost("tools/call")
        if self._loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="envgen-mcp", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
            try:
                asyncio.run_coroutine_threadsafe(self._held.start(), loop).result()
            except BaseException:
                self._end_loop()
                raise
        return asyncio.run_coroutine_threadsafe(call(), self._loop).result()

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        with self._lock:
            return self._run(lambda: self._held.call(name, arguments))

    def list_tools(self) -> list[dict[str, Any]]:
        """The server's ``tools/list`` entries (MCP's ``Tool``, camelCase)."""
        with self._lock:
            return self._run(self._held.list_tools)

    def close(self) -> None:
        """End the session and its thread; idempotent."""
        with self._lock:
            if self._loop is not None:
                try:
                    asyncio.run_coroutine_threadsafe(self._held.stop(), self._loop).result()
                finally:
                    self._end_loop()

    def _end_loop(self) -> None:
        loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()


class AsyncMcpSdkCaller:
    """``McpSdkCaller`` for asyncio: the session is held by a task in the running loop,
    opened on the first call; use it from that one loop."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 30.0,
        headers: Mapping[str, str] | None = None,
        strict: bool = False,
    ) -> None:
        require("mcp", _PURPOSE)
        self._held = _Held(url, headers, timeout_s)
        self._strict = strict
        self._started = False
        self._lock = asyncio.Lock()

    @property
    def strict(self) -> bool:
        return self._strict

    async def _open(self) -> None:
        if self._started and not self._held.alive:  # it ended on its own: say so, once
            self._started = False
            await self._held.stop()
            raise self._held.lost("tools/call")
        if not self._started:
            await self._held.start()
            self._started = True

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Mapping[str, Any]:
        async with self._lock:
            await self._open()
            return await self._held.call(name, arguments)

    async def list_tools(self) -> list[dict[str, Any]]:
        """The server's ``tools/list`` entries (MCP's ``Tool``, camelCase)."""
        async with self._lock:
            await self._open()
            return await self._held.list_tools()

    async def close(self) -> None:
        """End the session; idempotent."""
        async with self._lock:
            if self._started:
                self._started = False
                await self._held.stop()
