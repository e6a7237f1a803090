"""What every asyncio protocol shell (HTTP and WebSocket) shares: one read buffer, one
deadline wait, and the ``Round`` that waits on many connections at once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable


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
    (or has failed) and then calls ``arrived``. ``settle`` (the round's owner's), given the
    key, may finish that reply right there in the read callback (True); a key it leaves
    (False) is handed over by ``arrivals``, which waits for the next when none is ready, so
    the caller reads each such reply as it comes while the others are still on their way.
    One future per wake-up of the caller and one timer per round, where awaiting each
    connection costs a task, a future and a wake-up per connection; replies settled in their
    callbacks wake the caller once, when the last of them is in.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        deadline: float,
        settle: Callable[[int], bool] | None = None,
    ) -> None:
        self._loop = loop
        self._deadline = deadline
        self._settle = settle
        self._keys: dict[int, int] = {}  # id(member) -> its key, until it arrives
        self._ready: list[int] = []
        self._future: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._failure: BaseException | None = None  # what ``settle`` raised, for ``arrivals``
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
        """``key`` has nothing to wait for: it is ready at once (``arrivals`` hands it over)."""
        self._ready.append(key)

    def arrived(self, conn: RoundMember) -> None:
        """``conn`` has something to read (or failed): settle its key, or make it ready."""
        keys = self._keys
        key = keys.pop(id(conn), None)
        if key is None:
            return
        settle = self._settle
        if settle is not None and self._failure is None:
            try:
                if settle(key):
                    if not keys:
                        self._wake()  # the last reply is in: ``arrivals`` ends the round
                    return
            except BaseException as exc:  # raised to the caller by ``arrivals``, not the loop
                self._failure = exc
                self._wake()
                return
        self._ready.append(key)
        self._wake()

    async def arrivals(self) -> list[int]:
        """The keys that arrived unsettled since the last call, in arrival order, waiting for
        the next when none has; empty once every key has been settled or handed over, or the
        deadline passed (a key still expected then never arrived: its read is its timeout).
        Raises what ``settle`` raised."""
        while not self._ready and self._keys and not self.expired and self._failure is None:
            loop = self._loop
            if self._timer is None:
                self._timer = loop.call_at(self._deadline, self._expire)
            future = self._future = loop.create_future()
            try:
                await future
            finally:
                self._future = None
        if self._failure is not None:
            raise self._failure
        ready, self._ready = self._ready, []
        return ready

    def _wake(self) -> None:
        future = self._future
        if future is not None and not future.done():
            future.set_result(None)

    def _expire(self) -> None:
        self.expired = True
        self._settle = None  # the caller now reads every reply not in yet: late ones too
        self._wake()

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
