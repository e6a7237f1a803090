"""The base class every generated environment client subclasses."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Self, TypeVar

from ._errormap import redact_url
from ._exceptions import EnvgenRuntimeError, ProtocolError
from ._http import HttpTransport
from ._provider import LocalProcessProvider, Provider
from ._result import StepResult, build_step_result
from ._spec import TRANSPORTS, EnvSpec, TransportName
from ._transport import Op, Transport
from ._websocket import WebSocketTransport

if TYPE_CHECKING:
    import os

    from ._codec import ModelCodec

__all__ = ["EnvClient"]

ActT = TypeVar("ActT")
ObsT = TypeVar("ObsT")
StateT = TypeVar("StateT")


class EnvClient(ABC, Generic[ActT, ObsT, StateT]):
    """Typed client for one environment server; generated subclasses fill in the models.

    Subclasses set ``SPEC`` and implement ``_step_payload``, ``_parse_result`` and
    ``_parse_state``; the transport (HTTP or WebSocket) and the server's lifecycle live here.
    Requests from several threads are serialised; for parallel episodes use one client per
    thread (over WebSocket each client is its own server session).
    """

    SPEC: ClassVar[EnvSpec]

    def __init__(
        self,
        base_url: str | None = None,
        request_timeout_s: float = 15.0,
        default_headers: Mapping[str, str] | None = None,
        provider: Provider | None = None,
        *,
        transport: TransportName | None = None,
        step_timeout_s: float | None = None,
    ) -> None:
        """Connect to ``base_url``, or to the server of ``provider``.

        A provider that is not running yet is started here and then belongs to the client:
        ``close()`` stops it. A provider that is already running is only borrowed.
        ``transport`` overrides ``SPEC.transport``. ``step_timeout_s`` is sent with each HTTP
        step as the server's ``timeout_s`` (the WebSocket protocol has no such field).
        Nothing is sent until the first request.
        """
        spec = getattr(type(self), "SPEC", None)
        if not isinstance(spec, EnvSpec):
            raise TypeError(f"{type(self).__name__} must set SPEC: ClassVar[EnvSpec]")
        name = transport if transport is not None else spec.transport
        if name not in TRANSPORTS:
            raise ValueError(f"transport must be one of {TRANSPORTS}, got {name!r}")
        if request_timeout_s <= 0:
            raise ValueError(f"request_timeout_s must be positive, got {request_timeout_s}")
        if step_timeout_s is not None and step_timeout_s <= 0:
            raise ValueError(f"step_timeout_s must be positive, got {step_timeout_s}")
        if base_url is None and provider is None:
            raise ValueError(
                "pass base_url or provider "
                f"(or use {type(self).__name__}.from_local_process() to start a server)"
            )
        self._transport_name: TransportName = name
        self._request_timeout_s = request_timeout_s
        self._step_timeout_s = step_timeout_s
        self._default_headers: Mapping[str, str] = MappingProxyType(dict(default_headers or {}))
        self._provider = provider
        self._owns_provider = False
        self._closed = False
        self._transport: Transport | None = None
        if base_url is None:
            assert provider is not None
            if provider.base_url is not None:
                base_url = provider.base_url
            else:
                base_url = provider.start()
                self._owns_provider = True  # we started it, so close() stops it
        self._base_url = base_url.rstrip("/")
        try:
            self._transport = self._make_transport()
        except BaseException:
            self._stop_owned_provider()
            raise

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_local_process(
        cls,
        command: Sequence[str] | None = None,
        *,
        transport: TransportName | None = None,
        request_timeout_s: float = 15.0,
        default_headers: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        startup_timeout_s: float | None = None,
        step_timeout_s: float | None = None,
    ) -> Self:
        """Start the environment's server locally and return a client that owns it.

        ``command`` defaults to ``SPEC.server_command``. Closing the client stops the server;
        if building the client fails, the server is stopped before the error propagates.
        """
        spec = getattr(cls, "SPEC", None)
        if not isinstance(spec, EnvSpec):
            raise TypeError(f"{cls.__name__} must set SPEC: ClassVar[EnvSpec]")
        argv = tuple(command) if command is not None else spec.server_command
        if not argv:
            raise ValueError(
                f"{cls.__name__}.SPEC has no server_command for environment {spec.name!r}: "
                "pass command=[...] to from_local_process()"
            )
        name = transport if transport is not None else spec.transport
        provider = LocalProcessProvider(
            argv,
            health_path=spec.health_path,
            startup_timeout_s=(
                startup_timeout_s if startup_timeout_s is not None else spec.startup_timeout_s
            ),
            env=env,
            cwd=cwd,
            transport=name,
        )
        base_url = provider.start()
        try:
            client = cls(
                base_url,
                request_timeout_s,
                default_headers,
                provider,
                transport=name,
                step_timeout_s=step_timeout_s,
            )
        except BaseException:
            provider.stop()
            raise
        client._owns_provider = True
        return client

    def _make_transport(self) -> Transport:
        """Build the transport named by ``transport_name``."""
        if self._transport_name == "http":
            return HttpTransport(
                self._base_url,
                timeout_s=self._request_timeout_s,
                headers=self._default_headers,
                step_timeout_s=self._step_timeout_s,
            )
        return WebSocketTransport(
            self._base_url, timeout_s=self._request_timeout_s, headers=self._default_headers
        )

    # ------------------------------------------------------------------ properties

    @property
    def base_url(self) -> str:
        """The server's base URL."""
        return self._base_url

    @property
    def request_timeout_s(self) -> float:
        """Timeout for connecting and for each reply, in seconds."""
        return self._request_timeout_s

    @property
    def default_headers(self) -> Mapping[str, str]:
        """Headers sent with every request (read-only view)."""
        return self._default_headers

    @property
    def provider(self) -> Provider | None:
        """The provider that runs the server, if any."""
        return self._provider

    @property
    def transport_name(self) -> TransportName:
        """``"http"`` or ``"websocket"``."""
        return self._transport_name

    @property
    def transport(self) -> Transport:
        """The transport carrying requests (for diagnostics)."""
        return self._require_transport("transport")

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._closed

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({redact_url(self._base_url)!r}, "
            f"transport={self._transport_name!r})"
        )

    # ------------------------------------------------------------------ operations

    def _require_transport(self, op: str) -> Transport:
        if self._closed or self._transport is None:
            raise EnvgenRuntimeError(
                f"{op} failed: this {type(self).__name__} is closed; create a new client"
            )
        return self._transport

    def _request(self, op: Op, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._require_transport(op).request(op, body)

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> StepResult[ObsT]:
        """Start a new episode; only the arguments given are sent."""
        body: dict[str, Any] = {}
        if seed is not None:
            body["seed"] = seed
        if episode_id is not None:
            body["episode_id"] = episode_id
        body.update(kwargs)
        payload = self._request("reset", body)
        return self._parse_with_op("reset", payload)

    def step(self, action: ActT) -> StepResult[ObsT]:
        """Send one action (validated before it is sent) and return its result."""
        self._require_transport("step")
        payload = self._request("step", self._step_payload(action))
        return self._parse_with_op("step", payload)

    def state(self) -> StateT:
        """The server's current state for this session."""
        return self._parse_state(self._request("state", {}))

    def _parse_with_op(self, op: str, payload: Mapping[str, Any]) -> StepResult[ObsT]:
        try:
            return self._parse_result(payload)
        except ProtocolError as exc:
            if exc.op is None:
                exc.op = op
            raise

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

    def _stop_owned_provider(self) -> None:
        if self._owns_provider and self._provider is not None:
            self._owns_provider = False
            self._provider.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ for subclasses

    @abstractmethod
    def _step_payload(self, action: ActT) -> dict[str, Any]:
        """The JSON object sent as the action (generated: the action codec's encode)."""

    @abstractmethod
    def _parse_result(self, payload: Mapping[str, Any]) -> StepResult[ObsT]:
        """A reset/step reply as a StepResult (generated: ``_build_result``)."""

    @abstractmethod
    def _parse_state(self, payload: Mapping[str, Any]) -> StateT:
        """A state reply as the state model (generated: the state codec's decode)."""

    @staticmethod
    def _build_result(
        payload: Mapping[str, Any], observation_codec: ModelCodec[ObsT]
    ) -> StepResult[ObsT]:
        """Check the reply envelope and decode its observation (see ``StepResult``)."""
        return build_step_result(payload, observation_codec)
