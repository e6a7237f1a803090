"""Shared runtime for envgen-generated environment clients.

Generated clients subclass ``EnvClient`` and describe their models with ``ModelCodec``; the
runtime owns the wire protocols (``HttpTransport``, ``WebSocketTransport``), the server
lifecycle (``LocalProcessProvider``) and one exception tree rooted at ``EnvgenRuntimeError``.

Importing this package imports pydantic but not requests or websockets (loaded when a
transport of that kind is first used), nor any other part of ``generator``.
"""

from ._client import EnvClient
from ._codec import EnvModel, ModelCodec
from ._exceptions import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    EnvValidationError,
    ProtocolError,
    ProviderError,
    ServerError,
    ServerValidationError,
    ValidationIssue,
)
from ._http import HttpTransport
from ._provider import LocalProcessProvider, Provider
from ._result import StepResult
from ._spec import EnvSpec
from ._transport import Transport
from ._websocket import WebSocketTransport

__all__ = [
    "EnvClient",
    "EnvConnectionError",
    "EnvModel",
    "EnvSpec",
    "EnvTimeoutError",
    "EnvValidationError",
    "EnvgenRuntimeError",
    "HttpTransport",
    "LocalProcessProvider",
    "ModelCodec",
    "ProtocolError",
    "Provider",
    "ProviderError",
    "ServerError",
    "ServerValidationError",
    "StepResult",
    "Transport",
    "ValidationIssue",
    "WebSocketTransport",
]
