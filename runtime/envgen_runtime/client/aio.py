"""The asyncio twin of ``EnvClient``: the same operations as coroutines, both transports.

Arguments, headers, retry decisions, parsing and the episode id come from ``ClientCore``,
shared with the sync client; only waiting differs (``AsyncHttpTransport`` and
``AsyncWebSocketTransport``). Blocking work that has no asyncio form (starting or stopping a
local server) runs in a worker thread; the launchers (``from_local_process`` and the
container ones) return an ``AsyncClientStart`` to await.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, Self

from ..core.errors import EnvgenRuntimeError
from ..core.result import StepResult
from ..transport.base import AsyncTransport, Op
from ..transport.http.aio import AsyncHttpTransport
from ..transport.websocket.aio import AsyncWebSocketTransport
from .base import ActT, ClientCore, ObsT, StateT
from .launchers import AsyncClientStart, AsyncProviderLaunchers

__all__ = ["AsyncClientStart", "AsyncEnvClient"]


class AsyncEnvClient(AsyncProviderLaunchers, ClientCore[ActT, ObsT, StateT, AsyncTransport]):
    """Typed asyncio client for one environment server; generated as ``Async<Name>Env``.

    The constructor is the sync client's (see ``ClientCore``) and sends nothing. A provider
    passed in that is not running yet is started right there, blocking; prefer
    ``from_local_process()``, which starts it without blocking the event loop. Use a client
    from one event loop; concurrent calls from several tasks are serialised.
    """

    _TRANSPORTS = (AsyncHttpTransport, AsyncWebSocketTransport)

    async def _request(
        self, op: Op, body: Mapping[str, Any], headers: Mapping[str, str] | None
    ) -> dict[str, Any]:
        """One operation, retried as ``retry`` allows (never a step)."""
        checked = self._call_headers(op, headers)
        attempt = 1
        while True:
            transport = self._require_transport(op)
            try:
                return await transport.request(op, body, headers=checked)
            except EnvgenRuntimeError as exc:
                delay = self._retry_delay(op, exc, attempt)
            import asyncio

            outcome = (self._retry.sleep or asyncio.sleep)(delay)
            if inspect.isawaitable(outcome):  # a RetryPolicy's own sleep may be sync or async
                await outcome
            attempt += 1

    async def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> StepResult[ObsT]:
        """Start a new episode; only the arguments given are sent (see ``EnvClient.reset``)."""
        body = self._reset_body(seed, episode_id, kwargs)
        if self._schema_due:  # one blocking GET per process and server: off the loop
            import asyncio

            await asyncio.to_thread(self._check_schema)
        payload = await self._request("reset", body, headers)
        return self._after_reset(episode_id, payload)

    async def step(
        self, action: ActT, *, headers: Mapping[str, str] | None = None
    ) -> StepResult[ObsT]:
        """Send one action (validated before it is sent) and return its result; never retried."""
        self._require_transport("step")
        payload = await self._request("step", self._step_payload(action), headers)
        return self._after_step(payload)

    async def state(self, *, headers: Mapping[str, str] | None = None) -> StateT:
        """The server's current state for this session."""
        return self._after_state(await self._request("state", {}, headers))

    async def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """Drop the connection and open a new one now (see ``EnvClient.reconnect``)."""
        await self._require_transport("reconnect").reconnect(
            headers=self._call_headers("reconnect", headers)
        )
        self._after_reconnect()

    async def close(self) -> None:
        """Close the transport and stop a server this client started; idempotent."""
        transport = self._detach()
        try:
            if transport is not None:
                await transport.close()
        finally:
            if self._owns_provider:
                import asyncio

                await asyncio.to_thread(self._stop_owned_provider)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
