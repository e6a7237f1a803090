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

    Each connection ``expect``-ed under a key holds the round until it has something to read
    (or has failed) and then calls ``arrived``; ``arrivals`` hands over the keys of those
    that have, waiting for the next when none has, so the caller reads each reply as it
    comes while the others are still on their way. One future per wake-up and one timer per
    round, where awaiting each connection costs a task, a future and a wake-up per
    connection.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        self._loop = loop
        self._deadline = deadline
        self._keys: dict[int, int] = {}  # id(member) -> its key, until it arrives
        self._ready: list[int] = []
        self._future: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.expired = False
        """Whether the round's deadline passed (what has not arrived by then never will)."""

    def expect(self, conn: RoundMember, key: int) -> None:
        """Count ``conn`` under ``key`` until it calls ``arrived`` (ready at once if readable)."""
        if conn.readable():
            self.ready_now(key)
        else:
            conn.round = self
            self._keys[id(conn)] = key

    def ready_now(self, key: int) -> None:
        """``key`` has nothing to wait for: it is ready at once."""
        self._ready.append(key)

    def arrived(self, conn: RoundMember) -> None:
        """``conn`` has something to read (or failed): its key is ready."""
        key = self._keys.pop(id(conn), None)
        if key is None:
            return
        self._ready.append(key)
        future = self._future
        if future is not None and not future.done():
            future.set_result(None)

    async def arrivals(self) -> list[int]:
        """The keys that arrived since the last call, in arrival order, waiting for the next
        when none has; empty once every key has been handed over or the deadline passed (a
        key still expected then never arrived: its read is its timeout)."""
        while not self._ready and self._keys and not self.expired:
            loop = self._loop
            if self._timer is None:
                self._timer = loop.call_at(self._deadline, self._expire)
            future = self._future = loop.create_future()
            try:
                await future
            finally:
                self._future = None
        ready, self._ready = self._ready, []
        return ready

    def _expire(self) -> None:
        self.expired = True
        future = self._future
        if future is not None and not future.done():
            future.set_result(None)

    def close(self) -> None:
        """Stop the deadline timer and forget every connection still expected."""
        if self._timer is not None:
            self._timer.cancel()
        self._keys.clear()


class RoundMember(Protocol):
    """A connection a ``Round`` can wait on: it calls ``round.arrived(self)`` once readable."""

    round: Round | None

    def readable(self) -> bool:
        """Whether a read now would not wait (a message is here, or the connection ended)."""
