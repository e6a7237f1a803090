"""Serving an environment whose models envgen generated from its schemas (the `server` extra).

Not imported by ``envgen_runtime``: clients never need a server. The generated
``generated/<env>/server.py`` models subclass the bases in ``models`` (openenv 0.10's wire
bases, restated in ``bases``); an env author subclasses ``Environment`` (or openenv's) over
them and calls ``main`` (or ``serve``), or the generated module's own ``main``, which binds
the models and env.toml's ``[server] backend``. Two backends: ``lean`` serves through
envgen's starlette app (``lean``, the ``server`` extra), which imports neither openenv nor
gradio; ``openenv`` through openenv 0.10's app (``apps``, the ``openenv`` extra). Each
speaks two protocols: ``websocket`` (one environment per ``/ws`` session) and ``http``
(envgen's stateful app, one environment kept across requests, with openenv's request, reply
and schema shapes). ``main`` parses the command line env.toml's
``[server] command`` passes. ``http_app`` and ``websocket_app`` (the openenv backend's) load
openenv when first named.

A tool environment (openenv's ``MCPEnvironment``) serves its committed tools through
``tool_env``: ``ToolEnvironment``, ``tool_server`` (an author's functions as the generated
``TOOLS``, each call's arguments and return checked by the generated models), ``tool_app``
and ``tool_main``; also loaded when first named, as they import FastMCP and openenv.
``tools`` holds what the generated ``TOOLS`` are made of (``ServerTool``) and the checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .bases import Environment
from .main import BACKENDS, PROTOCOLS, build_app, main, serve
from .models import (
    OMIT_NONE,
    ServerAction,
    ServerModel,
    ServerObservation,
    ServerState,
    UnionAction,
)
from .serving import DEFAULT_MAX_CONCURRENT_ENVS
from .tools import ServerTool, ToolMismatchError

if TYPE_CHECKING:  # loaded by __getattr__ at run time: they import FastMCP and openenv
    from .tool_env import ToolEnvironment, add_tools, tool_app, tool_main, tool_server

__all__ = [
    "BACKENDS",
    "DEFAULT_MAX_CONCURRENT_ENVS",
    "OMIT_NONE",
    "PROTOCOLS",
    "Environment",
    "ServerAction",
    "ServerModel",
    "ServerObservation",
    "ServerState",
    "ServerTool",
    "ToolEnvironment",
    "ToolMismatchError",
    "UnionAction",
    "add_tools",
    "build_app",
    "http_app",
    "main",
    "serve",
    "tool_app",
    "tool_main",
    "tool_server",
    "websocket_app",
]

_TOOL_ENV = ("ToolEnvironment", "add_tools", "tool_app", "tool_main", "tool_server")
"""A tool env's serving names (``tool_env``: FastMCP and openenv), imported on first use."""


def __getattr__(name: str) -> Any:
    """`http_app` and `websocket_app` (the openenv backend's apps) and the tool env names
    (`tool_env`'s), imported on first use."""
    if name in _TOOL_ENV:
        from .extra import require_openenv

        require_openenv("fastmcp")  # first: openenv's MCP module imports it
        require_openenv("openenv.core.env_server.mcp_environment")
        from . import tool_env

        return getattr(tool_env, name)
    if name in ("http_app", "websocket_app"):
        from .extra import require_openenv

        require_openenv("openenv.core.env_server.types")
        from . import apps

        return getattr(apps, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
