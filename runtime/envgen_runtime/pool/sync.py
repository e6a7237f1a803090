"""``EnvPool``: the blocking face of ``AsyncEnvPool``, on an event loop of its own.

Every call runs a coroutine of the async pool on the pool's loop (``CallerLoop``: in the
calling thread, so a round costs no thread hop), so the sync pool is the async pool: the
same lock-step rounds, slot results and failure handling, with no second implementation to
keep in step.
"""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Self, TypeVar, Unpack

from ..providers.base import Provider
from .aio import AsyncEnvPool
from .args import PoolOptions
from .slots import SlotInfo, SlotResult

if TYPE_CHECKING:
    from .caller_loop import CallerLoop

ActT = TypeVar("ActT")
ObsT = TypeVar("ObsT")
StateT = TypeVar("StateT")
T = TypeVar("T")


class EnvPool(Generic[ActT, ObsT, StateT]):
    """``size`` env sessions stepped together, blocking; see ``AsyncEnvPool`` for the rules.

    Same arguments as ``AsyncEnvPool``; generated packages subclass it as ``<Name>Pool``
    with ``CLIENT`` set. Use it from one thread at a time; ``close()`` (or the ``with``
    block's end) stops every server and the pool's loop.
    """

    CLIENT: ClassVar[type[Any] | None] = None

    def __init__(self, size: int, **options: Unpack[PoolOptions]) -> None:
        if options.get("client") is None:
            options["client"] = type(self).CLIENT
        from .caller_loop import CallerLoop  # asyncio loads with the first pool, not on import

        self._pool: AsyncEnvPool[ActT, ObsT, StateT] = AsyncEnvPool(size, **options)
        self._loop: CallerLoop = CallerLoop()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._loop.run(coro)

    @property
    def size(self) -> int:
        """The number of slots."""
        return self._pool.size

    @property
    def strict(self) -> bool:
        """Whether the slots' clients parse strictly (``client_options={"strict": True}``)."""
        return self._pool.strict

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
        """End every session, stop every server and the pool's loop; idempotent."""
        if self._loop.closed:
            return
        try:
            self._run(self._pool.close())
        finally:
            self._loop.close()

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self.close()
