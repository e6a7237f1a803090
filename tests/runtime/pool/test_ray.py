"""RayProvider and EnvPool on a real three-node Ray cluster (all on 127.0.0.1)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from envgen_runtime import ProviderError, RayProvider, SlotLostError

from generated.grid_env import GridEnv, GridEnvPool, MoveAction, TurnAction
from tests.helpers import REPO
from tests.runtime.pool.conftest import RayCluster, group_alive, pid_alive, remember, remember_group

MOVES = [
    MoveAction(type="move", direction="east"),
    TurnAction(type="turn", rotation="right"),
    MoveAction(type="move", direction="south", steps=2),
]
TURN = TurnAction(type="turn", rotation="left")
# A server that is healthy at once (Python's http.server answers GET / with 200), for the
# lifetime tests: an env server costs seconds of CPU to start.
_HTTP_SERVER = ["{python}", "-m", "http.server", "{port}", "--bind", "{host}"]


def _wait_until(check: Callable[[], bool], timeout_s: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def _remember(provider: RayProvider) -> tuple[int, int]:
    assert provider.actor_pid is not None and provider.server_pid is not None
    remember(provider.actor_pid, provider.server_pid)
    remember_group(provider.server_pid)
    return provider.actor_pid, provider.server_pid


def test_a_server_that_fails_to_start_in_an_actor_reports_its_output(
    ray_cluster: RayCluster,
) -> None:
    command = [sys.executable, "-c", "import sys; print('no env here'); sys.exit(3)"]
    provider = RayProvider(command, address=ray_cluster.address, startup_timeout_s=20)
    with pytest.raises(ProviderError, match="exited with code 3") as info:
        provider.start()
    assert "no env here" in info.value.output
    assert provider.base_url is None


def test_a_ray_pool_whose_server_code_is_not_on_the_node_names_both_ways(
    ray_cluster: RayCluster, tmp_path: Path
) -> None:
    options = {"address": ray_cluster.address, "cwd": tmp_path, "startup_timeout_s": 30}
    with pytest.raises(ProviderError) as info:
        GridEnvPool(2, provider="ray", provider_options=options).start()
    message = str(info.value)
    assert message.startswith("in a Ray actor: ") and "cannot import 'examples'" in message
    assert 'GridEnvPool(..., provider="docker")' in message and "envgen/grid-env" in message


def test_a_killed_actor_takes_its_server_with_it(ray_cluster: RayCluster) -> None:
    # What happens on driver death or node loss: the actor's process is gone, no cleanup of
    # its own runs, and the orphan guard must end the server.
    import ray

    provider = RayProvider(_HTTP_SERVER, health_path="/", address=ray_cluster.address)
    with provider:
        _, server = _remember(provider)
        assert provider.base_url is not None and provider.base_url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(provider.base_url + "/", timeout=10) as reply:
            assert reply.status == 200
        ray.kill(provider._actor, no_restart=True)
        assert _wait_until(lambda: not group_alive(server)), "server outlived its actor"


def test_servers_spread_evenly_over_the_nodes_and_fill_a_node_a_stopped_one_left(
    ray_cluster: RayCluster,
) -> None:
    # Twice as many servers as nodes, started at once (as a pool starts them): two per node.
    nodes = ray_cluster.node_ids
    providers = [
        RayProvider(_HTTP_SERVER, health_path="/", address=ray_cluster.address)
        for _ in range(2 * len(nodes))
    ]
    try:
        with ThreadPoolExecutor(len(providers)) as starting:
            list(starting.map(lambda provider: provider.start(), providers))
        for provider in providers:
            _remember(provider)
        assert Counter(p.node_id for p in providers) == dict.fromkeys(nodes, 2)

        freed = providers[0].node_id
        providers[0].stop()
        providers[0] = RayProvider(_HTTP_SERVER, health_path="/", address=ray_cluster.address)
        providers[0].start()
        _remember(providers[0])
        assert providers[0].node_id == freed
    finally:
        for provider in providers:
            provider.stop()


def test_pool_on_ray_spreads_matches_single_clients_and_survives_a_removed_node(
    ray_cluster: RayCluster,
) -> None:
    seeds = [11, 12, 13, 14, 15, 16]
    pool = GridEnvPool(
        6,
        sessions_per_server=2,
        auto_reset=True,
        provider="ray",
        provider_options={"address": ray_cluster.address},
    )
    with pool:
        providers = [p for p in pool.servers if isinstance(p, RayProvider)]
        started = [_remember(p) for p in providers]
        nodes = {slot.node_id for slot in pool.slots}
        assert Counter(p.node_id for p in providers) == dict.fromkeys(ray_cluster.node_ids, 1)

        pooled = [pool.reset(seeds=seeds)]
        pooled += [pool.step([action] * 6) for action in MOVES]
        for slot, seed in enumerate(seeds):
            with GridEnv(pool.slots[slot].base_url) as single:
                expected = [single.reset(seed=seed)] + [single.step(a) for a in MOVES]
            assert [r[slot].observation for r in pooled] == [e.observation for e in expected]
            assert [r[slot].reward for r in pooled] == [e.reward for e in expected]
        assert len({repr(r.observation) for r in pooled[0]}) > 1

        # Remove a node (not the head: the driver is attached there) that holds a server.
        victim = next(node for node in ray_cluster.workers if node.node_id in nodes)
        lost = {slot.slot for slot in pool.slots if slot.node_id == victim.node_id}
        lost_servers = {slot.server for slot in pool.slots if slot.node_id == victim.node_id}
        kept = set(range(6)) - lost
        ray_cluster.cluster.remove_node(victim)
        ray_cluster.workers.remove(victim)
        seen_lost: set[int] = set()
        for _ in range(100):
            results = pool.step([TURN] * 6)
            assert all(results[slot].ok for slot in kept), [results[s] for s in kept]
            for slot in lost:
                if not results[slot].ok:
                    assert isinstance(results[slot].error, SlotLostError)
                    seen_lost.add(slot)
            if seen_lost == lost:
                break
            time.sleep(0.1)
        assert seen_lost == lost

        pool.wait_ready(timeout_s=120)
        assert pool.replacements == len(lost_servers)
        replacement = [p for p in pool.servers if isinstance(p, RayProvider)]
        for provider in replacement:
            _remember(provider)
        assert all(slot.node_id != victim.node_id for slot in pool.slots)
        recovered = pool.step([TURN] * 6)
        assert all(r.ok for r in recovered)
        assert {r.slot for r in recovered if r.reset} >= lost
        live = [(p.actor_pid, p.server_pid) for p in replacement]
    for actor, server in [*started, *live]:
        assert actor is not None and server is not None
        assert _wait_until(lambda a=actor, s=server: not pid_alive(a) and not group_alive(s))


_DRIVER = """
import os, sys, time
sys.path.insert(0, {repo!r})
from envgen_runtime import RayProvider
command = ["{{python}}", "-m", "http.server", "{{port}}", "--bind", "{{host}}"]
provider = RayProvider(command, health_path="/", address={address!r})
provider.start()
print(provider.actor_pid, provider.server_pid, flush=True)
if {hang!r}:
    time.sleep(120)
"""


def test_servers_end_with_their_driver_at_exit_and_when_it_is_killed(
    ray_cluster: RayCluster,
) -> None:
    # Two drivers at once (each its own Ray job): one exits normally (interpreter exit),
    # the other is SIGKILLed (driver death); neither may leave its actor or server behind.
    drivers = {
        ending: subprocess.Popen(
            [
                sys.executable,
                "-c",
                _DRIVER.format(
                    repo=str(REPO), address=ray_cluster.address, hang=ending == "killed"
                ),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for ending in ("exits", "killed")
    }
    try:
        pids = {}
        for ending, driver in drivers.items():
            assert driver.stdout is not None
            actor, server = (int(pid) for pid in driver.stdout.readline().split())
            remember(actor, server)
            remember_group(server)
            pids[ending] = (actor, server)
        assert group_alive(pids["killed"][1])
        drivers["killed"].send_signal(signal.SIGKILL)
        for ending, driver in drivers.items():
            driver.wait(timeout=60)
            actor, server = pids[ending]
            assert _wait_until(lambda s=server: not group_alive(s), timeout_s=30), ending
            assert _wait_until(lambda a=actor: not pid_alive(a), timeout_s=30), ending
    finally:
        for driver in drivers.values():
            driver.kill()
            driver.wait()


def test_placement_strategies_and_placement_groups_are_passed_to_ray(
    ray_cluster: RayCluster,
) -> None:
    from ray.util import placement_group, placement_group_table, remove_placement_group
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    target = ray_cluster.workers[-1].node_id
    pinned = RayProvider(
        _HTTP_SERVER,
        health_path="/",
        address=ray_cluster.address,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=target, soft=False),
        num_cpus=0.5,
    )
    group = placement_group([{"CPU": 1}], strategy="STRICT_PACK")
    try:
        import ray

        ray.get(group.ready(), timeout=60)
        bundle_node = placement_group_table(group)["bundles_to_node_id"][0]
        grouped = RayProvider(
            _HTTP_SERVER,
            health_path="/",
            address=ray_cluster.address,
            placement_group=group,
            bundle_index=0,
            num_cpus=1,
        )
        with pinned, grouped:
            _remember(pinned)
            _remember(grouped)
            assert pinned.node_id == target
            assert grouped.node_id == bundle_node
    finally:
        remove_placement_group(group)
