# mypy: disallow-subclassing-any=False, disable-error-code="import-untyped"
"""One real openenv 0.10 process serving every boundary fault of `envgen verify`'s tests.

    python -m tests.generator.verify.boundary_server --port P

Each fault is served by both of envgen_runtime.server's apps, mounted at
``/<protocol>/<fault>`` (so its base URL is ``http://127.0.0.1:P/websocket/<fault>`` or
``.../http/<fault>``); ``/health`` answers for the process. The action
(tests/generator/verify/boundary_env/action.schema.json) has an integer ``level`` in
[-100000, 100000], a ``label`` of at most 64 characters and an optional ``style`` object whose
``shade`` is one of 40 names. Each fault raises inside the env for one valid value only, one
that random examples rarely draw:

- ``none``: conforms.
- ``minimum``: ``level`` == -100000.
- ``maximum``: ``level`` == 100000.
- ``enum``: ``style.shade`` == "c27".
- ``max-length``: ``label`` is exactly 64 characters long.
- ``every-step``: every step, whatever the action (no bound's doing).
- ``reset-maximum``: a reset whose ``width`` parameter (reset.schema.json: 1 to 100000,
  default 1) is 100000; the step after it raises.
"""

from __future__ import annotations

import argparse
from typing import Any, Literal

FAULTS = ("none", "minimum", "maximum", "enum", "max-length", "every-step", "reset-maximum")
PROTOCOLS = ("websocket", "http")
LIMIT = 100_000
SHADES = tuple(f"c{i:02d}" for i in range(40))
Shade = Literal[SHADES]  # type: ignore[valid-type]


def _planted(fault: str, action: Any) -> bool:
    return (
        fault == "every-step"
        or (fault == "minimum" and action.level == -LIMIT)
        or (fault == "maximum" and action.level == LIMIT)
        or (fault == "enum" and action.style is not None and action.style.shade == "c27")
        or (fault == "max-length" and len(action.label) == 64)
    )


def build_app(protocol: str, fault: str) -> Any:
    from envgen_runtime.server import http_app, websocket_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation, State
    from pydantic import BaseModel, Field

    class Style(BaseModel):
        shade: Shade

    class BoundaryAction(Action):
        level: int = Field(ge=-LIMIT, le=LIMIT)
        label: str = Field(max_length=64)
        style: Style | None = None

    class BoundaryReset(BaseModel):
        width: int = Field(default=1, ge=1, le=LIMIT)

    class BoundaryObservation(Observation):
        level: int

    class BoundaryEnvironment(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self._state = State()
            self._width = 1

        def reset(
            self, seed: int | None = None, episode_id: str | None = None, width: int = 1
        ) -> Any:
            self._state = State(episode_id=episode_id, step_count=0)
            self._width = width
            return BoundaryObservation(level=0, done=False, reward=None)

        def step(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Any:
            if _planted(fault, action) or (fault == "reset-maximum" and self._width == LIMIT):
                raise ValueError(f"planted: the {fault} fault")
            self._state.step_count += 1
            return BoundaryObservation(level=action.level, done=False, reward=0.0)

        @property
        def state(self) -> Any:
            return self._state

    make = websocket_app if protocol == "websocket" else http_app
    return make(
        BoundaryEnvironment,
        BoundaryAction,
        BoundaryObservation,
        State,
        name="boundary_env",
        reset_cls=BoundaryReset,
    )


def build_root() -> Any:
    """Every fault's app under its own prefix, and a health check for the process."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Mount, Route

    async def health(request: Any) -> Any:
        return JSONResponse({"status": "healthy"})

    routes: list[Any] = [Route("/health", health)]
    routes += [
        Mount(f"/{protocol}/{fault}", app=build_app(protocol, fault))
        for protocol in PROTOCOLS
        for fault in FAULTS
    ]
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.generator.verify.boundary_server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    import uvicorn

    uvicorn.run(build_root(), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
