# mypy: disallow-subclassing-any=False, disable-error-code="import-untyped"
"""A real openenv 0.10 server for `envgen verify`'s tests, with one fault planted per process.

    python -m tests.generator.verify.counter_server --port P [--fault NAME | --all]

``--all`` serves every fault in one process, each at ``/<fault>`` (its base URL
``http://127.0.0.1:P/<fault>``), with ``/health`` for the process.

Faults (each breaks the committed schemas in tests/generator/verify/counter_env/ in one way only):
- ``none``: conforms.
- ``obs-breaks``: the observation's ``parity`` is "negative" (outside its enum) after a step
  of exactly -2, and only then.
- ``crash-on-boundary``: a step of exactly 3 (the schema's maximum) raises inside the env.
- ``accepts-out-of-bounds``: the server's action model has no bounds: delta 9 is accepted.
- ``state-drops-field``: the state leaves out the declared, required ``total``.
- ``drift``: the server's own schema lets ``parity`` also be "zero" (the committed client
  would reject it): schema drift, while every reply still conforms.
- ``version-drift``: ``/metadata`` reports version 0.2.0 where env.toml says 0.1.0.

Every other fault reports env.toml's version, 0.1.0.
"""

from __future__ import annotations

import argparse
from typing import Any, Literal

FAULTS = (
    "none",
    "obs-breaks",
    "crash-on-boundary",
    "accepts-out-of-bounds",
    "state-drops-field",
    "drift",
    "version-drift",
)


def build_app(fault: str) -> Any:
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
    from pydantic import Field

    if fault == "accepts-out-of-bounds":

        class CounterAction(Action):
            delta: int
    else:

        class CounterAction(Action):  # type: ignore[no-redef]
            delta: int = Field(ge=-3, le=3)

    parity_values = Literal["even", "odd", "zero"] if fault == "drift" else Literal["even", "odd"]

    class CounterObservation(Observation):
        value: int
        parity: parity_values  # type: ignore[valid-type]

    class CounterState(State):
        total: int = 0

    class CounterEnvironment(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self._value = 0
            self._steps = 0
            self._episode_id: str | None = None

        def _observe(self, parity: str | None = None, reward: float | None = None) -> Any:
            obs = CounterObservation.model_construct(
                value=self._value,
                parity=parity or ("even" if self._value % 2 == 0 else "odd"),
                reward=reward,
                done=abs(self._value) >= 10 or self._steps >= 20,
                metadata={},
            )
            return obs

        def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
            self._value, self._steps, self._episode_id = 0, 0, episode_id
            return self._observe()

        def step(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Any:
            if fault == "crash-on-boundary" and action.delta == 3:
                raise ZeroDivisionError("planted: a step of 3 divides by zero")
            self._value += action.delta
            self._steps += 1
            parity = "negative" if fault == "obs-breaks" and action.delta == -2 else None
            return self._observe(parity, reward=float(action.delta))

        def get_metadata(self) -> Any:
            version = "0.2.0" if fault == "version-drift" else "0.1.0"
            return EnvironmentMetadata(name="counter_env", description="", version=version)

        @property
        def state(self) -> Any:
            data = {"episode_id": self._episode_id, "step_count": self._steps, "total": self._value}
            if fault == "state-drops-field":
                return State(episode_id=self._episode_id, step_count=self._steps)
            return CounterState(**data)

    return create_app(
        CounterEnvironment,
        CounterAction,
        CounterObservation,
        env_name="counter_env",
        max_concurrent_envs=4,
        state_cls=CounterState,
    )


def build_all() -> Any:
    """Every fault's app under its own prefix, and a health check for the process."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Mount, Route

    async def health(request: Any) -> Any:
        return JSONResponse({"status": "healthy"})

    routes: list[Any] = [Route("/health", health)]
    routes += [Mount(f"/{fault}", app=build_app(fault)) for fault in FAULTS]
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.generator.verify.counter_server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--fault", choices=FAULTS, default="none")
    parser.add_argument("--all", action="store_true", help="serve every fault at /<fault>")
    args = parser.parse_args()
    import uvicorn

    app = build_all() if args.all else build_app(args.fault)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
