"""What the sync ``EnvClient`` and the async ``AsyncEnvClient`` share: everything but I/O.

Argument checks, headers (defaults, bearer token, tracing), the transport, request bodies,
the retry decision, reply parsing, the episode id and what closing releases live here once;
the two clients are shells that only send, wait and sleep.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypedDict, TypeVar

from ..core.checks import positive
from ..core.errors import EnvgenRuntimeError, ProtocolError, SessionLostError
from ..core.result import StepResult, build_step_result
from ..core.spec import TRANSPORTS, EnvSpec, TransportName
from ..core.urls import normalize_base_url
from ..transport.base import Limits, Op
from ..transport.errormap import for_client
from ..transport.headers import TraceContext, bearer_headers, check_headers, merge_headers
from .retry import RetryPolicy

if TYPE_CHECKING:
    from ..core.codec import ModelCodec
    from ..providers.base import Provider


ActT = TypeVar("ActT")
ObsT = TypeVar("ObsT")
StateT = TypeVar("StateT")
TransportT = TypeVar("TransportT")


class ClientOptions(TypedDict, total=False):
    """Keyword options of a client, as forwarded by ``from_local_process(**options)``."""

    transport: TransportName | None
    request_timeout_s: float
    connect_timeout_s: float | None
    read_timeout_s: float | None
    default_headers: Mapping[str, str] | None
    step_timeout_s: float | None
    retry: RetryPolicy | None
    trace: bool | str
    strict: bool
    max_message_bytes: int | None
    check_schema: bool


class ClientCore(Limits, ABC, Generic[ActT, ObsT, StateT, TransportT]):
    """Shared state and logic of a typed environment client (see ``EnvClient``)."""

    SPEC: ClassVar[EnvSpec]
    _TRANSPORTS: tuple[Callable[..., TransportT], Callable[..., TransportT]]
    """The shell's HTTP and WebSocket transport classes (blocking or asyncio)."""
    ACTION_CODEC: ClassVar[ModelCodec[Any] | None] = None
    """Set by generated clients beside their ``_step_payload`` (its ``encode``), so that
    ``_step_texts`` can encode a pool round's actions in one call."""

    def __init__(
        self,
        base_url: str | None = None,
        request_timeout_s: float = 15.0,
        default_headers: Mapping[str, str] | None = None,
        provider: Provider | None = None,
        *,
        transport: TransportName | None = None,
        step_timeout_s: float | None = None,
        connect_timeout_s: float | None = None,
        read_timeout_s: float | None = None,
        retry: RetryPolicy | None = None,
        trace: bool | str = False,
        strict: bool = False,
        max_message_bytes: int | None = 100 * 1024 * 1024,
        check_schema: bool = True,
        owns_provider: bool = False,
    ) -> None:
        """Connect to ``base_url``, or to the server of ``provider``; nothing is sent yet.

        A provider that is not running yet is started here (blocking) and then belongs to
        the client: ``close()`` stops it. A running provider is only borrowed, unless
        ``owns_provider`` hands it over (as the launchers do with the one they started).
        ``transport`` overrides ``SPEC.transport``. ``request_timeout_s`` is the default of
        ``connect_timeout_s`` and ``read_timeout_s``. ``step_timeout_s`` is sent with each
        HTTP step as the server's ``timeout_s``. ``retry`` (default ``RetryPolicy()``) says
        how ``reset``/``state`` retry; ``trace`` turns on W3C ``traceparent`` headers (True,
        or a parent traceparent to continue); ``strict`` parses observations and states
        strictly (see ``ModelCodec.decode``). ``max_message_bytes`` is the largest WebSocket
        message accepted (default 100 MiB; None: no limit); a larger reply raises
        ProtocolError naming this option. ``check_schema`` (default True) has the first
        reset compare the server's ``GET /schema`` with the schemas the client was generated
        from, once per process and server: a breaking difference raises SchemaDriftError, a
        compatible one warns once (SchemaDriftWarning); no request is made per step.
        """
        spec = self._spec()
        name = transport if transport is not None else spec.transport
        if name not in TRANSPORTS:
            raise ValueError(f"transport must be one of {TRANSPORTS}, got {name!r}")
        positive("request_timeout_s", request_timeout_s)
        positive("connect_timeout_s", connect_timeout_s)
        positive("read_timeout_s", read_timeout_s)
        positive("step_timeout_s", step_timeout_s)
        whole = isinstance(max_message_bytes, int) and not isinstance(max_message_bytes, bool)
        if max_message_bytes is not None and not (whole and max_message_bytes > 0):
            raise ValueError(
                f"max_message_bytes must be a positive int or None, got {max_message_bytes!r}"
            )
        if not isinstance(trace, bool | str | None):
            raise TypeError("trace must be True, False or a W3C traceparent string")
        if retry is not None and not isinstance(retry, RetryPolicy):
            raise TypeError("retry must be a RetryPolicy (RetryPolicy.never() disables retries)")
        if base_url is None and provider is None:
            raise ValueError(
                "pass base_url or provider "
                f"(or use {type(self).__name__}.from_local_process() to start a server)"
            )
        headers = check_headers(default_headers, what="default_headers")
        self._transport_name: TransportName = name
        self._request_timeout_s = request_timeout_s
        self._set_limits(
            read_timeout_s or request_timeout_s, connect_timeout_s or request_timeout_s
        )
        self._step_timeout_s = step_timeout_s
        self._default_headers: Mapping[str, str] = MappingProxyType(headers)
        # The token is read once, here; it stays out of default_headers and of every repr.
        self._wire_headers = merge_headers(bearer_headers(spec.auth_token_env), headers)
        # trace=True starts a trace; a traceparent string continues the caller's trace.
        self._trace = (
            TraceContext(trace) if isinstance(trace, str) else TraceContext() if trace else None
        )
        self._retry = retry if retry is not None else RetryPolicy()
        self._strict = bool(strict)
        self._max_message_bytes = max_message_bytes
        self._schema_due = bool(check_schema)
        self._episode_id: str | None = None
        self._episode_id_given = False
        self._provider = provider
        self._owns_provider = owns_provider
        self._closed = False
        self._transport: TransportT | None = None
        if base_url is None:
            assert provider is not None
            base_url = provider.base_url
            if base_url is None:
                base_url = provider.start()
                self._owns_provider = True  # we started it, so close() stops it
        self._base_url = normalize_base_url(base_url)  # a bare host:port means http://
        try:
            self._transport = self._make_transport()
        except BaseException:
            self._stop_owned_provider()
            raise

    def _step_texts(self, actions: Sequence[ActT]) -> list[str] | None:
        """The JSON text of each action's step body, encoded in one call; None if it cannot be.

        Only when ``_step_payload`` is the one generated beside ``ACTION_CODEC`` (a subclass
        overriding it is honoured), and every action is valid: else None, and the caller
        encodes them one by one (``_step_payload``), which also tells which one failed.
        """
        cls = type(self)
        codec = cls.ACTION_CODEC
        if codec is None:
            return None
        owner = next(klass for klass in cls.__mro__ if "ACTION_CODEC" in klass.__dict__)
        if cls._step_payload is not owner.__dict__.get("_step_payload"):
            return None
        try:
            return codec.encode_texts(actions)
        except EnvgenRuntimeError:
            return None

    @classmethod
    def _spec(cls) -> EnvSpec:
        spec = getattr(cls, "SPEC", None)
        if not isinstance(spec, EnvSpec):
            raise TypeError(f"{cls.__name__} must set SPEC: ClassVar[EnvSpec]")
        return spec

    def _make_transport(self) -> TransportT:
        """Build the transport named by ``transport_name``, of the shell's kind."""
        http, websocket = self._TRANSPORTS
        options: dict[str, Any] = {
            "timeout_s": self._timeout_s,
            "connect_timeout_s": self._connect_timeout_s,
            "headers": self._wire_headers,
            "trace": self._trace,
        }
        if self._transport_name == "http":
            return http(self._base_url, step_timeout_s=self._step_timeout_s, **options)
        return websocket(self._base_url, max_message_bytes=self._max_message_bytes, **options)

    @property
    def transport(self) -> TransportT:
        """The transport carrying requests (for diagnostics)."""
        return self._require_transport("transport")

    @property
    def request_timeout_s(self) -> float:
        """The simple timeout: connect and read timeouts default to it, in seconds."""
        return self._request_timeout_s

    @property
    def max_message_bytes(self) -> int | None:
        """The largest WebSocket message accepted, in bytes (None: no limit)."""
        return self._max_message_bytes

    @property
    def default_headers(self) -> Mapping[str, str]:
        """Headers sent with every request (read-only view; the env token is not shown)."""
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
    def retry(self) -> RetryPolicy:
        """How ``reset`` and ``state`` retry transient failures."""
        return self._retry

    @property
    def strict(self) -> bool:
        """Whether observations and states are parsed strictly (unknown fields rejected)."""
        return self._strict

    @property
    def trace_id(self) -> str | None:
        """The W3C trace id every request carries, when tracing is on."""
        return self._trace.trace_id if self._trace is not None else None

    @property
    def episode_id(self) -> str | None:
        """The current episode's id: the one given to ``reset()``, else what the server reports.

        None before the first reset, or when neither the caller nor the server named one.
        """
        return self._episode_id

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
        return self._closed

    def _repr_args(self) -> tuple[str, str]:
        return self._base_url, f"transport={self._transport_name!r}"

    def _require_transport(self, op: str) -> TransportT:
        if self._closed or self._transport is None:
            raise EnvgenRuntimeError(
                f"{op} failed: this {type(self).__name__} is closed; create a new client"
            )
        return self._transport

    @staticmethod
    def _call_headers(op: str, headers: Mapping[str, str] | None) -> dict[str, str] | None:
        """Checked per-call headers (errors name the header, never the value)."""
        return check_headers(headers, what=f"{op}(headers=...)") or None

    @staticmethod
    def _reset_body(
        seed: int | None, episode_id: str | None, kwargs: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Only the arguments given: the server applies its own defaults to the rest."""
        given = {"seed": seed, "episode_id": episode_id}
        return {**{k: v for k, v in given.items() if v is not None}, **kwargs}

    def _check_schema(self) -> None:
        """Before the first reset: the server's schemas against the committed ones (blocking).

        Raises SchemaDriftError on a break, and then again on every reset until fixed.
        """
        from .schema_check import check_schema

        self._require_transport("reset")  # a closed client asks the server nothing
        check_schema(self._spec(), self._base_url, self._wire_headers, self._timeout_s)
        self._schema_due = False

    def _retry_delay(self, op: Op, exc: EnvgenRuntimeError, attempt: int) -> float:
        """Seconds to wait before retrying ``op`` after ``exc``; raises ``exc`` when not retried.

        The retry policy decides (a step is never retried); the shells only send and sleep.
        """
        if isinstance(exc, SessionLostError):  # the episode is gone: so is its id
            self._episode_id = None
            self._episode_id_given = False
        delay = self._retry.next_delay(op, exc, attempt)
        if delay is None:
            raise for_client(exc, type(self).__name__)
        import logging

        logging.getLogger("envgen_runtime").info(
            "%s failed (%s), retry %d of %d in %.2f s: %s",
            op,
            type(exc).__name__,
            attempt,
            self._retry.attempts - 1,
            delay,
            exc.message,
        )
        return delay

    def _detach(self) -> TransportT | None:
        """Mark the client closed and hand its transport to the shell to close (once)."""
        if self._closed:
            return None
        self._closed = True
        transport, self._transport = self._transport, None
        return transport

    def _after_reset(self, episode_id: str | None, payload: Mapping[str, Any]) -> StepResult[ObsT]:
        # The server has reset whether or not its reply parses: the old episode ends here.
        self._episode_id_given = episode_id is not None
        self._episode_id = episode_id
        result = self._parse_with_op("reset", payload)
        self._note_reported_episode(payload)
        return result

    def _after_step(self, payload: Mapping[str, Any]) -> StepResult[ObsT]:
        result = self._parse_with_op("step", payload)
        self._note_reported_episode(payload)
        return result

    def _after_state(self, payload: Mapping[str, Any]) -> StateT:
        state = self._parse_state(payload)
        self._note_reported_episode(payload)
        return state

    def _note_reported_episode(self, payload: Mapping[str, Any]) -> None:
        """Take the server's episode id unless the caller named one at reset."""
        if self._episode_id_given:
            return
        observation: Any = payload.get("observation")
        is_map = type(observation) is dict or isinstance(observation, Mapping)
        inner = observation.get("metadata") if is_map else None
        for container in (observation, payload, inner, payload.get("metadata")):
            if type(container) is dict or isinstance(container, Mapping):
                value = container.get("episode_id")
                if isinstance(value, str) and value:
                    self._episode_id = value
                    return

    def _after_reconnect(self) -> None:
        """A new WebSocket session has no episode yet; an HTTP server keeps its own."""
        if self._transport_name == "websocket":
            self._episode_id = None
            self._episode_id_given = False

    def _parse_with_op(self, op: str, payload: Mapping[str, Any]) -> StepResult[ObsT]:
        try:
            return self._parse_result(payload)
        except ProtocolError as exc:
            if exc.op is None:  # from the envelope check, which cannot know the op
                exc.op = op
                exc.args = (f"{op} failed: {exc.message}", *exc.args[1:])
            raise

    def _stop_owned_provider(self) -> None:
        """Stop the provider when this client started it (blocking; shells may thread it)."""
        if self._owns_provider and self._provider is not None:
            self._owns_provider = False
            self._provider.stop()

    @abstractmethod
    def _step_payload(self, action: ActT) -> dict[str, Any]:
        """The JSON object sent as the action (generated: the action codec's encode)."""

    @abstractmethod
    def _parse_result(self, payload: Mapping[str, Any]) -> StepResult[ObsT]:
        """A reset/step reply as a StepResult (generated: ``_build_result``)."""

    @abstractmethod
    def _parse_state(self, payload: Mapping[str, Any]) -> StateT:
        """A state reply as the state model (generated: the state codec's decode)."""

    _build_result = staticmethod(build_step_result)
    """Check the reply envelope and decode its observation (see ``StepResult``).

    Generated clients pass ``strict=self.strict``; so should hand-written ones.
    """
