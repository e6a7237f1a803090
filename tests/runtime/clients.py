"""A hand-written client in exactly the shape the generator emits, for the counter servers."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from envgen_runtime import AsyncEnvClient, EnvClient, EnvModel, EnvSpec, ModelCodec, StepResult
from pydantic import ConfigDict

SERVERS_PY = str(Path(__file__).with_name("servers.py"))


def server_command(kind: str) -> tuple[str, ...]:
    """argv template that starts one of the test servers (see servers.py)."""
    return ("{python}", SERVERS_PY, kind, "--host", "{host}", "--port", "{port}")


class CounterAction(EnvModel):
    model_config = ConfigDict(extra="forbid")

    message: str
    delta: int = 1
    sleep_s: float | None = None
    fail: bool | None = None


class CounterObservation(EnvModel):
    echoed: str
    total: int
    step: int
    seed: int | None = None
    episode_id: str | None = None


class CounterState(EnvModel):
    episode_id: str | None = None
    step_count: int
    total: int = 0


class CounterEnv(EnvClient[CounterAction, CounterObservation, CounterState]):
    SPEC: ClassVar[EnvSpec] = EnvSpec(
        name="counter",
        version="0.1.0",
        transport="websocket",
        server_command=server_command("ws"),
        startup_timeout_s=90.0,
        schema_hash="sha256:test",
    )

    def _step_payload(self, action: CounterAction) -> dict[str, Any]:
        return _ACTION.encode(action)

    def _parse_result(self, payload: Mapping[str, Any]) -> StepResult[CounterObservation]:
        return self._build_result(payload, _OBSERVATION, strict=self.strict)

    def _parse_state(self, payload: Mapping[str, Any]) -> CounterState:
        return _STATE.decode(payload, strict=self.strict)


class AsyncCounterEnv(AsyncEnvClient[CounterAction, CounterObservation, CounterState]):
    """The asyncio twin of CounterEnv, as the generator would emit it."""

    SPEC: ClassVar[EnvSpec] = CounterEnv.SPEC

    def _step_payload(self, action: CounterAction) -> dict[str, Any]:
        return _ACTION.encode(action)

    def _parse_result(self, payload: Mapping[str, Any]) -> StepResult[CounterObservation]:
        return self._build_result(payload, _OBSERVATION, strict=self.strict)

    def _parse_state(self, payload: Mapping[str, Any]) -> CounterState:
        return _STATE.decode(payload, strict=self.strict)


class AsyncLegacyCounterEnv(AsyncCounterEnv):
    """AsyncCounterEnv against the openenv-core 0.1.1 stateful HTTP server."""

    SPEC: ClassVar[EnvSpec] = EnvSpec(
        name="counter_legacy",
        version="0.1.0",
        transport="http",
        server_command=server_command("legacy-http"),
        startup_timeout_s=60.0,
    )


class LegacyCounterEnv(CounterEnv):
    """The same models against the openenv-core 0.1.1 stateful HTTP server."""

    SPEC: ClassVar[EnvSpec] = EnvSpec(
        name="counter_legacy",
        version="0.1.0",
        transport="http",
        server_command=server_command("legacy-http"),
        startup_timeout_s=60.0,
    )


class MiniEnv(CounterEnv):
    """Points at the health-only mini server: for lifecycle tests that never call the env."""

    SPEC: ClassVar[EnvSpec] = EnvSpec(
        name="mini",
        version="0.0.0",
        transport="http",
        server_command=server_command("mini"),
        startup_timeout_s=20.0,
    )


_ACTION: ModelCodec[CounterAction] = ModelCodec(CounterAction, "action")
_OBSERVATION: ModelCodec[CounterObservation] = ModelCodec(CounterObservation, "observation")
_STATE: ModelCodec[CounterState] = ModelCodec(CounterState, "state")
