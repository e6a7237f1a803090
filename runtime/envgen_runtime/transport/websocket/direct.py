"""The blocking-socket shell of the WebSocket engine: I/O in the caller's thread.

``DirectConnection`` moves bytes between a socket and a ``frames.FrameEngine`` with no
reader thread or hand-off queue (about half of websockets' threaded client's CPU on a small
step) and raises websockets' exceptions, which ``errors`` maps.

Servers that ping (uvicorn: every 20 s, 20 s to answer) would drop a session nobody reads,
so one daemon thread, the keeper, visits every idle connection every ``KEEPER_INTERVAL_S``
to feed its engine and run its keepalive; it holds them weakly and exits when none are
left. Proxies are left to websockets' threaded client (``direct_allowed``).
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import struct
import sys
import threading
import time
import weakref
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.frames import CloseCode
from websockets.protocol import State

from .frames import FrameEngine, Hop

__all__ = ["DirectConnection", "ThreadedConnection", "connect", "connect_direct", "direct_allowed"]

KEEPER_INTERVAL_S = 5.0
"""How often the keeper visits idle connections (seconds)."""

ENABLED = os.environ.get("ENVGEN_WS_DIRECT", "1") != "0"
"""``ENVGEN_WS_DIRECT=0`` makes every connection use websockets' threaded client."""

_BUFSIZE = 65536
_OPEN = State.OPEN
_CLOSED = State.CLOSED
SEND_TIMEOUT_S = 60.0
"""A send that makes no progress for this long fails the connection (seconds)."""

_WOULD_BLOCK = (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError)
_TIMED_OUT = (TimeoutError, BlockingIOError)  # Python's timeout; SO_RCVTIMEO's EAGAIN
_UNSET = -1.0
# On Linux a plain TCP socket stays in blocking mode and the kernel applies the timeouts
# (SO_RCVTIMEO/SO_SNDTIMEO): one recv() system call per read instead of poll() + recv().
_KERNEL_TIMEOUTS = sys.platform == "linux"


def _timeval(seconds: float | None) -> bytes:
    """A ``struct timeval``; zero (None) means no timeout, so any other is at least 1 us."""
    micro = 0 if seconds is None else max(int(seconds * 1_000_000), 1)
    return struct.pack("ll", *divmod(micro, 1_000_000))


def direct_allowed(url: str, proxy: Any) -> bool:
    """Whether ``url`` may use the engine's own connections (no proxy would be involved).

    ``proxy`` is the ``proxy`` connect option (absent: True, "from the environment").
    """
    if not ENABLED:
        return False
    if proxy is None:
        return True
    if proxy is not True:  # the proxy to use
        return False
    try:
        from websockets.proxy import get_proxy
    except ImportError:  # websockets < 15 does not support proxies at all
        return True
    from websockets.uri import parse_uri

    return get_proxy(parse_uri(url)) is None


class DirectConnection:
    """An open WebSocket client connection whose I/O runs in the calling thread."""

    def __init__(self, sock: socket.socket, engine: FrameEngine) -> None:
        self._sock = sock
        self._engine = engine
        self._protocol = engine.protocol
        self._messages = engine.messages
        self._lock = threading.Lock()
        self._sock_timeout: float | None = _UNSET  # set on first use
        self._kernel = _KERNEL_TIMEOUTS and not isinstance(sock, ssl.SSLSocket)
        self._sock_closed = False
        if self._kernel:
            sock.settimeout(None)  # blocking; the kernel times reads and writes
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, _timeval(SEND_TIMEOUT_S))

    # ------------------------------------------------------------------ public API

    @property
    def state(self) -> State:
        """The protocol state (OPEN, CLOSING, CLOSED)."""
        return self._protocol.state

    def send(self, message: str | bytes) -> None:
        """Send one text (``str``) or binary (``bytes``) message."""
        with self._lock:
            self._send(message)

    def _send(self, message: str | bytes) -> None:
        if self._protocol.state is not _OPEN:
            self._finish_close()
        self._engine.send(message)
        self._flush()

    def recv(self, timeout: float | None = None) -> str | bytes:
        """The next message: ``str`` for text, ``bytes`` for binary.

        Raises TimeoutError when none arrives within ``timeout`` seconds and
        ConnectionClosed once the connection is closed.
        """
        with self._lock:
            return self._recv(timeout)

    def roundtrip(self, message: str, timeout: float) -> str | bytes:
        """Send one message and wait at most ``timeout`` seconds for the next one."""
        with self._lock:
            self._send(message)
            return self._recv(timeout)

    def buffered(self) -> list[str | bytes]:
        """Messages received but not read yet."""
        return list(self._messages)

    def _recv(self, timeout: float | None) -> str | bytes:
        messages = self._messages
        deadline = None if timeout is None else time.monotonic() + timeout
        wait = timeout
        while not messages:
            if self._protocol.state is not _OPEN:
                self._finish_close()
                raise self._engine.close_exc()
            if wait is not None and wait <= 0:
                raise TimeoutError("timed out while waiting for a message")
            self._read(wait)
            if deadline is not None and not messages:
                wait = deadline - time.monotonic()
        return messages.popleft()

    def _read(self, wait: float | None) -> None:
        """Feed the engine one read; TimeoutError if nothing came within ``wait`` seconds."""
        if wait != self._sock_timeout:
            self._set_timeout(wait)
        try:
            data = self._sock.recv(_BUFSIZE)
        except _TIMED_OUT:
            raise TimeoutError("timed out while waiting for a message") from None
        except OSError as exc:
            self._abort(exc)
            raise self._engine.close_exc() from None
        self._feed(data)

    def close(self) -> None:
        """Perform the closing handshake (bounded by the close timeout) and close the socket."""
        with self._lock:
            if not self._sock_closed:
                self._engine.close(CloseCode.NORMAL_CLOSURE)
                self._flush(raise_closed=False)  # a failed write: closed, the goal anyway
                self._finish_close()

    def abort(self) -> None:
        """Close without waiting: a close frame if the socket takes it at once, then close.

        For a connection being abandoned (a timeout, a refused reply): a dead or frozen
        server never answers the closing handshake, and the caller must not wait for it.
        """
        with self._lock:
            if not self._sock_closed:
                self._engine.close(CloseCode.GOING_AWAY)
                data = b"".join(self._engine.outgoing())
                with contextlib.suppress(OSError):
                    self._sock.send(data, self._nowait())
            self._close_socket()  # unregisters it from the keeper

    # ------------------------------------------------------------------ internals

    def _set_timeout(self, seconds: float | None) -> None:
        """Limit the next reads to ``seconds`` (None: wait forever)."""
        if self._kernel:
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _timeval(seconds))
        else:
            self._sock.settimeout(seconds)
        self._sock_timeout = seconds

    def _nowait(self) -> int:
        """The flags for a send or recv that does not wait.

        MSG_DONTWAIT on a kernel-timed socket (a 1 us SO_RCVTIMEO would be a jiffy on Linux);
        others (TLS takes no flags) are made non-blocking.
        """
        if self._kernel:
            return socket.MSG_DONTWAIT
        if self._sock_timeout != 0.0:
            self._set_timeout(0.0)
        return 0

    def _feed(self, data: bytes) -> None:
        """Give a read to the engine and send what it answers (pongs, closes); b"" is an EOF."""
        if data:
            self._engine.receive(data)
            self._flush(raise_closed=False)
        else:  # the server closed the TCP connection: nothing more to send or read
            self._close_socket()

    def _flush(self, *, raise_closed: bool = True) -> None:
        """Write what the engine wants sent; a failed write closes the connection."""
        writes = self._engine.outgoing()
        if writes:
            try:
                self._write(writes)
            except OSError as exc:
                self._abort(exc)
                if raise_closed:
                    raise self._engine.close_exc() from None

    def _write(self, writes: list[bytes]) -> None:
        sock, kernel = self._sock, self._kernel
        if not kernel and self._sock_timeout != SEND_TIMEOUT_S:
            self._set_timeout(SEND_TIMEOUT_S)
        for chunk in writes:
            if not chunk:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_WR)
            elif kernel:
                sock.sendall(chunk)  # SO_SNDTIMEO: a limit on each send() without progress
            else:
                view = memoryview(chunk)  # the limit applies to each send(), as above
                while view:
                    view = view[sock.send(view) :]

    def _abort(self, exc: BaseException) -> None:
        """The socket failed: close it; the engine ends CLOSED (abnormal closure)."""
        self._close_socket()
        self._engine.fail(exc)

    def _close_socket(self) -> None:
        """Close the socket; the engine ends CLOSED."""
        if not self._sock_closed:
            self._sock_closed = True
            with contextlib.suppress(OSError):
                self._sock.close()
            KEEPER.unregister(self)
        self._protocol.receive_eof()

    def _finish_close(self) -> None:
        """Wait (bounded) for the server to end the TCP connection, then close the socket."""
        deadline = time.monotonic() + self._engine.close_timeout
        while self._protocol.state is not _CLOSED and not self._sock_closed:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._engine.fail(TimeoutError("timed out while closing connection"))
                break
            try:
                self._read(remaining)
            except (TimeoutError, ConnectionClosed):  # a failed read is recorded by _abort
                break
        self._close_socket()

    def _keep_alive(self, now: float) -> None:
        """The keeper's visit: service the connection if nobody is using it."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            if self._sock_closed:
                return
            flags = self._nowait()
            while not self._sock_closed:
                try:
                    data = self._sock.recv(_BUFSIZE, flags)
                except _WOULD_BLOCK:
                    break
                self._feed(data)
            if not self._sock_closed:
                failed = self._engine.keepalive(now)
                self._flush(raise_closed=False)
                if failed:
                    self._close_socket()
        except Exception as exc:  # a failed read; never let one connection stop the keeper
            self._abort(exc)
        finally:
            self._lock.release()


class _Keeper:
    """One daemon thread servicing every idle DirectConnection (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connections: weakref.WeakSet[DirectConnection] = weakref.WeakSet()
        self._wake = threading.Event()
        self.running = False

    def register(self, conn: DirectConnection) -> None:
        with self._lock:
            self._connections.add(conn)
            if not self.running:
                self.running = True
                threading.Thread(
                    target=self._run, name="envgen-websocket-keeper", daemon=True
                ).start()

    def unregister(self, conn: DirectConnection) -> None:
        with self._lock:
            self._connections.discard(conn)

    def wake(self) -> None:
        """Visit the connections now (tests; a changed ``KEEPER_INTERVAL_S``)."""
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait(KEEPER_INTERVAL_S)
            self._wake.clear()
            if not self._visit():
                return

    def _visit(self) -> bool:
        """One visit; False when no connection is left (the thread ends).

        Its own frame, so no connection stays referenced while the keeper sleeps.
        """
        with self._lock:
            connections = list(self._connections)
            if not connections:
                self.running = False
                return False
        now = time.monotonic()
        for conn in connections:
            conn._keep_alive(now)
        return True


KEEPER = _Keeper()


def connect_direct(url: str, options: dict[str, Any]) -> DirectConnection:
    """Open a DirectConnection (the handshake included) within the open timeout."""
    engine = FrameEngine(url, options)
    uri, open_timeout = engine.uri, engine.open_timeout
    deadline = time.monotonic() + (open_timeout if open_timeout is not None else 1e9)
    sock = socket.create_connection((uri.host, uri.port), timeout=open_timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        if uri.secure:
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=uri.host)
        sock.sendall(b"".join(engine.outgoing()))
        while engine.handshaking:  # an EOF ends it too (InvalidMessage)
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            try:
                data = sock.recv(_BUFSIZE)
            except TimeoutError:
                raise TimeoutError("timed out while waiting for handshake response") from None
            if data:
                engine.receive(data)
            else:
                engine.receive_eof()
        engine.check_handshake()  # a failed one wants only an EOF sent: the socket is closed
    except BaseException:
        sock.close()
        raise
    conn = DirectConnection(sock, engine)
    KEEPER.register(conn)
    return conn


class ThreadedConnection:
    """websockets' threaded client, for a connection through a proxy."""

    def __init__(self, url: str, options: dict[str, Any]) -> None:
        import inspect

        from websockets.sync.client import connect as library_connect

        accepted = inspect.signature(library_connect).parameters  # it varies by version
        options = {name: value for name, value in options.items() if name in accepted}
        if "legacy" in accepted:
            options["legacy"] = True  # websockets >= 17.1 warns without it
        self.conn = library_connect(url, **options)

    def roundtrip(self, message: str, timeout: float) -> str | bytes:
        """Send one message and wait at most ``timeout`` seconds for the next one."""
        self.conn.send(message)
        reply: str | bytes = self.conn.recv(timeout=timeout)
        return reply

    def buffered(self) -> list[str | bytes]:
        """What the reader thread has received, if anything (a short wait)."""
        try:
            return [self.conn.recv(timeout=0.5)]
        except Exception:
            return []

    def send(self, message: str) -> None:
        self.conn.send(message)

    def abort(self) -> None:
        """Shutting the socket down ends the reader thread at once."""
        sock = self.conn.socket
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()

    def close(self) -> None:
        self.conn.close()


def connect(url: str, options: dict[str, Any]) -> DirectConnection | ThreadedConnection:
    """Open a connection for ``WebSocketTransport``: the engine's own unless a proxy is used."""
    if not direct_allowed(url, options.get("proxy", True)):
        return ThreadedConnection(url, options)
    for hop in Hop(url, options):
        with hop:
            return connect_direct(hop.url, hop.options)
    raise AssertionError("unreachable: Hop raises or the handshake returns")
