"""The pool's arguments: their names and types, their checks, and how seeds spread over slots.

Apart from ``aio`` so that ``EnvPool`` can forward the same ``PoolOptions`` and the rules a
trainer reads (which sessions-per-server a pool takes, which seed each slot gets) sit in
one short place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from ..client.base import ClientOptions
from .servers import ProviderFactory, ProviderKind

__all__ = ["PoolOptions", "check_size", "seeds_for", "sessions_for"]


class PoolOptions(TypedDict, total=False):
    """``AsyncEnvPool``'s keyword arguments, which ``EnvPool`` forwards as they are."""

    client: type[Any] | None
    provider: ProviderKind | ProviderFactory
    provider_options: Mapping[str, Any] | None
    sessions_per_server: int | None
    auto_reset: bool
    client_options: ClientOptions | None
    health_timeout_s: float


def check_size(size: int, sessions_per_server: int | None) -> None:
    """Refuse a size or a sessions-per-server that is not a positive int (None: ask)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a positive integer, got {size!r}")
    if sessions_per_server is None:
        return
    if isinstance(sessions_per_server, bool) or not isinstance(sessions_per_server, int):
        raise ValueError(f"sessions_per_server must be an int, got {sessions_per_server!r}")
    if sessions_per_server < 1:
        raise ValueError(f"sessions_per_server must be at least 1, got {sessions_per_server}")


def sessions_for(transport: str, sessions_per_server: int | None) -> int | None:
    """1 over HTTP (a stateful HTTP server holds one environment), else as given."""
    if transport != "http":
        return sessions_per_server
    if sessions_per_server not in (None, 1):
        raise ValueError(
            "stateful HTTP servers hold one environment each: sessions_per_server must be 1"
        )
    return 1


def seeds_for(seeds: int | Sequence[int | None] | None, count: int) -> list[int | None]:
    """One seed per slot: None for all, ``s, s+1, ...`` for an int, or the list as given."""
    if seeds is None:
        return [None] * count
    if isinstance(seeds, bool):
        raise TypeError("seeds must be an int, a sequence of seeds, or None")
    if isinstance(seeds, int):
        return [seeds + index for index in range(count)]
    listed = list(seeds)
    if len(listed) != count:
        raise ValueError(f"seeds has {len(listed)} entries for {count} slots")
    return listed
