"""``serve`` and ``main``: an env's server process, its app chosen by protocol, on uvicorn."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from .apps import DEFAULT_MAX_CONCURRENT_ENVS, http_app, websocket_app
from .extra import require_server

PROTOCOLS = ("websocket", "http")


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
    uvicorn = require_server("uvicorn")
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
