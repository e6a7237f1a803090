"""lean.frames.Frames does what starlette's WebSocket does for the lean endpoint: the same
ASGI messages out, and the same exceptions for disconnects, misordering and failed sends."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from envgen_runtime.server.lean.frames import Frames
from starlette.types import Message
from starlette.websockets import WebSocket, WebSocketDisconnect

Connection = Any  # a Frames or a starlette WebSocket: the same calls on each


class Peer:
    """The server's side of one connection: queued ASGI messages in, the sent ones kept."""

    def __init__(self, *incoming: dict[str, Any], fail: bool = False) -> None:
        self.incoming = list(incoming)
        self.sent: list[Message] = []
        self.fail = fail

    async def receive(self) -> dict[str, Any]:
        return self.incoming.pop(0)

    async def send(self, message: Message) -> None:
        if self.fail and message["type"] == "websocket.send":
            raise OSError("gone")
        self.sent.append(message)


CONNECT = {"type": "websocket.connect"}


def _frames(peer: Peer) -> Connection:
    return Frames(peer.receive, peer.send)


def _starlette(peer: Peer) -> Connection:
    scope = {"type": "websocket", "path": "/ws", "headers": []}
    return WebSocket(scope, peer.receive, peer.send)


def _outcome(make: Callable[[Peer], Connection], peer: Peer, script: Any) -> tuple[Any, ...]:
    """What `script(connection)` returned or raised, and what the peer was sent."""
    connection = make(peer)
    try:
        result: Any = asyncio.run(script(connection))
    except RuntimeError as exc:  # starlette >= 0.47 raises its subclass WebSocketDisconnected
        result = ("RuntimeError", str(exc))
    except Exception as exc:
        result = (type(exc).__name__, getattr(exc, "code", None), getattr(exc, "reason", None))
    return result, peer.sent


async def _session(ws: Connection) -> list[str]:
    await ws.accept()
    texts = [await ws.receive_text(), await ws.receive_text()]
    await ws.send_text("reply")
    await ws.close()
    return texts


async def _receive_past_disconnect(ws: Connection) -> None:
    await ws.accept()
    with pytest.raises(WebSocketDisconnect):
        await ws.receive_text()
    await ws.receive_text()


async def _send_past_close(ws: Connection) -> None:
    await ws.accept()
    await ws.close()
    await ws.send_text("late")


async def _send_text(ws: Connection) -> None:
    await ws.accept()
    await ws.send_text("x")


async def _receive_text(ws: Connection) -> str:
    await ws.accept()
    text: str = await ws.receive_text()
    return text


Script = Callable[[Connection], Awaitable[Any]]
CASES: dict[str, tuple[list[dict[str, Any]], Script, bool]] = {
    "session": (
        [
            CONNECT,
            {"type": "websocket.receive", "text": "a"},
            {"type": "websocket.receive", "text": "b"},
        ],
        _session,
        False,
    ),
    "disconnect": (
        [CONNECT, {"type": "websocket.disconnect", "code": 1001, "reason": "bye"}],
        _receive_text,
        False,
    ),
    "receive after disconnect": (
        [CONNECT, {"type": "websocket.disconnect", "code": 1000}],
        _receive_past_disconnect,
        False,
    ),
    "send after close": ([CONNECT], _send_past_close, False),
    "failed send": ([CONNECT], _send_text, True),
    "binary frame": ([CONNECT, {"type": "websocket.receive", "bytes": b"x"}], _receive_text, False),
    "no connect first": ([{"type": "websocket.receive", "text": "a"}], _receive_text, False),
    "unexpected message": ([CONNECT, {"type": "websocket.connect"}], _receive_text, False),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_frames_behave_as_starlette_s_websocket(
    case: tuple[list[dict[str, Any]], Script, bool],
) -> None:
    incoming, script, fail = case
    mine = _outcome(_frames, Peer(*incoming, fail=fail), script)
    theirs = _outcome(_starlette, Peer(*incoming, fail=fail), script)
    assert mine == theirs


def test_a_session_reads_texts_and_sends_accept_text_and_close() -> None:
    incoming, script, _ = CASES["session"]
    result, sent = _outcome(_frames, Peer(*incoming), script)
    assert result == ["a", "b"]
    assert [m["type"] for m in sent] == ["websocket.accept", "websocket.send", "websocket.close"]
    assert sent[1]["text"] == "reply" and sent[2]["code"] == 1000


def test_a_disconnect_carries_its_code_and_reason() -> None:
    incoming, script, _ = CASES["disconnect"]
    assert _outcome(_frames, Peer(*incoming), script)[0] == ("WebSocketDisconnect", 1001, "bye")
