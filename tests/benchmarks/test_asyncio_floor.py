"""benchmarks/asyncio_floor: the raw request bytes, where a reply ends, and both raw loops
against a real loopback server (bench_step's use of the floor: test_bench_step_async_targets)."""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks.asyncio_floor import (
    KINDS,
    asyncio_run,
    best_async_ratio,
    blocking_run,
    http_reply_end,
    http_request,
    measure,
    websocket_frame,
    websocket_reply_end,
)

REPLY = b'{"type":"observation","data":{"observation":{"echoed_message":"hi"}}}'


def server_frame(payload: bytes, opcode: int = 1) -> bytes:
    size = len(payload)
    if size < 126:
        return bytes([0x80 | opcode, size]) + payload
    return bytes([0x80 | opcode, 126]) + size.to_bytes(2, "big") + payload


def test_websocket_frame_is_one_masked_text_frame_of_the_step_message() -> None:
    frame = websocket_frame("hi")
    assert frame[0] == 0x81  # FIN, text
    assert frame[1] & 0x80  # masked, as a client's frames must be
    size, mask, body = frame[1] & 0x7F, frame[2:6], frame[6:]
    assert size == len(body)
    text = bytes(b ^ mask[i % 4] for i, b in enumerate(body))
    assert json.loads(text) == {"type": "step", "data": {"message": "hi"}}
    long = websocket_frame("x" * 300)
    assert long[1] == 0x80 | 126 and int.from_bytes(long[2:4], "big") == len(long) - 8


def test_websocket_reply_ends_after_the_first_whole_data_frame() -> None:
    reply = server_frame(REPLY)
    assert websocket_reply_end(b"") == 0
    assert websocket_reply_end(reply[:1]) == 0
    assert websocket_reply_end(reply[:-1]) == 0  # payload not all there
    assert websocket_reply_end(reply + b"\x81") == len(reply)
    ping = server_frame(b"", opcode=9)
    assert websocket_reply_end(ping) == 0  # a control frame is not the reply
    assert websocket_reply_end(ping + reply) == len(ping) + len(reply)
    long = server_frame(b"y" * 500)
    assert websocket_reply_end(long) == len(long)
    assert websocket_reply_end(long[:300]) == 0


def test_http_request_and_where_a_reply_ends() -> None:
    request = http_request("http://127.0.0.1:8000", "hi")
    head, _, body = request.partition(b"\r\n\r\n")
    assert head.startswith(b"POST /step HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n")
    assert f"Content-Length: {len(body)}".encode() in head
    assert json.loads(body) == {"action": {"message": "hi"}}
    reply = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"
    assert http_reply_end(reply[:20]) == 0  # headers not all there
    assert http_reply_end(reply[:-1]) == 0  # body not all there
    assert http_reply_end(reply + reply) == len(reply)
    assert http_reply_end(b"HTTP/1.1 204 No Content\r\n\r\n") == 27


def test_best_ratio_is_the_sync_client_plus_the_floor() -> None:
    assert best_async_ratio(200.0, 40.0) == 1.2
    assert best_async_ratio(400.0, 40.0) == 1.1


def _serve(conn: socket.socket, transport: str) -> None:
    with conn:
        buffer = b""
        if transport == "websocket":
            while b"\r\n\r\n" not in buffer:
                buffer += conn.recv(4096)
            conn.sendall(
                b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n"
            )
            buffer = b""
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buffer += chunk
            if transport == "websocket":
                while len(buffer) >= 6 and len(buffer) >= 6 + (buffer[1] & 0x7F):
                    buffer = buffer[6 + (buffer[1] & 0x7F) :]
                    conn.sendall(server_frame(REPLY))
            else:
                while (end := http_reply_end(buffer)) > 0:
                    buffer = buffer[end:]
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")


@pytest.fixture(params=["http", "websocket"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """A loopback server answering every step request (a thread per connection).

    No thread may outlive it: later tests fork only from a process without other threads
    (a thread blocked in ``accept()`` is not woken by closing its socket on Linux).
    """
    transport: str = request.param
    threads_before = threading.active_count()

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            _serve(self.request, transport)

    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler) as tcp:
        tcp.block_on_close = True  # server_close() joins the connection threads
        serving = threading.Thread(target=tcp.serve_forever, kwargs={"poll_interval": 0.05})
        serving.start()
        try:
            yield f"http://127.0.0.1:{tcp.server_address[1]}", transport
        finally:
            tcp.shutdown()
            serving.join()
    assert threading.active_count() == threads_before


def test_both_raw_loops_run_round_trips_against_a_server(server: tuple[str, str]) -> None:
    url, transport = server
    assert blocking_run(url, transport, "hi", 50) > 0
    assert asyncio_run(url, transport, "hi", 50) > 0


def test_measure_alternates_the_loops_and_reports_medians(monkeypatch: Any) -> None:
    from benchmarks import asyncio_floor

    calls: list[str] = []
    cpu = iter([0.5, 0.9, 0.8, 0.4, 0.45, 0.85])  # seconds per 10,000 steps

    def fake(kind: str) -> Any:
        def run(url: str, transport: str, message: str, steps: int) -> float:
            calls.append(kind)
            return next(cpu)

        return run

    monkeypatch.setattr(asyncio_floor, "blocking_run", fake(KINDS[0]))
    monkeypatch.setattr(asyncio_floor, "asyncio_run", fake(KINDS[1]))
    row = measure("u", "http", "hi", 3, 10_000)
    assert calls == [KINDS[0], KINDS[1], KINDS[1], KINDS[0], KINDS[0], KINDS[1]]
    # blocking 50, 40, 45 us; asyncio 90, 80, 85 us
    assert row["blocking_cpu_per_step_us"] == 45.0
    assert row["asyncio_cpu_per_step_us"] == 85.0
    assert row["floor_us"] == 40.0
