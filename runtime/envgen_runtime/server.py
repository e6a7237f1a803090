# mypy: disallow-subclassing-any=False
"""Serving an environment whose models envgen generated from its schemas (the `server` extra).

Not imported by ``envgen_runtime``: clients never need openenv. The generated
``generated/<env>/server.py`` models subclass the bases here; an env author writes an openenv
``Environment`` over them and calls ``main`` (or ``serve``). Two protocols: ``websocket`` is
openenv 0.10's own app (one environment per ``/ws`` session); ``http`` is envgen's stateful
app, one environment kept across requests (openenv 0.10 over HTTP builds one per request, so
no episode could be played), with openenv's request, reply and schema shapes.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import json
import threading
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    model_serializer,
)

from ._extras import require

_PURPOSE = "serving an environment (envgen_runtime.server)"
require("openenv.core.env_server.types", _PURPOSE)  # a missing extra names `server`

from openenv.core.env_server.types import (  # noqa: E402
    Action,
    EnvironmentMetadata,
    Observation,
    ResetRequest,
    State,
    StepRequest,
)

__all__ = [
    "PROTOCOLS",
    "ServerAction",
    "ServerModel",
    "ServerObservation",
    "ServerState",
    "UnionAction",
    "http_app",
    "main",
    "serve",
    "websocket_app",
]

PROTOCOLS = ("websocket", "http")
DEFAULT_MAX_CONCURRENT_ENVS = 16

OMIT_NONE = "x-envgen-omit-none"
"""The mark generated server models put on an optional property whose schema refuses null."""


def _omit_absent(model: BaseModel, data: Any) -> Any:
    """Leave out OMIT_NONE fields while they are None: optional on the wire but never null
    (the generated `x: T | None = None` of a non-required property that refuses null)."""
    if not isinstance(data, dict):
        return data
    for name, info in type(model).model_fields.items():
        extra = info.json_schema_extra
        marked = isinstance(extra, dict) and extra.get(OMIT_NONE) is True
        if marked and getattr(model, name) is None:
            key = info.serialization_alias or info.alias or name
            data.pop(key if key in data else name, None)
    return data


def _published(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the env's own says: marked fields not nullable, union tags required.

    Union members default their tag to its constant (`Move(direction=...)` needs no `type=`),
    so pydantic leaves it out of `required`; on the wire it is required, as the env's schema
    says. Data keywords (const, default, enum) are not walked.
    """
    defs = schema.get("$defs", {})
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        props = node.get("properties")
        for prop in props.values() if isinstance(props, dict) else []:
            if isinstance(prop, dict) and prop.pop(OMIT_NONE, None) is True:
                _drop_null(prop)
        stack.extend(v for k, v in node.items() if k not in ("const", "default", "enum"))
        discriminator = node.get("discriminator")
        tag = discriminator.get("propertyName") if isinstance(discriminator, dict) else None
        if not isinstance(tag, str):
            continue
        members = node.get("oneOf", node.get("anyOf"))
        for member in members if isinstance(members, list) else []:
            ref = member.get("$ref", "") if isinstance(member, dict) else ""
            target = defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith("#/$defs/") else member
            prop = target.get("properties", {}).get(tag) if isinstance(target, dict) else None
            if isinstance(prop, dict) and "const" in prop and prop.get("default") == prop["const"]:
                del prop["default"]
                required = target.setdefault("required", [])
                if tag not in required:
                    required.insert(0, tag)
    return schema


def _drop_null(prop: dict[str, Any]) -> None:
    branches = prop.get("anyOf")
    if isinstance(branches, list):
        kept = [b for b in branches if b != {"type": "null"}]
        if len(kept) == 1 and isinstance(kept[0], dict):
            del prop["anyOf"]
            prop.update({k: v for k, v in kept[0].items() if k not in prop})
        else:
            prop["anyOf"] = kept
    if "default" in prop and prop["default"] is None:
        del prop["default"]


class _WireFormat(BaseModel):
    """What every generated server model adds to its base: wire names kept, absent optionals
    left out of replies, and a published schema that says so."""

    # Wire names such as `class` or `time-left` must survive openenv's bare `model_dump()`.
    model_config = ConfigDict(validate_by_name=True, serialize_by_alias=True)

    @model_serializer(mode="wrap")
    def _serialize(self, handler: SerializerFunctionWrapHandler) -> Any:
        return _omit_absent(self, handler(self))

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return _published(super().model_json_schema(*args, **kwargs))


class ServerModel(_WireFormat):
    """Base of every nested model in a generated server module."""


class ServerAction(Action, _WireFormat):
    """openenv's Action (unknown fields forbidden, `metadata`) with wire names kept."""


class ServerObservation(Observation, _WireFormat):
    """openenv's Observation (`done`, `reward`, `metadata`) with wire names kept."""


class ServerState(State, _WireFormat):
    """openenv's State (`episode_id`, `step_count`, extra fields allowed) with wire names kept."""


class UnionAction(ServerAction):
    """An action that is one of several tagged models; `union` holds the tagged union.

    openenv validates actions with ``action_cls.model_validate`` and publishes
    ``action_cls.model_json_schema()``; both go through a TypeAdapter over ``union`` here, so
    validation returns the member model the tag names. Never instantiated itself.
    """

    union: ClassVar[Any]

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Any:
        return _adapter(cls).validate_python(obj, *args, **kwargs)

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        schema: dict[str, Any] = _adapter(cls).json_schema(*args, **kwargs)
        head = {"title": cls.__name__}
        if cls.__doc__:
            head["description"] = inspect.cleandoc(cls.__doc__)
        return _published({**head, **schema})


@functools.cache
def _adapter(cls: type[UnionAction]) -> TypeAdapter[Any]:
    return TypeAdapter(cls.union)


def _accepted(method: Any, kwargs: dict[str, Any]) -> Any:
    """The keyword arguments `method` accepts (all of them when it takes **kwargs)."""
    params = inspect.signature(method).parameters
    anything = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return {k: v for k, v in kwargs.items() if anything or k in params}


def _with_reset_params(environment_cls: type[Any], reset_cls: type[Any] | None) -> type[Any]:
    """`environment_cls` whose reset validates its other keyword arguments as `reset_cls`.

    The env's reset gets the validated values under their wire names; invalid ones raise
    pydantic's ValidationError first (WebSocket `VALIDATION_ERROR`, HTTP 422).
    """
    if reset_cls is None:
        return environment_cls
    own_reset = environment_cls.reset
    params_cls = reset_cls

    class WithResetParams(environment_cls):
        def reset(
            self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
        ) -> Any:
            params = params_cls.model_validate(kwargs)
            fields = type(params).model_fields.items()
            values = {info.alias or name: getattr(params, name) for name, info in fields}
            given = {"seed": seed, "episode_id": episode_id, **values}
            return own_reset(self, **_accepted(own_reset, given))

    WithResetParams.__name__ = WithResetParams.__qualname__ = environment_cls.__name__
    return WithResetParams


def _route_schemas(
    app: Any,
    action: type[Any],
    observation: type[Any],
    state: type[Any],
    reset: type[Any] | None,
) -> None:
    """`GET /schema`: openenv's keys, plus `reset` (the reset parameters) when there are any."""
    roles = {
        "action": action,
        "observation": observation,
        "reset_observation": observation,
        "state": state,
        "reset": reset,
    }
    schemas = {role: cls.model_json_schema() for role, cls in roles.items() if cls is not None}
    app.get("/schema")(lambda: schemas)


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
    http_server = require("openenv.core.env_server.http_server", _PURPOSE)
    info = EnvironmentMetadata(name=name, description=description, version=version)

    class Served(_with_reset_params(environment_cls, reset_cls)):  # type: ignore[misc]
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
    require("fastapi", _PURPOSE)
    from fastapi import Body, FastAPI
    from fastapi.responses import JSONResponse

    serialization = require("openenv.core.env_server.serialization", _PURPOSE)
    env = _with_reset_params(environment_cls, reset_cls)()
    lock = threading.Lock()  # FastAPI runs plain endpoints in a thread pool
    info = EnvironmentMetadata(name=name, description=description, version=version)
    app = FastAPI(title=name, description=description, version=version)

    def run(call: Callable[[], Any]) -> Any:
        """`call` under the lock: a ValidationError is a 422, the env's own failure a 500."""
        with lock:
            try:
                observation = call()
            except ValidationError as exc:
                detail = json.loads(exc.json(include_url=False))
                return JSONResponse({"detail": detail}, status_code=422)
            except Exception as exc:
                return JSONResponse({"detail": f"{type(exc).__name__}: {exc}"}, status_code=500)
        return serialization.serialize_observation(observation)

    body = Body(default_factory=ResetRequest)  # `POST /reset` with no body: defaults

    @app.post("/reset")
    def reset(request: ResetRequest = body) -> Any:
        kwargs = request.model_dump(exclude_unset=True)
        return run(lambda: env.reset(**_accepted(env.reset, kwargs)))

    @app.post("/step")
    def step(request: StepRequest) -> Any:
        kwargs = request.model_dump(exclude_unset=True, exclude={"action"})

        def call() -> Any:  # the action is validated here too: an invalid one is a 422
            action = serialization.deserialize_action(request.action, action_cls)
            return env.step(action, **_accepted(env.step, kwargs))

        return run(call)

    @app.get("/state")
    def state() -> Any:
        with lock:
            current = env.state
        return current.model_dump(mode="json")

    app.get("/health")(lambda: {"status": "healthy"})
    app.get("/metadata")(lambda: info.model_dump(mode="json"))
    _route_schemas(app, action_cls, observation_cls, state_cls, reset_cls)
    return app


def serve(
    environment_cls: type[Any],
    action_cls: type[Any],
    observation_cls: type[Any],
    state_cls: type[Any],
    *,
    name: str,
    description: str = "",
    version: str = "0.1.0",
    host: str = "127.0.0.1",
    port: int = 8000,
    protocol: str = "websocket",
    max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT_ENVS,
    reset_cls: type[Any] | None = None,
) -> None:
    """Serve the environment with uvicorn until the process is stopped.

    `reset_cls` (the generated `<Prefix>ResetParams`) validates reset's other keyword
    arguments and is published in `GET /schema` under `reset`.
    """
    uvicorn = require("uvicorn", _PURPOSE)
    models = (environment_cls, action_cls, observation_cls, state_cls)
    info: dict[str, Any] = dict(name=name, description=description, version=version)
    if protocol == "websocket":
        app = websocket_app(
            *models, **info, max_concurrent_envs=max_concurrent_envs, reset_cls=reset_cls
        )
    elif protocol == "http":
        app = http_app(*models, **info, reset_cls=reset_cls)
    else:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    uvicorn.run(app, host=host, port=port, log_level="warning")


def main(
    environment_cls: type[Any],
    action_cls: type[Any],
    observation_cls: type[Any],
    state_cls: type[Any],
    *,
    name: str,
    description: str = "",
    version: str = "0.1.0",
    max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT_ENVS,
    argv: Sequence[str] | None = None,
    reset_cls: type[Any] | None = None,
) -> None:
    """Parse `--host/--port/--protocol` (as env.toml's `[server] command` passes them); serve."""
    parser = argparse.ArgumentParser(prog=name, description=description or None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--protocol", choices=PROTOCOLS, default="websocket")
    info: dict[str, Any] = dict(name=name, description=description, version=version)
    info.update(max_concurrent_envs=max_concurrent_envs, reset_cls=reset_cls)
    info.update(vars(parser.parse_args(argv)))  # host, port, protocol
    serve(environment_cls, action_cls, observation_cls, state_cls, **info)
