"""The base class every generated environment client subclasses (blocking I/O).

Everything that does not wait on I/O (arguments, headers, retry decisions, parsing, the
episode id) lives in ``ClientCore`` and is shared with ``AsyncEnvClient``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

from typing_extensions import Unpack

from ._base import ClientCore, ClientOptions
from ._exceptions import EnvgenRuntimeError
from ._http import HttpTransport
from ._launchers import ProviderLaunchers
from ._result import StepResult
from ._transport import Op, Transport
from ._websocket import WebSocketTransport

if TYPE_CHECKING:
    import os

__all__ = ["EnvClient"]

ActT = TypeVar("ActT")
ObsT = TypeVar("ObsT")
StateT = TypeVar("StateT")


class EnvClient(ProviderLaunchers, ClientCore[ActT, ObsT, StateT, Transport]):
    """Typed client for one environment server; generated subclasses fill in the models.

    Subclasses set ``SPEC`` and implement ``_step_payload``, ``_parse_result`` and
    ``_parse_state``; the transport (HTTP or WebSocket) and the server's lifecycle live here.
    Requests from several threads are serialised; for parallel episodes use one client per
    thread (over WebSocket each client is its own server session).

    Constructor: ``EnvClient(base_url=None, request_timeout_s=15.0, default_headers=None,
    provider=None, *, transport=None, step_timeout_s=None, connect_timeout_s=None,
    read_timeout_s=None, retry=None, trace=False, strict=False,
    max_message_bytes=100 MiB)``; see ``ClientCore``.
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
    ) -> Self:
        """Start the environment's server locally and return a client that owns it.

        ``command`` defaults to ``SPEC.server_command``; ``options`` are the constructor's
        keyword options. Closing the client stops the server; if building the client fails,
        the server is stopped before the error propagates.
        """
        provider = cls._local_provider(
            command, options.get("transport"), env, cwd, startup_timeout_s
        )
        base_url = provider.start()
        try:
            client = cls(base_url, provider=provider, **options)
        except BaseException:
            provider.stop()
            raise
        client._owns_provider = True
        return client

    def _make_transport(self) -> Transport:
        """Build the transport named by ``transport_name``."""
        if self._transport_name == "http":
            return HttpTransport(
                self._base_url, step_timeout_s=self._step_timeout_s, **self._transport_options()
            )
        return WebSocketTransport(
            self._base_url, max_message_bytes=self._max_message_bytes, **self._transport_options()
        )

    @property
    def transport(self) -> Transport:
        """The transport carrying requests (for diagnostics)."""
        return self._require_transport("transport")

    # ------------------------------------------------------------------ operations

    def _request(
        self, op: Op, body: Mapping[str, Any], headers: Mapping[str, str] | None
    ) -> dict[str, Any]:
        """One operation, retried as ``retry`` allows (never a step)."""
        extra = self._call_headers(op, headers)
        attempt = 1
        while True:
            transport = self._require_transport(op)
            try:
                return transport.request(op, body, headers=extra)
            except EnvgenRuntimeError as exc:
                delay = self._next_delay(op, exc, attempt)
                if delay is None:
                    raise
            (self._retry.sleep or time.sleep)(delay)
            attempt += 1

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> StepResult[ObsT]:
        """Start a new episode; only the arguments given are sent.

        ``headers`` go with this request only (over WebSocket: with the handshake, when this
        reset opens the session). Over WebSocket a reset after a lost session opens a new one.
        """
        body = self._reset_body(seed, episode_id, kwargs)
        payload = self._request("reset", body, headers)
        return self._after_reset(episode_id, payload)

    def step(self, action: ActT, *, headers: Mapping[str, str] | None = None) -> StepResult[ObsT]:
        """Send one action (validated before it is sent) and return its result; never retried."""
        self._require_transport("step")
        payload = self._request("step", self._step_payload(action), headers)
        return self._after_step(payload)

    def state(self, *, headers: Mapping[str, str] | None = None) -> StateT:
        """The server's current state for this session."""
        return self._after_state(self._request("state", {}, headers))

    def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """Drop the connection and open a new one now.

        Over WebSocket this ends the server session and its episode (call ``reset()`` next);
        ``headers`` then go with this and every later handshake. Over HTTP it only replaces
        pooled connections (the server keeps its one environment); ``headers`` are then
        sent with every later request.
        """
        self._require_transport("reconnect").reconnect(
            headers=self._call_headers("reconnect", headers)
        )
        self._after_reconnect()

    def close(self) -> None:
        """Close the transport and stop a server this client started; idempotent."""
        if self._closed:
            return
        self._closed = True
        transport, self._transport = self._transport, None
        try:
            if transport is not None:
                transport.close()
        finally:
            self._stop_owned_provider()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
