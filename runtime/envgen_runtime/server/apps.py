# mypy: disallow-subclassing-any=False
"""The two apps an env is served with: openenv 0.10's (``/ws`` sessions) and envgen's
stateful HTTP app (one environment kept across requests, with openenv's request, reply and
schema shapes), both publishing the reset parameters in ``GET /schema``."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from openenv.core.env_server.interfaces import Environment as OpenEnvEnvironment
from openenv.core.env_server.types import (
    EnvironmentMetadata,
    ResetRequest,
    StepRequest,
)
from pydantic import ValidationError

from .documents import metadata_document, schema_document
from .episode import EpisodeEnded
from .extra import require_openenv
from .serving import (
    DEFAULT_MAX_CONCURRENT_ENVS,
    accepted,
    inherited_async_methods,
    serving_class,
)


def _serving_class(environment_cls: type[Any], reset_cls: type[Any] | None) -> type[Any]:
    """`serving.serving_class` over `environment_cls`, with openenv's Environment mixed in
    when it is not one (an `envgen_runtime.server.Environment`), so openenv's app serves it."""
    if not issubclass(environment_cls, OpenEnvEnvironment):
        mixed = type(environment_cls.__name__, (environment_cls, OpenEnvEnvironment), {})
        mixed.__qualname__ = environment_cls.__qualname__
        mixed.__module__ = environment_cls.__module__
        environment_cls = mixed
    return serving_class(environment_cls, reset_cls, inherited_async_methods())


def _route_schemas(
    app: Any,
    action: type[Any],
    observation: type[Any],
    state: type[Any],
    reset: type[Any] | None,
) -> None:
    """`GET /schema`: `documents.schema_document`."""
    schemas = schema_document(action, observation, state, reset)
    app.get("/schema")(lambda: schemas)


def _route_metadata(app: Any, info: EnvironmentMetadata, capacity: int) -> None:
    """`GET /metadata`: openenv's keys plus `max_concurrent_envs`, which pools pack slots by."""
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) != "/metadata"]
    metadata = metadata_document(info.name, info.description, info.version or "", capacity)
    app.get("/metadata")(lambda: metadata)


def websocket_app(
    environment_cls: type[Any],
    action_cls: type[Any],
    observation_cls: type[Any],
    state_cls: type[Any],
    *,
    name: str,
    description: str = "",
    version: str = "0.1.0",
    max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT_ENVS,
    reset_cls: type[Any] | None = None,
) -> Any:
    """openenv 0.10's app: `/ws` sessions, `/health`, `/schema`, `/metadata`."""
    http_server = require_openenv("openenv.core.env_server.http_server")
    info = EnvironmentMetadata(name=name, description=description, version=version)

    class Served(_serving_class(environment_cls, reset_cls)):  # type: ignore[misc]
        def get_metadata(self) -> Any:
            return info

    Served.__name__ = Served.__qualname__ = environment_cls.__name__
    app = http_server.create_app(
        Served,
        action_cls,
        observation_cls,
        env_name=name,
        max_concurrent_envs=max_concurrent_envs,
        state_cls=state_cls,
    )
    _route_metadata(app, info, max_concurrent_envs)  # openenv's model has no place for it
    if reset_cls is not None:  # openenv's /schema has no place for the reset parameters
        app.router.routes[:] = [
            r for r in app.router.routes if getattr(r, "path", None) != "/schema"
        ]
        _route_schemas(app, action_cls, observation_cls, state_cls, reset_cls)
    return app


def http_app(
    environment_cls: type[Any],
    action_cls: type[Any],
    observation_cls: type[Any],
    state_cls: type[Any],
    *,
    name: str,
    description: str = "",
    version: str = "0.1.0",
    reset_cls: type[Any] | None = None,
) -> Any:
    """A stateful HTTP app: one environment kept across `/reset`, `/step` and `/state`."""
    require_openenv("fastapi")
    from fastapi import Body, FastAPI
    from fastapi.responses import JSONResponse

    serialization = require_openenv("openenv.core.env_server.serialization")
    env = _serving_class(environment_cls, reset_cls)()
    lock = threading.Lock()  # FastAPI runs plain endpoints in a thread pool
    info = EnvironmentMetadata(name=name, description=description, version=version)
    app = FastAPI(title=name, description=description, version=version)

    def run(call: Callable[[], Any]) -> Any:
        """`call` under the lock: a ValidationError is a 422, a step after done a 409 (with
        `code`), the env's own failure a 500."""
        with lock:
            try:
                observation = call()
            except ValidationError as exc:
                detail = json.loads(exc.json(include_url=False))
                return JSONResponse({"detail": detail}, status_code=422)
            except EpisodeEnded as exc:
                return JSONResponse({"detail": str(exc), "code": exc.code}, status_code=409)
            except Exception as exc:
                return JSONResponse({"detail": f"{type(exc).__name__}: {exc}"}, status_code=500)
        return serialization.serialize_observation(observation)

    body = Body(default_factory=ResetRequest)  # `POST /reset` with no body: defaults

    @app.post("/reset")
    def reset(request: ResetRequest = body) -> Any:
        kwargs = request.model_dump(exclude_unset=True)
        return run(lambda: env.reset(**accepted(env.reset, kwargs)))

    @app.post("/step")
    def step(request: StepRequest) -> Any:
        kwargs = request.model_dump(exclude_unset=True, exclude={"action"})

        def call() -> Any:  # the action is validated here too: an invalid one is a 422
            action = serialization.deserialize_action(request.action, action_cls)
            return env.step(action, **accepted(env.step, kwargs))

        return run(call)

    @app.get("/state")
    def state() -> Any:
        with lock:
            current = env.state
        return current.model_dump(mode="json")

    app.get("/health")(lambda: {"status": "healthy"})
    _route_metadata(app, info, 1)
    _route_schemas(app, action_cls, observation_cls, state_cls, reset_cls)
    return app
