"""HTTP/1.1 on the wire without I/O: request bytes out, reply bytes in (``ReplyParser``).

Our own parser rather than h11, by measurement: h11 0.16 costs 126-158 us per step exchange,
this module 19-21 us, and the sync client's whole budget is about 75 us above a raw socket
(``benchmarks/bench_step.py``). Only what a client of a JSON server needs: status line,
headers, Content-Length, chunked and close-delimited bodies, 1xx replies, keep-alive, limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

MAX_HEAD_BYTES = 65536  # status line plus headers (http.client allows 64 KiB a line)
MAX_HEADERS = 100  # header lines in one reply (as http.client)
_MAX_CHUNK_LINE = 4096


class HttpProtocolError(ConnectionError):
    """A reply that is not HTTP/1.x, or a connection that ended before its reply did (the
    connection is unusable: the runtime maps it to ``EnvConnectionError``)."""


@dataclass(slots=True)
class Reply:
    """One complete reply. Header names are lower-case; repeated headers are joined."""

    status: int
    headers: dict[str, str]
    body: bytes
    keep_alive: bool

    def charset(self) -> str | None:
        """The ``charset`` parameter of the Content-Type header, if any."""
        for param in self.headers.get("content-type", "").split(";")[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset":
                return value.strip().strip('"') or None
        return None


def request_bytes(
    method: str, target: str, headers: Mapping[str, str], body: bytes | None
) -> bytes:
    """One request, head and body in one buffer (one write: one segment, one system call).

    ``headers`` must be checked already (``transport.headers.check_headers``): no CR or LF inside.
    """
    lines = [f"{method} {target} HTTP/1.1"]
    lines.extend(f"{name}: {value}" for name, value in headers.items())
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head + body if body else head


# Parser states.
_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILER, _UNTIL_EOF, _DONE = range(8)


class ReplyParser:
    """Consumes the bytes of one reply, in pieces of any size; ``feed`` returns it when whole.

    ``method`` is the request's (a reply to HEAD or a successful CONNECT has no body).
    Bytes after a complete reply make it not reusable (nothing was pipelined).
    """

    __slots__ = (
        "_body",
        "_buf",
        "_headers",
        "_keep_alive",
        "_method",
        "_need",
        "_state",
        "_status",
    )

    def __init__(self, method: str = "GET") -> None:
        self._method = method
        self._buf = bytearray()
        self._state = _HEAD
        self._headers: dict[str, str] = {}
        self._keep_alive = False
        self._need = 0  # body bytes still to come in this reply or chunk
        self._body: list[bytes] = []
        self._status = 0

    def feed(self, data: bytes) -> Reply | None:
        """Add received bytes; the reply once it is complete."""
        self._buf += data
        while self._state != _DONE:
            state = self._state
            if state == _HEAD:
                if not self._head():
                    return None
            elif state in (_LENGTH, _CHUNK_DATA):
                if len(self._buf) < self._need:
                    return None
                self._body.append(bytes(self._buf[: self._need]))
                del self._buf[: self._need]
                self._state = _DONE if state == _LENGTH else _CHUNK_END
            elif state == _UNTIL_EOF or not self._chunk_line(state):
                return None
        return self._finish()

    def eof(self) -> Reply:
        """The peer closed the connection: the reply if that ended it, else the error."""
        if self._state == _UNTIL_EOF:
            self._body.append(bytes(self._buf))
            self._buf.clear()
            self._keep_alive = False
            return self._finish()
        if self._state == _HEAD and not self._buf:
            raise HttpProtocolError("the server closed the connection without replying")
        raise HttpProtocolError("the server closed the connection before its reply was complete")

    def _finish(self) -> Reply:
        self._state = _DONE
        if self._buf:  # more than one reply: the stream is out of step, never reuse it
            self._keep_alive = False
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        return Reply(self._status, self._headers, body, self._keep_alive)

    def _head(self) -> bool:
        """Parse the status line and headers once they are all here; False until then."""
        buf = self._buf
        ends = [i for i in (buf.find(b"\n\r\n"), buf.find(b"\n\n")) if i >= 0]
        if not ends or min(ends) > MAX_HEAD_BYTES:
            if len(buf) > MAX_HEAD_BYTES:
                raise HttpProtocolError(f"the reply's headers exceed {MAX_HEAD_BYTES} bytes")
            return False
        end = min(ends)
        lines = bytes(buf[:end]).decode("iso-8859-1").split("\n")
        del buf[: end + (3 if buf[end + 1 : end + 2] == b"\r" else 2)]
        status_line = lines[0].rstrip("\r")
        version, _, rest = status_line.partition(" ")
        code = rest[:3]
        valid = version.startswith("HTTP/1.") and len(code) == 3 and code.isdigit()
        if not valid or rest[3:4] not in ("", " "):
            raise HttpProtocolError(f"not an HTTP/1.x status line: {status_line[:100]!r}")
        if len(lines) > MAX_HEADERS + 1:
            raise HttpProtocolError(f"the reply has more than {MAX_HEADERS} headers")
        status = int(code)
        if 100 <= status < 200:  # interim (100 Continue): the real reply follows
            return True
        self._status = status
        self._headers = headers = _headers(lines)
        tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
        if version == "HTTP/1.0":
            self._keep_alive = "keep-alive" in tokens
        else:
            self._keep_alive = "close" not in tokens
        self._framing(status, headers)
        return True

    def _framing(self, status: int, headers: dict[str, str]) -> None:
        """How the body ends: at a length, with the last chunk, or when the peer closes."""
        no_body = status in (204, 304) or self._method == "HEAD"
        if no_body or (self._method == "CONNECT" and 200 <= status < 300):
            self._need, self._state = 0, _LENGTH
            return
        coding = headers.get("transfer-encoding")
        length = headers.get("content-length")
        if coding is not None and coding.rsplit(",", 1)[-1].strip().lower() == "chunked":
            self._state = _CHUNK_SIZE
        elif coding is not None or length is None:
            self._state, self._keep_alive = _UNTIL_EOF, False
        else:
            values = {v.strip() for v in length.split(",")}
            value = values.pop()
            if values or not value.isdigit():
                raise HttpProtocolError(f"invalid Content-Length {length[:100]!r}")
            self._need, self._state = int(value), _LENGTH

    def _chunk_line(self, state: int) -> bool:
        """A chunk's size line, the end of its data, or a trailer line; False until whole."""
        end = self._buf.find(b"\n")
        if end < 0:
            if len(self._buf) > _MAX_CHUNK_LINE:
                raise HttpProtocolError(
                    f"a line of the reply is longer than {_MAX_CHUNK_LINE} bytes"
                )
            return False
        line = bytes(self._buf[:end]).rstrip(b"\r")
        del self._buf[: end + 1]
        if state == _CHUNK_SIZE:
            size = line.split(b";", 1)[0].strip()
            try:
                self._need = int(size, 16)
            except ValueError:
                raise HttpProtocolError(f"invalid chunk size {line[:100]!r}") from None
            if self._need < 0 or size[:1] in (b"-", b"+"):
                raise HttpProtocolError(f"invalid chunk size {line[:100]!r}")
            self._state = _CHUNK_DATA if self._need else _TRAILER
        elif state == _CHUNK_END:
            if line:
                raise HttpProtocolError("a chunk is longer than its size line says")
            self._state = _CHUNK_SIZE
        elif not line:  # _TRAILER: trailer fields are read and ignored; a blank line ends
            self._state = _DONE
        return True


def _headers(lines: list[str]) -> dict[str, str]:
    """Header fields of a head's lines (after the status line); folded lines joined."""
    headers: dict[str, str] = {}
    last = ""
    for raw in lines[1:]:
        line = raw.rstrip("\r")
        if line[:1] in (" ", "\t"):
            if last:  # obsolete line folding: a continuation of the previous field
                headers[last] = f"{headers[last]} {line.strip()}".strip()
            continue
        name, colon, value = line.partition(":")
        if not colon:
            continue  # not a field; the standard library skips these too
        last = name.strip().lower()
        value = value.strip(" \t")
        headers[last] = f"{headers[last]}, {value}" if last in headers else value
    return headers
