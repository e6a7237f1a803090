"""``GymEnv`` over real example servers, checked by gymnasium's own ``check_env``."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest
from envgen_runtime import GymEnv
from gymnasium.utils.env_checker import check_env

from generated.echo_env import EchoAction, EchoEnv
from generated.grid_env import GridEnv, GridObservation, TurnAction


@pytest.fixture(scope="module")
def grid() -> Iterator[GymEnv]:
    env = GymEnv(GridEnv.from_local_process())
    yield env
    env.close()


@pytest.fixture(scope="module")
def echo() -> Iterator[GymEnv]:
    env = GymEnv(EchoEnv.from_local_process())
    yield env
    env.close()


@pytest.mark.e2e
@pytest.mark.parametrize("name", ["echo", "grid"])
def test_gymnasiums_env_checker_passes_without_a_warning(
    name: str, request: pytest.FixtureRequest
) -> None:
    env: GymEnv = request.getfixturevalue(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # check_env reports most findings as warnings
        check_env(env, skip_render_check=True)


@pytest.mark.e2e
def test_seeded_resets_replay_and_unseeded_ones_continue_the_seeded_generator(
    grid: GymEnv,
) -> None:
    first, _ = grid.reset(seed=5)
    assert isinstance(first, GridObservation)
    follow, _ = grid.reset()
    assert grid.reset(seed=5)[0] == first and grid.reset()[0] == follow
    assert grid.reset(seed=6)[0] != first  # the board is placed from the seed
    grid.reset(seed=1, options={"size": 7})
    obs, reward, terminated, truncated, info = grid.step({"type": "turn", "rotation": "left"})
    assert len(obs.grid) == 7 and obs.facing == "north"
    assert (reward, terminated, truncated) == (0.0, False, False) and isinstance(info, dict)
    for _ in range(39):  # the grid ends an episode after 40 steps
        *_, terminated, truncated, _ = grid.step(TurnAction(rotation="right"))
    assert terminated and not truncated


@pytest.mark.e2e
def test_an_invalid_action_raises_before_anything_is_sent(echo: GymEnv) -> None:
    from envgen_runtime import EnvValidationError

    echo.reset(seed=0)
    with pytest.raises(EnvValidationError, match="message"):
        echo.step({"text": "no message field"})
    obs, reward, *_ = echo.step(EchoAction(message="abc"))
    assert obs.echoed_message == "abc" and reward == pytest.approx(0.3)
