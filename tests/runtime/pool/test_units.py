"""Pieces of the pool and the Ray provider that need no server: extras, the guard, checks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest
from envgen_runtime import EnvClient, SlotResult
from envgen_runtime.pool.clients import async_client_class
from envgen_runtime.providers.base import free_loopback_port

from generated.echo_env import AsyncEchoEnv, EchoEnv
from tests.runtime.pool.conftest import pid_alive


def test_missing_ray_names_the_ray_extra() -> None:
    code = textwrap.dedent(
        """
        import sys
        class _Block:
            def find_spec(self, name, path=None, target=None):
                if name == "ray" or name.startswith("ray."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None
        sys.meta_path.insert(0, _Block())
        from envgen_runtime import MissingExtraError, RayProvider
        try:
            RayProvider(["{python}", "-m", "x"]).start()
        except MissingExtraError as exc:
            print(exc.extra, exc.module, "|", exc)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ray ray |"), proc.stdout
    assert "pip install 'envgen-runtime[ray]'" in proc.stdout


def test_the_orphan_guard_passes_the_exit_status_through() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "envgen_runtime.providers.orphan_guard",
            "1",
            "--",
            sys.executable,
            "-c",
            "import sys; print('child ran'); sys.exit(7)",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 7 and proc.stdout.strip() == "child ran"
    usage = subprocess.run(
        [sys.executable, "-m", "envgen_runtime.providers.orphan_guard", "x"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert usage.returncode == 2 and "usage:" in usage.stderr


def test_the_orphan_guard_ends_the_server_when_its_owner_dies() -> None:
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    guard = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "envgen_runtime.providers.orphan_guard",
            str(owner.pid),
            "--",
            sys.executable,
            "-c",
            "import os, time; print(os.getpid(), flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert guard.stdout is not None
        server = int(guard.stdout.readline())
        assert pid_alive(server)
        owner.kill()
        owner.wait()
        guard.wait(timeout=10)
        deadline = time.monotonic() + 10
        while pid_alive(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not pid_alive(server)
    finally:
        owner.kill()
        guard.kill()
        owner.wait()
        guard.wait()


def test_a_sync_client_class_gets_an_async_twin_with_the_same_hooks() -> None:
    assert async_client_class(AsyncEchoEnv) is AsyncEchoEnv
    twin = async_client_class(EchoEnv)
    assert twin.SPEC is EchoEnv.SPEC and twin.__name__ == "AsyncEchoEnv"
    assert twin._parse_result is EchoEnv._parse_result
    with pytest.raises(TypeError, match="must set SPEC"):
        async_client_class(EnvClient)  # type: ignore[type-abstract]
    with pytest.raises(TypeError, match="EnvClient or AsyncEnvClient subclass"):
        async_client_class(int)


def test_slot_result_ok_is_whether_there_was_an_error() -> None:
    assert SlotResult(slot=0, observation=1, reward=None, done=False).ok
    assert not SlotResult(slot=0, observation=None, reward=None, done=True, error=Exception()).ok  # type: ignore[arg-type]


def test_a_ray_address_that_never_answers_fails_within_the_connect_timeout() -> None:
    # "auto" reads RAY_ADDRESS; a stale one made ray.init retry for minutes.
    code = textwrap.dedent(
        """
        import time
        from envgen_runtime import ProviderError
        from generated.echo_env import EchoEnvPool
        started = time.monotonic()
        options = {"address": "auto", "connect_timeout_s": 3}
        try:
            EchoEnvPool(2, provider="ray", provider_options=options).start()
        except ProviderError as exc:
            print(f"{time.monotonic() - started:.1f}|{exc}", flush=True)
        """
    )
    closed = free_loopback_port("127.0.0.1")  # nothing listens there
    env = {
        **os.environ,
        "RAY_ADDRESS": f"127.0.0.1:{closed}",
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    }
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=90, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    elapsed, message = proc.stdout.split("|", 1)
    assert float(elapsed) < 20, proc.stdout
    assert f"127.0.0.1:{closed}" in message and "RAY_ADDRESS" in message, message
    assert "ray start --head" in message and "connect_timeout_s" in message, message


def test_the_capacity_read_waits_for_a_body_sent_after_the_headers() -> None:
    # uvicorn may write the headers and the body apart; the body is what holds the capacity.
    import asyncio

    from envgen_runtime.pool.servers import server_capacity
    from envgen_runtime.pool.slots import Server

    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.0 200 OK\r\ncontent-type: application/json\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(0.2)
        writer.write(b'{"name": "x", "max_concurrent_envs": 12}')
        writer.close()

    async def read() -> int | None:
        listening = await asyncio.start_server(reply, "127.0.0.1", 0)
        async with listening:
            port = listening.sockets[0].getsockname()[1]
            server = Server(0, None, 1)  # type: ignore[arg-type]
            server.base_url = f"http://127.0.0.1:{port}"
            return await server_capacity(server, 5.0)

    assert asyncio.run(read()) == 12


class _FakeRay:
    """Stands in for ``ray`` where ``RayProvider`` reads the node table, and counts reads."""

    def __init__(self, *node_ids: str) -> None:
        self.table = [
            {"NodeID": node_id, "Alive": True, "Resources": {"CPU": 2.0}} for node_id in node_ids
        ]
        self.reads = 0

    def nodes(self) -> list[dict[str, Any]]:
        self.reads += 1
        return self.table


def test_the_default_ray_placement_asks_softly_for_the_least_held_node() -> None:
    from envgen_runtime import RayProvider
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    fake = _FakeRay("b" * 56, "a" * 56)
    providers = [RayProvider(["{python}", "-m", "x"]) for _ in range(3)]
    try:
        strategies = [p._placed_options(fake)["scheduling_strategy"] for p in providers]
        assert all(isinstance(s, NodeAffinitySchedulingStrategy) for s in strategies)
        assert [s.node_id for s in strategies] == ["a" * 56, "b" * 56, "a" * 56]
        assert all(s.soft and s._spill_on_unavailable for s in strategies)
        providers[1].stop()  # releases its node
        assert providers[1]._placed_options(fake)["scheduling_strategy"].node_id == "b" * 56
    finally:
        for provider in providers:
            provider.stop()
    # A provider that no alive node fits leaves the actor to Ray's own SPREAD.
    needy = RayProvider(["{python}", "-m", "x"], num_cpus=4)
    assert needy._placed_options(fake)["scheduling_strategy"] == "SPREAD"


def test_an_explicit_ray_placement_is_passed_on_as_it_is() -> None:
    from envgen_runtime import RayProvider
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    fake = _FakeRay("a" * 56)
    pinned = object()
    group = object()
    command = ["{python}", "-m", "x"]
    explicit = RayProvider(command, scheduling_strategy=pinned)._placed_options(fake)
    assert explicit["scheduling_strategy"] is pinned
    rays_own = RayProvider(command, actor_options={"scheduling_strategy": "SPREAD"})
    assert rays_own._placed_options(fake)["scheduling_strategy"] == "SPREAD"
    assert "scheduling_strategy" not in RayProvider(
        command, scheduling_strategy=None
    )._placed_options(fake)
    grouped = RayProvider(command, placement_group=group, bundle_index=1)._placed_options(fake)
    strategy = grouped["scheduling_strategy"]
    assert isinstance(strategy, PlacementGroupSchedulingStrategy)
    assert strategy.placement_group is group and strategy.placement_group_bundle_index == 1
    assert fake.reads == 0
