"""What every asyncio protocol shell (HTTP and WebSocket) shares: one read buffer, one
deadline wait, and the ``Round`` that waits on many connections at once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import asyncio


class ReadBuffer:
    """For an ``asyncio.BufferedProtocol``: the transport reads into one buffer per connection.

    A plain ``Protocol`` gets each read as a fresh 256 KiB ``recv``, which glibc maps, shrinks
    and unmaps (three system calls and page faults per reply).
    """

    def __init__(self) -> None:
        self._buffer = memoryview(bytearray(65536))

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._buffer


class Waiting:
    """For an asyncio protocol: a read sleeps on one future that the loop's callbacks wake;
    one deadline timer serves every read, re-armed only when it fires early or would fire
    after the awaited read's deadline (a timer per read costs a handle, a heap push and a
    cancel). The protocol sets ``_loop``."""

    _loop: asyncio.AbstractEventLoop
    _waiter: asyncio.Future[None] | None = None
    _deadline: float | None = None  # loop time by which the awaited read is due
    _expiry: asyncio.TimerHandle | None = None
    _TIMED_OUT = "timed out while waiting for a message"

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self, deadline: float | None = None) -> None:
        """Until ``_wake``; past ``deadline`` (loop time, if given) TimeoutError instead."""
        loop = self._loop
        if deadline is not None:
            self._deadline = deadline
            expiry = self._expiry
            if expiry is None or expiry.when() > deadline:  # it would fire too late
                if expiry is not None:
                    expiry.cancel()
                self._expiry = loop.call_at(deadline, self._expire)
        self._waiter = loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = self._deadline = None

    def _expire(self) -> None:
        """The deadline timer: fail the awaited read if it is late, else wait for its deadline."""
        self._expiry = None
        deadline = self._deadline
        if deadline is None:
            return  # idle: the next read arms a new timer
        if self._loop.time() < deadline:
            self._expiry = self._loop.call_at(deadline, self._expire)
            return
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(TimeoutError(self._TIMED_OUT))


class Round:
    """One wait for the replies of many connections: the pool's lock-step rounds.

    Each connection ``expect``-ed holds the round until it has something to read (or has
    failed) and then calls ``arrived``; ``wait`` sleeps on one future for all of them, with
    one timer for the round's deadline. One future and one timer per round, where awaiting
    each connection costs a task, a future and a wake-up per connection.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._pending = 0
        self._future: asyncio.Future[None] | None = None

    def expect(self, conn: RoundMember) -> None:
        """Count ``conn`` in this round until it calls ``arrived`` (unless it is ready now)."""
        if not conn.readable():
            conn.round = self
            self._pending += 1

    def arrived(self) -> None:
        self._pending -= 1
        future = self._future
        if self._pending == 0 and future is not None and not future.done():
            future.set_result(None)

    async def wait(self, deadline: float) -> None:
        """Until every expected connection is readable, or ``deadline`` (loop time) passes."""
        if self._pending <= 0:
            return
        future = self._future = self._loop.create_future()
        timer = self._loop.call_at(deadline, _settle, future)
        try:
            await future
        finally:
            timer.cancel()
            self._future = None


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class RoundMember(Protocol):
    """A connection a ``Round`` can wait on: it calls ``round.arrived()`` once readable."""

    round: Round | None

    def readable(self) -> bool:
        """Whether a read now would not wait (a message is here, or the connection ended)."""
