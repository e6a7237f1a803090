"""``EnvPool``: the blocking face of ``AsyncEnvPool``, one event loop in a background thread.

Every call hands a coroutine to the pool's own loop and waits for it, so the sync pool is the
async pool: the same sends-before-awaits stepping, slot results and failure handling, with
no second implementation to keep in step.
"""

from __future__ import annotations

import threading
from collections.abc import Coroutine, Sequence
from typing import Any, ClassVar, Generic, Self, TypeVar, Unpack

from ..providers.base import Provider
from .aio import AsyncEnvPool
from .args import PoolOptions
from .slots import SlotInfo, SlotResult

ActT = TypeVar("ActT")
ObsT = TypeVar("ObsT")
StateT = TypeVar("StateT")
T = TypeVar("T")


class EnvPool(Generic[ActT, ObsT, StateT]):
    """``size`` env sessions stepped together, blocking; see ``AsyncEnvPool`` for the rules.

    Same arguments as ``AsyncEnvPool``; generated packages subclass it as ``<Name>Pool``
    with ``CLIENT`` set. Use it from one thread at a time; ``close()`` (or the ``with``
    block's end) stops every server and the pool's loop thread.
    """

    CLIENT: ClassVar[type[Any] | None] = None

    def __init__(self, size: int, **options: Unpack[PoolOptions]) -> None:
        import asyncio

        if options.get("client") is None:
            options["client"] = type(self).CLIENT
        self._pool: AsyncEnvPool[ActT, ObsT, StateT] = AsyncEnvPool(size, **options)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="envgen-pool-loop", daemon=True
        )
        self._thread.start()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        import asyncio

        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    @property
    def size(self) -> int:
        """The number of slots."""
        return self._pool.size

    @property
    def slots(self) -> tuple[SlotInfo, ...]:
        """Each slot's server and state."""
        return self._pool.slots

    @property
    def servers(self) -> tuple[Provider, ...]:
        """The providers of the servers now in use."""
        return self._pool.servers

    @property
    def replacements(self) -> int:
        """How many servers the pool started to replace lost ones."""
        return self._pool.replacements

    def start(self) -> Self:
        """Start the servers (all at once) and attach every slot; idempotent."""
        self._run(self._pool.start())
        return self

    def reset(
        self,
        seeds: int | Sequence[int | None] | None = None,
        *,
        slots: Sequence[int] | None = None,
        **kwargs: Any,
    ) -> list[SlotResult[ObsT]]:
        """Start new episodes (see ``AsyncEnvPool.reset``)."""
        return self._run(self._pool.reset(seeds, slots=slots, **kwargs))

    def step(self, actions: Sequence[ActT]) -> list[SlotResult[ObsT]]:
        """Step every slot at once (see ``AsyncEnvPool.step``)."""
        return self._run(self._pool.step(actions))

    def wait_ready(self, timeout_s: float | None = None) -> None:
        """Wait until every server replacement under way has finished."""
        self._run(self._pool.wait_ready(timeout_s))

    def close(self) -> None:
        """End every session, stop every server and the loop thread; idempotent."""
        if self._loop.is_closed():
            return
        try:
            self._run(self._pool.close())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self.close()
