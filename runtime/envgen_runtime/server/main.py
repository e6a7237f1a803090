"""``serve`` and ``main``: an env's server process, its app chosen by backend and protocol,
on uvicorn. The openenv backend's modules load only when it is chosen."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from .extra import require_openenv, require_server
from .serving import DEFAULT_MAX_CONCURRENT_ENVS

PROTOCOLS = ("websocket", "http")
BACKENDS = ("openenv", "lean")


def build_app(
    environment_cls: type[Any],
    action_cls: type[Any],
    observation_cls: type[Any],
    state_cls: type[Any],
    *,
    name: str,
    description: str = "",
    version: str = "0.1.0",
    protocol: str = "websocket",
    backend: str = "openenv",
    max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT_ENVS,
    reset_cls: type[Any] | None = None,
) -> Any:
    """The ASGI app `serve` runs: `backend` "openenv" (openenv 0.10's app, or envgen's
    stateful HTTP app on FastAPI) or "lean" (envgen's starlette app, no openenv)."""
    models = (environment_cls, action_cls, observation_cls, state_cls)
    info: dict[str, Any] = dict(name=name, description=description, version=version)
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    if backend == "lean":
        require_server("starlette")
        from .lean import lean_app

        return lean_app(
            *models,
            **info,
            protocol=protocol,
            max_concurrent_envs=max_concurrent_envs,
            reset_cls=reset_cls,
        )
    if backend != "openenv":
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    require_openenv("openenv.core.env_server.types")
    from .apps import http_app, websocket_app

    if protocol == "websocket":
        return websocket_app(
            *models, **info, max_concurrent_envs=max_concurrent_envs, reset_cls=reset_cls
        )
    return http_app(*models, **info, reset_cls=reset_cls)


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
    backend: str = "openenv",
    max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT_ENVS,
    reset_cls: type[Any] | None = None,
) -> None:
    """Serve the environment with uvicorn until the process is stopped.

    `reset_cls` (the generated `<Prefix>ResetParams`) validates reset's other keyword
    arguments and is published in `GET /schema` under `reset`.
    """
    uvicorn = require_server("uvicorn")
    app = build_app(
        environment_cls,
        action_cls,
        observation_cls,
        state_cls,
        name=name,
        description=description,
        version=version,
        protocol=protocol,
        backend=backend,
        max_concurrent_envs=max_concurrent_envs,
        reset_cls=reset_cls,
    )
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
    backend: str = "openenv",
) -> None:
    """Parse `--host/--port/--protocol/--backend` (as env.toml's `[server] command` passes
    the first three); serve. `backend` is the default of `--backend`."""
    parser = argparse.ArgumentParser(prog=name, description=description or None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--protocol", choices=PROTOCOLS, default="websocket")
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default=backend,
        help="openenv: openenv 0.10's app; lean: envgen's starlette app, no openenv or gradio",
    )
    info: dict[str, Any] = dict(name=name, description=description, version=version)
    info.update(max_concurrent_envs=max_concurrent_envs, reset_cls=reset_cls)
    info.update(vars(parser.parse_args(argv)))  # host, port, protocol, backend
    serve(environment_cls, action_cls, observation_cls, state_cls, **info)
