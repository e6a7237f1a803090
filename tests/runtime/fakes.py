"""Tiny misbehaving servers on 127.0.0.1 for error-path tests, plus process helpers.

Real servers cover the features; these fakes exist only to send replies that real servers
never send (malformed JSON, wrong message types, dropped connections).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar


def pid_alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int, timeout_s: float = 5.0) -> bool:
    """True once ``pid`` is gone (orphans are reaped by init asynchronously)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.05)
    return not pid_alive(pid)


@dataclass
class Reply:
    """What the fake HTTP server answers: a status, a body, or a dropped connection."""

    status: int = 200
    body: bytes | str | Any = b""
    content_type: str = "application/json"
    delay_s: float = 0.0
    drop: bool = False


Route = Reply | Callable[[str, bytes], Reply]


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: ClassVar[Mapping[tuple[str, str], Route]] = {}
    seen: ClassVar[list[tuple[str, str, bytes, dict[str, str]]]] = []

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.seen.append((method, self.path, body, dict(self.headers.items())))
        route = self.routes.get((method, self.path))
        reply = Reply(404, b'{"detail":"Not Found"}') if route is None else route
        if callable(reply):
            reply = reply(self.path, body)
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.drop:
            self.close_connection = True
            self.connection.close()
            return
        payload = reply.body
        if not isinstance(payload, bytes | str):
            payload = json.dumps(payload)
        data = payload.encode() if isinstance(payload, str) else payload
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass
class FakeHttp:
    url: str
    seen: list[tuple[str, str, bytes, dict[str, str]]]


@contextmanager
def fake_http(
    routes: Mapping[tuple[str, str], Route], *, http11: bool = False
) -> Iterator[FakeHttp]:
    """An HTTP server on 127.0.0.1 answering ``routes`` ((method, path) -> Reply).

    ``http11`` answers as HTTP/1.1 (what a WebSocket client insists on in a handshake reply).
    """
    attributes: dict[str, Any] = {"routes": routes, "seen": []}
    if http11:
        attributes["protocol_version"] = "HTTP/1.1"
    handler: type[_Handler] = type("Handler", (_Handler,), attributes)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield FakeHttp(f"http://127.0.0.1:{server.server_address[1]}", handler.seen)
    finally:
        server.shutdown()
        server.server_close()


WsHandler = Callable[[Any], None]


@contextmanager
def fake_ws(handler: WsHandler) -> Iterator[str]:
    """A WebSocket server on 127.0.0.1 running ``handler(connection)`` per connection."""
    from websockets.sync.server import serve

    server = serve(handler, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.socket.getsockname()[1]}"
    finally:
        server.shutdown()


def scripted_ws(replies: list[str | bytes]) -> WsHandler:
    """Handler that answers the n-th message of a connection with ``replies[n]``."""

    def handler(conn: Any) -> None:
        for reply in replies:
            try:
                conn.recv(timeout=10)
                conn.send(reply)
            except Exception:
                return

    return handler


def connections_to(port: int) -> int:
    """This process's open TCP connections to ``port`` (``/proc``: the sockets it holds)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    count = 0
    with open("/proc/net/tcp") as table:
        for line in list(table)[1:]:
            fields = line.split()
            if fields[9] in inodes and int(fields[2].rsplit(":", 1)[1], 16) == port:
                count += 1
    return count
