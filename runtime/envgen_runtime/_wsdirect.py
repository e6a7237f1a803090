"""A WebSocket client connection that does its I/O in the caller's thread.

``websockets.sync.client`` runs a reader thread per connection and hands every message to
the caller through a queue: on a small step that hand-off (queue, locks, thread wakeups) is
about half of the client's CPU. ``DirectConnection`` instead drives websockets' sans-I/O
``ClientProtocol`` from the calling thread on a blocking socket with timeouts, and offers
what ``WebSocketTransport`` uses of ``ClientConnection``: ``send``, ``recv(timeout=...)``
and ``close``, raising the same exceptions (``ConnectionClosedOK``/``ConnectionClosedError``,
``TimeoutError``, ``InvalidStatus``, ...), so error mapping is unchanged.

Without a reader thread nobody would read the socket while the client is idle, and servers
that ping (uvicorn: every 20 s, 20 s to answer) would drop an idle session. One shared
daemon thread, the keeper, visits every open connection every ``KEEPER_INTERVAL_S``: when
the connection is not in use (a non-blocking acquire of its lock) it reads whatever has
arrived, lets the protocol answer pings and close frames, and keeps any data message for
the next ``recv``. It also pings a server that has been silent for ``PING_INTERVAL_S`` and
fails the connection if nothing comes back within ``PING_TIMEOUT_S`` (as websockets'
keepalive does). The keeper holds connections through weak references and exits when
there are none left.

Not supported here (``WebSocketTransport`` uses websockets' threaded client for them):
proxies and redirects.
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
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed, InvalidMessage
from websockets.extensions.permessage_deflate import enable_client_permessage_deflate
from websockets.frames import CloseCode, Frame, Opcode
from websockets.http11 import USER_AGENT
from websockets.protocol import State
from websockets.uri import parse_uri

__all__ = ["DirectConnection", "connect_direct", "direct_allowed"]

KEEPER_INTERVAL_S = 5.0
"""How often the keeper visits idle connections (seconds)."""
PING_INTERVAL_S = 20.0
"""The keeper pings a server it has heard nothing from for this long (seconds)."""
PING_TIMEOUT_S = 20.0
"""...and fails the connection if the server stays silent this much longer (seconds)."""

ENABLED = os.environ.get("ENVGEN_WS_DIRECT", "1") != "0"
"""``ENVGEN_WS_DIRECT=0`` makes every connection use websockets' threaded client."""

_BUFSIZE = 65536
_OPEN = State.OPEN
_CLOSED = State.CLOSED
_TEXT = Opcode.TEXT
_BINARY = Opcode.BINARY
_CONT = Opcode.CONT
SEND_TIMEOUT_S = 60.0
"""A send that makes no progress for this long fails the connection (seconds)."""

_WOULD_BLOCK = (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError)
_TIMED_OUT = (TimeoutError, BlockingIOError)  # Python's timeout; SO_RCVTIMEO's EAGAIN
_UNSET = -1.0
# On Linux a plain TCP socket stays in blocking mode and the kernel applies the timeouts
# (SO_RCVTIMEO/SO_SNDTIMEO): one recv() system call per read instead of poll() + recv().
_KERNEL_TIMEOUTS = sys.platform == "linux"


def _timeval(seconds: float | None) -> bytes:
    """A ``struct timeval``; zero means no timeout."""
    if seconds is None:
        return struct.pack("ll", 0, 0)
    whole = int(seconds)
    micro = max(int((seconds - whole) * 1_000_000), 0 if whole else 1)
    return struct.pack("ll", whole, micro)


def direct_allowed(url: str, proxy: Any) -> bool:
    """Whether ``url`` may use a DirectConnection (no proxy would be involved).

    ``proxy`` is the ``proxy`` option given to websockets' ``connect`` (absent: its
    default, True, meaning "from the environment").
    """
    if not ENABLED:
        return False
    if proxy is None:
        return True
    if proxy is not True:
        return False
    try:
        from websockets.proxy import get_proxy
    except ImportError:  # websockets < 15 does not support proxies at all
        return True
    return get_proxy(parse_uri(url)) is None


class DirectConnection:
    """An open WebSocket client connection whose I/O runs in the calling thread."""

    def __init__(self, sock: socket.socket, protocol: ClientProtocol, close_timeout: float) -> None:
        self._sock = sock
        self._protocol = protocol
        self._close_timeout = close_timeout
        self._lock = threading.Lock()
        self._messages: deque[str | bytes] = deque()
        self._fragments: list[bytes] = []
        self._fragment_opcode: Opcode | None = None
        self._sock_timeout: float | None = _UNSET  # set on first use
        self._kernel = _KERNEL_TIMEOUTS and not isinstance(sock, ssl.SSLSocket)
        self._sock_closed = False
        self._connection_exc: BaseException | None = None
        self._last_recv = time.monotonic()
        self._ping_sent: float | None = None

    # ------------------------------------------------------------------ public API

    @property
    def state(self) -> State:
        """The protocol state (OPEN, CLOSING, CLOSED)."""
        return self._protocol.state

    def send(self, message: str | bytes) -> None:
        """Send one text (``str``) or binary (``bytes``) message."""
        with self._lock:
            protocol = self._protocol
            if protocol.state is not _OPEN:
                self._finish_close()
                raise self._close_exc()
            if isinstance(message, str):
                protocol.send_text(message.encode())
            else:
                protocol.send_binary(message)
            self._flush()

    def recv(self, timeout: float | None = None) -> str | bytes:
        """The next message: ``str`` for text, ``bytes`` for binary.

        Raises TimeoutError when none arrives within ``timeout`` seconds and
        ConnectionClosed once the connection is closed.
        """
        with self._lock:
            messages = self._messages
            if messages:
                return messages.popleft()
            deadline = None if timeout is None else time.monotonic() + timeout
            wait = timeout
            while True:
                if self._protocol.state is not _OPEN:
                    self._finish_close()
                    raise self._close_exc()
                if deadline is not None:
                    if wait is None:
                        wait = deadline - time.monotonic()
                    if wait <= 0:
                        raise TimeoutError("timed out while waiting for a message")
                if wait != self._sock_timeout:
                    self._set_timeout(wait)
                try:
                    data = self._sock.recv(_BUFSIZE)
                except _TIMED_OUT:
                    raise TimeoutError("timed out while waiting for a message") from None
                except OSError as exc:
                    self._abort(exc)
                    raise self._close_exc() from None
                if data:
                    self._feed(data)
                else:
                    self._eof()
                if messages:
                    return messages.popleft()
                wait = None

    def close(self) -> None:
        """Perform the closing handshake (bounded by the close timeout) and close the socket."""
        with self._lock:
            if not self._sock_closed:
                if self._protocol.state is _OPEN:
                    self._protocol.send_close(CloseCode.NORMAL_CLOSURE)
                    with contextlib.suppress(ConnectionClosed):  # closed: the goal anyway
                        self._flush()
                self._finish_close()
        KEEPER.unregister(self)

    def abort(self) -> None:
        """Close without waiting: a close frame if the socket takes it at once, then close.

        For a connection being abandoned (a timeout, a refused reply): a dead or frozen
        server never answers the closing handshake, and the caller must not wait for it.
        """
        with self._lock:
            if not self._sock_closed:
                if self._protocol.state is _OPEN:
                    self._protocol.send_close(CloseCode.GOING_AWAY)
                    data = b"".join(self._protocol.data_to_send())
                    with contextlib.suppress(OSError):
                        self._sock.send(data, socket.MSG_DONTWAIT)
                self._close_socket()
            self._protocol.receive_eof()
        KEEPER.unregister(self)

    # ------------------------------------------------------------------ internals

    def _handshake(self, deadline: float) -> None:
        """Send the opening handshake and wait for the response (caller holds no lock)."""
        protocol = self._protocol
        with self._lock:
            self._write(protocol.data_to_send(), deadline=deadline)
            while protocol.state is State.CONNECTING and protocol.handshake_exc is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("timed out while waiting for handshake response")
                self._sock.settimeout(remaining)
                self._sock_timeout = remaining
                try:
                    data = self._sock.recv(_BUFSIZE)
                except TimeoutError:
                    raise TimeoutError("timed out while waiting for handshake response") from None
                if data:
                    protocol.receive_data(data)
                else:
                    protocol.receive_eof()
                    if protocol.state is State.CONNECTING and protocol.handshake_exc is None:
                        raise InvalidMessage("connection closed during the opening handshake")
                self._handle_events(protocol.events_received())
                # Handshake writes can only be the end of stream after a failure.
                for chunk in protocol.data_to_send():
                    if not chunk:
                        self._shutdown_write()
            if protocol.handshake_exc is not None:
                raise protocol.handshake_exc
            if self._kernel:
                self._sock.settimeout(None)  # blocking; the kernel times reads and writes
                self._sock.setsockopt(
                    socket.SOL_SOCKET, socket.SO_SNDTIMEO, _timeval(SEND_TIMEOUT_S)
                )
            self._sock_timeout = _UNSET

    def _set_timeout(self, seconds: float | None) -> None:
        """Limit the next reads to ``seconds`` (None: wait forever)."""
        if self._kernel:
            self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _timeval(seconds))
        else:
            self._sock.settimeout(seconds)
        self._sock_timeout = seconds

    def _recv_nowait(self) -> bytes:
        """What has arrived, without waiting; BlockingIOError (or SSLWantReadError) if nothing."""
        if self._kernel:
            return self._sock.recv(_BUFSIZE, socket.MSG_DONTWAIT)
        if self._sock_timeout != 0.0:
            self._set_timeout(0.0)
        return self._sock.recv(_BUFSIZE)

    def _feed(self, data: bytes) -> None:
        """Give received bytes to the protocol; send what it answers; keep messages."""
        protocol = self._protocol
        protocol.receive_data(data)
        self._last_recv = time.monotonic()
        writes = protocol.data_to_send()
        if writes:
            try:
                self._write(writes)
            except OSError as exc:
                self._abort(exc)
        self._handle_events(protocol.events_received())

    def _handle_events(self, events: Iterable[Any]) -> None:
        for event in events:
            if not isinstance(event, Frame):
                continue  # the handshake response
            opcode = event.opcode
            if opcode is _TEXT or opcode is _BINARY:
                if event.fin:
                    self._deliver(opcode, event.data)
                else:
                    self._fragment_opcode = opcode
                    self._fragments = [bytes(event.data)]
            elif opcode is _CONT and self._fragment_opcode is not None:
                self._fragments.append(bytes(event.data))
                if event.fin:
                    opcode, self._fragment_opcode = self._fragment_opcode, None
                    data, self._fragments = b"".join(self._fragments), []
                    self._deliver(opcode, data)

    def _deliver(self, opcode: Opcode, data: bytes | bytearray | memoryview) -> None:
        if opcode is _BINARY:
            self._messages.append(bytes(data))
            return
        try:
            self._messages.append(str(data, "utf-8"))
        except UnicodeDecodeError as exc:
            # What websockets does: fail the connection with 1007 (invalid data).
            self._connection_exc = exc
            self._protocol.fail(CloseCode.INVALID_DATA, f"{exc.reason} at position {exc.start}")
            try:
                self._write(self._protocol.data_to_send())
            except OSError as write_exc:
                self._abort(write_exc)

    def _flush(self) -> None:
        writes = self._protocol.data_to_send()
        if writes:
            try:
                self._write(writes)
            except OSError as exc:
                self._abort(exc)
                raise self._close_exc() from None

    def _write(self, writes: list[bytes], *, deadline: float | None = None) -> None:
        sock = self._sock
        if deadline is not None:  # the handshake (Python timeouts still)
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            self._sock_timeout = _UNSET
            for chunk in writes:
                sock.sendall(chunk)
            return
        kernel = self._kernel
        if not kernel and self._sock_timeout != SEND_TIMEOUT_S:
            self._set_timeout(SEND_TIMEOUT_S)
        for chunk in writes:
            if not chunk:
                self._shutdown_write()
            elif kernel:
                sock.sendall(chunk)  # SO_SNDTIMEO: a limit on each send() without progress
            else:
                view = memoryview(chunk)  # the limit applies to each send(), as above
                while view:
                    view = view[sock.send(view) :]

    def _shutdown_write(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)

    def _eof(self) -> None:
        """The server closed the TCP connection."""
        protocol = self._protocol
        protocol.receive_eof()
        self._handle_events(protocol.events_received())
        for chunk in protocol.data_to_send():
            if not chunk:
                self._shutdown_write()
        self._close_socket()

    def _abort(self, exc: BaseException) -> None:
        """The socket failed: close it; the protocol ends CLOSED (abnormal closure)."""
        if self._connection_exc is None:
            self._connection_exc = exc
        self._close_socket()
        self._protocol.receive_eof()

    def _close_socket(self) -> None:
        if not self._sock_closed:
            self._sock_closed = True
            with contextlib.suppress(OSError):
                self._sock.close()
            KEEPER.unregister(self)

    def _finish_close(self) -> None:
        """Wait (bounded) for the server to end the TCP connection, then close the socket."""
        if self._sock_closed:
            self._protocol.receive_eof()  # idempotent; makes the state CLOSED
            return
        deadline = time.monotonic() + self._close_timeout
        while self._protocol.state is not _CLOSED:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if self._connection_exc is None:
                    self._connection_exc = TimeoutError("timed out while closing connection")
                break
            try:
                self._set_timeout(remaining)
                data = self._sock.recv(_BUFSIZE)
            except OSError as exc:
                if self._connection_exc is None and not isinstance(exc, _TIMED_OUT):
                    self._connection_exc = exc
                break
            if not data:
                self._eof()
                break
            try:
                self._feed(data)
            except OSError:
                break
        self._close_socket()
        self._protocol.receive_eof()

    def _close_exc(self) -> ConnectionClosed:
        exc = self._protocol.close_exc
        if self._connection_exc is not None:
            exc.__cause__ = self._connection_exc
        return exc

    def _keep_alive(self, now: float) -> None:
        """The keeper's visit: service the connection if nobody is using it."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            if self._sock_closed:
                return
            chunks: list[bytes] = []
            while True:
                try:
                    data = self._recv_nowait()
                except _WOULD_BLOCK:
                    break
                except OSError as exc:
                    self._abort(exc)
                    return
                if not data:
                    chunks.append(b"")
                    break
                chunks.append(data)
            for data in chunks:
                if data:
                    self._feed(data)
                else:
                    self._eof()
            protocol = self._protocol
            if self._sock_closed or protocol.state is not _OPEN:
                return
            if self._ping_sent is not None and self._last_recv >= self._ping_sent:
                self._ping_sent = None
            if self._ping_sent is not None:
                if now - self._ping_sent > PING_TIMEOUT_S:
                    protocol.fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
                    self._connection_exc = TimeoutError("keepalive ping timeout")
                    with contextlib.suppress(OSError):
                        self._write(protocol.data_to_send())
                    self._close_socket()
                    protocol.receive_eof()
            elif now - self._last_recv >= PING_INTERVAL_S:
                protocol.send_ping(os.urandom(4))
                self._ping_sent = now
                try:
                    self._write(protocol.data_to_send())
                except OSError as exc:
                    self._abort(exc)
        except Exception:  # never let one connection stop the keeper
            self._connection_exc = self._connection_exc or RuntimeError("keeper failed")
            self._close_socket()
            self._protocol.receive_eof()
        finally:
            self._lock.release()


class _Keeper:
    """One daemon thread servicing every idle DirectConnection (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connections: weakref.WeakSet[DirectConnection] = weakref.WeakSet()
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()

    def register(self, conn: DirectConnection) -> None:
        with self._lock:
            self._connections.add(conn)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="envgen-websocket-keeper", daemon=True
                )
                self._thread.start()

    def unregister(self, conn: DirectConnection) -> None:
        with self._lock:
            self._connections.discard(conn)

    def wake(self) -> None:
        """Visit the connections now (tests; a changed ``KEEPER_INTERVAL_S``)."""
        self._wake.set()

    @property
    def running(self) -> bool:
        with self._lock:
            return self._thread is not None

    def _run(self) -> None:
        while True:
            self._wake.wait(KEEPER_INTERVAL_S)
            self._wake.clear()
            if not self._visit():
                return

    def _visit(self) -> bool:
        with self._lock:
            connections = list(self._connections)
            if not connections:
                self._thread = None
                return False
        now = time.monotonic()
        for conn in connections:
            conn._keep_alive(now)
        return True


KEEPER = _Keeper()


def connect_direct(
    url: str,
    *,
    open_timeout: float | None = 10.0,
    close_timeout: float | None = 10.0,
    max_size: int | None = 2**20,
    additional_headers: Mapping[str, str] | None = None,
    compression: str | None = "deflate",
    logger: Any = None,
    **_ignored: Any,
) -> DirectConnection:
    """Open a DirectConnection (the handshake included) within ``open_timeout`` seconds.

    Takes the keyword arguments of websockets' ``connect`` that matter here and ignores
    the rest (``proxy``, ``legacy``): call it only when ``direct_allowed`` says so.
    """
    ws_uri = parse_uri(url)
    deadline = time.monotonic() + (open_timeout if open_timeout is not None else 1e9)
    if compression == "deflate":
        extensions = enable_client_permessage_deflate(None)
    elif compression is None:
        extensions = None
    else:
        raise ValueError(f"unsupported compression: {compression}")
    sock = socket.create_connection((ws_uri.host, ws_uri.port), timeout=open_timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        if ws_uri.secure:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=ws_uri.host)
        protocol = ClientProtocol(ws_uri, extensions=extensions, max_size=max_size, logger=logger)
        request = protocol.connect()
        if additional_headers:
            request.headers.update(additional_headers)
        request.headers.setdefault("User-Agent", USER_AGENT)
        protocol.send_request(request)
        conn = DirectConnection(sock, protocol, close_timeout if close_timeout else 10.0)
        conn._handshake(deadline)
    except BaseException:
        sock.close()
        raise
    KEEPER.register(conn)
    return conn
