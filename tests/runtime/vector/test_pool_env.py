"""``GymVectorEnv`` over real example servers: batches, next-step autoreset, lost slots.

One grid vector env (3 slots on one server; the grid ends an episode after 40 steps) serves
every test but the last, which kills a server of its own echo vector env.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import gymnasium
import numpy as np
import pytest
from envgen_runtime import (
    EnvPool,
    EnvValidationError,
    GymEnv,
    GymVectorEnv,
    LocalProcessProvider,
    SlotLostError,
)
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from generated.echo_env import EchoAction, EchoEnvPool
from generated.grid_env import GridEnv, GridEnvPool, GridObservation, MoveAction, TurnAction

N = 3
TURN = TurnAction(rotation="left")
EPISODE = 40  # examples/grid_env: MAX_STEPS


@pytest.fixture(scope="module")
def grid() -> Iterator[GymVectorEnv]:
    with GymVectorEnv(GridEnvPool, N) as envs:
        yield envs


@pytest.mark.e2e
def test_reset_spreads_int_seeds_like_gymnasium_and_batches_a_tuple(grid: GymVectorEnv) -> None:
    assert grid.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert isinstance(grid.observation_space, gymnasium.spaces.Tuple)
    obs, infos = grid.reset(seed=10)
    assert isinstance(obs, tuple) and len(obs) == N and obs in grid.observation_space
    assert all(isinstance(o, GridObservation) for o in obs) and infos == {}
    listed, _ = grid.reset(seed=[10, 11, 12])
    assert listed == obs  # slot i got seed 10 + i
    assert len({repr(o.grid) for o in obs}) > 1
    seed = grid.np_random_seed
    assert seed == 10
    with pytest.raises(ValueError, match="3 slots"):
        grid.reset(seed=[1, 2])


@pytest.mark.e2e
def test_steps_match_gymnasiums_sync_vector_env_over_single_clients(grid: GymVectorEnv) -> None:
    urls = [slot.base_url for slot in grid.pool.slots]
    assert all(urls)
    reference = SyncVectorEnv(
        [lambda url=url: GymEnv(GridEnv(url)) for url in urls],  # type: ignore[misc]
        autoreset_mode=AutoresetMode.NEXT_STEP,
    )
    try:
        ours, _ = grid.reset(seed=3, options={"size": 6})
        theirs, _ = reference.reset(seed=3, options={"size": 6})
        assert ours == theirs
        moves = [MoveAction(direction="east"), TURN, MoveAction(direction="south", steps=3)]
        for step in range(EPISODE):
            actions = [moves[(step + i) % 3] for i in range(N)]
            got, want = grid.step(actions), reference.step(actions)
            assert got[0] == want[0]
            for ours_array, theirs_array in zip(got[1:4], want[1:4], strict=True):
                assert np.array_equal(ours_array, theirs_array)
                assert ours_array.dtype == theirs_array.dtype
        assert got[2].all() and not got[3].any()  # every episode ended at step 40
    finally:
        reference.close()


@pytest.mark.e2e
def test_the_step_after_termination_resets_and_ignores_its_action(grid: GymVectorEnv) -> None:
    first, _ = grid.reset(seed=0)
    for _ in range(EPISODE - 1):
        grid.step([TURN] * N)
    _, rewards, terminated, truncated, _ = grid.step([TURN] * N)
    assert terminated.all() and not truncated.any()
    # Ignored, as gymnasium's next-step autoreset ignores them: not even validated.
    obs, rewards, terminated, truncated, _ = grid.step([None] * N)
    assert rewards.tolist() == [0.0] * N and not terminated.any() and not truncated.any()
    assert all(o.position.row == o.position.col == 0 and o.facing == "east" for o in obs)
    assert obs != first  # the pool's seeds for the next episodes: seed + size, ...
    obs, *_ = grid.step([TURN] * N)
    assert [o.facing for o in obs] == ["north"] * N


@pytest.mark.e2e
def test_an_invalid_action_raises_naming_its_slot_and_nothing_is_sent(
    grid: GymVectorEnv,
) -> None:
    grid.reset(seed=1)
    actions = [TURN, {"type": "turn", "rotation": "around"}, TURN]
    with pytest.raises(EnvValidationError, match=r"slot 1.*nothing was sent"):
        grid.step(actions)
    obs, *_ = grid.step([TURN, {"type": "turn", "rotation": "right"}, TURN])
    assert [o.facing for o in obs] == ["north", "south", "north"]  # the first step taken
    with pytest.raises(ValueError, match="3 actions"):
        grid.step([TURN])


@pytest.mark.e2e
def test_reset_mask_resets_only_the_marked_slots(grid: GymVectorEnv) -> None:
    grid.reset(seed=2)
    turned, *_ = grid.step([TURN] * N)
    mask = np.array([False, True, False])
    obs, _ = grid.reset(seed=2, options={"reset_mask": mask})
    assert [o.facing for o in obs] == ["north", "east", "north"]
    assert obs[0] == turned[0] and obs[2] == turned[2]
    with pytest.raises(ValueError, match="at least one"):
        grid.reset(options={"reset_mask": np.zeros(N, dtype=np.bool_)})


@pytest.mark.e2e
def test_a_lost_server_truncates_its_slots_with_the_error_and_they_restart_next_step() -> None:
    with GymVectorEnv(EchoEnvPool, 4, sessions_per_server=2) as envs:
        envs.reset(seed=0)
        seen, *_ = envs.step([EchoAction(message=f"m{i}") for i in range(4)])
        victims = [s.slot for s in envs.pool.slots if s.base_url == envs.pool.slots[0].base_url]
        assert victims == [0, 1]
        pid = next(p.pid for p in envs.pool.servers if isinstance(p, LocalProcessProvider))
        assert pid is not None
        os.killpg(pid, signal.SIGKILL)

        obs, rewards, terminated, truncated, infos = envs.step([EchoAction(message="x")] * 4)
        assert truncated.tolist() == [True, True, False, False] and not terminated.any()
        assert obs[:2] == seen[:2] and [o.echoed_message for o in obs[2:]] == ["x", "x"]
        assert rewards.tolist() == [0.0, 0.0, pytest.approx(0.1), pytest.approx(0.1)]
        assert infos["_error"].tolist() == [True, True, False, False]
        assert all(isinstance(e, SlotLostError) for e in infos["error"][:2])

        # The next step waits for the replacement and starts new episodes in the lost slots.
        obs, rewards, terminated, truncated, infos = envs.step([EchoAction(message="y")] * 4)
        assert not truncated.any() and not terminated.any() and "error" not in infos
        assert [o.echoed_message for o in obs] == ["", "", "y", "y"]
        assert envs.pool.replacements == 1


def test_auto_reset_cannot_be_turned_off_and_pools_need_their_types() -> None:
    with pytest.raises(ValueError, match="auto_reset cannot be turned off"):
        GymVectorEnv(GridEnvPool, 2, auto_reset=False)
    with pytest.raises(TypeError, match="action_type="):
        GymVectorEnv(EnvPool, 2, client=object)
