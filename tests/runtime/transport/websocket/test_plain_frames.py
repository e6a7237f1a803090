"""plain_frames: the fast path's frames are websockets' frames, and anything else is refused.

Every expected byte comes from websockets' own ``Frame.serialize`` / ``ServerProtocol``, so
the fast path is held to the library it stands in for.
"""

from __future__ import annotations

import os

import pytest
from envgen_runtime.transport.websocket import plain_frames
from envgen_runtime.transport.websocket.frames import FrameEngine
from envgen_runtime.transport.websocket.plain_frames import (
    MaskSource,
    masked_text_frame,
    whole_data_frame,
)
from websockets.extensions.permessage_deflate import ServerPerMessageDeflateFactory
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.server import ServerProtocol

from tests.runtime.transport.websocket.test_engine import handshake

SIZES = (0, 1, 125, 126, 127, 65535, 65536, 70000)


def _websockets_frame(
    frame: Frame, *, mask: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> bytes:
    if mask is None:
        return frame.serialize(mask=False)
    monkeypatch.setattr("websockets.frames.secrets.token_bytes", lambda n: mask)
    return frame.serialize(mask=True)


@pytest.mark.parametrize("size", SIZES)
def test_client_text_frame_is_byte_for_byte_what_websockets_writes(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = ("é" * size).encode()[:size]
    mask = b"\x12\x9a\x00\xff"
    expected = _websockets_frame(Frame(Opcode.TEXT, payload), mask=mask, monkeypatch=monkeypatch)
    assert masked_text_frame(payload, mask) == expected


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("opcode", [Opcode.TEXT, Opcode.BINARY])
def test_a_whole_server_frame_is_read_back(
    size: int, opcode: Opcode, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = bytes(range(256)) * (size // 256) + bytes(range(size % 256))
    wire = _websockets_frame(Frame(opcode, payload), mask=None, monkeypatch=monkeypatch)
    whole = whole_data_frame(wire, None)
    assert whole is not None
    is_text, read = whole
    assert is_text is (opcode is Opcode.TEXT)
    assert bytes(read) == payload
    assert whole_data_frame(wire, size) is not None
    if size:
        assert whole_data_frame(wire, size - 1) is None  # over the limit: websockets says 1009


@pytest.mark.parametrize(
    "frame",
    [
        Frame(Opcode.TEXT, b"part", fin=False),
        Frame(Opcode.CONT, b"rest"),
        Frame(Opcode.PING, b"beat"),
        Frame(Opcode.CLOSE, b"\x03\xe8"),
    ],
    ids=["fragment", "continuation", "ping", "close"],
)
def test_anything_but_one_whole_plain_data_frame_is_left_to_websockets(
    frame: Frame, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (
        whole_data_frame(_websockets_frame(frame, mask=None, monkeypatch=monkeypatch), None) is None
    )


def test_a_frame_with_a_reserved_bit_is_left_to_websockets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wire = _websockets_frame(Frame(Opcode.TEXT, b"deflated"), mask=None, monkeypatch=monkeypatch)
    for bit in (0x40, 0x20, 0x10):  # RSV1 (permessage-deflate), RSV2, RSV3
        assert whole_data_frame(bytes([wire[0] | bit]) + wire[1:], None) is None


def test_partial_joined_and_masked_frames_are_left_to_websockets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wire = _websockets_frame(Frame(Opcode.TEXT, b"x" * 300), mask=None, monkeypatch=monkeypatch)
    assert whole_data_frame(wire[:-1], None) is None
    assert whole_data_frame(wire[:1], None) is None
    assert whole_data_frame(wire + wire, None) is None
    masked = _websockets_frame(Frame(Opcode.TEXT, b"hi"), mask=b"abcd", monkeypatch=monkeypatch)
    assert whole_data_frame(masked, None) is None  # a server must not mask


def test_masks_come_from_urandom_in_bulk_and_never_repeat_a_slice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[int] = []
    real = os.urandom

    def counting(n: int) -> bytes:
        reads.append(n)
        return real(n)

    monkeypatch.setattr(plain_frames.os, "urandom", counting)
    source = MaskSource()
    masks = [source.take() for _ in range(130)]
    assert all(len(mask) == 4 for mask in masks)
    assert reads == [256, 256, 256]  # 64 masks a read
    assert len(set(masks)) > 120  # fresh random bytes (a repeat of 4 bytes is ~1e-6 likely)


def test_engine_frames_read_by_a_websockets_server_and_the_slow_path_still_in_step() -> None:
    engine, server = handshake()
    sizes = (0, 5, 126, 70000)
    for size in sizes:
        engine.send("ü" * size)
    server.receive_data(b"".join(engine.outgoing()))
    received = server.events_received()
    assert [(f.opcode, f.data.decode()) for f in received] == [
        (Opcode.TEXT, "ü" * size) for size in sizes
    ]
    # Server frames: whole ones (fast path), then a fragmented one and a ping (websockets),
    # then whole ones again: the parser was left at a frame boundary throughout.
    server.send_text(b'{"a":1}')
    engine.receive(b"".join(server.data_to_send()))
    server.send_text(b'{"b":', fin=False)
    engine.receive(b"".join(server.data_to_send()))
    server.send_ping(b"beat")
    engine.receive(b"".join(server.data_to_send()))
    server.send_continuation(b"2}", fin=True)
    engine.receive(b"".join(server.data_to_send()))
    server.send_binary(b"\x00")
    engine.receive(b"".join(server.data_to_send()))
    assert list(engine.messages) == ['{"a":1}', '{"b":2}', b"\x00"]
    server.receive_data(b"".join(engine.outgoing()))
    [pong] = server.events_received()
    assert pong.opcode is Opcode.PONG and pong.data == b"beat"


def test_a_compressed_session_never_takes_the_fast_path() -> None:
    engine = FrameEngine("ws://127.0.0.1:9/ws", {})  # permessage-deflate offered
    server = ServerProtocol(extensions=[ServerPerMessageDeflateFactory()], max_size=None)
    server.receive_data(b"".join(engine.outgoing()))
    [request] = server.events_received()
    assert isinstance(request, Request)
    server.send_response(server.accept(request))
    engine.receive(b"".join(server.data_to_send()))
    assert engine.protocol.extensions
    engine.send("z" * 200)
    wire = b"".join(engine.outgoing())
    assert wire[0] & 0x40  # RSV1: compressed by websockets' permessage-deflate
    server.receive_data(wire)
    [frame] = server.events_received()
    assert frame.data == b"z" * 200
    server.send_text(b"y" * 200)
    engine.receive(b"".join(server.data_to_send()))
    assert list(engine.messages) == ["y" * 200]
