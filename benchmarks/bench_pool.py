# mypy: disable-error-code="import-untyped"
"""Many envs at once: ``EnvPool`` against threaded clients and OpenEnv's async client.

Four real echo_env WebSocket servers (openenv 0.10, ``max_concurrent_envs=16``, started once
by ``LocalProcessProvider``) hold every session: an openenv server process costs seconds of
CPU to start and over 100 MB, so 64 envs are 64 sessions over 4 servers, not 64 servers.
For 16 and 64 envs, each variant steps all of its envs in lock-step rounds for a fixed time:

- ``pool``: one ``EchoEnvPool`` (``sessions_per_server=16``) over the four servers;
- ``threads``: that many independent ``EchoEnv`` clients, one thread each;
- ``openenv``: openenv 0.10's own async ``GenericEnvClient``, one per env, each round driven
  with ``asyncio.gather``;

and a single ``EchoEnv`` stepping alone gives the per-step client CPU to beat. Reported:
env-steps per second, client CPU per env-step (``time.process_time``, all threads of this
process) and the servers' CPU per env-step (their user + system time from ``/proc``), which
says whether the servers or the client bound the throughput on this machine's cores.
Variants alternate in rounds; medians.
Also: the time to start 4 servers with Ray (``RayProvider``, on a local loopback Ray) and
as local processes.

Targets: pool CPU per env-step <= a single client's per step; pool throughput >= 1.5x the
threaded clients at 64 envs and >= 2x OpenEnv's client at 64 envs.

    python -m benchmarks.bench_pool [--quick] [--out results.json]
    python benchmarks/bench_pool.py [--quick] [--out results.json]

``--quick`` (about a minute) measures for less time, once; it ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/bench_pool.py`: import as `-m` does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

REPO = Path(__file__).resolve().parent.parent
MESSAGE = "hello, world"
SERVERS = 4
SESSIONS_PER_SERVER = 16
TARGETS = {
    "pool_cpu_vs_single_max": 1.0,
    "pool_vs_threads_at_64_min": 1.5,
    "pool_vs_openenv_at_64_min": 2.0,
}


@dataclass(frozen=True)
class Settings:
    envs: tuple[int, ...]
    seconds: float
    rounds: int
    start_repeats: int


FULL = Settings(envs=(16, 64), seconds=6.0, rounds=3, start_repeats=2)
QUICK = Settings(envs=(16, 64), seconds=2.0, rounds=1, start_repeats=1)


# --------------------------------------------------------------------------- servers


def _local_provider() -> Any:
    from envgen_runtime import LocalProcessProvider

    from generated.echo_env import EchoEnv

    spec = EchoEnv.SPEC
    return LocalProcessProvider(
        spec.server_command,
        health_path=spec.health_path,
        startup_timeout_s=180.0,
        cwd=REPO,
        transport="websocket",
    )


def _start_all(providers: list[Any]) -> float:
    """Start ``providers`` at once; seconds until the last is healthy."""
    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(providers)) as executor:
        list(executor.map(lambda p: p.start(), providers))
    return time.perf_counter() - began


SERVER_PIDS: list[int] = []
"""The shared servers' process ids, whose CPU time each measurement also reads."""
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def servers_cpu_s() -> float:
    """CPU seconds the shared servers have used so far (user + system, from /proc)."""
    total = 0
    for pid in SERVER_PIDS:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / _TICKS


@contextmanager
def serving() -> Iterator[list[str]]:
    """The four shared servers' base URLs; all stopped afterwards."""
    providers = [_local_provider() for _ in range(SERVERS)]
    with ExitStack() as stack:
        for provider in providers:
            stack.callback(provider.stop)
        _start_all(providers)
        SERVER_PIDS[:] = [provider.pid for provider in providers]
        yield [provider.base_url for provider in providers]


class Borrowed:
    """A provider for a server that already runs: the pool uses it and leaves it running."""

    def __init__(self, url: str) -> None:
        self._url = url

    @property
    def base_url(self) -> str | None:
        return self._url

    def start(self) -> str:
        return self._url

    def stop(self) -> None:
        pass


def _borrowing(urls: list[str]) -> Callable[[], Borrowed]:
    remaining = list(urls)
    return lambda: Borrowed(remaining.pop(0))


def _settle() -> None:
    # Let the servers release the sessions of the previous variant (16 per server at most).
    time.sleep(0.5)


# --------------------------------------------------------------------------- variants


Sample = tuple[int, float, float, float]
"""env-steps, wall seconds, client CPU seconds, servers' CPU seconds."""


def _measure(rounds: Callable[[], int], seconds: float) -> Sample:
    """Call ``rounds`` (one lock-step round, returns env-steps) until ``seconds`` pass."""
    for _ in range(3):
        rounds()
    cpu, wall, server = time.process_time(), time.perf_counter(), servers_cpu_s()
    deadline = wall + seconds
    steps = 0
    while time.perf_counter() < deadline:
        steps += rounds()
    return (
        steps,
        time.perf_counter() - wall,
        time.process_time() - cpu,
        servers_cpu_s() - server,
    )


def run_single(url: str, seconds: float) -> Sample:
    from generated.echo_env import EchoAction, EchoEnv

    with EchoEnv(url) as env:
        env.reset()

        def one() -> int:
            env.step(EchoAction(message=MESSAGE))
            return 1

        return _measure(one, seconds)


def run_pool(urls: list[str], envs: int, seconds: float) -> Sample:
    from generated.echo_env import EchoAction, EchoEnvPool

    actions = [EchoAction(message=MESSAGE)] * envs
    with EchoEnvPool(
        envs, provider=_borrowing(urls), sessions_per_server=SESSIONS_PER_SERVER
    ) as pool:
        pool.reset()

        def one() -> int:
            results = pool.step(actions)
            if not all(result.ok for result in results):
                raise RuntimeError(next(r.error for r in results if not r.ok))
            return envs

        return _measure(one, seconds)


def run_threads(urls: list[str], envs: int, seconds: float) -> Sample:
    """Independent clients, one thread each, stepping in lock-step rounds (as a trainer)."""
    from generated.echo_env import EchoAction, EchoEnv

    clients = [EchoEnv(urls[i % len(urls)]) for i in range(envs)]
    action = EchoAction(message=MESSAGE)
    try:
        with ThreadPoolExecutor(max_workers=envs) as executor:
            list(executor.map(lambda c: c.reset(), clients))

            def one() -> int:
                list(executor.map(lambda c: c.step(action), clients))
                return envs

            return _measure(one, seconds)
    finally:
        for client in clients:
            client.close()


def run_openenv(urls: list[str], envs: int, seconds: float) -> Sample:
    """openenv 0.10's async GenericEnvClient, one per env, rounds driven by asyncio.gather."""
    from openenv.core.generic_client import GenericEnvClient

    async def main() -> Sample:
        clients = [GenericEnvClient(base_url=urls[i % len(urls)]) for i in range(envs)]
        try:
            await asyncio.gather(*(c.connect() for c in clients))
            await asyncio.gather(*(c.reset() for c in clients))

            async def one() -> int:
                await asyncio.gather(*(c.step({"message": MESSAGE}) for c in clients))
                return envs

            for _ in range(3):
                await one()
            cpu, wall, server = time.process_time(), time.perf_counter(), servers_cpu_s()
            deadline = wall + seconds
            steps = 0
            while time.perf_counter() < deadline:
                steps += await one()
            return (
                steps,
                time.perf_counter() - wall,
                time.process_time() - cpu,
                servers_cpu_s() - server,
            )
        finally:
            await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)

    return asyncio.run(main())


def _row(variant: str, envs: int, samples: list[Sample]) -> dict[str, Any]:
    rates = [steps / wall for steps, wall, _, _ in samples]
    cpus = [cpu / max(steps, 1) * 1e6 for steps, _, cpu, _ in samples]
    server_cpus = [server / max(steps, 1) * 1e6 for steps, _, _, server in samples]
    return {
        "variant": variant,
        "envs": envs,
        "servers": SERVERS if variant != "single" else 1,
        "steps": sum(steps for steps, _, _, _ in samples),
        "steps_per_s": round(statistics.median(rates), 1),
        "cpu_per_step_us": round(statistics.median(cpus), 1),
        "server_cpu_per_step_us": round(statistics.median(server_cpus), 1),
    }


def measure_stepping(urls: list[str], settings: Settings) -> list[dict[str, Any]]:
    samples: dict[tuple[str, int], list[Sample]] = {}
    runners: dict[str, Callable[[int], Sample]] = {
        "pool": lambda n: run_pool(urls, n, settings.seconds),
        "threads": lambda n: run_threads(urls, n, settings.seconds),
        "openenv": lambda n: run_openenv(urls, n, settings.seconds),
    }
    for _ in range(settings.rounds):
        samples.setdefault(("single", 1), []).append(run_single(urls[0], settings.seconds))
        _settle()
        for envs in settings.envs:
            for variant, runner in runners.items():
                samples.setdefault((variant, envs), []).append(runner(envs))
                _settle()
    rows = [_row(variant, envs, got) for (variant, envs), got in samples.items()]
    for row in rows:
        print(
            f"  {row['variant']:>8} {row['envs']:>3} envs: {row['steps_per_s']:>8.1f} "
            f"env-steps/s, {row['cpu_per_step_us']:>7.1f} us client and "
            f"{row['server_cpu_per_step_us']:>7.1f} us server CPU/env-step",
            flush=True,
        )
    return rows


# --------------------------------------------------------------------------- start-up


def _start_ray_servers() -> tuple[float, float]:
    """Seconds to bring up a local loopback Ray, then to start 4 servers as actors."""
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    import ray
    from envgen_runtime import RayProvider

    from generated.echo_env import EchoEnv

    spec = EchoEnv.SPEC
    began = time.perf_counter()
    ray.init(_node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False, num_cpus=4)
    init_s = time.perf_counter() - began
    try:
        addresses = {node["NodeManagerAddress"] for node in ray.nodes()}
        if addresses != {"127.0.0.1"}:
            raise SystemExit(f"Ray left loopback: {addresses}")
        providers = [
            RayProvider(spec.server_command, startup_timeout_s=180.0, cwd=REPO)
            for _ in range(SERVERS)
        ]
        try:
            return init_s, _start_all(providers)
        finally:
            for provider in providers:
                provider.stop()
    finally:
        ray.shutdown()


POOL_SLOTS = 8


def measure_pool_start(repeats: int) -> dict[str, Any]:
    """Seconds from ``EchoEnvPool(8)`` to its first ``reset()`` answered: one server per slot
    (``sessions_per_server=1``, the old default) against the default (the server's capacity),
    interleaved ``repeats`` times; medians, and how many servers each started."""
    from generated.echo_env import EchoEnvPool

    times: dict[str, list[float]] = {"one_per_server": [], "default": []}
    servers: dict[str, int] = {}
    for _ in range(repeats):
        for name, options in (("one_per_server", {"sessions_per_server": 1}), ("default", {})):
            began = time.perf_counter()
            with EchoEnvPool(POOL_SLOTS, **options) as pool:  # type: ignore[arg-type]
                pool.reset()
                times[name].append(time.perf_counter() - began)
                servers[name] = len(pool.servers)
    one, default = (statistics.median(times[k]) for k in ("one_per_server", "default"))
    out = {
        "pool_slots": POOL_SLOTS,
        "pool_one_per_server_s": round(one, 2),
        "pool_one_per_server_servers": servers["one_per_server"],
        "pool_default_s": round(default, 2),
        "pool_default_servers": servers["default"],
        "pool_start_ratio": round(one / default, 2),
    }
    print(
        f"  pool of {POOL_SLOTS}: {out['pool_one_per_server_s']} s with one server per slot, "
        f"{out['pool_default_s']} s by default ({out['pool_default_servers']} server(s))",
        flush=True,
    )
    return out


def measure_startup(settings: Settings) -> dict[str, Any]:
    local, ray_actors, ray_init = [], [], []
    for _ in range(settings.start_repeats):
        providers = [_local_provider() for _ in range(SERVERS)]
        try:
            local.append(_start_all(providers))
        finally:
            for provider in providers:
                provider.stop()
        init_s, actors_s = _start_ray_servers()
        ray_init.append(init_s)
        ray_actors.append(actors_s)
    out = {
        "servers": SERVERS,
        "local_processes_s": round(statistics.median(local), 2),
        "ray_actors_s": round(statistics.median(ray_actors), 2),
        "ray_init_s": round(statistics.median(ray_init), 2),
        **measure_pool_start(settings.start_repeats),
    }
    print(
        f"  start {SERVERS} servers: local processes {out['local_processes_s']} s, Ray actors "
        f"{out['ray_actors_s']} s (+ {out['ray_init_s']} s to start Ray)",
        flush=True,
    )
    return out


# --------------------------------------------------------------------------- verdicts


def headline(rows: list[dict[str, Any]], startup: dict[str, Any]) -> dict[str, Any]:
    by = {(r["variant"], r["envs"]): r for r in rows}
    single = by[("single", 1)]
    out: dict[str, Any] = {"benchmark": "pool", "single_cpu_per_step_us": single["cpu_per_step_us"]}
    met: dict[str, bool] = {}
    for envs in sorted({r["envs"] for r in rows if r["variant"] == "pool"}):
        pool, threads, openenv = by[("pool", envs)], by[("threads", envs)], by[("openenv", envs)]
        out[f"pool_{envs}_steps_per_s"] = pool["steps_per_s"]
        out[f"pool_{envs}_cpu_per_step_us"] = pool["cpu_per_step_us"]
        out[f"pool_vs_threads_{envs}"] = round(pool["steps_per_s"] / threads["steps_per_s"], 2)
        out[f"pool_vs_openenv_{envs}"] = round(pool["steps_per_s"] / openenv["steps_per_s"], 2)
        met[f"pool_cpu_{envs}"] = (
            pool["cpu_per_step_us"] <= single["cpu_per_step_us"] * TARGETS["pool_cpu_vs_single_max"]
        )
    if ("pool", 64) in by:
        met["pool_vs_threads_64"] = (
            out["pool_vs_threads_64"] >= TARGETS["pool_vs_threads_at_64_min"]
        )
        met["pool_vs_openenv_64"] = (
            out["pool_vs_openenv_64"] >= TARGETS["pool_vs_openenv_at_64_min"]
        )
    out["start_local_s"] = startup["local_processes_s"]
    out["start_ray_s"] = startup["ray_actors_s"]
    out["targets"] = TARGETS
    out["met"] = met
    out["all_met"] = all(met.values())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs, once (about 1 min)")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    began = time.perf_counter()
    print(f"starting {SERVERS} echo_env WebSocket servers ...", flush=True)
    with serving() as urls:
        print(f"servers up after {time.perf_counter() - began:.1f} s", flush=True)
        rows = measure_stepping(urls, settings)
    startup = measure_startup(settings)
    head = headline(rows, startup)
    head["quick"] = args.quick
    head["elapsed_s"] = round(time.perf_counter() - began, 1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "settings": dataclasses.asdict(settings),
            "stepping": rows,
            "startup": startup,
            "headline": head,
        }
        args.out.write_text(json.dumps(document, indent=2) + "\n")
    print(json.dumps(head))
    return 0


if __name__ == "__main__":
    sys.exit(main())
