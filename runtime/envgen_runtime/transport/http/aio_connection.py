"""One asyncio connection for the HTTP shell: bytes in, bytes out, one deadline per read.

An ``asyncio.Protocol`` rather than streams plus ``asyncio.timeout`` per read, measured
(client CPU per step on echo_env over keep-alive HTTP, this machine under load): streams
with a timeout per read cost about 70 us a step more than streams without one, and the
async client was 1.46x the sync one's CPU. Here a read waits on one future, and the
deadline is one timer per connection (``aio_protocol.Waiting``), re-armed only when it fires
early or would fire too late, so most steps arm none.
A ``BufferedProtocol`` reading into one buffer (``aio_protocol.ReadBuffer`` says why).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..aio_protocol import ReadBuffer, Round, Waiting


class Connection(ReadBuffer, Waiting, asyncio.BufferedProtocol):
    """Received bytes wait here until ``recv`` takes them; ``recv`` raises TimeoutError."""

    _TIMED_OUT = "timed out: the reply did not complete before its deadline"

    def __init__(self) -> None:
        super().__init__()
        self._loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self._data: list[bytes] = []
        self._eof = False
        self._error: BaseException | None = None
        self._drained: asyncio.Future[None] | None = None
        self.round: Round | None = None

    # ------------------------------------------------------------------ asyncio callbacks

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def buffer_updated(self, nbytes: int) -> None:
        self._data.append(self._buffer[:nbytes].tobytes())
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._error = exc
        self._wake()
        self.resume_writing()

    def pause_writing(self) -> None:
        self._drained = self._loop.create_future()

    def resume_writing(self) -> None:
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def _wake(self) -> None:
        Waiting._wake(self)
        waiting = self.round
        if waiting is not None:  # anything read (or the end) is news for a lock-step round
            self.round = None
            waiting.arrived(self)

    # ------------------------------------------------------------------ for the shell

    def readable(self) -> bool:
        """Whether ``take`` has something to give: bytes arrived, or the peer closed."""
        return bool(self._data) or self._eof

    def writable(self) -> bool:
        """Whether ``write`` would go through now (the peer reads, nothing failed)."""
        return self._drained is None and self._error is None and self.transport is not None

    def write(self, data: bytes) -> None:
        """``send`` for a caller that checked ``writable``: nothing to wait for."""
        assert self.transport is not None
        self.transport.write(data)

    def take(self) -> bytes:
        """What ``recv`` returns when ``readable``, without waiting."""
        self.round = None
        if self._data:
            data = self._data[0] if len(self._data) == 1 else b"".join(self._data)
            self._data.clear()
            return data
        if self._error is not None:
            raise self._error
        return b""

    def idle_and_open(self) -> bool:
        """Whether nothing arrived while idle and the peer has not closed."""
        return not (self._eof or self._data) and self.transport is not None

    async def send(self, data: bytes, timeout: float) -> None:
        """Write ``data``; wait (at most ``timeout``) only while the peer does not read."""
        assert self.transport is not None
        if self._error is not None:
            raise self._error
        self.transport.write(data)
        if self._drained is not None:
            async with asyncio.timeout(timeout):
                await self._drained
        if self._error is not None:
            raise self._error

    async def recv(self, deadline: float) -> bytes:
        """What has arrived (waiting for some until ``deadline``); b"" once the peer closed."""
        if not self._data and not self._eof:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(self._TIMED_OUT)
            await self._wait(self._loop.time() + remaining)
        return self.take()

    def close(self) -> None:
        """Close the connection and its timer; never fails."""
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        if self.transport is not None:
            self.transport.close()
