"""The HTTP/1.1 wire format without I/O (``transport.http.wire``): request bytes, reply parser.

Every reply is also fed split at every byte boundary (and byte by byte), since a socket may
deliver it in any pieces.
"""

from __future__ import annotations

import itertools

import pytest
from envgen_runtime.transport.http.wire import (
    MAX_HEAD_BYTES,
    HttpProtocolError,
    Reply,
    ReplyParser,
    request_bytes,
)

JSON_REPLY = (
    b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\ncontent-type: application/json\r\n"
    b'server: uvicorn\r\n\r\n{"a":1}'
)
CHUNKED = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n"
    b'\r\n5;ext=1\r\n{"a":\r\n2\r\n1}\r\n0\r\nX-Trailer: t\r\n\r\n'
)


def parse_pieces(data: bytes, cuts: list[int], method: str = "GET") -> Reply:
    """Feed ``data`` cut at ``cuts``; the reply must come with the last piece, not before."""
    parser = ReplyParser(method)
    bounds = [0, *cuts, len(data)]
    pieces = [data[a:b] for a, b in itertools.pairwise(bounds)]
    for piece in pieces[:-1]:
        assert parser.feed(piece) is None
    reply = parser.feed(pieces[-1])
    assert reply is not None
    return reply


@pytest.mark.parametrize("data", [JSON_REPLY, CHUNKED], ids=["content-length", "chunked"])
def test_a_reply_split_at_every_byte_boundary_parses_the_same(data: bytes) -> None:
    whole = parse_pieces(data, [])
    for cut in range(1, len(data)):
        assert parse_pieces(data, [cut]) == whole, cut
    assert parse_pieces(data, list(range(1, len(data)))) == whole  # byte by byte


def test_content_length_reply() -> None:
    reply = parse_pieces(JSON_REPLY, [])
    assert (reply.status, reply.body, reply.keep_alive) == (200, b'{"a":1}', True)
    assert reply.headers["content-type"] == "application/json"


def test_chunked_reply_joins_chunks_and_skips_extensions_and_trailers() -> None:
    reply = parse_pieces(CHUNKED, [])
    assert reply.body == b'{"a":1}' and reply.keep_alive


def test_close_delimited_reply_ends_at_eof() -> None:
    parser = ReplyParser()
    assert parser.feed(b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"a"') is None
    assert parser.feed(b":2}") is None
    reply = parser.eof()
    assert reply.body == b'{"a":2}' and not reply.keep_alive


@pytest.mark.parametrize(
    ("head", "keep_alive"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n", True),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n", False),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: Upgrade, Close\r\n", False),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n", False),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n", True),
    ],
)
def test_keep_alive_follows_the_version_and_connection_header(
    head: bytes, keep_alive: bool
) -> None:
    assert parse_pieces(head + b"\r\n", []).keep_alive is keep_alive


def test_interim_replies_are_skipped_and_bare_line_feeds_accepted() -> None:
    data = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\nContent-Length: 2\n\n{}"
    reply = parse_pieces(data, [])
    assert (reply.status, reply.body) == (200, b"{}")


def test_bodyless_statuses_and_connect_replies_end_with_the_head() -> None:
    assert parse_pieces(b"HTTP/1.1 204 No Content\r\n\r\n", []).body == b""
    tunnel = parse_pieces(b"HTTP/1.1 200 Connection established\r\n\r\n", [], "CONNECT")
    assert tunnel.status == 200 and tunnel.keep_alive


def test_headers_repeated_folded_and_odd() -> None:
    data = (
        b"HTTP/1.1 200 OK\r\nX-Twice: a\r\nx-twice: b\r\nX-Folded: first\r\n  second\r\n"
        b"no colon here\r\nX-Empty:\r\nCaf\xe9: \xff\r\nContent-Type: text/plain; "
        b'charset="latin-1"\r\nContent-Length: 0\r\n\r\n'
    )
    reply = parse_pieces(data, [])
    assert reply.headers["x-twice"] == "a, b"
    assert reply.headers["x-folded"] == "first second"
    assert reply.headers["x-empty"] == ""
    assert reply.headers["caf\xe9"] == "\xff"  # latin-1, as the standard library reads it
    assert reply.charset() == "latin-1"


def test_charset_is_read_from_the_content_type() -> None:
    def charset(value: str | None) -> str | None:
        headers = {} if value is None else {"content-type": value}
        return Reply(200, headers, b"", True).charset()

    assert charset(None) is None
    assert charset("application/json") is None
    assert charset('text/plain; charset="latin-1"') == "latin-1"
    assert charset("text/html; q=1; Charset=utf-8") == "utf-8"


@pytest.mark.parametrize(
    "data",
    [
        b"garbage\r\n\r\n",
        b"HTTP/2 200 OK\r\n\r\n",
        b"HTTP/1.1 20 OK\r\n\r\n",
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
    ],
    ids=[
        "no-status-line",
        "http2",
        "short-code",
        "long-code",
        "bad-length",
        "two-lengths",
        "bad-chunk-size",
        "negative-chunk",
        "chunk-overrun",
    ],
)
def test_malformed_replies_raise(data: bytes) -> None:
    with pytest.raises(HttpProtocolError):
        ReplyParser().feed(data)


def test_oversized_heads_are_refused_before_they_end() -> None:
    parser = ReplyParser()
    parser.feed(b"HTTP/1.1 200 OK\r\n")
    with pytest.raises(HttpProtocolError, match="exceed"):
        for _ in range(MAX_HEAD_BYTES // 1000 + 2):
            parser.feed(b"X-Big: " + b"x" * 1000 + b"\r\n")
    with pytest.raises(HttpProtocolError, match="more than 100 headers"):
        ReplyParser().feed(b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 101 + b"\r\n")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "without replying"),
        (b"HTTP/1.1 200 OK\r\nContent-Len", "before its reply was complete"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{}", "before its reply was complete"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{", "before"),
    ],
)
def test_early_close_is_an_error(data: bytes, message: str) -> None:
    parser = ReplyParser()
    parser.feed(data)
    with pytest.raises(HttpProtocolError, match=message):
        parser.eof()


def test_bytes_after_a_reply_make_the_connection_not_reusable() -> None:
    reply = ReplyParser().feed(JSON_REPLY + b"HTTP/1.1 200 OK\r\n")
    assert reply is not None and reply.body == b'{"a":1}' and not reply.keep_alive


def test_request_head_and_body_are_one_buffer() -> None:
    data = request_bytes("POST", "/step", {"Host": "h:1", "X-A": "b"}, b'{"action":{}}')
    assert data == (
        b'POST /step HTTP/1.1\r\nHost: h:1\r\nX-A: b\r\nContent-Length: 13\r\n\r\n{"action":{}}'
    )
    assert request_bytes("GET", "/state", {"Host": "h"}, None) == (
        b"GET /state HTTP/1.1\r\nHost: h\r\n\r\n"
    )
