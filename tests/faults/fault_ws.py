"""The fault server's WebSocket side: one ``/ws`` session through websockets' sans-I/O server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from fault_env import (
    HUGE_MB,
    SLOW_S,
    Case,
    Counter,
    extra_reply,
    fields_reply,
    fires,
    huge_reply,
)
from fault_io import hold, rst_close, trickle, truncate
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import State
from websockets.server import ServerProtocol

_BEHAVE = ("ok", "503twice", "reset-state", "stateless")
"""Faults that leave WebSocket messages alone (the handshake or HTTP only)."""


def _kind(route: str, *, wrong: bool = False) -> str:
    """The message type answering ``route`` (``wrong``: the other one)."""
    return "observation" if (route == "state") == wrong else "state"


class WsSession:
    """One WebSocket connection driven through websockets' sans-I/O server protocol."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.protocol = ServerProtocol(max_size=None)
        self.env = Counter()

    def flush(self) -> bytes:
        return b"".join(self.protocol.data_to_send())

    async def send(self, text: str) -> None:
        self.protocol.send_text(text.encode())
        self.writer.write(self.flush())
        await self.writer.drain()

    async def reply(self, route: str, data: dict[str, Any]) -> None:
        await self.send(json.dumps({"type": _kind(route), "data": data}))

    async def run(self, head: bytes, case: Case | None) -> None:
        protocol = self.protocol
        protocol.receive_data(head)
        request = protocol.events_received()[0]
        assert isinstance(request, Request)
        if case is not None and case.fault == "503twice" and fires(case, "handshake"):
            protocol.send_response(protocol.reject(503, "unavailable\n"))
            self.writer.write(self.flush())
            return
        protocol.send_response(protocol.accept(request))
        self.writer.write(self.flush())
        while protocol.state is not State.CLOSED:
            data = await self.reader.read(65536)
            if not data:
                protocol.receive_eof()
                break
            protocol.receive_data(data)
            for event in protocol.events_received():
                if not isinstance(event, Frame) or event.opcode is not Opcode.TEXT:
                    continue
                if not await self.message(json.loads(bytes(event.data)), case):
                    return
            pending = self.flush()
            if pending:
                self.writer.write(pending)
            if protocol.close_expected():
                break

    async def message(self, message: dict[str, Any], case: Case | None) -> bool:
        """Answer one message; False when the connection must end now."""
        route = str(message.get("type"))
        data = message.get("data") or {}
        if route == "close":
            return True
        counted = "message" if case is not None and case.fault == "503twice" else route
        fired = case is not None and fires(case, counted)
        fault = case.fault if case is not None else "ok"
        if not fired or fault in _BEHAVE:
            await self.reply(route, self.env.answer(route, data))
            return True
        assert case is not None
        if fault == "malformed":
            await self.send('{"type": "observation", "data": ')
        elif fault == "shape":
            await self.send(json.dumps({"type": _kind(route), "data": {"unexpected": True}}))
        elif fault == "fields":
            await self.reply(route, fields_reply(route))
        elif fault == "wrongtype":
            await self.send(json.dumps({"type": _kind(route, wrong=True), "data": {}}))
        elif fault in ("error", "500"):
            failure = {"message": "fault injected", "code": "EXECUTION_ERROR"}
            await self.send(json.dumps({"type": "error", "data": failure}))
        elif fault == "422":
            errors = [{"loc": ["delta"], "msg": "bad delta", "type": "value_error"}]
            error: dict[str, Any] = {"message": "invalid action", "code": "VALIDATION_ERROR"}
            error["errors"] = errors
            await self.send(json.dumps({"type": "error", "data": error}))
        elif fault == "slow":
            await asyncio.sleep(SLOW_S)
            await self.reply(route, case.late(self.env).answer(route, data))
        elif fault == "trickle":
            self.protocol.send_text(json.dumps({"type": "state", "data": {}}).encode())
            await trickle(self.writer, self.flush())
        elif fault == "frozen":
            await hold(self.reader)
            return False
        elif fault == "crash":
            rst_close(self.writer)
            return False
        elif fault == "closed":
            self.writer.close()  # TCP FIN without a close frame
            return False
        elif fault == "truncated":
            reply = {"type": _kind(route), "data": Counter().answer(route, data)}
            self.protocol.send_text(json.dumps(reply).encode())
            await truncate(self.writer, self.flush())
            return False
        elif fault == "extra":
            await self.reply(route, extra_reply(self.env, data))
        else:  # the huge replies
            text = b'{"type":"observation","data":' + huge_reply(HUGE_MB[fault]) + b"}"
            self.protocol.send_text(text)
            self.writer.write(self.flush())
            await self.writer.drain()
        return True
