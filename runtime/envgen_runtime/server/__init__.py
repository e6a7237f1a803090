"""Serving an environment whose models envgen generated from its schemas (the `server` extra).

Not imported by ``envgen_runtime``: clients never need openenv. The generated
``generated/<env>/server.py`` models subclass the bases in ``models``; an env author writes an
openenv ``Environment`` over them and calls ``main`` (or ``serve``). Two protocols
(``apps``): ``websocket`` is openenv 0.10's own app (one environment per ``/ws`` session);
``http`` is envgen's stateful app, one environment kept across requests (openenv 0.10 over
HTTP builds one per request, so no episode could be played), with openenv's request, reply
and schema shapes. ``main`` parses the command line env.toml's ``[server] command`` passes.
"""

from __future__ import annotations

from .extra import require_server

require_server("openenv.core.env_server.types")  # before the modules that import openenv

from .apps import http_app, websocket_app  # noqa: E402
from .main import PROTOCOLS, main, serve  # noqa: E402
from .models import (  # noqa: E402
    OMIT_NONE,
    ServerAction,
    ServerModel,
    ServerObservation,
    ServerState,
    UnionAction,
)

__all__ = [
    "OMIT_NONE",
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
