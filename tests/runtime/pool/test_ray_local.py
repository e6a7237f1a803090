"""A RayProvider with no cluster running starts one local Ray, shared by every provider.

In a module of its own, so that it runs after test_ray.py's three-node cluster has been
shut down (module scope): a Ray left running would be found instead of started.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from tests.helpers import REPO
from tests.runtime.pool.conftest import pid_alive, remember

pytestmark = pytest.mark.e2e


def _wait_until(check: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


_LOCAL_RAY = """
import json, sys, threading
from envgen_runtime import RayProvider
command = ["{python}", "-m", "http.server", "{port}", "--bind", "{host}"]
providers = [RayProvider(command, health_path="/", startup_timeout_s=120) for _ in range(3)]
errors = []
def start(provider):
    try:
        provider.start()
    except BaseException as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=start, args=(p,)) for p in providers]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
import ray
node = ray._private.worker._global_node
pids = [i.process.pid for infos in node.all_processes.values() for i in infos if i.process]
addresses = sorted({n["NodeManagerAddress"] for n in ray.nodes()})
print(json.dumps({"errors": errors, "urls": [p.base_url for p in providers], "pids": pids,
                  "addresses": addresses, "servers": [p.server_pid for p in providers]}))
for provider in providers:
    provider.stop()
"""


def test_providers_started_at_once_without_a_cluster_share_one_local_ray() -> None:
    # What EnvPool(provider="ray") does with no Ray running: its servers start in parallel
    # threads, and only one of them may start the local Ray (on loopback) for all.
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}  # no cluster to join
    proc = subprocess.run(
        [sys.executable, "-c", _LOCAL_RAY],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    remember(*report["pids"], *report["servers"])
    assert report["errors"] == []
    assert all(url and url.startswith("http://127.0.0.1:") for url in report["urls"])
    assert report["addresses"] == ["127.0.0.1"]
    assert proc.stderr.count("Started a local Ray instance") == 1
    assert _wait_until(lambda: not any(pid_alive(pid) for pid in report["pids"]), timeout_s=30)
