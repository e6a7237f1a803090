"""The WebSocket frame engine: websockets' sans-I/O ``ClientProtocol`` plus what a client adds.

``FrameEngine`` does no I/O: the shells (``direct``, ``aio_connection``) feed it what they
read and write what it wants sent. It reassembles and decodes messages (invalid UTF-8 fails
with 1007, as websockets does), keeps them until read, and decides keepalive (ping a server
silent for ``PING_INTERVAL_S``, fail with 1011 after ``PING_TIMEOUT_S`` more); ``Hop``
follows redirects. Failures are websockets' exceptions, mapped by ``errors``.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urljoin

from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed, InvalidStatus, SecurityError
from websockets.extensions.permessage_deflate import enable_client_permessage_deflate
from websockets.frames import CloseCode, Frame, Opcode
from websockets.http11 import USER_AGENT
from websockets.protocol import State
from websockets.uri import WebSocketURI, parse_uri

from .errors import Catcher
from .plain_frames import MaskSource, masked_text_frame, whole_data_frame

__all__ = ["MAX_REDIRECTS", "FrameEngine", "Hop", "redirect"]

PING_INTERVAL_S = 20.0
"""A server heard nothing from for this long gets a ping (seconds)."""
PING_TIMEOUT_S = 20.0
"""...and the connection fails if the server stays silent this much longer (seconds)."""
MAX_REDIRECTS = 10
_REDIRECTS = frozenset({300, 301, 302, 303, 307, 308})
_CREDENTIALS = frozenset({"authorization", "cookie", "proxy-authorization"})

_OPEN = State.OPEN
_CONNECTING = State.CONNECTING
_TEXT = Opcode.TEXT
_NOTHING: list[bytes] = []
"""``outgoing``'s answer when nothing is queued (never appended to)."""
_BINARY = Opcode.BINARY
_CONT = Opcode.CONT


class FrameEngine:
    """One client connection's protocol state, fed bytes by a shell."""

    def __init__(self, url: str, options: Mapping[str, Any]) -> None:
        """``options`` as ``WebSocketCommon._connect_options`` makes them (websockets' names)."""
        deflate = options.get("compression", "deflate") is not None
        extensions = enable_client_permessage_deflate(None) if deflate else None
        self.uri: WebSocketURI = parse_uri(url)
        protocol = ClientProtocol(
            self.uri,
            extensions=extensions,
            max_size=options.get("max_size", 2**20),
            logger=options.get("logger"),
        )
        request = protocol.connect()
        headers = options.get("additional_headers")
        if headers:
            request.headers.update(headers)
        request.headers.setdefault("User-Agent", USER_AGENT)
        protocol.send_request(request)
        self.protocol = protocol
        self.open_timeout: float | None = options.get("open_timeout", 10.0)
        """Limit for opening the connection, the handshake included (seconds)."""
        self.close_timeout: float = options.get("close_timeout") or 10.0
        """Limit for the closing handshake (seconds)."""
        self.messages: deque[str | bytes] = deque()
        self._fragments: list[bytes] = []
        self._fragment_opcode: Opcode | None = None
        self.error: BaseException | None = None
        """What broke the connection, if not a close frame (the close exception's cause)."""
        self.last_recv = time.monotonic()
        self._ping_sent: float | None = None
        self._masks = MaskSource()

    @property
    def state(self) -> State:
        """The protocol state (CONNECTING, OPEN, CLOSING, CLOSED)."""
        return self.protocol.state

    @property
    def handshaking(self) -> bool:
        """Whether the opening handshake still waits for the server's response."""
        protocol = self.protocol
        return protocol.state is _CONNECTING and protocol.handshake_exc is None

    def check_handshake(self) -> None:
        """Raise why the server refused the handshake (``InvalidStatus``, ...), if it did."""
        if self.protocol.handshake_exc is not None:
            raise self.protocol.handshake_exc

    def outgoing(self) -> list[bytes]:
        """Bytes to write, in order; an empty chunk means "half-close the socket".

        Asked after every read and send; most reads answer nothing, so an empty queue is
        answered here without a call into the protocol.
        """
        protocol = self.protocol
        return protocol.data_to_send() if protocol.writes else _NOTHING

    def receive(self, data: bytes) -> None:
        """Bytes the shell read from the socket.

        One whole data frame between frames, no extension in use (a step's usual reply) is
        read directly (``plain_frames``); websockets' parser, waiting at a frame boundary, is
        left as it was. Anything else goes through the parser.
        """
        protocol = self.protocol
        self.last_recv = time.monotonic()
        if (
            protocol.state is _OPEN
            and protocol.current_size is None
            and not protocol.reader.buffer
            and not protocol.extensions
            and not protocol.debug
        ):
            whole = whole_data_frame(data, protocol.max_message_size)
            if whole is not None:
                is_text, payload = whole
                self._deliver(_TEXT if is_text else _BINARY, payload)
                return
        protocol.receive_data(data)
        self._take(protocol.events_received())

    def receive_eof(self) -> None:
        """The server ended the TCP connection (or the shell gave up on it)."""
        protocol = self.protocol
        protocol.receive_eof()
        self._take(protocol.events_received())

    def fail(self, exc: BaseException | None) -> None:
        """The socket failed (``exc``, the close's cause) or closed: the connection ends CLOSED."""
        if self.error is None:
            self.error = exc
        self.protocol.receive_eof()

    def send(self, message: str | bytes) -> None:
        """Queue one text (``str``) or binary (``bytes``) message; ConnectionClosed if closed."""
        protocol = self.protocol
        if protocol.state is not _OPEN:
            raise self.close_exc()
        if not isinstance(message, str):
            protocol.send_binary(message)
        elif protocol.extensions or protocol.expect_continuation_frame or protocol.debug:
            protocol.send_text(message.encode())
        else:  # a whole text message, no extension: framed directly (``plain_frames``)
            protocol.writes.append(masked_text_frame(message.encode(), self._masks.take()))

    def close(self, code: int = CloseCode.NORMAL_CLOSURE) -> None:
        """Queue a close frame, if the connection is open."""
        if self.protocol.state is _OPEN:
            self.protocol.send_close(code)

    def close_exc(self) -> ConnectionClosed:
        """The exception for using a connection that is not open (it is made CLOSED first)."""
        protocol = self.protocol
        protocol.receive_eof()  # idempotent
        exc = protocol.close_exc
        if self.error is not None:
            exc.__cause__ = self.error
        return exc

    def keepalive(self, now: float) -> bool:
        """Ping a silent server; True if it stayed silent too long (the connection failed)."""
        protocol = self.protocol
        if protocol.state is not _OPEN:
            return False
        if self._ping_sent is not None and self.last_recv >= self._ping_sent:
            self._ping_sent = None
        if self._ping_sent is None:
            if now - self.last_recv >= PING_INTERVAL_S:
                protocol.send_ping(os.urandom(4))
                self._ping_sent = now
            return False
        if now - self._ping_sent <= PING_TIMEOUT_S:
            return False
        protocol.fail(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
        self.error = TimeoutError("keepalive ping timeout")
        return True

    def _take(self, events: list[Any]) -> None:
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
            self.messages.append(bytes(data))
            return
        try:
            self.messages.append(str(data, "utf-8"))
        except UnicodeDecodeError as exc:
            # What websockets does: fail the connection with 1007 (invalid data).
            self.error = exc
            self.protocol.fail(CloseCode.INVALID_DATA, f"{exc.reason} at position {exc.start}")


def redirect(
    exc: BaseException, url: str, headers: Mapping[str, str] | None
) -> tuple[str, dict[str, str]] | None:
    """Where a refused handshake redirects and the headers to send there; None: no redirect.

    websockets' rules: no TLS downgrade (SecurityError), no credentials to another origin.
    """
    if not (
        isinstance(exc, InvalidStatus)
        and exc.response.status_code in _REDIRECTS
        and "Location" in exc.response.headers
    ):
        return None
    new_url = urljoin(url, exc.response.headers["Location"])
    old, new = parse_uri(url), parse_uri(new_url)
    if old.secure and not new.secure:
        raise SecurityError(f"cannot follow redirect to non-secure URI {new_url}")
    kept = dict(headers or {})
    if (old.secure, old.host, old.port) != (new.secure, new.host, new.port):
        kept = {name: value for name, value in kept.items() if name.lower() not in _CREDENTIALS}
    return new_url, kept


class Hop(Catcher):
    """Handshake attempts: ``for hop in Hop(url, options): with hop: return <connect>``.

    A redirect the handshake is refused with points the hop to the next URL and the loop goes
    on; else the shell's block returns or raises.
    """

    def __init__(self, url: str, options: dict[str, Any]) -> None:
        self.url = url
        self.options = options

    def __iter__(self) -> Iterator[Hop]:
        for _ in range(MAX_REDIRECTS + 1):
            yield self
        raise SecurityError(f"more than {MAX_REDIRECTS} redirects")

    def caught(self, exc: BaseException) -> bool:
        target = redirect(exc, self.url, self.options.get("additional_headers"))
        if target is not None:
            self.url, headers = target
            self.options = {**self.options, "additional_headers": headers}
        return target is not None
