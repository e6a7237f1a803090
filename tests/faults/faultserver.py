"""A misbehaving OpenEnv server of our own: real HTTP/1.1 and WebSocket bytes on 127.0.0.1.

    python faultserver.py --port 0 [--port-file F] [--prebuild]

One process serves every fault: the fault is chosen by the URL, so a test's client gets a
base URL ``http://127.0.0.1:P/<fault>/<case>`` (or ``/<fault>@<route>/<case>``, a fault
that fires once on that route) and every request it makes (``/reset``, ``/step``,
``/state``, ``/ws``) lands in that fault's handler with the case's own state. No process
start-up per case. A raw asyncio server rather than an ASGI one: faults such as a body cut
short or a reset connection need the bytes in our hands.

The environment is a counter (the models of ``tests/runtime/clients.py``): each step adds
``delta`` to ``total`` and echoes ``message``. Over HTTP one environment per case is kept
across requests (the stateful protocol), except with the ``stateless`` fault, which builds a
fresh one per request as current OpenEnv servers do. Over WebSocket each connection is its
own environment.

When a fault fires is in ``fault_env``; what it sends in ``fault_http`` and ``fault_ws``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from fault_env import HUGE_MB, case_for, huge_reply
from fault_http import handle_http
from fault_ws import WsSession


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
            _, path, _ = lines[0].split(" ", 2)
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
