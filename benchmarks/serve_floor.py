"""The lean server's floor: the same ASGI stack answering every frame with a fixed reply.

``bench_serve`` measures the lean backend's server CPU per step against openenv's. This
module is what that figure cannot go below while the server stays on uvicorn + starlette
(issue 24: "a well-kept ASGI stack ... no home-made HTTP server"): a starlette app served by
``uvicorn.run`` exactly as ``envgen_runtime.server.main.serve`` serves the lean app, whose
``/ws`` endpoint answers each text frame with one pre-encoded echo_env observation frame,
reached and reading and writing raw ASGI messages as the lean endpoint is and does
(``lean.routing.DirectWebSocket``, ``lean.frames.Frames``). No
env, no message parsing, no validation, no models. Two forms:

- ``stack``: the frame is answered on the event loop;
- ``hop``: each frame first makes the round trip the lean server makes to run an env's sync
  method (``EnvThread.run`` of a no-op on the session's own thread), so ``hop - stack`` is
  that round trip's price alone.

    python -m benchmarks.serve_floor --port 8123 [--hop]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: import as `-m` does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from envgen_runtime.server.lean.frames import Frames
from envgen_runtime.server.lean.routing import DirectWebSocket
from envgen_runtime.server.lean.threads import EnvThread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect

REPLY = (
    '{"type":"observation","data":{"observation":{"metadata":{},"echoed_message":"hello",'
    '"message_length":5},"reward":0.5,"done":false}}'
)
"""What the lean server sends for echo_env's ``step(message="hello")``, byte for byte."""


def _nothing() -> None:
    return None


class _Floor:
    """The `/ws` ASGI app (reached as the lean ``_Sessions`` is: ``DirectWebSocket``)."""

    def __init__(self, hop: bool) -> None:
        self.hop = hop

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        websocket = Frames(receive, send)
        await websocket.accept()
        thread = EnvThread() if self.hop else None
        try:
            while True:
                await websocket.receive_text()
                if thread is not None:
                    await thread.run(_nothing)
                await websocket.send_text(REPLY)
        except WebSocketDisconnect:
            pass
        finally:
            if thread is not None:
                thread.close()


def floor_app(*, hop: bool) -> ASGIApp:
    """`/health` and a `/ws` that answers every text frame with `REPLY`."""

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "healthy"})

    return DirectWebSocket(Starlette(routes=[Route("/health", health)]), "/ws", _Floor(hop))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--hop", action="store_true", help="a thread round trip per frame")
    args = parser.parse_args()
    import uvicorn

    uvicorn.run(floor_app(hop=args.hop), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
