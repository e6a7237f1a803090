"""What one asyncio round trip costs over a blocking one, with no client code at all.

The async client targets compare an asyncio client with the blocking one. Part of the gap is
not the client's: the event loop adds work to every round trip (an ``epoll_wait`` before each
read and one more loop pass to resume the awaiting task). This measures that floor on the
same servers: a fixed request written to a raw socket and its reply read back, once with
blocking ``send``/``recv`` and once through an ``asyncio.BufferedProtocol``, in interleaved
rounds. The floor, added to the sync client's CPU per step, is the best an asyncio client
with no overhead of its own could do.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import statistics
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

KINDS = ("blocking socket", "asyncio protocol")
WARMUP_STEPS = 20


def http_request(url: str, message: str) -> bytes:
    """A keep-alive POST of the stateful protocol's step envelope."""
    parts = urlsplit(url)
    body = json.dumps({"action": {"message": message}}).encode()
    head = (
        f"POST /step HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def http_reply_end(buffer: bytes | bytearray) -> int:
    """Where the first whole HTTP reply in ``buffer`` ends (0: not all there yet)."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return 0
    length = 0
    for line in bytes(buffer[:end]).split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    total = end + 4 + length
    return total if len(buffer) >= total else 0


def websocket_frame(message: str) -> bytes:
    """One masked text frame with OpenEnv's step message (a client must mask its frames)."""
    payload = json.dumps({"type": "step", "data": {"message": message}}).encode()
    mask = os.urandom(4)
    size = len(payload)
    length = bytes([0x80 | size]) if size < 126 else bytes([0xFE]) + size.to_bytes(2, "big")
    head = b"\x81" + length  # FIN, text; masked
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def websocket_reply_end(buffer: bytes | bytearray) -> int:
    """Where the first whole data frame in ``buffer`` ends, control frames before it included
    (0: not all there yet). Server frames are unmasked."""
    start = 0
    while len(buffer) >= start + 2:
        opcode, size, offset = buffer[start] & 0x0F, buffer[start + 1] & 0x7F, start + 2
        if size == 126:
            size, offset = int.from_bytes(buffer[offset : offset + 2], "big"), offset + 2
        elif size == 127:
            size, offset = int.from_bytes(buffer[offset : offset + 8], "big"), offset + 8
        if len(buffer) < offset + size:
            return 0
        start = offset + size
        if opcode < 8:  # a data frame: the reply
            return start
    return 0


def _connect(url: str, transport: str) -> socket.socket:
    """A connected socket (TCP_NODELAY), with the WebSocket handshake done for ``websocket``."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname or "", parts.port or 80), timeout=15)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if transport == "websocket":
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(
            f"GET /ws HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = sock.recv(4096)
            if not chunk:
                raise ConnectionError(f"{url}: closed during the WebSocket handshake")
            reply += chunk
        if not reply.startswith(b"HTTP/1.1 101"):
            raise ConnectionError(f"{url}: handshake refused: {reply[:80]!r}")
    return sock


def _exchange(url: str, transport: str, message: str) -> tuple[bytes, Callable[[Any], int]]:
    """The request bytes to send each round trip, and how to find where its reply ends."""
    if transport == "websocket":
        return websocket_frame(message), websocket_reply_end
    return http_request(url, message), http_reply_end


def blocking_run(url: str, transport: str, message: str, steps: int) -> float:
    """CPU seconds of ``steps`` blocking round trips (send, then recv until the reply is whole)."""
    request, reply_end = _exchange(url, transport, message)
    with _connect(url, transport) as sock:

        def roundtrip() -> None:
            sock.sendall(request)
            buffer = b""
            while not reply_end(buffer):
                chunk = sock.recv(65536)
                if not chunk:
                    raise ConnectionError(f"{url}: closed mid-run")
                buffer += chunk

        for _ in range(WARMUP_STEPS):
            roundtrip()
        cpu = time.process_time()
        for _ in range(steps):
            roundtrip()
        return time.process_time() - cpu


class _Replies(asyncio.BufferedProtocol):
    """Reads into one buffer; wakes the waiting round trip when its reply is whole."""

    def __init__(self, reply_end: Callable[[Any], int]) -> None:
        self._reply_end = reply_end
        self._buffer = memoryview(bytearray(65536))
        self.received = bytearray()
        self.waiter: asyncio.Future[None] | None = None

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._buffer

    def buffer_updated(self, nbytes: int) -> None:
        self.received += self._buffer[:nbytes]
        if self._reply_end(self.received) and self.waiter is not None:
            self.waiter.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(exc or ConnectionError("closed mid-run"))


async def _asyncio_run(url: str, transport: str, message: str, steps: int) -> float:
    request, reply_end = _exchange(url, transport, message)
    sock = _connect(url, transport)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    protocol = _Replies(reply_end)
    writer, _ = await loop.create_connection(lambda: protocol, sock=sock)

    async def roundtrip() -> None:
        protocol.waiter = loop.create_future()
        writer.write(request)
        await protocol.waiter
        del protocol.received[: reply_end(protocol.received)]

    try:
        for _ in range(WARMUP_STEPS):
            await roundtrip()
        cpu = time.process_time()
        for _ in range(steps):
            await roundtrip()
        return time.process_time() - cpu
    finally:
        writer.close()


def asyncio_run(url: str, transport: str, message: str, steps: int) -> float:
    """CPU seconds of ``steps`` round trips on an asyncio protocol (a fresh event loop)."""
    return asyncio.run(_asyncio_run(url, transport, message, steps))


def measure(url: str, transport: str, message: str, rounds: int, steps: int) -> dict[str, Any]:
    """Both loops in ``rounds`` interleaved rounds (order alternating): medians, and the floor."""
    runs: dict[str, list[float]] = {kind: [] for kind in KINDS}
    loops = {KINDS[0]: blocking_run, KINDS[1]: asyncio_run}
    for round_no in range(rounds):
        for kind in KINDS if round_no % 2 == 0 else KINDS[::-1]:
            runs[kind].append(loops[kind](url, transport, message, steps) / steps * 1e6)
    blocking, asyncio_ = (round(statistics.median(runs[kind]), 1) for kind in KINDS)
    return {
        "transport": transport,
        "rounds": rounds,
        "steps_per_round": steps,
        "blocking_cpu_per_step_us": blocking,
        "asyncio_cpu_per_step_us": asyncio_,
        "floor_us": round(asyncio_ - blocking, 1),
    }


def best_async_ratio(sync_client_cpu_us: float, floor_us: float) -> float:
    """The async/sync CPU ratio of an asyncio client adding nothing to the sync one but the
    event loop's floor."""
    return round((sync_client_cpu_us + floor_us) / max(sync_client_cpu_us, 1e-9), 2)
