"""Shared runtime for envgen-generated environment clients.

Generated clients subclass ``EnvClient`` (blocking) and ``AsyncEnvClient`` (asyncio) and
describe their models with ``ModelCodec``; the runtime owns the wire protocols
(``HttpTransport``, ``WebSocketTransport`` and their ``Async`` twins), retries
(``RetryPolicy``), the server lifecycle (``LocalProcessProvider``, ``LocalDockerProvider``,
``RayProvider``), many sessions stepped together (``EnvPool``, ``AsyncEnvPool``) and one
exception tree rooted at ``EnvgenRuntimeError``.

Importing this package imports pydantic but not websockets, asyncio or the socket layer
(loaded when a transport or client of that kind is first used), nor the generator
(``envgen``) or any of its tools. Extras (``docker``, ``ray``, ``server``) are imported on
first use and name themselves when missing (``MissingExtraError``); ``async`` needs no
library any more and stays an accepted, empty extra. ``check_generated`` is
what generated packages call at import to refuse a runtime they do not fit.
"""

from ._client import EnvClient
from ._client_async import AsyncClientStart, AsyncEnvClient
from ._codec import EnvModel, ModelCodec
from ._docker import LocalDockerProvider
from ._exceptions import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    EnvValidationError,
    MissingExtraError,
    ProtocolError,
    ProviderError,
    ServerError,
    ServerValidationError,
    SessionLostError,
    ValidationIssue,
)
from ._http import HttpTransport
from ._http_async import AsyncHttpTransport
from ._pool import AsyncEnvPool, SlotInfo, SlotLostError, SlotResult
from ._pool_sync import EnvPool
from ._provider import LocalProcessProvider, Provider
from ._ray import RayProvider
from ._result import StepResult
from ._retry import RetryPolicy
from ._spec import EnvSpec
from ._transport import AsyncTransport, Transport
from ._websocket import WebSocketTransport
from ._websocket_async import AsyncWebSocketTransport
from .compat import API_VERSION, __version__, check_generated

__all__ = [
    "API_VERSION",
    "AsyncClientStart",
    "AsyncEnvClient",
    "AsyncEnvPool",
    "AsyncHttpTransport",
    "AsyncTransport",
    "AsyncWebSocketTransport",
    "EnvClient",
    "EnvConnectionError",
    "EnvModel",
    "EnvPool",
    "EnvSpec",
    "EnvTimeoutError",
    "EnvValidationError",
    "EnvgenRuntimeError",
    "HttpTransport",
    "LocalDockerProvider",
    "LocalProcessProvider",
    "MissingExtraError",
    "ModelCodec",
    "ProtocolError",
    "Provider",
    "ProviderError",
    "RayProvider",
    "RetryPolicy",
    "ServerError",
    "ServerValidationError",
    "SessionLostError",
    "SlotInfo",
    "SlotLostError",
    "SlotResult",
    "StepResult",
    "Transport",
    "ValidationIssue",
    "WebSocketTransport",
    "__version__",
    "check_generated",
]
