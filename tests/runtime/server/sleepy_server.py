# mypy: disallow-subclassing-any=False
"""A lean server whose env's sync step sleeps when asked: `python -m
tests.runtime.server.sleepy_server --port P --protocol websocket|http [--single-thread]
[--openenv-base]`.

Every observation reports the threads the env was built, reset and stepped on, and the
server's main thread (where uvicorn runs the event loop), so tests can see where sync
methods run; a step's also says how many steps of other sessions completed while it slept
(none, when sync steps block the loop). `--single-thread` sets openenv's
REQUIRES_SINGLE_THREAD_EXECUTOR; `--on-loop` sets envgen's RUNS_ON_EVENT_LOOP;
`--openenv-base` builds the env on openenv's Environment (whose inherited `step_async` only
calls `step`) instead of envgen_runtime.server's.
"""

from __future__ import annotations

import argparse
import threading
import time
from typing import Any

from envgen_runtime.server import Environment, ServerAction, ServerObservation, ServerState, serve


class SleepyAction(ServerAction):
    sleep_s: float = 0.0


class SleepyObservation(ServerObservation):
    born: int = 0
    on: int = 0
    main: int = 0
    others: int = 0


_COMPLETED = [0]  # steps completed by every session of the server
_LOCK = threading.Lock()


class SleepyState(ServerState):
    pass


def environment(base: type[Any], single_thread: bool, on_loop: bool = False) -> type[Any]:
    class Sleepy(base):  # type: ignore[misc,valid-type]
        SUPPORTS_CONCURRENT_SESSIONS = True
        REQUIRES_SINGLE_THREAD_EXECUTOR = single_thread
        RUNS_ON_EVENT_LOOP = on_loop

        def __init__(self) -> None:
            super().__init__()
            self.born = threading.get_ident()
            self.steps = 0

        def _observation(self, others: int = 0) -> SleepyObservation:
            main = threading.main_thread().ident or 0
            on = threading.get_ident()
            return SleepyObservation(born=self.born, on=on, main=main, others=others)

        def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
            self.steps = 0
            return self._observation()

        def step(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Any:
            with _LOCK:
                before = _COMPLETED[0]
            time.sleep(action.sleep_s)  # a blocking simulator step
            with _LOCK:
                others = _COMPLETED[0] - before
                _COMPLETED[0] += 1
            self.steps += 1
            return self._observation(others)

        @property
        def state(self) -> SleepyState:
            return SleepyState(step_count=self.steps)

    return Sleepy


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--protocol", default="websocket")
    parser.add_argument("--single-thread", action="store_true")
    parser.add_argument("--openenv-base", action="store_true")
    parser.add_argument("--on-loop", action="store_true")
    args = parser.parse_args()
    base: type[Any] = Environment
    if args.openenv_base:
        from openenv.core.env_server.interfaces import Environment as OpenEnvEnvironment

        base = OpenEnvEnvironment
    env = environment(base, args.single_thread, args.on_loop)
    models = (SleepyAction, SleepyObservation, SleepyState)
    serve(env, *models, name="sleepy_env", port=args.port, protocol=args.protocol, backend="lean")


if __name__ == "__main__":
    main()
