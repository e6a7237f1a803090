"""The stateful OpenEnv HTTP protocol for asyncio, on one keep-alive ``httpx.AsyncClient``.

Routes, envelopes, headers, timeouts and reply decoding come from ``HttpCommon``, exactly as
for the sync transport; only the I/O differs. ``httpx`` is imported on first use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._errormap import translate
from ._exceptions import ProtocolError, ServerError
from ._extras import require
from ._headers import TraceContext, check_headers
from ._http import STEP_TIMEOUT_HINT, HttpCommon
from ._transport import Op

if TYPE_CHECKING:
    import httpx

__all__ = ["AsyncHttpTransport"]


def _httpx() -> Any:
    """The ``httpx`` module (the ``async`` extra), imported on first use."""
    return require("httpx", "the asyncio HTTP transport")


# Below uvicorn's default 5 s keep-alive, so an idle connection is not reused just as the
# server closes it (which would fail a step that must not be retried).
_KEEPALIVE_EXPIRY_S = 4.0


class AsyncHttpTransport(HttpCommon):
    """One keep-alive ``httpx.AsyncClient`` to a stateful OpenEnv HTTP server.

    Concurrent requests from several tasks are serialised, as the server holds one episode.
    Use it from one event loop.
    """

    _kind = "AsyncHttpTransport"

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 15.0,
        headers: Mapping[str, str] | None = None,
        step_timeout_s: float | None = None,
        connect_timeout_s: float | None = None,
        trace: TraceContext | None = None,
    ) -> None:
        import asyncio

        super().__init__(
            base_url,
            timeout_s=timeout_s,
            headers=headers,
            step_timeout_s=step_timeout_s,
            connect_timeout_s=connect_timeout_s,
            trace=trace,
        )
        self._client: httpx.AsyncClient | None = None
        self._stream: object = None  # the last reply's connection (see _exchange)
        self._closes = False  # whether the last reply announced that its connection closes
        self._lock = asyncio.Lock()

    def _get_client(self) -> httpx.AsyncClient:
        if self._client is None:
            httpx = _httpx()
            self._client = httpx.AsyncClient(
                headers=self._base_headers(),
                follow_redirects=False,
                # Proxy settings from the environment must not capture local traffic.
                trust_env=not self._use_loopback_rules(),
                limits=httpx.Limits(
                    max_connections=4,
                    max_keepalive_connections=1,
                    keepalive_expiry=_KEEPALIVE_EXPIRY_S,
                ),
            )
        return self._client

    async def request(
        self, op: Op, body: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one operation; see ``_http`` for the routes (and the continuity checks)."""
        async with self._lock:
            self._check_open(op)
            self._check_continuity(op)
            reply, new_connection = await self._exchange(op, body, headers)
            if self._counted(op, new_connection=new_connection):
                try:
                    state: dict[str, Any] | None = (await self._exchange("state", {}, headers))[0]
                except (ServerError, ProtocolError):  # no usable /state: cannot tell
                    state = None
                self._verify(op, state)
            return reply

    async def _exchange(
        self, op: Op, body: Mapping[str, Any], headers: Mapping[str, str] | None
    ) -> tuple[dict[str, Any], bool]:
        """One request and its reply object; and whether it went over a new connection."""
        import asyncio

        httpx = _httpx()
        method, url, data = self._route(op, body)
        extra = self._request_headers(headers, has_body=data is not None)
        read_timeout = self._read_timeout(op)
        timeout = httpx.Timeout(
            read_timeout, connect=self._connect_timeout_s, pool=self._connect_timeout_s
        )
        client = self._get_client()
        hint = STEP_TIMEOUT_HINT if op == "step" else ""
        with translate(
            op, url, read_timeout, timeout_hint=hint, connect_timeout_s=self._connect_timeout_s
        ):
            # httpx's read timeout limits each read; this deadline bounds the whole request
            # (opening a new connection included, hence the max).
            async with asyncio.timeout(max(read_timeout, self._connect_timeout_s)):
                response = await client.request(
                    method, url, content=data, headers=extra, timeout=timeout
                )
        # A new connection has a new network stream (httpcore's "network_stream" extension);
        # it is suspect unless the last reply announced that its connection would close.
        stream = response.extensions.get("network_stream")
        suspect = stream is not self._stream and self._stream is not None and not self._closes
        self._stream = stream
        self._closes = (
            response.http_version == "HTTP/1.0"
            or response.headers.get("connection", "").lower() == "close"
        )
        reply = self._reply(
            response.status_code, response.content, response.charset_encoding, op=op, url=url
        )
        return reply, suspect

    async def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """Close pooled connections; later requests also carry ``headers`` (until the next)."""
        session_headers = check_headers(headers, what="headers")
        async with self._lock:
            self._check_open("reconnect")
            client, self._client = self._client, None
            self._session_headers = session_headers
        if client is not None:
            await client.aclose()

    async def close(self) -> None:
        """Close pooled connections; idempotent."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()
