# mypy: disallow-subclassing-any=False
"""What every example server shares: an Environment around an `EpisodeLogic`.

The models come from `generated/<env>/server.py` (made by `envgen generate` from the env's
schemas), so a server cannot drift from its schemas by declaring its own. Serving goes
through `envgen_runtime.server`: `--protocol websocket` serves one environment per `/ws`
session, `--protocol http` one environment kept across requests; `--backend openenv` (the
default) on openenv 0.10's app, `--backend lean` on envgen's, without openenv.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from envgen_runtime.server import Environment
from envgen_runtime.server import main as serve_main

from examples._logic import EpisodeError, EpisodeLogic, Outcome

MAX_CONCURRENT_ENVS = 16
# Tests of pools that meet CAPACITY_REACHED start servers with fewer sessions than the default.
MAX_CONCURRENT_ENVS_VAR = "ENVGEN_EXAMPLE_MAX_CONCURRENT_ENVS"


def max_concurrent_envs() -> int:
    """Sessions a WebSocket server holds: the default, or the environment variable's value."""
    return int(os.environ.get(MAX_CONCURRENT_ENVS_VAR, MAX_CONCURRENT_ENVS))


@dataclass(frozen=True)
class EnvInfo:
    """What `/metadata` reports; the version is the generated client's `SPEC.version`.

    `blocks`: a step may block (a subprocess, I/O), so the lean backend runs it on the
    session's thread; otherwise the env sets `RUNS_ON_EVENT_LOOP` and saves that hop.
    """

    name: str
    description: str
    version: str
    blocks: bool = False

    @property
    def class_name(self) -> str:
        """`echo_env` -> `EchoEnvironment`: the name sessions report for the environment."""
        base = self.name.removesuffix("_env")
        return "".join(part.capitalize() for part in base.split("_")) + "Environment"


def _check_seed(seed: Any) -> int | None:
    # The WebSocket reset passes any JSON through; a string seed would silently seed
    # `random.Random` with a different stream, so refuse it.
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise EpisodeError(f"seed must be a non-negative integer or null, not {seed!r}")
    return seed


def environment_class(
    info: EnvInfo,
    logic_factory: Callable[[], EpisodeLogic],
    observation_cls: type[Any],
    state_cls: type[Any],
    reset_params: bool = False,
) -> type[Any]:
    """An Environment (either backend serves it) whose episodes are `logic_factory()`'s,
    in the generated models.

    With `reset_params`, reset's other keyword arguments (validated by the runtime against the
    env's reset schema) go on to the logic's reset; otherwise they are ignored, as before.
    """

    def observation(outcome: Outcome) -> Any:
        return observation_cls.model_validate(
            {
                **outcome.observation,
                "reward": outcome.reward,
                "done": outcome.done,
                "metadata": dict(outcome.metadata),
            }
        )

    class LogicEnvironment(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True
        RUNS_ON_EVENT_LOOP = not info.blocks

        def __init__(self) -> None:
            super().__init__()
            self._logic = logic_factory()

        def reset(
            self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
        ) -> Any:
            options = kwargs if reset_params else {}
            return observation(
                self._logic.reset(seed=_check_seed(seed), episode_id=episode_id, **options)
            )

        def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
            fields = action.model_dump(by_alias=False, exclude={"metadata"})
            return observation(self._logic.step(fields))

        @property
        def state(self) -> Any:
            return state_cls.model_validate(self._logic.state())

    LogicEnvironment.__name__ = LogicEnvironment.__qualname__ = info.class_name
    return LogicEnvironment


def main(
    info: EnvInfo,
    logic_factory: Callable[[], EpisodeLogic],
    action_cls: type[Any],
    observation_cls: type[Any],
    state_cls: type[Any],
    argv: Sequence[str] | None = None,
    reset_cls: type[Any] | None = None,
) -> None:
    """Parse the command line that env.toml's `[server] command` fills in, and serve."""
    serve_main(
        environment_class(
            info, logic_factory, observation_cls, state_cls, reset_params=reset_cls is not None
        ),
        action_cls,
        observation_cls,
        state_cls,
        name=info.name,
        description=info.description,
        version=info.version,
        max_concurrent_envs=max_concurrent_envs(),
        argv=argv,
        reset_cls=reset_cls,
    )
