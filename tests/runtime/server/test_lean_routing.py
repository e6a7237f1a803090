"""lean.routing: the `/ws` WebSocket path matched as starlette's router matches it and handed
to its endpoint; HTTP, lifespan and other paths to the starlette app."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from envgen_runtime.server.lean.routing import DirectWebSocket, route_path
from starlette._utils import get_route_path
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.testclient import TestClient
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

SCOPES = [
    {"path": "/ws"},
    {"path": "/ws", "root_path": ""},
    {"path": "/api/ws", "root_path": "/api"},
    {"path": "/api", "root_path": "/api"},
    {"path": "/apiws", "root_path": "/api"},
    {"path": "/ws", "root_path": "/api"},  # a path outside the root: as it is
    {"path": "/ws/", "root_path": ""},
]


@pytest.mark.parametrize("scope", SCOPES, ids=[str(s) for s in SCOPES])
def test_route_path_is_starlette_s(scope: dict[str, Any]) -> None:
    assert route_path(scope) == get_route_path(scope)


class Recorder:
    def __init__(self) -> None:
        self.scopes: list[Scope] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scopes.append(scope)


@pytest.mark.parametrize(
    ("scope", "direct"),
    [
        ({"type": "websocket", "path": "/ws"}, True),
        ({"type": "websocket", "path": "/api/ws", "root_path": "/api"}, True),
        ({"type": "websocket", "path": "/ws/"}, False),
        ({"type": "websocket", "path": "/other"}, False),
        ({"type": "http", "path": "/ws"}, False),
        ({"type": "lifespan"}, False),
    ],
)
def test_only_a_websocket_on_the_path_goes_to_the_endpoint(scope: Scope, direct: bool) -> None:
    app, endpoint = Recorder(), Recorder()

    async def nothing() -> Any:
        return None

    async def ignore(message: Any) -> None:
        return None

    asyncio.run(DirectWebSocket(app, "/ws", endpoint)(scope, nothing, ignore))
    assert (endpoint.scopes, app.scopes) == (([scope], []) if direct else ([], [scope]))


class Echo:
    """An ASGI endpoint (starlette routes to it as it is, as to the lean ``_Sessions``)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        websocket = WebSocket(scope, receive, send)
        await websocket.accept()
        await websocket.send_text(scope["path"] + " " + await websocket.receive_text())
        await websocket.close()


@pytest.mark.parametrize("root_path", ["", "/api"])
def test_a_served_app_reaches_the_endpoint_where_starlette_routes_it(root_path: str) -> None:
    routed = Starlette(routes=[WebSocketRoute("/ws", Echo())])
    direct = DirectWebSocket(Starlette(), "/ws", Echo())
    replies = []
    for app in (routed, direct):
        with (
            TestClient(app, root_path=root_path) as client,
            client.websocket_connect("/ws") as ws,
        ):
            ws.send_text("hi")
            replies.append(ws.receive_text())
    assert replies[0] == replies[1]
