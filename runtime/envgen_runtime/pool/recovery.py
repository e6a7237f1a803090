"""How the pool recovers: failed slots told apart, lost servers replaced, slots re-placed.

``Recovery`` is the part of ``AsyncEnvPool`` that runs after a failure: ``_settle`` probes
the servers of slots whose connection failed, to tell a dead server (its slots wait for a
replacement started in the background) from a lost session (the slot gets a new one on the
same server); either way the slot's next step is a fresh reset. It sits apart from ``aio``,
which decides how a step or reset runs, and shares that class's records.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from ..core.errors import ProviderError
from .clients import close_quietly
from .servers import server_alive
from .slots import Failure, Server, Slot, SlotLostError, SlotResult, error_result

if TYPE_CHECKING:
    import asyncio

    from ..client.aio import AsyncEnvClient

__all__ = ["Recovery"]

ObsT = TypeVar("ObsT")

_REPLACE_ATTEMPTS = 3


class Recovery(Generic[ObsT]):
    """Failure handling for ``AsyncEnvPool``, over the records it keeps (declared here)."""

    _servers: list[Server]
    _unstopped: list[Server]
    _tasks: set[asyncio.Task[None]]
    _closed: bool
    _health_path: str
    _health_timeout_s: float
    replacements: int
    # AsyncEnvPool's: a new server of the pool's provider, a slot's client, a slot placed.
    _start_server: Callable[[], Coroutine[Any, Any, Server]]
    _new_client: Callable[[Server], AsyncEnvClient[Any, Any, Any]]
    _attach: Callable[[Slot, Server], None]

    def _waiting(self, slot: Slot) -> SlotResult[ObsT]:
        failed, slot.unplaced = slot.unplaced, None
        if failed is not None:
            return self._unplaced(slot, failed)
        message = f"slot {slot.index} lost its server; a replacement is starting"
        return error_result(slot, SlotLostError(message, slot=slot.index, server_lost=True))

    def _unplaced(self, slot: Slot, error: ProviderError) -> SlotResult[ObsT]:
        """No server could take ``slot`` now: start one in the background, report the error."""
        slot.needs_reset = slot.done = True
        self._spawn(self._replace(None, [slot]))
        return error_result(slot, error)

    async def _settle(
        self, outcomes: Sequence[SlotResult[ObsT] | Failure]
    ) -> list[SlotResult[ObsT]]:
        """Probe the servers of failed slots to tell which died; each slot's result."""
        import asyncio

        servers = {o.server.serial: o.server for o in outcomes if isinstance(o, Failure)}
        if not servers:
            return cast("list[SlotResult[ObsT]]", outcomes)
        health, timeout_s = self._health_path, self._health_timeout_s
        alive = await asyncio.gather(
            *(server_alive(s, health, timeout_s) for s in servers.values())
        )
        dead = {serial for serial, ok in zip(servers, alive, strict=True) if not ok}
        for serial in dead:
            self._lose_server(servers[serial])
        return [
            await self._lost(o, o.server.serial in dead) if isinstance(o, Failure) else o
            for o in outcomes
        ]

    async def _lost(self, failure: Failure, server_lost: bool) -> SlotResult[ObsT]:
        """The failed slot continues from a reset (on a new session if its server lives)."""
        slot, server = failure.slot, failure.slot.server
        slot.needs_reset = slot.done = True
        if not server_lost and server is not None and not server.lost:
            old, slot.client = slot.client, self._new_client(server)
            await close_quietly(old)
        what = "its server died" if server_lost else "its session ended"
        error = SlotLostError(
            f"slot {slot.index}: {what} ({failure.error.message}); it continues from a fresh reset",
            slot=slot.index,
            server_lost=server_lost,
            cause=failure.error,
        )
        return error_result(slot, error)

    def _lose_server(self, server: Server) -> None:
        """Detach ``server``'s slots and start its replacement in the background."""
        if server.lost:
            return
        server.lost = True
        if server in self._servers:
            self._servers.remove(server)
        self._unstopped.append(server)  # until ``_replace`` has stopped it (or ``close`` does)
        orphans, server.slots = server.slots, []
        for slot in orphans:
            self._spawn(close_quietly(slot.client))
            slot.client, slot.server = None, None
            slot.needs_reset = slot.done = True
        self._spawn(self._replace(server, orphans))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        import asyncio

        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _replace(self, lost: Server | None, orphans: list[Slot]) -> None:
        """Stop ``lost`` (if any), start a new server and attach ``orphans`` to it."""
        import asyncio

        if lost is not None:
            await asyncio.to_thread(lost.provider.stop)
            if lost in self._unstopped:
                self._unstopped.remove(lost)
        for attempt in range(_REPLACE_ATTEMPTS):
            try:
                server = await self._start_server()
                break
            except ProviderError as exc:
                if attempt == _REPLACE_ATTEMPTS - 1:
                    for slot in orphans:
                        slot.unplaced = exc  # reported by the slot's next call, then retried
                    return
                await asyncio.sleep(0.5 * 2**attempt)
        if self._closed:
            await asyncio.to_thread(server.provider.stop)
            return
        self.replacements += 1
        self._servers.append(server)
        for slot in orphans:
            self._attach(slot, server)
