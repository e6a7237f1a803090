"""The pool's floor: lock-step rounds over many WebSocket sessions with no client code at all.

A pool round writes one step frame to each session's socket and waits until every reply is
back. This does exactly that on raw sockets through ``asyncio.BufferedProtocol``s: fixed,
pre-masked frames out, replies found by their frame length, one future per round, no
websockets protocol, no JSON, no models. What a pool spends per env-step beyond this is its
own code (``bench_pool`` reports both); this much is the kernel's and the event loop's.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from benchmarks.asyncio_floor import _connect, websocket_frame, websocket_reply_end

__all__ = ["LockstepFloor"]


def _masked(payload: bytes) -> bytes:
    """One masked text frame (a client must mask), with a fixed mask: the floor draws none."""
    mask = b"\x01\x02\x03\x04"
    size = len(payload)
    length = bytes([0x80 | size]) if size < 126 else bytes([0xFE]) + size.to_bytes(2, "big")
    return b"\x81" + length + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class _Session(asyncio.BufferedProtocol):
    """Reads into one buffer; counts each whole reply frame into the round."""

    def __init__(self, arrived: Callable[[], None]) -> None:
        self._buffer = memoryview(bytearray(65536))
        self._received = bytearray()
        self._arrived = arrived

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._buffer

    def buffer_updated(self, nbytes: int) -> None:
        self._received += self._buffer[:nbytes]
        while end := websocket_reply_end(self._received):
            del self._received[:end]
            self._arrived()


class LockstepFloor:
    """``sessions`` raw sessions over ``urls``, ``per_server`` on each in turn (as the pool
    places them: the first server full before the next), reset once; ``round()`` steps all.

    Runs on a loop of its own, so that ``round()`` is a blocking call as ``EnvPool.step`` is.
    """

    def __init__(self, urls: list[str], sessions: int, message: str, per_server: int) -> None:
        if sessions > per_server * len(urls):
            raise ValueError(f"{sessions} sessions need more than {len(urls)} servers")
        self._loop = asyncio.new_event_loop()
        self._step = websocket_frame(message)
        self._pending = 0
        self._done: asyncio.Future[None] | None = None
        self._writers: list[asyncio.Transport] = []
        self._loop.run_until_complete(self._open(urls, sessions, per_server))

    def _arrived(self) -> None:
        self._pending -= 1
        if self._pending == 0 and self._done is not None:
            self._done.set_result(None)

    async def _open(self, urls: list[str], sessions: int, per_server: int) -> None:
        for index in range(sessions):
            sock = _connect(urls[index // per_server], "websocket")
            sock.setblocking(False)
            writer, _ = await self._loop.create_connection(
                lambda: _Session(self._arrived), sock=sock
            )
            self._writers.append(writer)
        await self._round(_masked(json.dumps({"type": "reset", "data": {}}).encode()))

    async def _round(self, frame: bytes) -> None:
        self._pending, self._done = len(self._writers), self._loop.create_future()
        for writer in self._writers:
            writer.write(frame)
        await self._done

    def round(self) -> int:
        """One lock-step round of steps; the number of env-steps it made."""
        self._loop.run_until_complete(self._round(self._step))
        return len(self._writers)

    def close(self) -> None:
        for writer in self._writers:
            writer.close()
        self._loop.run_until_complete(asyncio.sleep(0))
        self._loop.close()
