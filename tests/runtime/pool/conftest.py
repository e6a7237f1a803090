"""Pools over real example servers: local processes, Docker containers and a Ray cluster.

The Ray cluster (three nodes, every address on loopback) starts once, for the Ray module, and
is shut down by its handle; the session then checks that none of its raylet or GCS processes,
and no server a pool started, is still running.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.docker.conftest import docker_engine, example_images, session_containers
from tests.helpers import REPO

__all__ = ["docker_engine", "example_images", "session_containers"]

# Ray reads this when it guesses a node address: with it, the guess is 127.0.0.1.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

STARTED_PIDS: set[int] = set()
"""Every server (and Ray) process the pool tests started; none may survive the session."""
STARTED_GROUPS: set[int] = set()
"""Process groups of servers started under Ray (the guard leads each): all must be empty."""


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def group_alive(pgid: int) -> bool:
    """Whether any live process is in process group ``pgid``."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def remember_group(pgid: int | None) -> None:
    """Record a server's process group (see ``group_alive``)."""
    if pgid is not None:
        STARTED_GROUPS.add(pgid)


def remember(*pids: int | None) -> None:
    """Record pids a test started so the session end can check they are gone."""
    STARTED_PIDS.update(pid for pid in pids if pid is not None)


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    # Example servers run as `python -m examples.<env>.server`: from the checkout.
    monkeypatch.chdir(REPO)


class RayCluster:
    """The session's cluster: its handle, and the nodes that were added to the head."""

    def __init__(self, cluster: Any, workers: list[Any]) -> None:
        self.cluster = cluster
        self.workers = workers

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    @property
    def head_id(self) -> str:
        return str(self.cluster.head_node.node_id)

    @property
    def node_ids(self) -> set[str]:
        """The nodes still in the cluster: the head and the workers not removed."""
        return {self.head_id, *(str(node.node_id) for node in self.workers)}


def _wait_for_alive_nodes(node_ids: set[str], timeout_s: float = 60.0) -> None:
    """Wait until GCS lists every one of ``node_ids`` alive, with its CPUs registered.

    ``Cluster.add_node`` returns once a node's raylet is up, not once this driver's
    ``ray.nodes()`` shows it: a test handed the cluster earlier sees fewer nodes to use.
    """
    import time

    import ray

    def alive() -> set[str]:
        return {
            node["NodeID"]
            for node in ray.nodes()
            if node["Alive"] and node["Resources"].get("CPU", 0) > 0
        }

    deadline = time.monotonic() + timeout_s
    while not node_ids <= alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    missing = node_ids - alive()
    assert not missing, f"Ray nodes not alive after {timeout_s:g} s: {sorted(missing)}"


def _node_pids(node: Any) -> list[int]:
    pids = []
    for infos in node.all_processes.values():
        pids.extend(info.process.pid for info in infos if info.process is not None)
    return pids


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[RayCluster]:
    """Three Ray nodes on 127.0.0.1 (each its own raylet), and this process connected.

    Started once: only test_ray.py uses it, and module scope shuts the cluster down
    when that module ends instead of leaving its idle raylets on the two cores for the rest
    of the run.
    """
    import ray
    from ray.cluster_utils import Cluster

    loopback = {"node_ip_address": "127.0.0.1", "num_cpus": 2}
    cluster = Cluster(initialize_head=True, head_node_args={**loopback, "include_dashboard": False})
    nodes: list[Any] = [cluster.head_node]
    try:
        workers = [cluster.add_node(**loopback) for _ in range(2)]
        nodes += workers
        ray.init(address=cluster.address, log_to_driver=False)
        _wait_for_alive_nodes({str(node.node_id) for node in nodes})
        addresses = {node["NodeManagerAddress"] for node in ray.nodes() if node["Alive"]}
        assert addresses == {"127.0.0.1"}, f"Ray left loopback: {addresses}"
        for node in nodes:
            remember(*_node_pids(node))
        yield RayCluster(cluster, workers)
    finally:
        for node in nodes:
            remember(*_node_pids(node))
        ray.shutdown()
        cluster.shutdown()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a server or Ray process a pool test started is still alive."""
    import time

    deadline = time.monotonic() + 10

    def still_running() -> set[int]:
        return {pid for pid in STARTED_PIDS if pid_alive(pid)} | {
            pgid for pgid in STARTED_GROUPS if group_alive(pgid)
        }

    left = still_running()
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = still_running()
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"pool tests left processes running: {sorted(left)}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
