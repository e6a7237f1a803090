"""The base class of generated blocking clients: only I/O and waiting; the rest (arguments,
headers, retry decisions, parsing, the episode id) is ``ClientCore``, shared with asyncio."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Self

from ..core.errors import EnvgenRuntimeError
from ..core.result import StepResult
from ..transport.base import Op, Transport
from ..transport.http.sync import HttpTransport
from ..transport.websocket.sync import WebSocketTransport
from .base import ActT, ClientCore, ObsT, StateT
from .launchers import ProviderLaunchers


class EnvClient(ProviderLaunchers, ClientCore[ActT, ObsT, StateT, Transport]):
    """Typed client for one environment server; generated subclasses fill in the models.

    Subclasses set ``SPEC`` and implement ``_step_payload``, ``_parse_result`` and
    ``_parse_state``; the transport (HTTP or WebSocket) and the server's lifecycle live here.
    Requests from several threads are serialised; for parallel episodes use one client per
    thread (over WebSocket each client is its own server session). The constructor's
    options are documented on ``ClientCore.__init__``.
    """

    _TRANSPORTS = (HttpTransport, WebSocketTransport)

    def _request(
        self, op: Op, body: Mapping[str, Any], headers: Mapping[str, str] | None
    ) -> dict[str, Any]:
        """One operation, retried as ``retry`` allows (never a step)."""
        checked = self._call_headers(op, headers)
        sleep = self._retry.sleep or time.sleep
        attempt = 1
        while True:
            transport = self._require_transport(op)  # a closed client's error is not retried
            try:
                return transport.request(op, body, headers=checked)
            except EnvgenRuntimeError as exc:
                sleep(self._retry_delay(op, exc, attempt))
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
        if self._schema_due:
            self._check_schema()
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
        transport = self._detach()
        try:
            if transport is not None:
                transport.close()
        finally:
            self._stop_owned_provider()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
