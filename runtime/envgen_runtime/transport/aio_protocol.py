"""What every asyncio protocol shell (HTTP and WebSocket) shares: one read buffer and one
deadline wait."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
