"""``/ws`` connections handed to their endpoint straight from the server, the rest to starlette.

starlette takes a WebSocket connection through its middleware and router (nine coroutines
deep) and wraps its ``send`` in one more (the exception middleware's), and a session that
waits for its next frame resumes through every one of those frames each time one arrives:
a price per step for middleware that does nothing for a WebSocket (the error middleware
passes it on; the exception middleware handles ``HTTPException``/``WebSocketException``,
which the session endpoint never raises). ``DirectWebSocket`` matches the one WebSocket path
as starlette's router does and calls its endpoint itself; HTTP, lifespan and every other path
go to the starlette app as before.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send


def route_path(scope: Scope) -> str:
    """The path a starlette router matches: ``path`` less the ``root_path`` it starts with
    (starlette's ``get_route_path``)."""
    path: str = scope["path"]
    root_path: str = scope.get("root_path", "")
    if not root_path or not path.startswith(root_path):
        return path
    if path == root_path:
        return ""
    return path[len(root_path) :] if path[len(root_path)] == "/" else path


class DirectWebSocket:
    """An ASGI app: a WebSocket connection to `path` goes to `endpoint`, the rest to `app`."""

    def __init__(self, app: ASGIApp, path: str, endpoint: ASGIApp) -> None:
        self.app = app
        self.path = path
        self.endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and route_path(scope) == self.path:
            await self.endpoint(scope, receive, send)
        else:
            await self.app(scope, receive, send)
