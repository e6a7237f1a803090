"""The blocking HTTP transport: performs ``HttpEngine``'s I/O actions on one socket (all
else is in ``engine``); ``socket`` and ``ssl`` are imported on the first connection."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..base import Op
from .engine import CLOSE, DROPPED, OPEN, RECV, SEND, TLS, Flow, HttpEngine, resume

if TYPE_CHECKING:
    import socket


_SLACK_S = 0.05
"""A read may overrun its reply's deadline by this much before the socket timeout is cut."""


class HttpTransport(HttpEngine):
    """One keep-alive connection (a blocking socket) to a stateful OpenEnv HTTP server.

    Not safe for concurrent use from several threads: requests are serialised. See
    ``HttpEngine`` for timeouts, keep-alive, proxies and the continuity checks.
    """

    def _init_io(self) -> None:
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()

    def request(
        self, op: Op, body: Mapping[str, Any], *, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """Send one operation; see ``engine`` for the routes and continuity checks."""
        with self._lock:
            result: dict[str, Any] = self._run(self.flow(op, body, headers))
            return result

    def _run(self, flow: Flow) -> Any:
        """Perform ``flow``'s actions until it returns; a failed action's error goes into it."""
        done, item = resume(flow, None, None)
        while not done:
            try:
                result = self._perform(*item)
            except BaseException as exc:  # the flow closes the connection and re-raises
                done, item = resume(flow, None, exc)
            else:
                done, item = resume(flow, result, None)
        return item

    def _perform(self, kind: int, arg: Any) -> Any:
        sock = self._sock
        if kind == RECV:
            assert sock is not None
            remaining = arg - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("timed out: the reply did not complete before its deadline")
            current = sock.gettimeout()
            if current is None or current > remaining + _SLACK_S:
                sock.settimeout(remaining)
            return sock.recv(65536)
        if kind == SEND:
            assert sock is not None
            data, timeout = arg
            if sock.gettimeout() != timeout:  # bounds sending; RECV cuts it to the deadline
                sock.settimeout(timeout)
            sock.sendall(data)
        elif kind == DROPPED:
            assert sock is not None
            return dropped(sock)
        elif kind == OPEN:
            import socket

            host, port, timeout = arg
            self._sock = socket.create_connection((host, port), timeout)
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        elif kind == TLS:
            assert sock is not None
            server_name, timeout = arg
            sock.settimeout(timeout)
            self._sock = self.tls_context().wrap_socket(sock, server_hostname=server_name)
        elif kind == CLOSE and sock is not None:
            self._sock = None
            sock.close()
        return None

    def reconnect(self, *, headers: Mapping[str, str] | None = None) -> None:
        """Close pooled connections; later requests also carry ``headers`` (until the next)."""
        with self._lock:
            self._run(self.reconnect_flow(headers))

    def close(self) -> None:
        """Close the pooled connection; idempotent."""
        self._closed = True
        self._run(self.close_flow())


def dropped(sock: socket.socket | Any) -> bool:
    """Whether an idle keep-alive socket was closed by the peer (readable means EOF)."""
    import select

    try:
        poller = select.poll()
    except AttributeError:  # pragma: no cover - platforms without poll()
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable)
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))
