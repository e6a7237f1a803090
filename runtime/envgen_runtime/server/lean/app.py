"""The lean app: ``/health``, ``/schema``, ``/metadata`` and one protocol's routes, on
starlette (served by uvicorn). ``websocket`` holds one environment per ``/ws`` session up to
`max_concurrent_envs` (``/ws`` reached without starlette's middleware: ``routing``); ``http``
keeps one environment across requests."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect

from ..documents import metadata_document, schema_document
from ..serving import DEFAULT_MAX_CONCURRENT_ENVS, inherited_async_methods, serving_class
from .frames import Frames
from .http import http_routes
from .routing import DirectWebSocket
from .session import SESSION_ERROR, Session, capacity_error, error, factory_error
from .threads import EnvThreads, runner


class _Sessions:
    """The ``/ws`` endpoint: a session per connection while fewer than `limit` are open, each
    env constructed, driven and closed on its session's thread (``threads``). An ASGI app
    (starlette routes to it as it is), whose connection is read and written as raw ASGI
    messages (``frames``) rather than through starlette's ``WebSocket``, and reached
    straight from the server (``routing.DirectWebSocket``)."""

    def __init__(self, environment_cls: type[Any], action_cls: type[Any], limit: int) -> None:
        self.environment_cls = environment_cls
        self.action_cls = action_cls
        self.limit = limit
        self.active = 0
        self.threads = EnvThreads(environment_cls)
        self.inherited = inherited_async_methods()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One ``/ws`` connection: its session from the first frame to a close or disconnect
        (in this coroutine itself, which a waiting session resumes through on each frame)."""
        websocket = Frames(receive, send)
        await websocket.accept()
        if self.active >= self.limit:
            await websocket.send_text(capacity_error(self.active, self.limit))
            await websocket.close()
            return
        self.active += 1
        session: Session | None = None
        thread = self.threads.new()
        try:
            try:
                env = await thread.run(self.environment_cls)
            except Exception:
                await websocket.send_text(factory_error(self.environment_cls))
                return
            session = Session(env, self.action_cls, thread, self.inherited)
            while not session.closed:
                reply = await session.handle(await websocket.receive_text())
                if reply is not None:
                    await websocket.send_text(reply)
        except WebSocketDisconnect:
            pass
        except Exception as exc:  # as openenv: the session ends with SESSION_ERROR
            await _send_quietly(websocket, error(str(exc), SESSION_ERROR))
        finally:
            self.active -= 1
            try:
                if session is not None:
                    await session.close()
            finally:
                self.threads.release(thread)
                await _close_quietly(websocket)


async def _send_quietly(websocket: Frames, text: str) -> None:
    with contextlib.suppress(RuntimeError, WebSocketDisconnect):  # the peer may be gone
        await websocket.send_text(text)


async def _close_quietly(websocket: Frames) -> None:
    with contextlib.suppress(RuntimeError, WebSocketDisconnect):
        await websocket.close()


def _document(content: dict[str, Any]) -> Any:
    async def endpoint(request: Request) -> Response:
        return JSONResponse(content)

    return endpoint


def lean_app(
    environment_cls: type[Any],
    action_cls: type[Any],
    observation_cls: type[Any],
    state_cls: type[Any],
    *,
    name: str,
    description: str = "",
    version: str = "0.1.0",
    protocol: str = "websocket",
    max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT_ENVS,
    reset_cls: type[Any] | None = None,
) -> ASGIApp:
    """The env served on `protocol` ("websocket": `/ws` sessions; "http": one stateful env)."""
    served = serving_class(environment_cls, reset_cls, inherited_async_methods())
    routes: list[BaseRoute]
    sessions: _Sessions | None = None
    if protocol == "websocket":
        capacity = max_concurrent_envs
        sessions = _Sessions(served, action_cls, capacity)
        routes = []
        close: Callable[[], None] = sessions.threads.close
    elif protocol == "http":
        capacity = 1
        thread = runner(served)  # the env is built here, on its thread, so a failure stops this
        routes = list(http_routes(thread.call(served), action_cls, thread))
        close = thread.close
    else:
        raise ValueError(f"protocol must be one of websocket, http, not {protocol!r}")
    schemas = schema_document(action_cls, observation_cls, state_cls, reset_cls)
    metadata = metadata_document(name, description, version, capacity)
    routes += [
        Route("/health", _document({"status": "healthy"}), methods=["GET"]),
        Route("/schema", _document(schemas), methods=["GET"]),
        Route("/metadata", _document(metadata), methods=["GET"]),
    ]
    app = Starlette(routes=routes, lifespan=_closing(close))
    return app if sessions is None else DirectWebSocket(app, "/ws", sessions)


def _closing(close: Callable[[], None]) -> Any:
    """A lifespan that calls `close` when the server stops: the app's long-lived env threads
    go (an app never served keeps them, idle daemons, until the process ends)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            close()

    return lifespan
