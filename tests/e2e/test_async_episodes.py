"""The episodes of test_episodes.py with the generated asyncio clients, both protocols.

Same real servers (the session-wide ``servers`` fixture): openenv 0.10 over WebSocket,
openenv-core 0.1 over stateful HTTP. Each test drives its coroutine with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest
from envgen_runtime import AsyncEnvClient, EnvValidationError

from generated.coding_env import AsyncCodingEnv, CodingAction, CodingObservation, CodingState
from generated.echo_env import AsyncEchoEnv, EchoAction, EchoObservation, EchoState
from generated.grid_env import (
    AsyncGridEnv,
    GridAction,
    GridObservation,
    GridState,
    MoveAction,
    PickAction,
    TurnAction,
)
from generated.quiz_env import AsyncQuizEnv, QuizAction, QuizObservation, QuizState
from generated.reacher_env import (
    AsyncReacherEnv,
    ReacherAction,
    ReacherObservation,
    ReacherState,
)
from tests.e2e.conftest import SERVED, client_class
from tests.e2e.test_episodes import _assert_nothing_dropped
from tests.helpers import REPO

pytestmark = pytest.mark.e2e
TRANSPORTS = sorted({t for _, t in SERVED})
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def _url(servers: dict[tuple[str, str], str], env: str, transport: str) -> str:
    if (env, transport) not in servers:
        pytest.fail(f"no {transport} server for {env}")
    return servers[(env, transport)]


def test_every_env_exports_an_async_twin() -> None:
    for env in sorted({name for name, _ in SERVED}):
        sync_cls, async_cls = client_class(env), client_class(env, asynchronous=True)
        assert issubclass(async_cls, AsyncEnvClient)
        assert async_cls.__name__ == "Async" + sync_cls.__name__
        assert async_cls.SPEC is sync_cls.SPEC


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_echo_episode(servers: dict[tuple[str, str], str], transport: str) -> None:
    async def episode() -> None:
        url = _url(servers, "echo_env", transport)
        async with AsyncEchoEnv(url, transport=transport) as env:  # type: ignore[arg-type]
            result = await env.reset(seed=1, episode_id=f"echo-async-{transport}")
            assert isinstance(result.observation, EchoObservation)
            assert result.done is False and env.episode_id == f"echo-async-{transport}"
            for message in ("hello", "", "ünïcödé ✓"):
                result = await env.step(EchoAction(message=message))
                assert result.observation.echoed_message == message
                assert result.observation.message_length == len(message)
                assert result.reward == pytest.approx(len(message) * 0.1)
                _assert_nothing_dropped(result)
            state = await env.state()
            assert isinstance(state, EchoState)
            assert state.step_count == 3
            with pytest.raises(EnvValidationError, match="message"):
                await env.step(EchoAction.model_construct(message=5))  # type: ignore[arg-type]

    run(episode())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_coding_episode(servers: dict[tuple[str, str], str], transport: str) -> None:
    async def episode() -> None:
        url = _url(servers, "coding_env", transport)
        async with AsyncCodingEnv(url, transport=transport) as env:  # type: ignore[arg-type]
            await env.reset(seed=0)
            ok = await env.step(CodingAction(code="print('hi')"))
            assert isinstance(ok.observation, CodingObservation)
            assert ok.observation.result.stdout == "hi\n" and ok.reward == 1.0
            failed = await env.step(CodingAction(code="raise SystemExit(3)", timeout_s=5))
            assert failed.observation.result.exit_code == 3 and failed.reward == 0.0
            state = await env.state()
            assert isinstance(state, CodingState)
            assert state.last_exit_code == 3 and state.step_count == 2

    run(episode())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_grid_episode_with_tagged_union_actions(
    servers: dict[tuple[str, str], str], transport: str
) -> None:
    async def episode() -> None:
        url = _url(servers, "grid_env", transport)
        async with AsyncGridEnv(url, transport=transport) as env:  # type: ignore[arg-type]
            start = await env.reset(seed=5)
            assert isinstance(start.observation, GridObservation)
            assert start.observation.class_ in ("floor", "wall", "item", "edge")
            assert "class" in start.raw["observation"]
            turned = await env.step(TurnAction(type="turn", rotation="left"))
            order = ["north", "west", "south", "east"]
            facing = start.observation.facing
            assert turned.observation.facing == order[(order.index(facing) + 1) % 4]
            moved = await env.step(MoveAction(type="move", direction="south", steps=1))
            assert moved.observation.facing == "south"
            picked = await env.step(PickAction(type="pick", cells=[[0, 0]]))
            _assert_nothing_dropped(picked)
            state = await env.state()
            assert isinstance(state, GridState)
            assert state.step_count == 3
            assert state.agent_position == picked.observation.position

    run(episode())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_quiz_episode_with_optional_nullable_and_defaulted_fields(
    servers: dict[tuple[str, str], str], transport: str
) -> None:
    async def episode() -> None:
        url = _url(servers, "quiz_env", transport)
        async with AsyncQuizEnv(url, transport=transport) as env:  # type: ignore[arg-type]
            first = await env.reset(seed=2)
            assert isinstance(first.observation, QuizObservation)
            assert first.observation.hint is None
            hinted = await env.step(QuizAction(answer="no idea", hint_requested=True))
            assert isinstance(hinted.observation.hint, str)
            assert hinted.observation.correct is False
            sent = QuizAction(answer="x", confidence=None, from_="tester")
            assert "note" not in env._step_payload(sent)
            assert env._step_payload(sent)["from"] == "tester"
            after = await env.step(sent)
            assert after.observation.time_left >= 0
            _assert_nothing_dropped(after)
            state = await env.state()
            assert isinstance(state, QuizState)
            assert len(state.history) == 2

    run(episode())


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_reacher_episode(servers: dict[tuple[str, str], str], transport: str) -> None:
    async def episode() -> None:
        url = _url(servers, "reacher_env", transport)
        async with AsyncReacherEnv(url, transport=transport) as env:  # type: ignore[arg-type]
            result = await env.reset(seed=4)
            assert isinstance(result.observation, ReacherObservation)
            for _ in range(5):
                result = await env.step(ReacherAction(torques=[0.5, -0.25]))
                obs = result.observation
                assert result.reward == pytest.approx(-obs.distance)
                assert math.dist(obs.fingertip, obs.target) == pytest.approx(obs.distance, abs=1e-6)
            state = await env.state()
            assert isinstance(state, ReacherState)
            assert state.step_count == 5

    run(episode())


def test_async_and_sync_clients_play_the_same_episode(servers: dict[tuple[str, str], str]) -> None:
    url = _url(servers, "grid_env", "websocket")
    actions: list[GridAction] = [
        MoveAction(type="move", direction="east"),
        TurnAction(type="turn", rotation="right"),
        MoveAction(type="move", direction="north", steps=2),
    ]
    sync_cls = client_class("grid_env")
    with sync_cls(url) as sync_env:
        expected = [sync_env.reset(seed=11).observation]
        expected += [sync_env.step(action).observation for action in actions]

    async def play() -> list[Any]:
        async with AsyncGridEnv(url) as env:
            seen = [(await env.reset(seed=11)).observation]
            for action in actions:
                seen.append((await env.step(action)).observation)
            return seen

    assert run(play()) == expected


def test_parallel_async_episodes_on_one_server(servers: dict[tuple[str, str], str]) -> None:
    url = _url(servers, "echo_env", "websocket")

    async def play(name: str) -> tuple[str | None, int | None, str]:
        async with AsyncEchoEnv(url) as env:
            await env.reset(episode_id=name)
            last = None
            for i in range(3):
                last = await env.step(EchoAction(message=f"{name}-{i}"))
            state = await env.state()
            assert last is not None
            return env.episode_id, state.step_count, last.observation.echoed_message

    async def all_of_them() -> list[tuple[str | None, int | None, str]]:
        return list(await asyncio.gather(*(play(f"p{i}") for i in range(4))))

    assert run(all_of_them()) == [(f"p{i}", 3, f"p{i}-2") for i in range(4)]


def test_async_from_local_process_runs_an_episode() -> None:
    async def episode() -> None:
        async with AsyncEchoEnv.from_local_process(transport="http", cwd=REPO) as env:
            assert env.provider is not None and env.provider.base_url is not None
            await env.reset()
            result = await env.step(EchoAction(message="local"))
            assert result.observation.echoed_message == "local"
            assert (await env.state()).step_count == 1
        assert env.closed and env.provider.base_url is None

    run(episode())
