"""EnvPool over local server processes: lock-step results, lost servers, capacity, auto-reset."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from envgen_runtime import (
    AsyncEnvPool,
    EnvPool,
    EpisodeEndedError,
    LocalProcessProvider,
    ProviderError,
    SlotLostError,
)
from envgen_runtime.client.base import ClientOptions

from examples._serve import MAX_CONCURRENT_ENVS_VAR
from generated.echo_env import AsyncEchoEnvPool, EchoAction, EchoEnv, EchoEnvPool
from generated.grid_env import GridEnv, GridEnvPool, MoveAction, TurnAction
from tests.runtime.pool.conftest import pid_alive, remember

HTTP: ClientOptions = {"transport": "http"}
MOVES = [
    MoveAction(type="move", direction="east"),
    TurnAction(type="turn", rotation="left"),
    MoveAction(type="move", direction="south", steps=2),
    MoveAction(type="move", direction="west"),
]


def _pids(pool: EnvPool[object, object, object]) -> list[int]:
    pids = [p.pid for p in pool.servers if isinstance(p, LocalProcessProvider)]
    remember(*pids)
    return [pid for pid in pids if pid is not None]


def test_pool_results_equal_single_clients_on_the_same_seeds() -> None:
    # Four WebSocket sessions on one server, each seeded on its own.
    seeds = [7, 8, 9, 10]
    with GridEnvPool(4, sessions_per_server=4) as pool:
        assert len({slot.base_url for slot in pool.slots}) == 1
        _pids(pool)
        pooled = [pool.reset(seeds=seeds)]
        for action in MOVES:
            pooled.append(pool.step([action] * 4))
        # The reference: one plain client per seed, on a session of its own.
        for slot, seed in enumerate(seeds):
            with GridEnv(pool.slots[slot].base_url) as single:
                expected = [single.reset(seed=seed)]
                expected += [single.step(action) for action in MOVES]
                got = [results[slot] for results in pooled]
                assert all(r.ok for r in got)
                assert [r.observation for r in got] == [e.observation for e in expected]
                assert [r.reward for r in got] == [e.reward for e in expected]
                assert [r.done for r in got] == [e.done for e in expected]
        assert [r.reset for r in pooled[0]] == [True] * 4
        assert len({repr(r.observation) for r in pooled[0]}) > 1  # the seeds took effect
        assert not any(r.reset for r in pooled[1])


def test_a_killed_server_loses_only_its_slots_which_recover_from_a_fresh_reset() -> None:
    with EchoEnvPool(4, sessions_per_server=2) as pool:
        first, second = _pids(pool)
        pool.reset()
        victims = {s.slot for s in pool.slots if s.base_url == pool.slots[0].base_url}
        assert victims == {0, 1}
        os.killpg(first, signal.SIGKILL)

        results = pool.step([EchoAction(message=f"m{i}") for i in range(4)])
        for result in results:
            if result.slot in victims:
                assert isinstance(result.error, SlotLostError)
                assert result.error.server_lost and result.done and result.observation is None
            else:
                assert result.ok and result.observation is not None
                assert result.observation.echoed_message == f"m{result.slot}"

        pool.wait_ready(timeout_s=120)
        assert pool.replacements == 1
        new_pids = _pids(pool)
        assert first not in new_pids and second in new_pids
        recovered = pool.step([EchoAction(message="x")] * 4)
        assert [r.reset for r in recovered] == [True, True, False, False]
        assert all(r.ok for r in recovered)
        after = pool.step([EchoAction(message="y")] * 4)
        assert [r.observation.echoed_message for r in after if r.observation] == ["y"] * 4
        assert not pid_alive(first)
        live = new_pids
    assert not any(pid_alive(pid) for pid in live)


def test_a_pool_closed_while_a_lost_server_awaits_its_stop_still_stops_it() -> None:
    # A server that stops answering (alive, frozen) is lost; its stop runs in the background
    # with its replacement. Closing the pool at once cancels that work: the frozen server
    # must be stopped all the same, not left running until the interpreter exits.
    options: ClientOptions = {"read_timeout_s": 1.0}
    with EchoEnvPool(
        2, sessions_per_server=1, health_timeout_s=0.5, client_options=options
    ) as pool:
        frozen, other = _pids(pool)
        pool.reset()
        os.killpg(frozen, signal.SIGSTOP)
        results = pool.step([EchoAction(message="a"), EchoAction(message="b")])
        assert isinstance(results[0].error, SlotLostError) and results[0].error.server_lost
        assert results[1].ok
    assert not pid_alive(frozen) and not pid_alive(other)


def test_capacity_reached_moves_the_slot_to_another_server() -> None:
    # Servers that hold one session each, a pool told they hold two: every second
    # connection meets CAPACITY_REACHED and must end up on a server of its own.
    with EchoEnvPool(
        3, sessions_per_server=2, provider_options={"env": {MAX_CONCURRENT_ENVS_VAR: "1"}}
    ) as pool:
        results = pool.reset()
        _pids(pool)
        assert all(r.ok for r in results)
        assert len(pool.servers) == 3
        assert len({slot.base_url for slot in pool.slots}) == 3
        stepped = pool.step([EchoAction(message="hi")] * 3)
        assert all(r.ok for r in stepped)


def test_a_server_error_stays_in_its_slot_and_auto_reset_starts_the_next_episode() -> None:
    turn = TurnAction(type="turn", rotation="left")
    with GridEnvPool(2, client_options=HTTP) as pool:
        _pids(pool)
        assert len(pool.servers) == 2  # a stateful HTTP server holds one environment
        pool.reset(seeds=[1, 2])
        results = []
        while not results or not results[0].done:
            results = pool.step([turn, turn])
        assert all(r.done for r in results)
        assert pool.reset(seeds=[5], slots=[0])[0].ok
        mixed = pool.step([turn, turn])
        assert mixed[0].ok and not mixed[0].done
        assert isinstance(mixed[1].error, EpisodeEndedError)  # stepping an ended episode
        assert mixed[1].error.status == 409 and not mixed[1].ok

    with GridEnvPool(1, auto_reset=True, client_options=HTTP) as pool:
        _pids(pool)
        pool.reset(seeds=3)
        results = []
        while not results or not results[0].done:
            results = pool.step([turn])
        again = pool.step([turn])[0]
        assert again.ok and again.reset and not again.done


def test_async_pool_and_pools_built_from_client_classes() -> None:
    async def play() -> list[str]:
        async with AsyncEchoEnvPool(2, client_options=HTTP) as pool:
            _pids(pool)  # type: ignore[arg-type]
            await pool.reset()
            results = await pool.step([EchoAction(message="a"), EchoAction(message="b")])
            return [r.observation.echoed_message for r in results if r.observation]

    assert asyncio.run(play()) == ["a", "b"]
    # A sync client class gets an asyncio twin.
    with EnvPool(1, client=EchoEnv, client_options=HTTP) as pool:
        _pids(pool)
        pool.reset()
        assert pool.step([EchoAction(message="c")])[0].observation.echoed_message == "c"


def test_pool_arguments_are_checked_before_anything_starts() -> None:
    with pytest.raises(ValueError, match="sessions_per_server must be 1"):
        AsyncEnvPool(2, client=EchoEnv, sessions_per_server=2, client_options={"transport": "http"})
    with pytest.raises(ValueError, match="size must be a positive integer"):
        AsyncEnvPool(0, client=EchoEnv)
    with pytest.raises(TypeError, match="needs client="):
        AsyncEnvPool(1)
    with pytest.raises(ValueError, match="provider must be"):
        AsyncEnvPool(1, client=EchoEnv, provider="kubernetes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="client_options must not set"):
        AsyncEnvPool(1, client=EchoEnv, client_options={"base_url": "x"})  # type: ignore[typeddict-unknown-key]
    # The pool owns its servers: a client told it owns one would stop it when closed.
    with pytest.raises(TypeError, match=r"client_options must not set \['owns_provider'\]"):
        AsyncEnvPool(1, client=EchoEnv, client_options={"owns_provider": True})  # type: ignore[typeddict-unknown-key]
    for bad in (0, -1.0, float("nan"), True):  # NaN passed unchecked: no probe could succeed
        with pytest.raises(ValueError, match="health_timeout_s must be positive"):
            AsyncEnvPool(1, client=EchoEnv, health_timeout_s=bad)
    for count in (0, True, 1.5):
        with pytest.raises(ValueError, match="sessions_per_server must be"):
            AsyncEnvPool(1, client=EchoEnv, sessions_per_server=count)  # type: ignore[arg-type]


def test_a_server_that_cannot_start_for_a_moved_slot_is_that_slots_error() -> None:
    # Slot 1 meets CAPACITY_REACHED; the server started for it fails; the pool must report
    # that in slot 1's result (not raise from reset) and place the slot later.
    spec = EchoEnv.SPEC
    good = {"env": {MAX_CONCURRENT_ENVS_VAR: "1"}, "health_path": spec.health_path}
    broken = [sys.executable, "-c", "import sys; print('cannot serve'); sys.exit(4)"]
    commands = iter([spec.server_command, broken, spec.server_command])

    def factory() -> LocalProcessProvider:
        return LocalProcessProvider(next(commands), **good)  # type: ignore[arg-type]

    with EchoEnvPool(2, sessions_per_server=2, provider=factory) as pool:
        first = pool.reset()
        _pids(pool)
        assert first[0].ok
        assert isinstance(first[1].error, ProviderError)
        assert "cannot serve" in first[1].error.output
        pool.wait_ready(timeout_s=120)
        _pids(pool)
        second = pool.step([EchoAction(message="a"), EchoAction(message="b")])
        assert second[0].ok and second[0].observation is not None
        assert second[1].ok and second[1].reset
        assert len({slot.base_url for slot in pool.slots}) == 2


def _auto_reset_run(seed: int) -> list[tuple[int, str, bool, bool]]:
    """(slot, observation, reset, action_dropped) of every result that began an episode."""
    turn = TurnAction(type="turn", rotation="left")
    starts = []
    with GridEnvPool(2, sessions_per_server=2, auto_reset=True) as pool:
        _pids(pool)
        for result in pool.reset(seeds=seed):
            assert not result.action_dropped  # a reset is given no action
            starts.append((result.slot, repr(result.observation), result.reset, False))
        while len(starts) < 8:
            for result in pool.step([turn, turn]):
                assert result.ok, result.error
                assert result.action_dropped == result.reset  # only an auto-reset drops it
                if result.reset:
                    starts.append(
                        (result.slot, repr(result.observation), True, result.action_dropped)
                    )
    return starts


def test_auto_reset_episodes_are_seeded_by_the_documented_rule_and_reproducible() -> None:
    # Rule: the k-th auto-reset of slot i after reset(seeds=s) uses seed s_i + k * size.
    first = _auto_reset_run(10)
    assert first == _auto_reset_run(10)  # the same seeds give the same episodes, run after run
    assert all(dropped for *_, dropped in first[2:])
    with GridEnv.from_local_process() as single:
        expected = {seed: repr(single.reset(seed=seed).observation) for seed in range(10, 18)}
    counts = [0, 0]
    for slot, observation, _, _ in first:
        seed = 10 + slot + counts[slot] * 2
        counts[slot] += 1
        assert observation == expected[seed], (slot, seed)


def test_by_default_slots_are_packed_by_the_capacity_the_server_publishes() -> None:
    # The example servers publish max_concurrent_envs (16) in /metadata: 8 slots, 1 server.
    with EchoEnvPool(8) as pool:
        _pids(pool)
        assert len(pool.servers) == 1
        assert all(r.ok for r in pool.reset())
        stepped = pool.step([EchoAction(message=str(i)) for i in range(8)])
        assert [r.observation.echoed_message for r in stepped if r.observation] == [
            str(i) for i in range(8)
        ]
    # A server that holds 2 sessions: 5 slots need 3 servers.
    with EchoEnvPool(5, provider_options={"env": {MAX_CONCURRENT_ENVS_VAR: "2"}}) as pool:
        _pids(pool)
        assert len(pool.servers) == 3
        assert sorted(len({s.slot for s in pool.slots if s.server == n}) for n in range(3)) == [
            1,
            2,
            2,
        ]
        assert all(r.ok for r in pool.reset())


def test_a_pool_whose_server_code_is_missing_names_the_image_and_the_command_way(
    tmp_path: Path,
) -> None:
    # The trainer's case: the env's [server] command, run where its code is not.
    options = {"cwd": tmp_path, "startup_timeout_s": 20}
    with pytest.raises(ProviderError) as info:
        EchoEnvPool(8, auto_reset=True, provider_options=options).start()
    message = str(info.value)
    assert "No module named 'examples'" in info.value.output
    assert "cannot import 'examples'" in message
    assert 'EchoEnvPool(..., provider="docker")' in message and "envgen/echo-env:0.1.0" in message
    assert 'EchoEnvPool(..., provider_options={"command": [...], "cwd": ' in message
