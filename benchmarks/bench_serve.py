"""The two server backends side by side: time to ready, and server CPU per step.

The same env (examples/echo_env) served by ``--backend openenv`` (openenv 0.10's app) and
``--backend lean`` (envgen's starlette app), interleaved run by run on one machine:

- ready: wall time from spawning ``python -m examples.echo_env.server`` to the first
  ``GET /health`` that answers 200 (polled every 10 ms), median of ``--runs``;
- server CPU per step: the CPU time of the server process's threads (the nanoseconds of
  ``/proc/<pid>/task/*/schedstat``, not ``stat``'s 10 ms ticks) over ``--steps`` steps of
  the generated ``EchoEnv`` client on ``/ws``, divided by the steps.

A run spawns every server and keeps them all up, then steps them in turns (of
``TURN_STEPS`` steps, each after ``WARM_STEPS`` uncounted ones, the servers taking turns),
so a change in the machine's load falls on every server alike; the ratios to openenv are
the medians of each run's ratio.

Beside them: ``lean+thread``, the same env with its steps on a thread of their own (what lean
does for an env that does not set ``RUNS_ON_EVENT_LOOP``, and openenv's app for every env);
and the lean server's floors (``benchmarks/serve_floor.py``): the same uvicorn +
starlette stack answering each frame with a fixed reply, on the loop (``floor``) and after a
thread round trip per frame (``floor+hop``, the lean server's price for running an env's sync
methods off the loop). What lean costs above ``floor+hop`` is envgen's own code.

Targets (issue 24): lean ready <= 1.0 s; lean server CPU per step <= 0.4x openenv's.

    python -m benchmarks.bench_serve [--quick | --runs 5 --steps 2000] [--out results.json]

``--quick`` (about 15 s): one run of each backend, 300 steps.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/bench_serve.py`: import as `-m` does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import MachineState

REPO = Path(__file__).resolve().parent.parent
BACKENDS = ("openenv", "lean")
FLOORS = {"floor": [], "floor+hop": ["--hop"]}
"""The floors' names and their ``serve_floor`` flags."""
THREADED = "lean+thread"
"""echo_env on lean with its steps on a thread (``benchmarks/echo_threaded``), not the loop."""
SERVERS = (*BACKENDS, THREADED, *FLOORS)
TURN_STEPS = 200
"""A run's steps on each server go in turns of this many, the servers taking turns (all kept
up), so a change in the machine's load (other work on it) falls on every server alike."""
WARM_STEPS = 20
"""Steps at the start of each turn left out of the count: a server that sat idle through the
others' turns starts cold (its caches are the others'), which is not its steady price."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _healthy(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        conn.request("GET", "/health")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


def _spawn(server: str) -> tuple[subprocess.Popen[bytes], int, float]:
    """A server (a backend or a floor), once healthy, its port and the seconds it took."""
    port = _free_port()
    if server in FLOORS:
        command = [sys.executable, "-m", "benchmarks.serve_floor", *FLOORS[server]]
    elif server == THREADED:
        command = [sys.executable, "-m", "benchmarks.echo_threaded", "--backend", "lean"]
    else:
        command = [sys.executable, "-m", "examples.echo_env.server", "--backend", server]
    start = time.perf_counter()
    proc = subprocess.Popen([*command, "--port", str(port)], cwd=REPO)
    while not _healthy(port):
        if proc.poll() is not None or time.perf_counter() - start > 60:
            raise RuntimeError(f"the {server} server did not become ready")
        time.sleep(0.01)
    return proc, port, time.perf_counter() - start


def _cpu_ns(pid: int) -> int:
    """The CPU time the process's live threads have run, in ns (schedstat's first field)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except FileNotFoundError:  # the thread ended meanwhile
            continue
    return total


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(timeout=30)


def _turn_ns(pid: int, env: Any, action: Any, steps: int) -> int:
    """The server CPU (ns) that `steps` steps of `env` took (after `WARM_STEPS` more)."""
    for _ in range(WARM_STEPS):
        env.step(action)
    before = _cpu_ns(pid)
    for _ in range(steps):
        env.step(action)
    return _cpu_ns(pid) - before


def _turns(steps: int) -> list[int]:
    """`steps` cut into turns of `TURN_STEPS` (the last one shorter)."""
    whole, rest = divmod(steps, TURN_STEPS)
    return [TURN_STEPS] * whole + ([rest] if rest else [])


def _run_once(order: tuple[str, ...], steps: int) -> tuple[dict[str, float], dict[str, float]]:
    """Every server in `order` spawned (its ready time) and kept up, then `steps` steps each
    in turns of `TURN_STEPS`, taking turns: each server's server CPU per step (us)."""
    from generated.echo_env import EchoAction, EchoEnv

    action = EchoAction(message="hello")
    ready: dict[str, float] = {}
    clients: dict[str, tuple[int, Any]] = {}
    with contextlib.ExitStack() as stack:
        for server in order:
            proc, port, ready[server] = _spawn(server)
            stack.callback(_stop, proc)
            env = stack.enter_context(EchoEnv(f"http://127.0.0.1:{port}"))
            env.reset(seed=0)
            for _ in range(200):  # warm-up
                env.step(action)
            clients[server] = (proc.pid, env)
        spent = dict.fromkeys(order, 0)
        for index, count in enumerate(_turns(steps)):
            for server in order if index % 2 == 0 else order[::-1]:
                spent[server] += _turn_ns(*clients[server], action, count)
    return ready, {server: ns / steps / 1e3 for server, ns in spent.items()}


def run(runs: int, steps: int) -> dict[str, Any]:
    ready: dict[str, list[float]] = {b: [] for b in SERVERS}
    cpu: dict[str, list[float]] = {b: [] for b in SERVERS}
    for index in range(runs):
        seconds, us = _run_once(SERVERS if index % 2 == 0 else SERVERS[::-1], steps)
        for server in SERVERS:
            ready[server].append(seconds[server])
            cpu[server].append(us[server])
    medians = {
        b: {"ready_s": statistics.median(ready[b]), "server_cpu_us": statistics.median(cpu[b])}
        for b in SERVERS
    }
    ratios = {other: _ratios(cpu[other], cpu["openenv"]) for other in SERVERS[1:]}
    return {
        "runs": runs,
        "steps": steps,
        "load": os.getloadavg(),
        "ready_s": ready,
        "server_cpu_us_per_step": cpu,
        "median": medians,
        "ready_ratio_lean_over_openenv": medians["lean"]["ready_s"] / medians["openenv"]["ready_s"],
        "cpu_ratio_per_run_over_openenv": ratios,
        "cpu_ratio_lean_over_openenv": statistics.median(ratios["lean"]),
        "cpu_ratio_others_over_openenv": {
            other: statistics.median(ratios[other]) for other in (THREADED, *FLOORS)
        },
    }


def _ratios(mine: list[float], theirs: list[float]) -> list[float]:
    """Each run's ratio of `mine` to `theirs` (the same run's)."""
    return [a / b for a, b in zip(mine, theirs, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="one run each, 300 steps (~15 s)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    machine = MachineState()
    began = time.perf_counter()
    results = run(1, 300) if args.quick else run(args.runs, args.steps)
    results["quick"] = args.quick
    results["elapsed_s"] = round(time.perf_counter() - began, 1)
    results["machine"] = machine.record()
    text = json.dumps(results, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
