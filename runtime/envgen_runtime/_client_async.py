"""The asyncio twin of ``EnvClient``: the same operations as coroutines, both transports.

Arguments, headers, retry decisions, parsing and the episode id come from ``ClientCore``,
shared with the sync client; only waiting differs (``AsyncHttpTransport`` on httpx,
``AsyncWebSocketTransport`` on ``websockets.asyncio``). Blocking work that has no asyncio
form (starting or stopping a local server) runs in a worker thread.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Awaitable, Callable, Generator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

from typing_extensions import Unpack

from ._base import ClientCore, ClientOptions
from ._exceptions import EnvgenRuntimeError
from ._http_async import AsyncHttpTransport
from ._launchers import AsyncProviderLaunchers
from ._result import StepResult
from ._transport import AsyncTransport, Op
from ._websocket_async import AsyncWebSocketTransport

if TYPE_CHECKING:
    import os

    from ._provider import Provider

__all__ = ["AsyncClientStart", "AsyncEnvClient"]

ActT = TypeVar("ActT")
ObsT = TypeVar("ObsT")
StateT = TypeVar("StateT")
ClientT = TypeVar("ClientT", bound="AsyncEnvClient[Any, Any, Any]")


def _stop_in_background(provider: Provider) -> None:
    """Stop a provider without blocking the event loop (its start may still be running)."""
    threading.Thread(target=provider.stop, name="envgen-provider-stop", daemon=True).start()


class AsyncClientStart(Generic[ClientT]):
    """What ``AsyncEnvClient.from_local_process()`` returns: await it, or ``async with`` it.

    ``client = await AsyncEchoEnv.from_local_process()`` gives a client that owns its
    server (close it); ``async with AsyncEchoEnv.from_local_process() as env:`` also closes
    it, and so stops the server, on exit. The server starts in a worker thread, so the event
    loop keeps running meanwhile; cancelling the start stops the server.
    """

    def __init__(self, start: Callable[[], Awaitable[ClientT]]) -> None:
        self._start = start
        self._client: ClientT | None = None

    async def _get(self) -> ClientT:
        if self._client is None:
            self._client = await self._start()
        return self._client

    def __await__(self) -> Generator[Any, None, ClientT]:
        return self._get().__await__()

    async def __aenter__(self) -> ClientT:
        return await self._get()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._client is not None:
            await self._client.close()


class AsyncEnvClient(AsyncProviderLaunchers, ClientCore[ActT, ObsT, StateT, AsyncTransport]):
    """Typed asyncio client for one environment server; generated as ``Async<Name>Env``.

    The constructor is the sync client's (see ``ClientCore``) and sends nothing. A provider
    passed in that is not running yet is started right there, blocking; prefer
    ``from_local_process()``, which starts it without blocking the event loop. Use a client
    from one event loop; concurrent calls from several tasks are serialised.
    """

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_local_process(
        cls,
        command: Sequence[str] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        startup_timeout_s: float | None = None,
        **options: Unpack[ClientOptions],
    ) -> AsyncClientStart[Self]:
        """Start the environment's server locally; ``await`` the result or ``async with`` it.

        Arguments as for ``EnvClient.from_local_process``. The server is started when the
        result is first awaited (or entered), in a worker thread.
        """
        import asyncio

        provider = cls._local_provider(
            command, options.get("transport"), env, cwd, startup_timeout_s
        )

        async def start() -> Self:

            try:
                base_url = await asyncio.to_thread(provider.start)
            except BaseException:
                # Also on cancellation, when the start thread is still running: stop() waits
                # for it (the provider's lock) and then stops the server.
                _stop_in_background(provider)
                raise
            try:
                client = cls(base_url, provider=provider, **options)
            except BaseException:
                _stop_in_background(provider)
                raise
            client._owns_provider = True
            return client

        return AsyncClientStart(start)

    def _make_transport(self) -> AsyncTransport:
        """Build the asyncio transport named by ``transport_name``."""
        if self._transport_name == "http":
            return AsyncHttpTransport(
                self._base_url, step_timeout_s=self._step_timeout_s, **self._transport_options()
            )
        return AsyncWebSocketTransport(
            self._base_url, max_message_bytes=self._max_message_bytes, **self._transport_options()
        )

    @property
    def transport(self) -> AsyncTransport:
        """The transport carrying requests (for diagnostics)."""
        return self._require_transport("transport")

    # ------------------------------------------------------------------ operations

    async def _sleep(self, delay: float) -> None:
        import asyncio

        sleep = self._retry.sleep
        if sleep is None:
            await asyncio.sleep(delay)
            return
        outcome = sleep(delay)
        if inspect.isawaitable(outcome):
            await outcome

    async def _request(
        self, op: Op, body: Mapping[str, Any], headers: Mapping[str, str] | None
    ) -> dict[str, Any]:
        """One operation, retried as ``retry`` allows (never a step)."""
        extra = self._call_headers(op, headers)
        attempt = 1
        while True:
            transport = self._require_transport(op)
            try:
                return await transport.request(op, body, headers=extra)
            except EnvgenRuntimeError as exc:
                delay = self._next_delay(op, exc, attempt)
                if delay is None:
                    raise
            await self._sleep(delay)
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
        import asyncio

        if self._closed:
            return
        self._closed = True
        transport, self._transport = self._transport, None
        try:
            if transport is not None:
                await transport.close()
        finally:
            if self._owns_provider:
                await asyncio.to_thread(self._stop_owned_provider)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
