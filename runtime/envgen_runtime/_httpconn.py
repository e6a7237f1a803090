"""``http.client`` plumbing of the sync HTTP transport, imported on its first connection.

Connections (plain, TLS, or through an ``http://`` forward proxy named by the environment),
the check that an idle keep-alive socket is still open, and the reply's charset.
"""

from __future__ import annotations

import http.client
import io
import os
import re
import select
import socket
import ssl
import time
from typing import Any
from urllib.parse import urlsplit

from ._errormap import redact_url

__all__ = ["charset", "dropped", "open_connection"]


def charset(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type header, if any."""
    if not content_type:
        return None
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip('"') or None
    return None


def dropped(sock: socket.socket) -> bool:
    """Whether an idle keep-alive socket was closed by the server (readable means EOF)."""
    try:
        poller = select.poll()
    except AttributeError:  # pragma: no cover - platforms without poll()
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable)
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


def _ssl_context() -> ssl.SSLContext:
    """Default certificate checks; a CA bundle named as for ``requests`` is honoured."""
    cafile = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or None
    return ssl.create_default_context(cafile=cafile)


def _env_proxy(base_url: str) -> str | None:
    """The proxy the environment names for ``base_url`` (``no_proxy`` respected), if any."""
    import urllib.request

    parts = urlsplit(base_url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy:
        return None
    host = parts.hostname or ""
    if urllib.request.proxy_bypass(f"{host}:{parts.port}" if parts.port else host):
        return None
    return proxy


class _OneWrite:
    """Sends a request's head and a bytes body in one write (``http.client`` makes two).

    One segment instead of two saves a system call per request on both ends; for a small
    step request that is a measurable share of the client's CPU (see bench_step.py).
    """

    _buffer: list[bytes]
    send: Any  # http.client.HTTPConnection.send (this class only ever comes before it)

    def _send_output(self, message_body: Any = None, encode_chunked: bool = False) -> None:
        if isinstance(message_body, bytes) and not encode_chunked:
            self._buffer.extend((b"", message_body))
            data = b"\r\n".join(self._buffer)
            del self._buffer[:]
            self.send(data)
            return
        super()._send_output(message_body, encode_chunked)  # type: ignore[misc]


# A field name as the email parser accepts it: printable ASCII other than ':' and space.
_HEADER_NAME = re.compile(r"[\041-\071\073-\176]+")


def _header_message(lines: list[bytes]) -> http.client.HTTPMessage:
    """The reply's header block as ``http.client`` would parse it, without the email parser.

    ``http.client`` feeds every header block through ``email.feedparser``, which costs more
    client CPU than everything else in a small step reply (see bench_step.py). Plain
    ``Name: value`` lines are split here into the same ``HTTPMessage``; anything unusual
    (folded continuation lines, a line without a colon) goes to the standard parser.
    """
    message = http.client.HTTPMessage()
    for raw in lines:
        if raw in (b"\r\n", b"\n", b""):
            break
        name, colon, value = raw.decode("iso-8859-1").partition(":")
        if not colon or not _HEADER_NAME.fullmatch(name):
            return http.client.parse_headers(io.BytesIO(b"".join(lines)))
        message[name] = value.lstrip(" \t").rstrip("\r\n")
    return message


_SLACK_S = 0.05
"""A read may overrun its reply's deadline by this much before the socket timeout is cut."""


class _DeadlineReader(socket.SocketIO):
    """The socket as a raw stream whose reads share one deadline: the whole reply's.

    A socket timeout only limits each read, so a server trickling bytes could stretch a
    reply without end; here every read waits at most until the deadline. The socket's
    timeout is only changed when it would overrun the deadline by more than ``_SLACK_S``
    (a small reply arrives in one read, with no extra system call).
    """

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__(sock, "r")
        self._socket = sock
        self._deadline = deadline

    def readinto(self, b: Any) -> int | None:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("timed out: the reply did not complete before its deadline")
        sock = self._socket
        current = sock.gettimeout()
        if current is None or current > remaining + _SLACK_S:
            sock.settimeout(remaining)
        return super().readinto(b)


class _DeadlineSocket:
    """What ``HTTPResponse`` asks of its socket (``makefile``), with a deadline on reads."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str) -> io.BufferedReader:
        # As socket.makefile: the socket stays open until this reader is closed too.
        raw = _DeadlineReader(self._sock, self._deadline)
        self._sock._io_refs += 1  # type: ignore[attr-defined]
        return io.BufferedReader(raw)


class _FastResponse(http.client.HTTPResponse):
    """``HTTPResponse`` whose header parsing skips the email parser (``_header_message``).

    ``begin`` follows the standard library's own, step for step; only the header block is
    read differently (same line and count limits, via ``http.client._read_headers``).
    With a ``deadline`` (``time.monotonic()``), the whole reply must arrive before it.
    """

    def __init__(
        self,
        sock: Any,
        debuglevel: int = 0,
        method: str | None = None,
        url: str | None = None,
        *,
        deadline: float | None = None,
    ) -> None:
        if deadline is not None:
            sock = _DeadlineSocket(sock, deadline)
        super().__init__(sock, debuglevel, method, url)

    def begin(self) -> None:
        if self.headers is not None:
            return
        read_status: Any = self._read_status
        read_headers: Any = http.client._read_headers
        while True:
            version, status, reason = read_status()
            if status != http.client.CONTINUE:
                break
            read_headers(self.fp)  # the 100 reply's headers: skipped
        self.code = self.status = status
        self.reason = reason.strip()
        if version in ("HTTP/1.0", "HTTP/0.9"):
            self.version = 10
        elif version.startswith("HTTP/1."):
            self.version = 11
        else:
            raise http.client.UnknownProtocol(version)
        self.headers = self.msg = _header_message(read_headers(self.fp))
        encoding = self.headers.get("transfer-encoding")
        self.chunked = bool(encoding and encoding.lower() == "chunked")
        if self.chunked:
            self.chunk_left = None
        self.will_close = self._check_close()
        self.length = None
        length = self.headers.get("content-length")
        if length and not self.chunked:
            try:
                self.length = int(length)
            except ValueError:
                self.length = None
            else:
                if self.length < 0:
                    self.length = None
        if status in (http.client.NO_CONTENT, http.client.NOT_MODIFIED) or (
            100 <= status < 200 or self._method == "HEAD"
        ):
            self.length = 0
        if not self.will_close and not self.chunked and self.length is None:
            self.will_close = True


class _ReplyDeadline:
    """Connections whose replies are read against ``deadline`` (set before each request)."""

    deadline: float | None = None

    def response_class(self, sock: Any, *args: Any, **kwargs: Any) -> _FastResponse:
        return _FastResponse(sock, *args, deadline=self.deadline, **kwargs)


class _HTTPConnection(_OneWrite, _ReplyDeadline, http.client.HTTPConnection):  # type: ignore[misc]
    pass


class _HTTPSConnection(_OneWrite, _ReplyDeadline, http.client.HTTPSConnection):  # type: ignore[misc]
    pass


def open_connection(
    base_url: str, connect_timeout_s: float, *, proxies: bool
) -> tuple[http.client.HTTPConnection, bool]:
    """An unconnected connection to ``base_url`` (maybe via an http:// proxy) and whether
    requests must use the absolute URL form (plain HTTP through a proxy)."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    port = parts.port
    secure = parts.scheme == "https"
    proxy = _env_proxy(base_url) if proxies else None
    if proxy is None:
        if secure:
            return _HTTPSConnection(
                host, port, timeout=connect_timeout_s, context=_ssl_context()
            ), False
        return _HTTPConnection(host, port, timeout=connect_timeout_s), False
    proxy_parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    if proxy_parts.scheme != "http":
        raise ValueError(
            f"only http:// proxies are supported, the environment names a "
            f"{proxy_parts.scheme}:// proxy for {redact_url(base_url)}"
        )
    auth: dict[str, str] = {}
    if proxy_parts.username is not None:
        import base64
        from urllib.parse import unquote

        credentials = f"{unquote(proxy_parts.username)}:{unquote(proxy_parts.password or '')}"
        token = base64.b64encode(credentials.encode("utf-8")).decode("ascii")
        auth["Proxy-Authorization"] = f"Basic {token}"
    proxy_host, proxy_port = proxy_parts.hostname or "", proxy_parts.port or 80
    if secure:
        conn: http.client.HTTPConnection = _HTTPSConnection(
            proxy_host, proxy_port, timeout=connect_timeout_s, context=_ssl_context()
        )
        conn.set_tunnel(host, port or 443, headers=auth)
        return conn, False
    conn = _ProxiedHTTPConnection(proxy_host, proxy_port, timeout=connect_timeout_s)
    conn.proxy_headers = auth
    return conn, True


class _ProxiedHTTPConnection(_HTTPConnection):
    """Plain HTTP through a forward proxy: absolute-form targets plus proxy credentials."""

    proxy_headers: dict[str, str]

    def putrequest(self, method: str, url: str, *args: Any, **kwargs: Any) -> None:
        super().putrequest(method, url, *args, **kwargs)
        for name, value in self.proxy_headers.items():
            self.putheader(name, value)
