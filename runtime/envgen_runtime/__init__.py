"""Shared runtime for envgen-generated environment clients.

Generated clients subclass ``EnvClient`` (blocking) and ``AsyncEnvClient`` (asyncio) and
describe their models with ``ModelCodec``; the runtime owns the wire protocols
(``HttpTransport``, ``WebSocketTransport`` and their ``Async`` twins), retries
(``RetryPolicy``), the server lifecycle (``LocalProcessProvider``, ``LocalDockerProvider``,
``RayProvider``), many sessions stepped together (``EnvPool``, ``AsyncEnvPool``) and one
exception tree rooted at ``EnvgenRuntimeError``.

Importing this package imports pydantic but not websockets, asyncio or the socket layer
(loaded when a transport or client of that kind is first used), nor the generator
(``envgen``) or any of its tools. Extras (``docker``, ``gym``, ``ray``, ``server``) are
imported on first use and name themselves when missing (``MissingExtraError``): the
gymnasium API (``GymEnv``, ``GymVectorEnv``, ``ModelSpace``) loads when first named.
``async`` needs no library any more and stays an accepted, empty extra. ``check_generated``
is what generated packages call at import to refuse a runtime they do not fit.
"""

from typing import TYPE_CHECKING, Any

from .client.aio import AsyncClientStart, AsyncEnvClient
from .client.retry import RetryPolicy
from .client.sync import EnvClient
from .client.tools import (
    AsyncToolbox,
    AsyncToolCaller,
    Toolbox,
    ToolCaller,
    ToolResult,
    ToolSpec,
    parse_tool_call,
)
from .compat import API_VERSION, __version__, check_generated
from .core.codec import EnvModel, ModelCodec
from .core.errors import (
    EnvConnectionError,
    EnvgenRuntimeError,
    EnvTimeoutError,
    EnvValidationError,
    EpisodeEndedError,
    MissingExtraError,
    ProtocolError,
    ProviderError,
    SchemaDriftError,
    SchemaDriftWarning,
    ServerError,
    ServerValidationError,
    SessionLostError,
    ToolError,
    ValidationIssue,
)
from .core.result import StepResult
from .core.spec import EnvSpec
from .core.urls import normalize_base_url
from .pool.aio import AsyncEnvPool
from .pool.slots import SlotInfo, SlotLostError, SlotResult
from .pool.sync import EnvPool
from .pool.tools import AsyncPoolToolbox, PoolToolbox, SlotToolResult, ToolCallDroppedError
from .providers.base import Provider
from .providers.docker import LocalDockerProvider
from .providers.local import LocalProcessProvider
from .providers.ray import RayProvider
from .transport.base import AsyncTransport, Transport
from .transport.http.aio import AsyncHttpTransport
from .transport.http.sync import HttpTransport
from .transport.websocket.aio import AsyncWebSocketTransport
from .transport.websocket.sync import WebSocketTransport

if TYPE_CHECKING:
    from .vector.env import GymEnv
    from .vector.pool_env import GymVectorEnv
    from .vector.spaces import ModelSpace

__all__ = [
    "API_VERSION",
    "AsyncClientStart",
    "AsyncEnvClient",
    "AsyncEnvPool",
    "AsyncHttpTransport",
    "AsyncPoolToolbox",
    "AsyncToolCaller",
    "AsyncToolbox",
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
    "EpisodeEndedError",
    "GymEnv",
    "GymVectorEnv",
    "HttpTransport",
    "LocalDockerProvider",
    "LocalProcessProvider",
    "MissingExtraError",
    "ModelCodec",
    "ModelSpace",
    "PoolToolbox",
    "ProtocolError",
    "Provider",
    "ProviderError",
    "RayProvider",
    "RetryPolicy",
    "SchemaDriftError",
    "SchemaDriftWarning",
    "ServerError",
    "ServerValidationError",
    "SessionLostError",
    "SlotInfo",
    "SlotLostError",
    "SlotResult",
    "SlotToolResult",
    "StepResult",
    "ToolCallDroppedError",
    "ToolCaller",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "Toolbox",
    "Transport",
    "ValidationIssue",
    "WebSocketTransport",
    "__version__",
    "check_generated",
    "normalize_base_url",
    "parse_tool_call",
]

_LAZY = {
    "GymEnv": "envgen_runtime.vector.env",
    "GymVectorEnv": "envgen_runtime.vector.pool_env",
    "ModelSpace": "envgen_runtime.vector.spaces",
}
"""Names of the ``gym`` extra: their modules import gymnasium, so they load when first named."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
