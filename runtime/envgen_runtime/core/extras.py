"""Optional libraries, imported on first use with an error that names the extra to install.

Anything a client does not always need belongs to an extra of ``envgen-runtime`` and is
loaded through ``require``: a missing one fails with the exact ``pip install`` line.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtraError

EXTRAS: dict[str, str] = {
    "docker": "docker",
    "fastapi": "openenv",
    "fastmcp": "openenv",
    "gymnasium": "gym",
    "httpx": "mcp",
    "mcp": "mcp",
    "openenv": "openenv",
    "ray": "ray",
    "starlette": "server",
    "uvicorn": "server",
}
"""Each optional top-level module and the ``envgen-runtime`` extra that installs it."""


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module`` (an optional dependency listed in ``EXTRAS``) for ``purpose``."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        top = module.partition(".")[0]
        if exc.name is not None and exc.name != top and not exc.name.startswith(top + "."):
            raise  # the library is there but one of its own dependencies is broken
        extra = EXTRAS[top]
        raise MissingExtraError(
            f"{purpose} needs the {top!r} package, which is not installed: "
            f"pip install 'envgen-runtime[{extra}]'",
            extra=extra,
            module=top,
        ) from exc
