"""An env whose State subclass adds fields, with a hand-written client in the public envs'
style (which keeps only the base state's fields, as many of them do)."""

# mypy: disable-error-code="misc,no-any-unimported,import-untyped"
from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field


class CounterAction(Action):
    delta: int = Field(ge=-5, le=5, description="Amount to add.")


class CounterObservation(Observation):
    value: int
    parity: str


class CounterState(State):
    total: int = 0
    history: list[int] = Field(default_factory=list)
    target: int = 7


class CounterEnvironment(Environment[CounterAction, CounterObservation, CounterState]):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = CounterState()

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> CounterObservation:
        self._state = CounterState(episode_id=episode_id, target=(seed or 0) % 10 + 3)
        return CounterObservation(value=0, parity="even")

    def step(self, action: CounterAction, **kwargs: Any) -> CounterObservation:
        s = self._state
        s.step_count += 1
        s.total += action.delta
        s.history.append(action.delta)
        done = s.total == s.target
        return CounterObservation(
            value=s.total,
            parity="even" if s.total % 2 == 0 else "odd",
            reward=1.0 if done else -0.1,
            done=done,
            metadata={"target": s.target},
        )

    @property
    def state(self) -> CounterState:
        return self._state


def build_app() -> Any:
    return create_app(
        CounterEnvironment,
        CounterAction,
        CounterObservation,
        env_name="counter_env",
        max_concurrent_envs=8,
        state_cls=CounterState,
    )


class HandWrittenCounterClient(EnvClient[CounterAction, CounterObservation, State]):
    def _step_payload(self, action: CounterAction) -> dict[str, Any]:
        return {"delta": action.delta}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CounterObservation]:
        obs = payload.get("observation", {})
        return StepResult(
            observation=CounterObservation(value=obs["value"], parity=obs["parity"]),
            reward=payload.get("reward"),
            done=payload.get("done", False),
        )

    def _parse_state(self, payload: dict[str, Any]) -> State:
        return State(episode_id=payload.get("episode_id"), step_count=payload.get("step_count", 0))
