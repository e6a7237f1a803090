"""Episodes with every example env's generated client against its real server, both protocols.

WebSocket sessions run against openenv 0.10 servers, stateful HTTP against openenv-core 0.1
servers. Each test checks the typed results and that nothing the server sent was dropped.
"""

from __future__ import annotations

import math
from typing import Any

import pydantic
import pytest
from envgen_runtime import EnvValidationError, StepResult

from generated.coding_env import CodingAction, CodingEnv, CodingObservation, CodingState
from generated.echo_env import EchoAction, EchoEnv, EchoObservation, EchoState
from generated.grid_env import (
    GridEnv,
    GridObservation,
    GridState,
    MoveAction,
    PickAction,
    TurnAction,
)
from generated.quiz_env import QuizAction, QuizEnv, QuizObservation, QuizState
from generated.reacher_env import ReacherAction, ReacherEnv, ReacherObservation, ReacherState
from tests.e2e.conftest import SERVED

pytestmark = pytest.mark.e2e
TRANSPORTS = sorted({t for _, t in SERVED})


def _url(servers: dict[tuple[str, str], str], env: str, transport: str) -> str:
    if (env, transport) not in servers:
        pytest.fail(f"no {transport} server for {env}")
    return servers[(env, transport)]


def _assert_nothing_dropped(result: StepResult[Any]) -> None:
    """Every key of the raw observation is reachable on the parsed one."""
    raw = result.raw["observation"]
    obs = result.observation
    fields = getattr(type(obs), "model_fields", None) or getattr(
        type(obs), "__pydantic_fields__", {}
    )
    names = {info.alias or name for name, info in fields.items()}
    extra = getattr(obs, "model_extra", None) or {}
    for key in raw:
        assert key in names or key in extra, f"{key!r} of the reply is not reachable"
    for key in set(result.raw) - {"observation", "reward", "done"}:
        assert result.extra[key] == result.raw[key]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_echo_episode(servers: dict[tuple[str, str], str], transport: str) -> None:
    with EchoEnv(_url(servers, "echo_env", transport), transport=transport) as env:  # type: ignore[arg-type]
        result = env.reset(seed=1, episode_id=f"echo-{transport}")
        assert isinstance(result.observation, EchoObservation)
        assert result.done is False
        for message in ("hello", "", "ünïcödé ✓"):
            result = env.step(EchoAction(message=message))
            assert result.observation.echoed_message == message
            assert result.observation.message_length == len(message)
            assert result.reward == pytest.approx(len(message) * 0.1)
            _assert_nothing_dropped(result)
        state = env.state()
        assert isinstance(state, EchoState)
        assert state.step_count == 3
        with pytest.raises(EnvValidationError, match="message"):
            env.step(EchoAction.model_construct(message=5))  # type: ignore[arg-type]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_coding_episode(servers: dict[tuple[str, str], str], transport: str) -> None:
    with CodingEnv(_url(servers, "coding_env", transport), transport=transport) as env:  # type: ignore[arg-type]
        env.reset(seed=0)
        ok = env.step(CodingAction(code="print('hi'); import sys; print('err', file=sys.stderr)"))
        assert isinstance(ok.observation, CodingObservation)
        assert ok.observation.result.stdout == "hi\n"
        assert ok.observation.result.stderr == "err\n"
        assert ok.observation.result.exit_code == 0
        assert ok.reward == 1.0
        _assert_nothing_dropped(ok)
        failed = env.step(CodingAction(code="raise SystemExit(3)", timeout_s=5))
        assert failed.observation.result.exit_code == 3
        assert failed.reward == 0.0
        state = env.state()
        assert isinstance(state, CodingState)
        assert state.last_exit_code == 3
        assert state.step_count == 2


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_grid_episode_with_tagged_union_actions(
    servers: dict[tuple[str, str], str], transport: str
) -> None:
    with GridEnv(_url(servers, "grid_env", transport), transport=transport) as env:  # type: ignore[arg-type]
        start = env.reset(seed=5)
        assert isinstance(start.observation, GridObservation)
        assert start.observation.class_ in ("floor", "wall", "item", "edge")
        assert "class" in start.raw["observation"]  # the keyword kept its wire name
        turned = env.step(TurnAction(type="turn", rotation="left"))
        order = ["north", "west", "south", "east"]
        facing = start.observation.facing
        assert turned.observation.facing == order[(order.index(facing) + 1) % 4]
        moved = env.step(MoveAction(type="move", direction="south", steps=1))
        assert moved.observation.facing == "south"
        picked = env.step(PickAction(type="pick", cells=[[0, 0]]))
        _assert_nothing_dropped(picked)
        state = env.state()
        assert isinstance(state, GridState)
        assert state.step_count == 3
        assert state.agent_position == picked.observation.position


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_grid_union_members_are_built_without_their_tag(
    servers: dict[tuple[str, str], str], transport: str
) -> None:
    """The tag defaults to its constant, is still sent, and a wrong one is still refused."""
    with GridEnv(_url(servers, "grid_env", transport), transport=transport) as env:  # type: ignore[arg-type]
        start = env.reset(seed=5)
        order = ["north", "west", "south", "east"]
        turned = env.step(TurnAction(rotation="left"))
        facing = start.observation.facing
        assert turned.observation.facing == order[(order.index(facing) + 1) % 4]
        moved = env.step(MoveAction(direction="south"))
        assert moved.observation.facing == "south"
        picked = env.step(PickAction(cells=[[0, 0]]))
        assert env.state().step_count == 3
        _assert_nothing_dropped(picked)
    assert MoveAction(direction="east").model_dump(by_alias=True)["type"] == "move"
    with pytest.raises(pydantic.ValidationError, match="type"):
        MoveAction(type="turn", direction="east")  # type: ignore[arg-type]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_quiz_episode_with_optional_nullable_and_defaulted_fields(
    servers: dict[tuple[str, str], str], transport: str
) -> None:
    with QuizEnv(_url(servers, "quiz_env", transport), transport=transport) as env:  # type: ignore[arg-type]
        first = env.reset(seed=2)
        assert isinstance(first.observation, QuizObservation)
        assert first.observation.hint is None  # required but nullable
        hinted = env.step(QuizAction(answer="no idea", hint_requested=True))
        assert isinstance(hinted.observation.hint, str)
        assert hinted.observation.correct is False
        sent = QuizAction(answer="x", confidence=None, from_="tester")
        assert "note" not in env._step_payload(sent)  # unset optional: not sent at all
        assert env._step_payload(sent)["from"] == "tester"
        after = env.step(sent)
        assert after.observation.time_left >= 0
        _assert_nothing_dropped(after)
        state = env.state()
        assert isinstance(state, QuizState)
        assert len(state.history) == 2


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_reacher_episode_with_bounded_float_arrays(
    servers: dict[tuple[str, str], str], transport: str
) -> None:
    with ReacherEnv(_url(servers, "reacher_env", transport), transport=transport) as env:  # type: ignore[arg-type]
        result = env.reset(seed=4)
        assert isinstance(result.observation, ReacherObservation)
        for _ in range(5):
            result = env.step(ReacherAction(torques=[0.5, -0.25]))
            obs = result.observation
            assert len(obs.joint_angles) == 2
            assert result.reward == pytest.approx(-obs.distance)
            assert math.dist(obs.fingertip, obs.target) == pytest.approx(obs.distance, abs=1e-6)
        state = env.state()
        assert isinstance(state, ReacherState)
        assert state.step_count == 5
        with pytest.raises(pydantic.ValidationError, match="torques"):
            ReacherAction(torques=[2.0, 0.0])  # out of bounds: refused before sending


def test_websocket_episodes_are_reproducible(servers: dict[tuple[str, str], str]) -> None:
    def play() -> list[Any]:
        with GridEnv(_url(servers, "grid_env", "websocket")) as env:
            seen = [env.reset(seed=11).observation]
            for action in (
                MoveAction(type="move", direction="east"),
                TurnAction(type="turn", rotation="right"),
            ):
                seen.append(env.step(action).observation)
            return seen

    assert play() == play()
