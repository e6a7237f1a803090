"""The pool's clients: which asyncio class a slot's session runs on, and ending one quietly.

``async_client_class`` turns the generated client class the pool is given (sync or asyncio)
into the asyncio class every slot's client is made from; ``close_quietly`` ends a client
without letting a dead or frozen server hold the pool up. Both are about one client and know
nothing of slots or servers, so they sit apart from ``aio``, which decides when clients are
made and closed.
"""

from __future__ import annotations

import contextlib
from typing import Any, cast

from ..client.aio import AsyncEnvClient
from ..client.sync import EnvClient

__all__ = ["async_client_class", "close_quietly"]

_CLOSE_TIMEOUT_S = 2.0


def async_client_class(client: type[Any]) -> type[AsyncEnvClient[Any, Any, Any]]:
    """The asyncio client class for ``client`` (a generated sync or async client class).

    A sync ``EnvClient`` subclass gets an asyncio twin with the same spec and hooks (the
    hooks only encode actions and parse replies, which both kinds share).
    """
    if isinstance(client, type) and issubclass(client, AsyncEnvClient):
        return client
    if isinstance(client, type) and issubclass(client, EnvClient):
        namespace = {
            "SPEC": client._spec(),
            "ACTION_CODEC": client.ACTION_CODEC,
            "_step_payload": client._step_payload,
            "_parse_result": client._parse_result,
            "_parse_state": client._parse_state,
            "__module__": client.__module__,
        }
        twin = type(f"Async{client.__name__}", (AsyncEnvClient,), namespace)
        return cast("type[AsyncEnvClient[Any, Any, Any]]", twin)
    raise TypeError(f"client must be an EnvClient or AsyncEnvClient subclass, got {client!r}")


async def close_quietly(client: AsyncEnvClient[Any, Any, Any] | None) -> None:
    """Close ``client`` (if any), swallowing its errors and giving up after ``_CLOSE_TIMEOUT_S``."""
    import asyncio

    if client is not None:
        with contextlib.suppress(Exception, TimeoutError):
            async with asyncio.timeout(_CLOSE_TIMEOUT_S):
                await client.close()
