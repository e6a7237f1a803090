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
- ``floor``: the same rounds on raw sockets (``lockstep_floor``: fixed frames, no websockets
  protocol, JSON or models), what no pool code could go below;
- at 64 envs, ``pool`` again on four **lean** servers (envgen's own backend, ``--backend
  lean``), which the pool starts itself through its public API
  (``provider_options={"command": [...]}``);

and a single ``EchoEnv`` stepping alone gives the per-step client CPU to beat; a raw loop
(a ``websockets`` sync send/recv loop, no deflate, as the generated client's wire) on one
openenv and one lean server gives each backend's floor in the same run. Reported:
env-steps per second, client CPU per env-step (``time.process_time``, all threads of this
process), the servers' CPU per env-step (their user + system time from ``/proc``), and the
ceiling both put on throughput: cores / (servers' CPU + client CPU per env-step), the
env-steps per second this machine's cores could give that variant if nothing else ran.
Variants alternate in rounds; medians. The machine's cores and load average (start, end)
are recorded beside them.
Also: the time to start 4 servers with Ray (``RayProvider``, on a local loopback Ray) and
as local processes, and the pool's own start.

Targets (each a ratio to a rival measured in the same run): pool client CPU per env-step
<= 0.5x a single client's at 16 and 64 envs; pool throughput at 64 envs >= 2.0x the threaded
clients and >= 2.0x OpenEnv's async client, all on openenv servers; the pool on lean servers
at 64 envs >= 3.0x OpenEnv's async client on openenv servers. Beside each throughput target:
the env-steps/s it needs and the pool's ceiling, so a reader sees whether it is reachable.

    python -m benchmarks.bench_pool [--quick] [--stepping-only] [--out results.json]
    python benchmarks/bench_pool.py [--quick] [--stepping-only] [--out results.json]

``--quick`` (about two minutes, one minute with ``--stepping-only``) measures for less time,
once; it ends with one JSON line.
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

from benchmarks.machine import MachineState

REPO = Path(__file__).resolve().parent.parent
MESSAGE = "hello, world"
SERVERS = 4
SESSIONS_PER_SERVER = 16
TARGETS = {
    "pool_cpu_vs_single_max": 0.5,
    "pool_vs_threads_at_64_min": 2.0,
    "pool_vs_openenv_at_64_min": 2.0,
    "pool_lean_vs_openenv_at_64_min": 3.0,
}
LEAN_ENVS = 64
"""The env count the pool is also measured at on lean servers."""


@dataclass(frozen=True)
class Settings:
    envs: tuple[int, ...]
    seconds: float
    rounds: int
    start_repeats: int


FULL = Settings(envs=(16, 64), seconds=3.0, rounds=3, start_repeats=1)
QUICK = Settings(envs=(16, 64), seconds=1.5, rounds=1, start_repeats=1)


# --------------------------------------------------------------------------- servers


def lean_command() -> list[str]:
    """The env's server command (its ``SPEC``) on envgen's lean backend."""
    from generated.echo_env import EchoEnv

    return [*EchoEnv.SPEC.server_command, "--backend", "lean"]


def _local_provider(command: list[str] | None = None) -> Any:
    from envgen_runtime import LocalProcessProvider

    from generated.echo_env import EchoEnv

    spec = EchoEnv.SPEC
    return LocalProcessProvider(
        command or spec.server_command,
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


def servers_cpu_s(pids: list[int] | None = None) -> float:
    """CPU seconds ``pids`` (default: the shared servers) have used so far (user + system,
    from /proc)."""
    total = 0
    for pid in SERVER_PIDS if pids is None else pids:
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


def _measure(rounds: Callable[[], int], seconds: float, pids: list[int] | None = None) -> Sample:
    """Call ``rounds`` (one lock-step round, returns env-steps) until ``seconds`` pass;
    the servers' CPU is that of ``pids`` (default: the shared servers)."""
    for _ in range(3):
        rounds()
    cpu, wall, server = time.process_time(), time.perf_counter(), servers_cpu_s(pids)
    deadline = wall + seconds
    steps = 0
    while time.perf_counter() < deadline:
        steps += rounds()
    return (
        steps,
        time.perf_counter() - wall,
        time.process_time() - cpu,
        servers_cpu_s(pids) - server,
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


def run_pool_lean(envs: int, seconds: float) -> Sample:
    """The pool on lean servers it starts itself (``provider_options``), then stops."""
    from generated.echo_env import EchoAction, EchoEnvPool

    actions = [EchoAction(message=MESSAGE)] * envs
    with EchoEnvPool(
        envs,
        provider_options={"command": lean_command(), "cwd": str(REPO)},
        sessions_per_server=SESSIONS_PER_SERVER,
    ) as pool:
        pool.reset()
        pids = [provider.pid for provider in pool.servers]  # type: ignore[attr-defined]

        def one() -> int:
            results = pool.step(actions)
            if not all(result.ok for result in results):
                raise RuntimeError(next(r.error for r in results if not r.ok))
            return envs

        return _measure(one, seconds, pids)


def run_raw(url: str, pids: list[int], seconds: float) -> Sample:
    """The raw loop (bench_step's ``websockets`` sync loop, no deflate) on one server."""
    from benchmarks.bench_step import RawWebSocketStepper

    stepper = RawWebSocketStepper(url, deflate=False)
    try:

        def one() -> int:
            stepper.step()
            return 1

        return _measure(one, seconds, pids)
    finally:
        stepper.close()


def run_floor(urls: list[str], envs: int, seconds: float) -> Sample:
    """The pool's floor (``lockstep_floor``): raw lock-step rounds over ``envs`` sessions."""
    from benchmarks.lockstep_floor import LockstepFloor

    floor = LockstepFloor(urls, envs, MESSAGE, SESSIONS_PER_SERVER)
    try:
        return _measure(floor.round, seconds)
    finally:
        floor.close()


def run_raw_lean(seconds: float) -> Sample:
    """The raw loop on a lean server started for it (and stopped after)."""
    provider = _local_provider(lean_command())
    try:
        provider.start()
        return run_raw(provider.base_url, [provider.pid], seconds)
    finally:
        provider.stop()


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


def ceiling_steps_per_s(cores: int, server_cpu_us: float, client_cpu_us: float) -> float:
    """The env-steps per second ``cores`` can give at these CPU costs per env-step (servers'
    and client's): the bound on throughput if nothing else ran on the machine."""
    return round(cores * 1e6 / max(server_cpu_us + client_cpu_us, 1e-9), 1)


def _row(
    variant: str, envs: int, backend: str, samples: list[Sample], cores: int
) -> dict[str, Any]:
    rates = [steps / wall for steps, wall, _, _ in samples]
    cpus = [cpu / max(steps, 1) * 1e6 for steps, _, cpu, _ in samples]
    server_cpus = [server / max(steps, 1) * 1e6 for steps, _, _, server in samples]
    row: dict[str, Any] = {
        "variant": variant,
        "envs": envs,
        "backend": backend,
        "servers": 1 if envs == 1 else SERVERS,
        "steps": sum(steps for steps, _, _, _ in samples),
        "steps_per_s": round(statistics.median(rates), 1),
        "cpu_per_step_us": round(statistics.median(cpus), 1),
        "server_cpu_per_step_us": round(statistics.median(server_cpus), 1),
    }
    row["ceiling_steps_per_s"] = ceiling_steps_per_s(
        cores, row["server_cpu_per_step_us"], row["cpu_per_step_us"]
    )
    return row


Variant = tuple[str, int, str]
"""variant, envs, server backend."""


def measure_stepping(urls: list[str], settings: Settings) -> list[dict[str, Any]]:
    samples: dict[Variant, list[Sample]] = {}
    seconds = settings.seconds
    singles: dict[Variant, Callable[[], Sample]] = {
        ("single", 1, "openenv"): lambda: run_single(urls[0], seconds),
        ("raw", 1, "openenv"): lambda: run_raw(urls[0], SERVER_PIDS[:1], seconds),
        ("raw", 1, "lean"): lambda: run_raw_lean(seconds),
    }
    runners: dict[str, Callable[[int], Sample]] = {
        "pool": lambda n: run_pool(urls, n, seconds),
        "floor": lambda n: run_floor(urls, n, seconds),
        "threads": lambda n: run_threads(urls, n, seconds),
        "openenv": lambda n: run_openenv(urls, n, seconds),
    }
    for _ in range(settings.rounds):
        for key, single in singles.items():
            samples.setdefault(key, []).append(single())
            _settle()
        for envs in settings.envs:
            for variant, runner in runners.items():
                samples.setdefault((variant, envs, "openenv"), []).append(runner(envs))
                _settle()
            if envs == LEAN_ENVS:
                samples.setdefault(("pool", envs, "lean"), []).append(run_pool_lean(envs, seconds))
                _settle()
    cores = os.cpu_count() or 1
    rows = [_row(*key, got, cores) for key, got in samples.items()]
    for row in rows:
        print(
            f"  {row['variant']:>8} {row['envs']:>3} envs on {row['backend']:>7}: "
            f"{row['steps_per_s']:>8.1f} env-steps/s (ceiling {row['ceiling_steps_per_s']:>7.1f}), "
            f"{row['cpu_per_step_us']:>7.1f} us client and "
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


def throughput_target(pool: dict[str, Any], rival: dict[str, Any], target: float) -> dict[str, Any]:
    """The pool's env-steps/s over ``rival``'s against ``target``, and whether the machine
    could reach it: the env-steps/s the target needs, beside the pool's ceiling (cores over
    the pool's servers' + client CPU per env-step)."""
    ratio = round(pool["steps_per_s"] / max(rival["steps_per_s"], 1e-9), 2)
    needed = round(target * rival["steps_per_s"], 1)
    ceiling = pool.get("ceiling_steps_per_s")
    return {
        "ratio": ratio,
        "target": target,
        "met": ratio >= target,
        "needed_steps_per_s": needed,
        "ceiling_steps_per_s": ceiling,
        "reachable": None if ceiling is None else needed <= ceiling,
    }


def headline(rows: list[dict[str, Any]], startup: dict[str, Any] | None) -> dict[str, Any]:
    by = {(r["variant"], r["envs"], r.get("backend", "openenv")): r for r in rows}
    single = by[("single", 1, "openenv")]
    out: dict[str, Any] = {"benchmark": "pool", "single_cpu_per_step_us": single["cpu_per_step_us"]}
    met: dict[str, bool] = {}
    pool_envs = sorted({r["envs"] for r in rows if r["variant"] == "pool"})
    for envs in pool_envs:
        if ("pool", envs, "openenv") not in by:
            continue
        pool = by[("pool", envs, "openenv")]
        threads, openenv = by[("threads", envs, "openenv")], by[("openenv", envs, "openenv")]
        out[f"pool_{envs}_steps_per_s"] = pool["steps_per_s"]
        out[f"pool_{envs}_cpu_per_step_us"] = pool["cpu_per_step_us"]
        cpu_ratio = round(pool["cpu_per_step_us"] / max(single["cpu_per_step_us"], 1e-9), 2)
        out[f"pool_cpu_vs_single_{envs}"] = cpu_ratio
        out[f"pool_vs_threads_{envs}"] = round(pool["steps_per_s"] / threads["steps_per_s"], 2)
        out[f"pool_vs_openenv_{envs}"] = round(pool["steps_per_s"] / openenv["steps_per_s"], 2)
        met[f"pool_cpu_{envs}"] = cpu_ratio <= TARGETS["pool_cpu_vs_single_max"]
        floor = by.get(("floor", envs, "openenv"))
        if floor is not None:  # raw lock-step rounds: what is not the pool's own code
            out[f"floor_{envs}_cpu_per_step_us"] = floor["cpu_per_step_us"]
    throughput: dict[str, dict[str, Any]] = {}
    if ("pool", 64, "openenv") in by:
        pool, threads = by[("pool", 64, "openenv")], by[("threads", 64, "openenv")]
        openenv = by[("openenv", 64, "openenv")]
        throughput["pool_vs_threads_64"] = throughput_target(
            pool, threads, TARGETS["pool_vs_threads_at_64_min"]
        )
        throughput["pool_vs_openenv_64"] = throughput_target(
            pool, openenv, TARGETS["pool_vs_openenv_at_64_min"]
        )
    if ("pool", 64, "lean") in by and ("openenv", 64, "openenv") in by:
        lean = by[("pool", 64, "lean")]
        out["pool_lean_64_steps_per_s"] = lean["steps_per_s"]
        out["pool_lean_64_cpu_per_step_us"] = lean["cpu_per_step_us"]
        throughput["pool_lean_vs_openenv_64"] = throughput_target(
            lean, by[("openenv", 64, "openenv")], TARGETS["pool_lean_vs_openenv_at_64_min"]
        )
    for key, verdict in throughput.items():
        out[key] = verdict["ratio"]
        met[key] = verdict["met"]
    out["throughput_targets"] = throughput
    for backend in ("openenv", "lean"):
        raw = by.get(("raw", 1, backend))
        if raw is not None:  # each backend's floor: no client code, one session
            out[f"raw_{backend}_cpu_per_step_us"] = raw["cpu_per_step_us"]
            out[f"raw_{backend}_server_cpu_per_step_us"] = raw["server_cpu_per_step_us"]
    if startup is not None:
        out["start_local_s"] = startup["local_processes_s"]
        out["start_ray_s"] = startup["ray_actors_s"]
    out["targets"] = TARGETS
    out["met"] = met
    out["all_met"] = all(met.values())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs, once (about 2 min)")
    parser.add_argument(
        "--stepping-only",
        action="store_true",
        help="skip the start-up figures (local processes, Ray, the pool's own start)",
    )
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    machine = MachineState()
    began = time.perf_counter()
    print(f"starting {SERVERS} echo_env WebSocket servers ...", flush=True)
    with serving() as urls:
        print(f"servers up after {time.perf_counter() - began:.1f} s", flush=True)
        rows = measure_stepping(urls, settings)
    startup = None if args.stepping_only else measure_startup(settings)
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
            "machine": machine.record(),
        }
        args.out.write_text(json.dumps(document, indent=2) + "\n")
    print(json.dumps(head))
    return 0


if __name__ == "__main__":
    sys.exit(main())
