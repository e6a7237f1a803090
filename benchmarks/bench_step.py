# mypy: disable-error-code="import-untyped"
"""Stepping speed: the generated client against OpenEnv's client and a raw loop, same servers.

Real echo_env servers (examples/echo_env, served by the runtime's LocalProcessProvider as the
end-to-end tests do): an openenv 0.10 server for the WebSocket protocol and an openenv-core
0.1.1 server for the stateful HTTP protocol. In one run:

- per transport, the generated client (``EchoEnv``), OpenEnv's own client (openenv 0.10's
  ``GenericEnvClient`` over WebSocket; openenv-core 0.1.1's ``HTTPEnvClient`` over HTTP, parsing
  into dicts as GenericEnvClient does) and a raw loop (keep-alive ``http.client`` POSTs to
  ``/step``; a ``websockets`` sync send/recv loop on ``/ws``), interleaved in rounds on the
  same server: per-step wall latency (median, p99) and client CPU per step
  (``time.process_time`` delta / steps, background threads included);
- in fresh interpreters (median of several): the import time of each client and the time from
  the first line of a script to the first observation (import, connect, reset) against an
  already-running server;
- 1, 8 and 32 clients stepping at once (threads for ``EchoEnv``, one event loop for
  ``AsyncEchoEnv``), each against its own server: steps per second and client CPU per step;
- the asyncio floor (``asyncio_floor``): what a raw asyncio round trip costs over a raw
  blocking one on the same server, and so the best async/sync CPU ratio any asyncio client
  could reach against this sync client.

Targets: generated CPU/step <= 1.2x the raw loop of its transport and <= 0.5x OpenEnv's client;
importing a generated client <= 40 ms over its floor (the same models written by hand on
pydantic, no envgen runtime, timed in the same fresh-interpreter rounds); start to first
observation <= 400 ms.

    python -m benchmarks.bench_step [--quick] [--preflight] [--out results.json]
    python benchmarks/bench_step.py [--quick] [--preflight] [--out results.json]

``--quick`` (< 60 s) uses fewer steps and repeats, and runs 1 and 8 clients against the one
server of each transport; it ends with one JSON line of headline figures.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import http.client
import json
import os
import statistics
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

if __package__ in (None, ""):  # run as `python benchmarks/bench_step.py`: import as `-m` does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.asyncio_floor import best_async_ratio, measure
from benchmarks.machine import MachineState

REPO = Path(__file__).resolve().parent.parent
TRANSPORTS = ("http", "websocket")
MESSAGE = "hello, world"
TARGETS = {
    "cpu_vs_raw_max": 1.2,
    "cpu_vs_openenv_max": 0.5,
    "async_cpu_vs_sync_max": 1.2,
    "async_throughput_vs_sync_min": 1.0,
    "import_over_floor_ms_max": 40.0,
    "first_observation_ms_max": 400.0,
}


@dataclass(frozen=True)
class Settings:
    rounds: int
    steps_per_round: int
    warmup_steps: int
    fresh_repeats: int
    openenv_fresh_repeats: int
    concurrency: tuple[int, ...]
    concurrency_seconds: float
    concurrency_rounds: int
    server_per_client: bool


FULL = Settings(
    rounds=7,
    steps_per_round=400,
    warmup_steps=100,
    fresh_repeats=9,
    openenv_fresh_repeats=3,
    concurrency=(1, 8, 32),
    concurrency_seconds=2.0,
    concurrency_rounds=3,
    server_per_client=True,
)
QUICK = Settings(
    rounds=3,
    steps_per_round=200,
    warmup_steps=50,
    fresh_repeats=3,
    openenv_fresh_repeats=1,
    concurrency=(1, 8),
    concurrency_seconds=1.0,
    concurrency_rounds=2,
    server_per_client=False,
)


# --------------------------------------------------------------------------- servers


def _start_server(transport: str) -> Any:
    from envgen_runtime import LocalProcessProvider

    from generated.echo_env import EchoEnv

    spec = EchoEnv.SPEC
    provider = LocalProcessProvider(
        spec.server_command,
        health_path=spec.health_path,
        startup_timeout_s=180.0,  # 32 openenv servers starting at once on 2 cores
        cwd=REPO,
        transport=transport,
    )
    provider.start()
    return provider


@contextmanager
def serving(counts: dict[str, int]) -> Iterator[dict[str, list[str]]]:
    """``counts[transport]`` echo_env servers per transport; their base URLs; all stopped after."""
    jobs = [t for t, n in counts.items() for _ in range(n)]
    with ExitStack() as stack, ThreadPoolExecutor(max_workers=8) as pool:
        futures = [(t, pool.submit(_start_server, t)) for t in jobs]
        urls: dict[str, list[str]] = {t: [] for t in counts}
        errors = []
        for transport, future in futures:
            try:
                provider = future.result()
            except Exception as exc:  # stop the others, then report
                errors.append(f"{transport}: {exc}")
                continue
            stack.callback(provider.stop)
            urls[transport].append(provider.base_url)
        if errors:
            raise SystemExit("echo_env servers failed to start:\n" + "\n".join(errors))
        yield urls


# --------------------------------------------------------------------------- step loops


class Stepper:
    """One client variant: ``step()`` sends one action and waits for the observation."""

    name = ""

    def step(self) -> object:
        raise NotImplementedError

    def close(self) -> None:
        pass


class GeneratedStepper(Stepper):
    name = "generated"

    def __init__(self, url: str, transport: str) -> None:
        from generated.echo_env import EchoAction, EchoEnv

        self._action = EchoAction
        self._env = EchoEnv(url, transport=transport)  # type: ignore[arg-type]
        self._env.reset()

    def step(self) -> object:
        return self._env.step(self._action(message=MESSAGE))

    def close(self) -> None:
        self._env.close()


class OpenEnvWebSocketStepper(Stepper):
    name = "openenv"

    def __init__(self, url: str) -> None:
        from openenv.core.generic_client import GenericEnvClient

        self._env = GenericEnvClient(base_url=url).sync()
        self._env.connect()
        self._env.reset()

    def step(self) -> object:
        return self._env.step({"message": MESSAGE})

    def close(self) -> None:
        self._env.close()


def _import_openenv_core_0_1() -> None:
    """Make `openenv_core.*` resolve to openenv-core 0.1.1's own modules, not openenv 0.10's.

    openenv 0.10 overwrites `openenv_core/__init__.py` with a shim that re-exports
    `openenv.core`; a stub parent package makes Python find 0.1.1's modules on disk. Kept
    here (not borrowed from the example servers) so the benchmark depends only on the two
    installed distributions.
    """
    import importlib.util
    import types

    existing = sys.modules.get("openenv_core")
    if existing is not None:
        if not getattr(existing, "__envgen_stub__", False):
            raise RuntimeError("openenv_core was imported already (possibly openenv 0.10's shim)")
        return
    spec = importlib.util.find_spec("openenv_core")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("openenv-core is not installed")
    stub = types.ModuleType("openenv_core")
    stub.__path__ = list(spec.submodule_search_locations)
    stub.__envgen_stub__ = True  # type: ignore[attr-defined]
    sys.modules["openenv_core"] = stub


def _openenv_http_client_class() -> Any:
    """openenv-core 0.1.1's HTTPEnvClient, parsing replies into dicts (as GenericEnvClient)."""
    _import_openenv_core_0_1()  # openenv 0.10's shim would otherwise shadow 0.1.1's modules
    from openenv_core.client_types import StepResult
    from openenv_core.http_env_client import HTTPEnvClient

    class DictHttpClient(HTTPEnvClient[dict[str, Any], dict[str, Any]]):  # type: ignore[misc]
        def _step_payload(self, action: dict[str, Any]) -> dict[str, Any]:
            return action

        def _parse_result(self, payload: dict[str, Any]) -> Any:
            return StepResult(
                observation=payload["observation"],
                reward=payload.get("reward"),
                done=payload.get("done", False),
            )

        def _parse_state(self, payload: dict[str, Any]) -> Any:
            return payload

    return DictHttpClient


class OpenEnvHttpStepper(Stepper):
    name = "openenv"

    def __init__(self, url: str) -> None:
        self._env = _openenv_http_client_class()(base_url=url)
        self._env.reset()

    def step(self) -> object:
        return self._env.step({"message": MESSAGE})

    def close(self) -> None:
        self._env.close()


class RawHttpStepper(Stepper):
    """Keep-alive ``http.client`` POSTs of the stateful protocol's step envelope."""

    name = "raw"

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=15)
        self._post("/reset", {})

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        data = json.dumps(body)
        headers = {"Content-Type": "application/json"}
        try:
            self._conn.request("POST", path, data, headers)
        except (BrokenPipeError, ConnectionResetError):
            # uvicorn closes a connection idle for 5 s (rounds are interleaved): open a new
            # one, as any keep-alive client (the generated one included) does.
            self._conn.close()
            self._conn.request("POST", path, data, headers)
        response = self._conn.getresponse()
        reply = response.read()
        if response.status != 200:
            raise RuntimeError(f"{path}: HTTP {response.status}: {reply[:200]!r}")
        return json.loads(reply)

    def step(self) -> object:
        return self._post("/step", {"action": {"message": MESSAGE}})

    def close(self) -> None:
        self._conn.close()


class RequestsStepper(Stepper):
    """The same POSTs on a ``requests.Session``: what the sync HTTP transport used to be.

    A reference row, kept so the choice of ``http.client`` stays backed by numbers.
    """

    name = "raw requests (reference)"

    def __init__(self, url: str) -> None:
        import requests

        self._session = requests.Session()
        self._session.trust_env = False  # loopback: no proxy lookups, as the transport does
        self._url = url
        self._post("/reset", {})

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        response = self._session.post(self._url + path, json=body, timeout=15)
        response.raise_for_status()
        return response.json()

    def step(self) -> object:
        return self._post("/step", {"action": {"message": MESSAGE}})

    def close(self) -> None:
        self._session.close()


class Urllib3Stepper(Stepper):
    """The same POSTs on a ``urllib3.HTTPConnectionPool``: the other alternative measured."""

    name = "raw urllib3 (reference)"

    def __init__(self, url: str) -> None:
        import urllib3

        parts = urlsplit(url)
        self._pool = urllib3.HTTPConnectionPool(parts.hostname or "", parts.port, maxsize=1)
        self._post("/reset", {})

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        response = self._pool.request(
            "POST",
            path,
            body=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            timeout=15.0,
        )
        if response.status != 200:
            raise RuntimeError(f"{path}: HTTP {response.status}: {response.data[:200]!r}")
        return json.loads(response.data)

    def step(self) -> object:
        return self._post("/step", {"action": {"message": MESSAGE}})

    def close(self) -> None:
        self._pool.close()


class RawWebSocketStepper(Stepper):
    """A ``websockets`` sync send/recv loop with OpenEnv's message shapes.

    With the library's defaults (permessage-deflate on) this is the raw loop the targets
    compare against; ``deflate=False`` is a reference row (the generated client turns
    compression off on loopback links).
    """

    name = "raw"

    def __init__(self, url: str, *, deflate: bool = True) -> None:
        from websockets.sync.client import connect

        if not deflate:
            self.name = "raw, no deflate"
        self._conn = connect(
            "ws" + url.removeprefix("http") + "/ws",
            compression="deflate" if deflate else None,
            proxy=None,
            legacy=True,
        )
        self._exchange({"type": "reset", "data": {}})

    def _exchange(self, message: dict[str, Any]) -> Any:
        self._conn.send(json.dumps(message))
        reply = json.loads(self._conn.recv(timeout=15))
        if reply.get("type") != "observation":
            raise RuntimeError(f"unexpected reply {reply!r}")
        return reply["data"]

    def step(self) -> object:
        return self._exchange({"type": "step", "data": {"message": MESSAGE}})

    def close(self) -> None:
        self._conn.send('{"type":"close"}')
        self._conn.close()


def _steppers(transport: str, url: str) -> list[Stepper]:
    if transport == "http":
        return [
            GeneratedStepper(url, "http"),
            OpenEnvHttpStepper(url),
            RawHttpStepper(url),
            RequestsStepper(url),
            Urllib3Stepper(url),
        ]
    return [
        GeneratedStepper(url, "websocket"),
        OpenEnvWebSocketStepper(url),
        RawWebSocketStepper(url),
        RawWebSocketStepper(url, deflate=False),
    ]


def _run_steps(stepper: Stepper, steps: int) -> tuple[list[int], float]:
    """Per-step wall latencies (ns) and the CPU seconds the whole process used meanwhile."""
    latencies = []
    clock = time.perf_counter_ns
    step = stepper.step
    cpu = time.process_time()
    for _ in range(steps):
        started = clock()
        step()
        latencies.append(clock() - started)
    return latencies, time.process_time() - cpu


def _percentile(values: list[int], fraction: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(fraction * len(ordered)))])


def measure_transport(transport: str, url: str, settings: Settings) -> list[dict[str, Any]]:
    """Every client variant on one server, interleaved round by round."""
    steppers = _steppers(transport, url)
    latencies: dict[str, list[int]] = {s.name: [] for s in steppers}
    cpu_per_step: dict[str, list[float]] = {s.name: [] for s in steppers}
    try:
        for stepper in steppers:
            _run_steps(stepper, settings.warmup_steps)
        for round_no in range(settings.rounds):
            # Rotate the order so no variant always runs right after the same neighbour.
            shift = round_no % len(steppers)
            order = steppers[shift:] + steppers[:shift]
            for stepper in order:
                lat, cpu = _run_steps(stepper, settings.steps_per_round)
                latencies[stepper.name] += lat
                cpu_per_step[stepper.name].append(cpu / settings.steps_per_round)
    finally:
        for stepper in steppers:
            stepper.close()
    rows: list[dict[str, Any]] = []
    for stepper in steppers:
        lat = latencies[stepper.name]
        rows.append(
            {
                "transport": transport,
                "client": stepper.name,
                "steps": len(lat),
                "latency_median_us": round(statistics.median(lat) / 1000, 1),
                "latency_p99_us": round(_percentile(lat, 0.99) / 1000, 1),
                "cpu_per_step_us": round(statistics.median(cpu_per_step[stepper.name]) * 1e6, 1),
            }
        )
    by_name = {row["client"]: row for row in rows}
    for row in rows:
        row["cpu_vs_raw"] = round(row["cpu_per_step_us"] / by_name["raw"]["cpu_per_step_us"], 2)
        row["cpu_vs_openenv"] = round(
            row["cpu_per_step_us"] / by_name["openenv"]["cpu_per_step_us"], 2
        )
    return rows


# --------------------------------------------------------------------------- fresh processes

_CLOCK = "import time\n_t0 = time.perf_counter()\n"
_REPORT = (
    "_t2 = time.perf_counter()\n"
    "print(__import__('json').dumps({'import_ms': (_t1 - _t0) * 1e3, "
    "'first_observation_ms': (_t2 - _t0) * 1e3}))\n"
)
_OPENENV_CORE = textwrap.dedent(
    """
    import importlib.util, sys, types
    from pathlib import Path
    _spec = importlib.util.find_spec('openenv_core')
    _root = Path(next(iter(_spec.submodule_search_locations)))
    for _name, _dir in (('openenv_core', _root), ('openenv_core.env_server', _root / 'env_server')):
        _stub = types.ModuleType(_name); _stub.__path__ = [str(_dir)]; sys.modules[_name] = _stub
    """
)
UNCHECKED = "generated, check_schema=False"
FRESH_SCRIPTS: dict[tuple[str, str], str] = {
    ("generated", "http"): (
        "from generated.echo_env import EchoEnv\n_t1 = time.perf_counter()\n"
        "env = EchoEnv(URL, transport='http')\nenv.reset()\n"
    ),
    ("generated", "websocket"): (
        "from generated.echo_env import EchoEnv\n_t1 = time.perf_counter()\n"
        "env = EchoEnv(URL, transport='websocket')\nenv.reset()\n"
    ),
    # The drift check at connect costs the first reset one GET /schema: the same scripts
    # without it, for the ratio in the headline.
    (UNCHECKED, "http"): (
        "from generated.echo_env import EchoEnv\n_t1 = time.perf_counter()\n"
        "env = EchoEnv(URL, transport='http', check_schema=False)\nenv.reset()\n"
    ),
    (UNCHECKED, "websocket"): (
        "from generated.echo_env import EchoEnv\n_t1 = time.perf_counter()\n"
        "env = EchoEnv(URL, transport='websocket', check_schema=False)\nenv.reset()\n"
    ),
    ("openenv", "http"): (
        _OPENENV_CORE
        + "from openenv_core.http_env_client import HTTPEnvClient\n_t1 = time.perf_counter()\n"
        "class C(HTTPEnvClient):\n"
        "    def _step_payload(self, a): return a\n"
        "    def _parse_result(self, p): return p\n"
        "    def _parse_state(self, p): return p\n"
        "env = C(base_url=URL)\nenv.reset()\n"
    ),
    ("openenv", "websocket"): (
        "from openenv.core.generic_client import GenericEnvClient\n_t1 = time.perf_counter()\n"
        "env = GenericEnvClient(base_url=URL).sync()\nenv.connect()\nenv.reset()\n"
    ),
}
PYDANTIC_REF = "pydantic (BaseModel, TypeAdapter)"
FLOOR_NAME = "echo_env's models by hand on pydantic"
IMPORT_FLOOR = textwrap.dedent(
    """\
    from typing import Annotated, Any
    from pydantic import BaseModel, ConfigDict, Field
    class Base(BaseModel):
        model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)
    class EchoAction(Base):
        model_config = ConfigDict(extra="forbid")
        message: str
        metadata: dict[str, Any] | None = None
    class EchoObservation(Base):
        echoed_message: str
        message_length: Annotated[int, Field(ge=0)]
        metadata: dict[str, Any] | None = None
    class EchoState(Base):
        episode_id: str | None = None
        step_count: Annotated[int | None, Field(ge=0)] = None
    """
)
"""The import floor of any pydantic-typed echo_env client: generated/echo_env/models.py's
classes written by hand (the same fields, constraints and config as ``EnvModel``'s, built on
first use as generated ones are), with no envgen runtime. Importing BaseModel alone is lazy;
defining a first model loads most of pydantic."""
REFERENCE_IMPORTS = {
    PYDANTIC_REF: "from pydantic import BaseModel, TypeAdapter",
    "requests": "import requests",
    "websockets.sync.client": "import websockets.sync.client",
    "envgen_runtime": "import envgen_runtime",
}


def _fresh_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("PYTHONPATH", None)
    return env


def _fresh(code: str) -> tuple[dict[str, float], float]:
    """Run ``code`` in a new interpreter (cwd = repo); its JSON line and the process's wall."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=_fresh_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"fresh interpreter failed:\n{code}\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1]), wall


def measure_fresh(urls: dict[str, str], settings: Settings) -> dict[str, Any]:
    """Import and start-to-first-observation times, each the median of fresh interpreters."""
    for transport in TRANSPORTS:  # write bytecode caches; never measured
        _fresh(
            f"URL = {urls[transport]!r}\n"
            + _CLOCK
            + FRESH_SCRIPTS[("generated", transport)]
            + _REPORT
        )
    rows = []
    runs: dict[tuple[str, str], list[tuple[dict[str, float], float]]] = {
        key: [] for key in FRESH_SCRIPTS
    }
    floor_code = _CLOCK + IMPORT_FLOOR + "_t1 = time.perf_counter()\n" + _REPORT
    pairs: list[dict[str, float]] = []
    for round_index in range(settings.fresh_repeats):  # interleaved: the machine's drift
        floor_ms = _fresh(floor_code)[0]["import_ms"]  # spreads over every row
        generated_ms = []
        for (client, transport), script in FRESH_SCRIPTS.items():
            if not client.startswith("generated") and (
                round_index >= settings.openenv_fresh_repeats
            ):
                continue
            code = f"URL = {urls[transport]!r}\n" + _CLOCK + script + _REPORT
            runs[(client, transport)].append(_fresh(code))
            if client.startswith("generated"):
                generated_ms.append(runs[(client, transport)][-1][0]["import_ms"])
        pairs.append(
            {
                "generated_ms": round(statistics.median(generated_ms), 1),
                "floor_ms": round(floor_ms, 1),
            }
        )
    for (client, transport), done in runs.items():
        repeats = len(done)
        imports = [figures["import_ms"] for figures, _ in done]
        firsts = [figures["first_observation_ms"] for figures, _ in done]
        walls = [wall * 1e3 for _, wall in done]
        rows.append(
            {
                "client": client,
                "transport": transport,
                "runs": repeats,
                "import_ms": round(statistics.median(imports), 1),
                "first_observation_ms": round(statistics.median(firsts), 1),
                "process_wall_ms": round(statistics.median(walls), 1),
            }
        )
    references = []
    for name, statement in REFERENCE_IMPORTS.items():
        times = [
            _fresh(_CLOCK + statement + "\n_t1 = time.perf_counter()\n" + _REPORT)[0]["import_ms"]
            for _ in range(settings.fresh_repeats)
        ]
        references.append({"module": name, "import_ms": round(statistics.median(times), 1)})
    floor = {
        "module": FLOOR_NAME,
        "runs": len(pairs),
        "import_ms": round(statistics.median(p["floor_ms"] for p in pairs), 1),
        "rounds": pairs,
    }
    return {"rows": rows, "reference_imports": references, "import_floor": floor}


def import_over_floor(floor: dict[str, Any]) -> float:
    """The generated import's cost over its floor: per fresh-interpreter round, the median of
    the generated clients' imports minus the floor's in the same round; the median of those."""
    differences = [float(p["generated_ms"]) - float(p["floor_ms"]) for p in floor["rounds"]]
    return round(statistics.median(differences), 1)


# --------------------------------------------------------------------------- concurrency


def _sync_run(
    urls: list[str], transport: str, clients: int, seconds: float
) -> tuple[int, float, float]:
    from generated.echo_env import EchoAction, EchoEnv

    envs = [EchoEnv(urls[i % len(urls)], transport=transport) for i in range(clients)]  # type: ignore[arg-type]
    # Warm up one client after another, as _async_run does: with --quick, HTTP clients share
    # one stateful server, and a reset by one client between another's reset and its first
    # (checked) step looks to that client like a server that keeps no environment.
    for env in envs:
        env.reset()
        for _ in range(10):
            env.step(EchoAction(message=MESSAGE))
    counts = [0] * clients
    start = threading.Barrier(clients + 1)
    stop = threading.Event()

    def work(index: int) -> None:
        env = envs[index]
        start.wait()
        done = 0
        while not stop.is_set():
            env.step(EchoAction(message=MESSAGE))
            done += 1
        counts[index] = done

    threads = [threading.Thread(target=work, args=(i,)) for i in range(clients)]
    try:
        for thread in threads:
            thread.start()
        start.wait()
        cpu, wall = time.process_time(), time.perf_counter()
        time.sleep(seconds)
        stop.set()
        for thread in threads:
            thread.join()
        return sum(counts), time.perf_counter() - wall, time.process_time() - cpu
    finally:
        stop.set()
        for env in envs:
            env.close()


async def _async_run(
    urls: list[str], transport: str, clients: int, seconds: float
) -> tuple[int, float, float]:
    from generated.echo_env import AsyncEchoEnv, EchoAction

    envs = [AsyncEchoEnv(urls[i % len(urls)], transport=transport) for i in range(clients)]  # type: ignore[arg-type]
    try:
        for env in envs:
            await env.reset()
            for _ in range(10):
                await env.step(EchoAction(message=MESSAGE))
        deadline = time.perf_counter() + seconds
        cpu, wall = time.process_time(), time.perf_counter()

        async def work(env: Any) -> int:
            done = 0
            while time.perf_counter() < deadline:
                await env.step(EchoAction(message=MESSAGE))
                done += 1
            return done

        counts = await asyncio.gather(*(work(env) for env in envs))
        return sum(counts), time.perf_counter() - wall, time.process_time() - cpu
    finally:
        for env in envs:
            await env.close()


def _concurrency_run(
    kind: str, urls: list[str], transport: str, clients: int, seconds: float
) -> tuple[float, float]:
    """One run of `clients` clients of `kind`: steps/s and client CPU per step (us)."""
    if kind == "sync threads":
        steps, wall, cpu = _sync_run(urls, transport, clients, seconds)
    else:
        steps, wall, cpu = asyncio.run(_async_run(urls, transport, clients, seconds))
    return steps / wall, cpu / max(steps, 1) * 1e6


def measure_concurrency(urls: dict[str, list[str]], settings: Settings) -> list[dict[str, Any]]:
    """Sync threads against one async loop, in interleaved rounds (the order alternating):
    this machine's speed drifts by tens of percent within minutes, so one run of each kind
    compares two different machines; each row is the median of its rounds."""
    rows = []
    kinds = ("sync threads", "async loop")
    for transport in TRANSPORTS:
        for clients in settings.concurrency:
            servers = urls[transport][:clients]
            runs: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
            for round_no in range(settings.concurrency_rounds):
                for kind in kinds if round_no % 2 == 0 else kinds[::-1]:
                    runs[kind].append(
                        _concurrency_run(
                            kind, servers, transport, clients, settings.concurrency_seconds
                        )
                    )
            for kind in kinds:
                rows.append(
                    {
                        "transport": transport,
                        "client": kind,
                        "clients": clients,
                        "servers": len(servers),
                        "rounds": len(runs[kind]),
                        "steps_per_s": round(statistics.median(r[0] for r in runs[kind]), 1),
                        "cpu_per_step_us": round(statistics.median(r[1] for r in runs[kind]), 1),
                    }
                )
                print(
                    f"  {transport:>9} {kind:>12} {clients:>3} clients on {len(servers):>2} "
                    f"servers: {rows[-1]['steps_per_s']:>8.1f} steps/s, "
                    f"{rows[-1]['cpu_per_step_us']:>7.1f} us CPU/step "
                    f"(median of {len(runs[kind])})",
                    flush=True,
                )
    return rows


# --------------------------------------------------------------------------- verdicts


def async_vs_sync(concurrency: list[dict[str, Any]]) -> dict[str, float]:
    """The asyncio client against the sync one, per transport, from the concurrency rows.

    ``<transport>_async_cpu_vs_sync``: CPU per step of one async client over one sync client;
    ``<transport>_async_throughput_vs_sync_<n>``: steps/s of n async clients on one event
    loop over n sync clients on n threads (n > 1).
    """
    rows = {(r["transport"], r["client"], r["clients"]): r for r in concurrency}
    out: dict[str, float] = {}
    for transport, kind, clients in rows:
        if kind != "async loop" or (transport, "sync threads", clients) not in rows:
            continue
        mine, theirs = rows[transport, kind, clients], rows[transport, "sync threads", clients]
        if clients == 1:
            ratio = mine["cpu_per_step_us"] / max(theirs["cpu_per_step_us"], 1e-9)
            out[f"{transport}_async_cpu_vs_sync"] = round(ratio, 2)
        else:
            ratio = mine["steps_per_s"] / max(theirs["steps_per_s"], 1e-9)
            out[f"{transport}_async_throughput_vs_sync_{clients}"] = round(ratio, 2)
    return out


def measure_floors(urls: dict[str, str], settings: Settings) -> list[dict[str, Any]]:
    """The asyncio floor per transport, on the first server of each."""
    steps = settings.steps_per_round * 5  # raw round trips are cheap: more of them per round
    return [measure(urls[t], t, MESSAGE, settings.rounds, steps) for t in TRANSPORTS]


def headline(
    transports: list[dict[str, Any]],
    fresh: dict[str, Any],
    concurrency: list[dict[str, Any]],
    floors: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    gen = {r["transport"]: r for r in transports if r["client"] == "generated"}
    gen_fresh = [r for r in fresh["rows"] if r["client"] == "generated"]
    import_ms = round(statistics.median(r["import_ms"] for r in gen_fresh), 1)
    first = {r["transport"]: r["first_observation_ms"] for r in gen_fresh}
    openenv_import = {
        r["transport"]: r["import_ms"] for r in fresh["rows"] if r["client"] == "openenv"
    }
    out: dict[str, Any] = {"benchmark": "step"}
    met: dict[str, bool] = {}
    for transport in TRANSPORTS:
        row = gen[transport]
        out[f"{transport}_cpu_per_step_us"] = row["cpu_per_step_us"]
        out[f"{transport}_latency_median_us"] = row["latency_median_us"]
        out[f"{transport}_cpu_vs_raw"] = row["cpu_vs_raw"]
        out[f"{transport}_cpu_vs_openenv"] = row["cpu_vs_openenv"]
        out[f"{transport}_first_observation_ms"] = first[transport]
        met[f"{transport}_cpu_vs_raw"] = row["cpu_vs_raw"] <= TARGETS["cpu_vs_raw_max"]
        met[f"{transport}_cpu_vs_openenv"] = row["cpu_vs_openenv"] <= TARGETS["cpu_vs_openenv_max"]
        met[f"{transport}_first_observation"] = (
            first[transport] <= TARGETS["first_observation_ms_max"]
        )
    for key, value in async_vs_sync(concurrency).items():
        out[key] = value
        if key.endswith("_cpu_vs_sync"):
            met[key] = value <= TARGETS["async_cpu_vs_sync_max"]
        else:
            met[key] = value >= TARGETS["async_throughput_vs_sync_min"]
    sync_cpu = {
        r["transport"]: r["cpu_per_step_us"]
        for r in concurrency
        if r["client"] == "sync threads" and r["clients"] == 1
    }
    for row in floors:
        out[f"{row['transport']}_asyncio_floor_us"] = row["floor_us"]
        if row["transport"] in sync_cpu:  # the lowest async/sync CPU ratio reachable here
            out[f"{row['transport']}_async_cpu_vs_sync_best"] = best_async_ratio(
                sync_cpu[row["transport"]], row["floor_us"]
            )
    unchecked = {r["transport"]: r for r in fresh["rows"] if r["client"] == UNCHECKED}
    checked = {r["transport"]: r for r in gen_fresh}
    for transport, row in unchecked.items():  # the drift check's cost: one GET /schema
        out[f"{transport}_first_observation_check_vs_off"] = round(
            first[transport] / max(row["first_observation_ms"], 1e-9), 2
        )
        on, off = checked[transport], row  # connect + reset alone, the import left out
        out[f"{transport}_schema_check_ms"] = round(
            (on["first_observation_ms"] - on["import_ms"])
            - (off["first_observation_ms"] - off["import_ms"]),
            1,
        )
    out["import_ms"] = import_ms
    pydantic = [r["import_ms"] for r in fresh["reference_imports"] if r["module"] == PYDANTIC_REF]
    if pydantic:  # the machine's speed, factored out: pydantic's own import, same run
        out["import_vs_pydantic"] = round(import_ms / max(pydantic[0], 1e-9), 2)
    if "import_floor" in fresh:  # what envgen adds to the models any pydantic client defines
        out["import_floor_ms"] = fresh["import_floor"]["import_ms"]
        out["import_over_floor_ms"] = import_over_floor(fresh["import_floor"])
        met["import_over_floor"] = (
            out["import_over_floor_ms"] <= TARGETS["import_over_floor_ms_max"]
        )
    out["openenv_import_ms"] = openenv_import
    best = max(concurrency, key=lambda r: r["steps_per_s"]) if concurrency else None
    if best is not None:
        out["max_steps_per_s"] = best["steps_per_s"]
        out["max_steps_per_s_at"] = f"{best['clients']} {best['client']} {best['transport']}"
    out["targets"] = TARGETS
    out["met"] = met
    out["all_met"] = all(met.values())
    return out


def preflight() -> int:
    """Import what a run needs, so a broken setup shows in a second rather than mid-run."""
    from openenv.core.generic_client import GenericEnvClient  # noqa: F401

    from generated.echo_env import EchoEnv

    _openenv_http_client_class()

    print(f"ok: {EchoEnv.__module__}, server {' '.join(EchoEnv.SPEC.server_command)}")
    return 0


def fresh_only(settings: Settings, out: Path | None) -> int:
    """The fresh-interpreter figures alone, merged into an earlier full run's results."""
    with serving(dict.fromkeys(TRANSPORTS, 1)) as urls:
        fresh = measure_fresh({t: urls[t][0] for t in TRANSPORTS}, settings)
    for row in fresh["rows"]:
        print(
            f"  fresh {row['client']:>29} {row['transport']:>9}: import {row['import_ms']:>7.1f}"
            f" ms, first observation {row['first_observation_ms']:>7.1f} ms",
            flush=True,
        )
    if out is not None and out.is_file():
        document = json.loads(out.read_text())
        document["fresh"] = fresh
        earlier = document["headline"]
        head = headline(
            document["transports"], fresh, document["concurrency"], document["asyncio_floor"]
        )
        head.update(quick=earlier.get("quick", False), elapsed_s=earlier.get("elapsed_s"))
        document["headline"] = head
        out.write_text(json.dumps(document, indent=2) + "\n")
        print(json.dumps(head))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and clients (< 60 s)")
    parser.add_argument("--out", type=Path, help="also write the results as JSON here")
    parser.add_argument(
        "--preflight",
        action="store_true",
        help="only check that the generated client and the example server import, then exit",
    )
    parser.add_argument(
        "--fresh-only",
        action="store_true",
        help="only the fresh-interpreter figures (one server per transport); with --out, "
        "replace the fresh section of that earlier run's JSON and recompute its headline",
    )
    args = parser.parse_args(argv)
    if args.preflight:
        return preflight()
    if args.fresh_only:
        return fresh_only(QUICK if args.quick else FULL, args.out)
    settings = QUICK if args.quick else FULL
    machine = MachineState()
    began = time.perf_counter()
    servers_each = max(settings.concurrency) if settings.server_per_client else 1
    print(f"starting {servers_each} echo_env server(s) per transport ...", flush=True)
    with serving({t: servers_each for t in TRANSPORTS}) as urls:
        print(f"servers up after {time.perf_counter() - began:.1f} s", flush=True)
        transports = []
        for transport in TRANSPORTS:
            for row in measure_transport(transport, urls[transport][0], settings):
                transports.append(row)
                print(
                    f"  {transport:>9} {row['client']:>9}: median {row['latency_median_us']:>7.1f} "
                    f"us, p99 {row['latency_p99_us']:>7.1f} us, CPU {row['cpu_per_step_us']:>6.1f} "
                    f"us/step ({row['cpu_vs_raw']:.2f}x raw, {row['cpu_vs_openenv']:.2f}x openenv)",
                    flush=True,
                )
        fresh = measure_fresh({t: urls[t][0] for t in TRANSPORTS}, settings)
        for row in fresh["rows"]:
            print(
                f"  fresh {row['client']:>9} {row['transport']:>9}: import {row['import_ms']:>7.1f}"
                f" ms, first observation {row['first_observation_ms']:>7.1f} ms "
                f"(process {row['process_wall_ms']:.0f} ms)",
                flush=True,
            )
        for ref in [*fresh["reference_imports"], fresh["import_floor"]]:
            print(f"  import {ref['module']}: {ref['import_ms']} ms", flush=True)
        concurrency = measure_concurrency(urls, settings)
        floors = measure_floors({t: urls[t][0] for t in TRANSPORTS}, settings)
        for floor in floors:
            print(
                f"  {floor['transport']:>9} asyncio floor: raw blocking "
                f"{floor['blocking_cpu_per_step_us']:>6.1f} us CPU/step, raw asyncio "
                f"{floor['asyncio_cpu_per_step_us']:>6.1f}: +{floor['floor_us']} us per round trip",
                flush=True,
            )
    head = headline(transports, fresh, concurrency, floors)
    head["quick"] = args.quick
    head["elapsed_s"] = round(time.perf_counter() - began, 1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "settings": dataclasses.asdict(settings),
            "transports": transports,
            "fresh": fresh,
            "concurrency": concurrency,
            "asyncio_floor": floors,
            "headline": head,
            "machine": machine.record(),
        }
        args.out.write_text(json.dumps(document, indent=2) + "\n")
    print(json.dumps(head))
    return 0


if __name__ == "__main__":
    sys.exit(main())
