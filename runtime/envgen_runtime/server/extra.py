"""The serving extras' libraries, each imported on first use with an error that names the
extra to install: ``envgen-runtime[server]`` (starlette, uvicorn: the lean backend) or
``envgen-runtime[openenv]`` (openenv 0.10 and FastAPI: the openenv backend)."""

from __future__ import annotations

from types import ModuleType

from ..core.extras import require

PURPOSE = "serving an environment (envgen_runtime.server)"
OPENENV_PURPOSE = (
    "serving an environment on the openenv backend (envgen_runtime.server; "
    "backend lean needs no openenv)"
)


def require_server(module: str) -> ModuleType:
    """Import ``module`` for serving, or fail with the ``pip install`` line of its extra."""
    return require(module, PURPOSE)


def require_openenv(module: str) -> ModuleType:
    """Import ``module`` (openenv's or FastAPI's) for the openenv backend, or fail naming
    ``envgen-runtime[openenv]`` and the lean backend, which does without it."""
    return require(module, OPENENV_PURPOSE)
