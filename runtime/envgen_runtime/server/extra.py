"""The server extra's libraries (openenv, fastapi, uvicorn), each imported on first use with
an error that names ``envgen-runtime[server]`` when it is missing."""

from __future__ import annotations

from types import ModuleType

from ..core.extras import require

PURPOSE = "serving an environment (envgen_runtime.server)"


def require_server(module: str) -> ModuleType:
    """Import ``module`` for serving, or fail with the ``pip install`` line of the extra."""
    return require(module, PURPOSE)
