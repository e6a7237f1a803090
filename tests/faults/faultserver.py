"""A misbehaving OpenEnv server of our own: real HTTP/1.1 and WebSocket bytes on 127.0.0.1.

    python faultserver.py --port 0 [--port-file F] [--prebuild]

One process serves every fault: the fault is chosen by the URL, so a test's client gets a
base URL ``http://127.0.0.1:P/<fault>/<case>`` and every request it makes (``/reset``,
``/step``, ``/state``, ``/ws``) lands in that fault's handler with the case's own state. No
process start-up per case.

The environment is a counter (the models of ``tests/runtime/clients.py``): each step adds
``delta`` to ``total`` and echoes ``message``. Over HTTP one environment per case is kept
across requests (the stateful protocol), except with the ``stateless`` fault, which builds a
fresh one per request as current OpenEnv servers do. Over WebSocket each connection is its
own environment.

Faults fire on the first ``step`` of a case (``503twice``: on its first two HTTP requests or
WebSocket handshakes); everything else behaves, so a test can check how the client recovers
with ``reset()``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import State
from websockets.server import ServerProtocol

TRICKLE_S = 0.1
"""Seconds between bytes of a trickled reply."""
SLOW_S = 4.0
"""How late a slow reply comes (tests use read timeouts of about 1 s)."""
HUGE_MB = {"huge": 120, "big": 50}
"""Megabytes of observation text in the ``huge`` and ``big`` replies."""

FAULTS = frozenset(
    {
        "ok",
        "malformed",
        "shape",
        "503twice",
        "500",
        "422",
        "slow",
        "trickle",
        "frozen",
        "crash",
        "closed",
        "wrongtype",
        "error",
        "extra",
        "huge",
        "big",
        "stateless",
        "reset-state",
    }
)


@dataclass
class Counter:
    """The environment: a running total."""

    episode_id: str | None = None
    step_count: int = 0
    total: int = 0

    def reset(self, body: dict[str, Any]) -> dict[str, Any]:
        self.episode_id = body.get("episode_id") or "server-episode"
        self.step_count = 0
        self.total = 0
        return self._reply("", 0.0)

    def step(self, action: dict[str, Any]) -> dict[str, Any]:
        self.step_count += 1
        delta = int(action.get("delta", 1))
        self.total += delta
        return self._reply(str(action.get("message", "")), float(delta))

    def state(self) -> dict[str, Any]:
        return {"episode_id": self.episode_id, "step_count": self.step_count, "total": self.total}

    def _reply(self, echoed: str, reward: float) -> dict[str, Any]:
        observation = {
            "echoed": echoed,
            "total": self.total,
            "step": self.step_count,
            "episode_id": self.episode_id,
        }
        return {"observation": observation, "reward": reward, "done": False}


@dataclass
class Case:
    """What one test case's URL prefix has seen: its HTTP environment and fault budget."""

    fault: str
    env: Counter = field(default_factory=Counter)
    armed: int = 0  # requests left that the fault applies to
    fired: bool = False
    requests: int = 0
    steps: int = 0
    states: int = 0


CASES: dict[str, Case] = {}
HTTP_STATUS = {200: "OK", 404: "Not Found", 422: "Unprocessable Entity", 500: "Internal Error"}
HTTP_STATUS[503] = "Service Unavailable"


def case_for(path: str) -> tuple[Case | None, str]:
    """The case named by ``/<fault>/<case>/<route>`` and the route."""
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if len(parts) < 3 or parts[0] not in FAULTS:
        return None, parts[-1] if parts else ""
    key = f"{parts[0]}/{parts[1]}"
    case = CASES.get(key)
    if case is None:
        case = CASES[key] = Case(parts[0])
    return case, parts[2]


def fires(case: Case, route: str) -> bool:
    """Whether the fault applies to this request (armed by the case's first step)."""
    case.requests += 1
    if route == "step":
        case.steps += 1
    if case.fault == "503twice":  # the first two HTTP requests or WebSocket handshakes
        return route != "message" and case.requests <= 2
    if not case.fired and route == "step" and case.fault != "ok":
        case.fired = True
        case.armed = 1
    if case.armed > 0:
        case.armed -= 1
        return True
    return False


_HUGE: dict[int, bytes] = {}


def huge_reply(megabytes: int) -> bytes:
    """A valid step reply whose observation carries ``megabytes`` MB of text (built once)."""
    if megabytes not in _HUGE:
        filler = "x" * (megabytes * 1024 * 1024)
        reply = {"observation": {"echoed": filler, "total": 0, "step": 1}, "reward": 0.0}
        _HUGE[megabytes] = json.dumps(reply).encode()
    return _HUGE[megabytes]


def extra_reply(env: Counter, action: dict[str, Any]) -> dict[str, Any]:
    reply = env.step(action)
    reply["observation"]["server_only"] = {"nested": [1, 2]}
    reply["metadata"] = {"source": "faultserver"}
    reply["extra_top"] = "kept"
    return reply


def rst_close(writer: asyncio.StreamWriter) -> None:
    """Close the connection with a TCP reset (SO_LINGER 0): 'Connection reset by peer'."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def trickle(writer: asyncio.StreamWriter, data: bytes) -> None:
    for i in range(len(data)):
        writer.write(data[i : i + 1])
        await writer.drain()
        await asyncio.sleep(TRICKLE_S)


async def hold(reader: asyncio.StreamReader) -> None:
    """Frozen: never answer and never act on what arrives, until the client goes away."""
    while await reader.read(65536):
        pass


# --------------------------------------------------------------------------- HTTP


def http_bytes(status: int, body: bytes, *, close: bool = False) -> bytes:
    head = (
        f"HTTP/1.1 {status} {HTTP_STATUS.get(status, 'Status')}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        + ("Connection: close\r\n" if close else "")
        + "\r\n"
    )
    return head.encode("latin-1") + body


async def handle_http(
    case: Case | None,
    route: str,
    body: bytes,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> bool:
    """Answer one HTTP request; False when the connection must end."""
    if route == "health":
        writer.write(http_bytes(200, b'{"status":"healthy"}'))
        return True
    if case is not None and route == "stats":  # for load tests: what the server counted
        stats = {"steps": case.steps, "requests": case.requests}
        writer.write(http_bytes(200, json.dumps(stats).encode()))
        return True
    if case is None or route not in ("reset", "step", "state"):
        writer.write(http_bytes(404, b'{"detail":"Not Found"}'))
        return True
    request = json.loads(body) if body else {}
    fault = case.fault
    # current OpenEnv builds a fresh environment for every HTTP request
    env = Counter() if fault == "stateless" else case.env
    fired = fires(case, route)
    if fired and fault == "reset-state":
        fired = False  # this fault only concerns state requests (see below)
    if fault == "reset-state" and route == "state":
        case.states += 1
        if case.states > 1:  # the client's own check after the first step is answered
            rst_close(writer)
            return False
    if not fired:
        if route == "reset":
            reply = env.reset(request)
        elif route == "step":
            reply = env.step(request.get("action", {}))
        else:
            reply = env.state()
        writer.write(http_bytes(200, json.dumps(reply).encode()))
        return True
    action = request.get("action", {})
    if route == "step" and fault in ("malformed", "shape", *HUGE_MB):
        env.step(action)  # a real server acted on the step before its reply went wrong
    if fault == "malformed":
        writer.write(http_bytes(200, b'{"observation": {"echoed": "x", '))
    elif fault == "shape":
        writer.write(http_bytes(200, b'{"unexpected": true}'))
    elif fault in ("503twice", "500"):
        status = 503 if fault == "503twice" else 500
        writer.write(http_bytes(status, b'{"detail":"fault injected"}'))
    elif fault == "422":
        detail = [{"loc": ["body", "action", "delta"], "msg": "bad delta", "type": "value_error"}]
        writer.write(http_bytes(422, json.dumps({"detail": detail}).encode()))
    elif fault == "slow":
        await asyncio.sleep(SLOW_S)
        writer.write(http_bytes(200, json.dumps(env.step(action)).encode()))
    elif fault == "trickle":
        await trickle(writer, http_bytes(200, json.dumps(env.state()).encode() + b" " * 40))
    elif fault == "frozen":
        await hold(reader)
        return False
    elif fault == "crash":
        writer.close()
        return False
    elif fault == "closed":
        rst_close(writer)
        return False
    elif fault == "extra":
        writer.write(http_bytes(200, json.dumps(extra_reply(env, action)).encode()))
    elif fault in HUGE_MB:
        writer.write(http_bytes(200, huge_reply(HUGE_MB[fault])))
    else:  # faults that only exist on the WebSocket: behave
        writer.write(http_bytes(200, json.dumps(env.step(action)).encode()))
    return True


# --------------------------------------------------------------------------- WebSocket


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
        kind = message.get("type")
        data = message.get("data") or {}
        if kind == "close":
            return True
        route = "message" if case is not None and case.fault == "503twice" else str(kind)
        fired = case is not None and fires(case, route)
        fault = case.fault if case is not None else "ok"
        if not fired or fault in ("503twice", "reset-state", "stateless"):
            if kind == "reset":
                await self.send(json.dumps({"type": "observation", "data": self.env.reset(data)}))
            elif kind == "step":
                await self.send(json.dumps({"type": "observation", "data": self.env.step(data)}))
            else:
                await self.send(json.dumps({"type": "state", "data": self.env.state()}))
            return True
        if fault == "malformed":
            await self.send('{"type": "observation", "data": ')
        elif fault == "shape":
            await self.send('{"type":"observation","data":{"unexpected":true}}')
        elif fault == "wrongtype":
            await self.send(json.dumps({"type": "state", "data": self.env.state()}))
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
            await self.send(json.dumps({"type": "observation", "data": self.env.step(data)}))
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
        elif fault == "extra":
            reply = extra_reply(self.env, data)
            await self.send(json.dumps({"type": "observation", "data": reply}))
        elif fault in HUGE_MB:
            text = b'{"type":"observation","data":' + huge_reply(HUGE_MB[fault]) + b"}"
            self.protocol.send_text(text)
            self.writer.write(self.flush())
            await self.writer.drain()
        else:
            await self.send(json.dumps({"type": "observation", "data": self.env.step(data)}))
        return True


# --------------------------------------------------------------------------- server


async def read_head(reader: asyncio.StreamReader) -> bytes | None:
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        return None


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await read_head(reader)
            if head is None:
                break
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            case, route = case_for(path)
            if headers.get("upgrade", "").lower() == "websocket":
                await WsSession(reader, writer).run(head, case)
                break
            length = int(headers.get("content-length") or 0)
            body = await reader.readexactly(length) if length else b""
            del method
            if not await handle_http(case, route, body, reader, writer):
                return
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        if not writer.is_closing():
            writer.close()


async def main_async(port: int, port_file: str | None, *, prebuild: bool) -> None:
    if prebuild:  # the huge replies are built before serving, so they start at once
        for megabytes in HUGE_MB.values():
            huge_reply(megabytes)
    server = await asyncio.start_server(serve_connection, "127.0.0.1", port, limit=1 << 20)
    bound = server.sockets[0].getsockname()[1]
    if port_file:
        Path(port_file).write_text(str(bound))
    print(f"faultserver on 127.0.0.1:{bound}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")  # loopback only, whatever is passed
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--prebuild", action="store_true", help="build the huge replies first")
    args = parser.parse_args()
    try:
        asyncio.run(main_async(args.port, args.port_file, prebuild=args.prebuild))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
