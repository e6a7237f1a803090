"""A ``/ws`` connection read and written as raw ASGI messages, for the lean session loop.

starlette's ``WebSocket`` checks a state machine on every message and its route sends each
through one more coroutine; a session pays that twice a step. ``Frames`` does what the lean
endpoint uses of it (accept, text in, text out, close) with starlette's semantics: the same
``WebSocketDisconnect`` on a disconnect (and on a send that fails with ``OSError``), the
same ``RuntimeError`` for a message out of order, a receive after a disconnect or a send
after a close, and ``KeyError('text')`` for a binary frame, as ``receive_text`` raises.
"""

from __future__ import annotations

from starlette.types import Message, Receive, Send
from starlette.websockets import WebSocketDisconnect


class Frames:
    """One connection's ASGI `receive` and `send`, as text frames."""

    __slots__ = ("_closed", "_disconnected", "_receive", "_send")

    def __init__(self, receive: Receive, send: Send) -> None:
        self._receive = receive
        self._send = send
        self._closed = False  # a close was sent
        self._disconnected = False  # the peer's disconnect was received

    async def accept(self) -> None:
        """Wait for the connect message, then accept (no subprotocol, no headers)."""
        message = await self._receive()
        if message["type"] != "websocket.connect":
            raise RuntimeError(
                f'Expected ASGI message "websocket.connect", but got {message["type"]!r}'
            )
        await self._out({"type": "websocket.accept", "subprotocol": None, "headers": []})

    async def receive_text(self) -> str:
        """The next text frame; ``WebSocketDisconnect`` when the peer has gone."""
        if self._disconnected:
            raise RuntimeError('Cannot call "receive" once a disconnect message has been received.')
        message = await self._receive()
        kind = message["type"]
        if kind == "websocket.receive":
            text: str = message["text"]
            return text
        if kind == "websocket.disconnect":
            self._disconnected = True
            raise WebSocketDisconnect(message["code"], message.get("reason"))
        raise RuntimeError(
            f'Expected ASGI message "websocket.receive" or "websocket.disconnect", but got {kind!r}'
        )

    async def send_text(self, text: str) -> None:
        """One text frame out (`_out`'s work, in place: one coroutine less a step)."""
        if self._closed:
            raise RuntimeError('Cannot call "send" once a close message has been sent.')
        try:
            await self._send({"type": "websocket.send", "text": text})
        except OSError:  # the transport is gone, as starlette reads it
            self._closed = True
            raise WebSocketDisconnect(code=1006) from None

    async def close(self, code: int = 1000) -> None:
        """Close the connection (once: a send after it is a ``RuntimeError``)."""
        await self._out({"type": "websocket.close", "code": code, "reason": ""})

    async def _out(self, message: Message) -> None:
        if self._closed:
            raise RuntimeError('Cannot call "send" once a close message has been sent.')
        if message["type"] == "websocket.close":
            self._closed = True
        try:
            await self._send(message)
        except OSError:  # the transport is gone, as starlette reads it
            self._closed = True
            raise WebSocketDisconnect(code=1006) from None
