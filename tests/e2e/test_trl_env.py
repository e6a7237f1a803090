"""The generated trl.py classes against real calc_env and echo_env servers, driven the way
TRL's GRPOTrainer drives an ``environment_factory`` class.

TRL (1.16, trl/trainer/grpo_trainer.py) makes each instance with no arguments, calls
``reset(**row)`` with a dataset row's columns (``prompt`` among them) and appends a string
result to the prompt's last message, calls the tools it collected as ``tool(**arguments)``
under their ``__name__``, turns the result into ``str(result)``, and scores a rollout with
``get_reward()``. TRL itself cannot run here (it needs torch), so this test plays its part
with the same calls. One server per env, started through LocalProcessProvider with the
command in the client's SPEC and stopped by its handle.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from typing import Any

import pytest
from envgen_runtime import LocalProcessProvider

from generated.calc_env import CalcEnv
from generated.calc_env.trl import CalcTrlEnv, trl_factory
from generated.echo_env import EchoEnv
from generated.echo_env.trl import EchoTrlEnv
from generated.grid_env import GridEnv
from generated.grid_env.trl import GridTrlEnv
from tests.helpers import REPO

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.filterwarnings("ignore::envgen_runtime.SchemaDriftWarning"),
]


def _serve(spec: Any) -> LocalProcessProvider:
    provider = LocalProcessProvider(
        spec.server_command,
        health_path=spec.health_path,
        startup_timeout_s=spec.startup_timeout_s,
        cwd=REPO,
        transport="websocket",
    )
    provider.start()
    return provider


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, str]]:
    providers: list[LocalProcessProvider] = []
    try:
        urls: dict[str, str] = {}
        for name, spec in (("calc", CalcEnv.SPEC), ("echo", EchoEnv.SPEC), ("grid", GridEnv.SPEC)):
            provider = _serve(spec)
            providers.append(provider)
            assert provider.base_url is not None
            urls[name] = provider.base_url
        yield urls
    finally:
        for provider in providers:
            provider.stop()


def _tools(env: object) -> dict[str, Any]:
    """TRL 1.16's tool dict for `env`: its public functions but reset and get_reward."""
    return {
        getattr(env, name).__name__: getattr(env, name)
        for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    }


def test_calc_episode_through_the_factory(servers: dict[str, str]) -> None:
    env = trl_factory(servers["calc"])()
    try:
        row = {"prompt": [{"role": "user", "content": "Add 2 and 3.5."}], "seed": 7}
        assert env.reset(**row) is None  # reset's observation is only an empty metadata
        tools = _tools(env)
        assert sorted(tools) == ["add", "divide", "format_number", "stats"]
        assert json.loads(str(tools["add"](**{"a": 2, "b": 3.5}))) == 5.5  # unwrapped
        stats = json.loads(tools["stats"](values=[1.0, 3.0]))
        assert stats["count"] == 2 and stats["mean"] == 2.0
        assert tools["format_number"](value=3.14159, digits=3) == "3.142"  # a text result
        failed = tools["divide"](numerator=1, denominator=0)
        assert failed.startswith("Error: tool 'divide' failed")  # returned, not raised
        assert json.loads(tools["divide"](numerator=1, denominator=4)) == 0.25
        refused = tools["stats"](values="not a list")  # refused before anything is sent
        assert refused.startswith("Error: ")
        assert len(env.rewards) == 5  # one step per call that was sent
        assert env.get_reward() == env.reward == sum(r or 0.0 for r in env.rewards)
        assert env.done is False
        env.reset()  # TRL reuses an instance: a new episode, state cleared
        assert (env.reward, env.rewards) == (0.0, [])
    finally:
        env._close()


def test_echo_episode_keeps_reward_and_done(servers: dict[str, str]) -> None:
    EchoTrlEnv.base_url = servers["echo"]  # TRL calls the class itself, with no arguments
    try:
        env = EchoTrlEnv()
    finally:
        EchoTrlEnv.base_url = None
    try:
        first = env.reset(episode_id="trl-1", prompt="ignored")
        assert first is not None
        assert json.loads(first)["echoed_message"] == ""
        (name,) = _tools(env)
        assert name == "step"
        reply = json.loads(env.step(message="hello"))
        assert reply["echoed_message"] == "hello" and reply["message_length"] == 5
        assert env.rewards == [pytest.approx(0.5)]
        assert env.get_reward() == pytest.approx(0.5)
        assert env.step(message=3).startswith("Error: ")  # type: ignore[arg-type]
        assert len(env.rewards) == 1  # nothing was sent
    finally:
        env._close()


def test_a_done_episode_refuses_further_calls(servers: dict[str, str]) -> None:
    with CalcTrlEnv(servers["calc"]) as env:
        env.reset()
        env.done = True  # as a step that ended the episode leaves it
        assert env.add(a=1) == "The episode is over: reset starts a new one."
        assert env.rewards == []


def test_grid_reset_parameters_come_from_the_row_and_variants_are_methods(
    servers: dict[str, str],
) -> None:
    with GridTrlEnv(servers["grid"]) as env:
        first = env.reset(seed=3, size=7, difficulty="hard", prompt="ignored", answer=1)
        assert first is not None
        assert len(json.loads(first)["grid"]) == 7  # size=7 reached the server
        assert sorted(_tools(env)) == ["move", "pick", "turn"]
        turned = json.loads(env.turn(rotation="left"))
        assert turned["facing"] in ("north", "east", "south", "west")
        moved = json.loads(env.move(direction="east", steps=1))
        assert moved["facing"] == "east"
        refused = env.move(direction="up")  # type: ignore[arg-type]
        assert refused.startswith("Error: ") and "direction" in refused
        assert len(env.rewards) == 2
