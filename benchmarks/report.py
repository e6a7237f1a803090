"""Rewrite benchmarks/RESULTS.md from the JSON each benchmark wrote (`make bench`).

python -m benchmarks.report [--results DIR] [--out FILE]
python benchmarks/report.py [--results DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/report.py`: import as `-m` does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import describe

HERE = Path(__file__).resolve().parent
PACKAGES = [
    "datamodel-code-generator",
    "ruff",
    "pydantic",
    "requests",
    "websockets",
    "openenv",
    "openenv-core",
    "uvicorn",
    "ray",
]


def _machine() -> list[str]:
    versions = []
    for dist in PACKAGES:
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            continue
    return [
        f"- Date: {dt.date.today().isoformat()}",
        f"- Machine: {os.cpu_count()} cores, {platform.machine()}, {platform.system()}",
        f"- Python: {sys.version.split()[0]}",
        f"- Packages: {', '.join(versions)}",
    ]


def _table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> list[str]:
    lines = ["| " + " | ".join(title for _, title in columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(str(row.get(key, "")) for key, _ in columns) + " |")
    return lines


def codegen_section(data: dict[str, Any]) -> list[str]:
    head = data["headline"]
    targets = head["targets"]
    rival = "changed_one_vs_datamodel" in head  # results from before the rival have none
    lines = [
        "## Code generation (`benchmarks/bench_codegen.py`)",
        "",
        "Wall time of each command in a fresh process; baseline = the `datamodel-codegen` "
        "command once per schema file"
        + (
            " (beyond 10 envs, timed on 10 envs' files and scaled: the envs are the same size)"
            if any("baseline_envs_timed" in row for row in data["rows"])
            else ""
        )
        + ".",
    ]
    if rival:
        lines.append(
            "One env changed = `envgen generate` after an edit to one env's observation "
            "schema (a cache miss), five edits; datamodel-code-generator's single call = a "
            "fresh interpreter importing `datamodel_code_generator` and calling "
            "`generate(...)` once on that env's bundled schema with the options envgen passes "
            "(pydantic v2 `BaseModel`, no formatters), timed after each edit beside envgen "
            "(the order alternating); ratio = the median of the per-edit ratios."
        )
    lines += describe(data.get("machine"))
    lines.append("")
    columns = [
        ("envs", "envs"),
        ("cold_generate_s", "cold generate (s)"),
        ("changed_one_s", "one env changed (s, median)"),
    ]
    if rival:
        columns += [
            ("datamodel_one_s", "datamodel-code-generator, one call (s, median)"),
            ("changed_one_vs_datamodel", "one env changed / one call (x)"),
        ]
    columns += [
        ("noop_check_s", "no-op check (s)"),
        ("full_check_s", "check --no-cache (s)"),
        ("baseline_s", "baseline (s)"),
        ("speedup", "speedup (x)"),
    ]
    lines += _table(data["rows"], columns)
    lines += ["", f"Targets at {head['largest_envs']} envs:", ""]
    if not rival:  # results from before the targets were ratios
        verdicts = [
            ("cold generate, 100 envs", head["cold_s"], f"<= {targets['cold_100_s']} s"),
            (
                "regenerate after one env changed",
                head["changed_one_s"],
                f"<= {targets['changed_one_s']} s",
            ),
            ("no-op check, 100 envs", head["noop_check_s"], f"<= {targets['noop_check_100_s']} s"),
            (
                "speedup vs datamodel-codegen loop",
                head["speedup_vs_baseline"],
                f">= {targets['speedup_100']}x",
            ),
        ]
        return lines + [f"- {name}: {value} (target {target})" for name, value, target in verdicts]
    met = head["met"]
    lines += [
        f"- one env regenerated: {head['changed_one_s']} s, {head['changed_one_vs_datamodel']}x "
        f"datamodel-code-generator's single call on its schema ({head['datamodel_one_s']} s) "
        f"(target <= {targets['changed_one_vs_datamodel_max']}x): "
        f"{_verdict(met['changed_one_vs_datamodel'])}",
        f"- cold generate: {head['speedup_vs_baseline']}x faster than the datamodel-codegen "
        f"loop (target >= {targets['speedup_100']}x): {_verdict(met['speedup'])}",
        f"- cold generate: {head['cold_s']} s (target <= {targets['cold_100_s']} s): "
        f"{_verdict(met['cold'])}",
        f"- no-op check: {head['noop_check_s']} s (target <= {targets['noop_check_100_s']} s): "
        f"{_verdict(met['noop_check'])}",
    ]
    return lines


def _verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def _concurrency_rounds(settings: dict[str, Any]) -> str:
    """How the concurrency rows were sampled (results from before had one run of each)."""
    rounds = settings.get("concurrency_rounds")
    if rounds is None:
        return "; one run of each"
    return f"; medians of {rounds} interleaved rounds (sync and async alternating)"


def step_section(data: dict[str, Any]) -> list[str]:
    head = data["headline"]
    targets = head["targets"]
    met = head["met"]
    settings = data["settings"]
    lines = [
        "## Stepping (`benchmarks/bench_step.py`)",
        "",
        "echo_env served by real OpenEnv servers (openenv 0.10 over WebSocket, openenv-core "
        "0.1.1 over stateful HTTP) on this machine. Clients: the generated `EchoEnv`; OpenEnv's "
        "own client (`GenericEnvClient` over WebSocket, openenv-core's `HTTPEnvClient` over HTTP, "
        "both returning dicts); the raw loop (keep-alive `http.client` POSTs; a `websockets` "
        "sync send/recv loop with default settings). Client CPU = `time.process_time()` of the "
        "client process (its threads included) per step; each figure is the median of "
        f"{settings['rounds']} interleaved rounds of {settings['steps_per_round']} steps.",
        *describe(data.get("machine")),
        "",
    ]
    lines += _table(
        data["transports"],
        [
            ("transport", "transport"),
            ("client", "client"),
            ("latency_median_us", "latency median (us)"),
            ("latency_p99_us", "latency p99 (us)"),
            ("cpu_per_step_us", "client CPU/step (us)"),
            ("cpu_vs_raw", "CPU vs raw"),
            ("cpu_vs_openenv", "CPU vs OpenEnv"),
        ],
    )
    lines += [
        "",
        "Fresh interpreters against an already-running server (median of the runs): import = "
        "the client's import statement; first observation = from the script's first line "
        "through import, connect and reset; process = the whole `python -c` as the parent saw "
        "it (interpreter start-up included).",
        "",
    ]
    lines += _table(
        data["fresh"]["rows"],
        [
            ("client", "client"),
            ("transport", "transport"),
            ("runs", "runs"),
            ("import_ms", "import (ms)"),
            ("first_observation_ms", "start to first observation (ms)"),
            ("process_wall_ms", "process (ms)"),
        ],
    )
    lines += ["", "Reference imports (fresh interpreter, median):", ""]
    references = list(data["fresh"]["reference_imports"])
    floor = data["fresh"].get("import_floor")
    if floor:
        references.append({**floor, "module": f"{floor['module']} (the import floor)"})
    lines += _table(references, [("module", "module"), ("import_ms", "import (ms)")])
    if floor:
        lines += [
            "",
            "The import floor: generated/echo_env/models.py's classes written by hand on "
            "pydantic (the same fields, constraints and config, built on first use), no envgen "
            f"runtime; timed in the same {floor['runs']} rounds as the generated client's "
            "imports (one floor run per round beside them), the same way.",
        ]
    lines += [
        "",
        "Concurrency: N generated clients stepping at once for "
        f"{settings['concurrency_seconds']} s (threads for `EchoEnv`, one event loop for "
        "`AsyncEchoEnv`), each against its own server process where `servers` = `clients`"
        + _concurrency_rounds(settings)
        + ".",
        "",
    ]
    lines += _table(
        data["concurrency"],
        [
            ("transport", "transport"),
            ("client", "client"),
            ("clients", "clients"),
            ("servers", "servers"),
            ("steps_per_s", "steps/s"),
            ("cpu_per_step_us", "client CPU/step (us)"),
        ],
    )
    if data.get("asyncio_floor"):
        lines += [
            "",
            "Asyncio floor (`benchmarks/asyncio_floor.py`): the same request written to a raw "
            "socket and its reply read back, with blocking `send`/`recv` and through an "
            "`asyncio.BufferedProtocol` (no client code in either), interleaved rounds on the "
            "same servers; the floor is what the event loop adds per round trip.",
            "",
        ]
        lines += _table(
            data["asyncio_floor"],
            [
                ("transport", "transport"),
                ("blocking_cpu_per_step_us", "raw blocking CPU/step (us)"),
                ("asyncio_cpu_per_step_us", "raw asyncio CPU/step (us)"),
                ("floor_us", "floor (us)"),
            ],
        )
    lines += ["", "Targets:", ""]
    for transport in ("http", "websocket"):
        lines.append(
            f"- {transport}: generated CPU/step {head[f'{transport}_cpu_vs_raw']}x the raw loop "
            f"(target <= {targets['cpu_vs_raw_max']}x): {_verdict(met[f'{transport}_cpu_vs_raw'])}"
        )
        lines.append(
            f"- {transport}: generated CPU/step {head[f'{transport}_cpu_vs_openenv']}x OpenEnv's "
            f"client (target <= {targets['cpu_vs_openenv_max']}x): "
            f"{_verdict(met[f'{transport}_cpu_vs_openenv'])}"
        )
        lines.append(
            f"- {transport}: start to first observation "
            f"{head[f'{transport}_first_observation_ms']} ms (target <= "
            f"{targets['first_observation_ms_max']} ms): "
            f"{_verdict(met[f'{transport}_first_observation'])}"
        )
        ratio = head.get(f"{transport}_first_observation_check_vs_off")
        if ratio is not None:  # results from before the drift check have none
            lines.append(
                f"- {transport}: start to first observation with the schema drift check "
                f"{ratio}x without it (`check_schema=False`); connect and reset take "
                f"{head[f'{transport}_schema_check_ms']} ms longer (one GET /schema per process "
                "and server, compared; none per step)"
            )
    lines += _import_targets(head, targets, met)
    if "import_vs_pydantic" in head:  # results from before this figure have none
        lines.append(
            f"- the same import over `from pydantic import BaseModel, TypeAdapter` in this run: "
            f"{head['import_vs_pydantic']}x (the machine's speed factored out)"
        )
    if "import_over_models_ms" in head:
        lines.append(
            "- the same import over pydantic defining echo_env-sized models, built on first "
            "use as generated ones are (the floor of any pydantic-typed client), in this run: "
            f"+{head['import_over_models_ms']} ms"
        )
    return lines + _async_targets(head, targets, met)


def _import_targets(
    head: dict[str, Any], targets: dict[str, Any], met: dict[str, bool]
) -> list[str]:
    """The generated client's import against its floor, or (results from before the floor was
    timed beside it) against the absolute target those had."""
    if "import_over_floor" in met:
        return [
            f"- import of a generated client: {head['import_ms']} ms, "
            f"+{head['import_over_floor_ms']} ms over its floor ({head['import_floor_ms']} ms: "
            "the same models by hand on pydantic; the median of the per-round differences) "
            f"(target generated - floor <= {targets['import_over_floor_ms_max']} ms): "
            f"{_verdict(met['import_over_floor'])}"
        ]
    return [
        f"- import of a generated client: {head['import_ms']} ms (target <= "
        f"{targets['import_ms_max']} ms): {_verdict(met['import'])}"
    ]


def _async_targets(
    head: dict[str, Any], targets: dict[str, Any], met: dict[str, bool]
) -> list[str]:
    """The asyncio client against the sync one (results from before these targets have none)."""
    lines = []
    for key in sorted(k for k in met if "_async_" in k):
        transport, _, rest = key.partition("_async_")
        if rest == "cpu_vs_sync":
            lines.append(
                f"- {transport}: async client CPU/step {head[key]}x the sync client's (target "
                f"<= {targets['async_cpu_vs_sync_max']}x): {_verdict(met[key])}"
            )
            if f"{key}_best" in head:  # results from before the floor was measured have none
                lines.append(
                    f"  - the asyncio floor in this run: a raw asyncio round trip costs "
                    f"+{head[f'{transport}_asyncio_floor_us']} us CPU over a raw blocking one, "
                    f"so an asyncio client adding nothing else to the sync client would be at "
                    f"{head[f'{key}_best']}x"
                )
        else:
            clients = rest.rsplit("_", 1)[-1]
            lines.append(
                f"- {transport}: {clients} async clients on one loop make {head[key]}x the "
                f"steps/s of {clients} sync clients on threads (target >= "
                f"{targets['async_throughput_vs_sync_min']}x): {_verdict(met[key])}"
            )
    return lines


def pool_section(data: dict[str, Any]) -> list[str]:
    head = data["headline"]
    settings = data["settings"]
    startup = data.get("startup")
    ceilings = "throughput_targets" in head  # results from before these have none
    servers = startup["servers"] if startup else 4
    lines = [
        "## Many envs (`benchmarks/bench_pool.py`)",
        "",
        f"echo_env sessions over {servers} WebSocket servers (`max_concurrent_envs=16`; openenv "
        "0.10's backend unless the row says lean, envgen's own) on this machine, all envs "
        f"stepped in lock-step rounds for {settings['seconds']} s: `pool` = one `EchoEnvPool` "
        "(`sessions_per_server=16`); `threads` = independent `EchoEnv` clients, one thread "
        "each; `openenv` = openenv's async `GenericEnvClient`, one per env, each round driven "
        "with `asyncio.gather`; `single` = one `EchoEnv` alone"
        + (
            "; `raw` = a `websockets` sync send/recv loop (no deflate, the generated client's "
            "wire) on one server, each backend's floor; `floor` = the pool's floor, the same "
            "lock-step rounds on raw sockets over the same servers, placed as the pool places "
            "its sessions (`benchmarks/lockstep_floor.py`: fixed frames, no websockets "
            "protocol, JSON or models). The lean servers of `pool` on lean are "
            "started by the pool itself (`provider_options={'command': [..., '--backend', "
            "'lean']}`)"
            if ceilings
            else ""
        )
        + ". Client CPU = `time.process_time()` of the client process per env-step; servers' "
        "CPU = the servers' user + system time (`/proc`) per env-step"
        + (
            "; ceiling = cores / (servers' CPU + client CPU per env-step), the env-steps/s "
            "this machine's cores could give the row if nothing else ran"
            if ceilings
            else ""
        )
        + f"; medians of {settings['rounds']} interleaved round(s).",
        *describe(data.get("machine")),
        "",
    ]
    columns = [
        ("variant", "variant"),
        ("envs", "envs"),
        ("servers", "servers"),
        ("steps_per_s", "env-steps/s"),
        ("cpu_per_step_us", "client CPU/env-step (us)"),
        ("server_cpu_per_step_us", "servers' CPU/env-step (us)"),
    ]
    if ceilings:
        columns[2:2] = [("backend", "backend")]
        columns.append(("ceiling_steps_per_s", "ceiling (env-steps/s)"))
    lines += _table(data["stepping"], columns)
    if startup:
        lines += [
            "",
            f"Starting {startup['servers']} servers at once: local processes "
            f"{startup['local_processes_s']} s; Ray actors {startup['ray_actors_s']} s (after "
            f"{startup['ray_init_s']} s to start a local Ray).",
            *_pool_start_lines(startup),
        ]
    return [*lines, "", "Targets:", "", *pool_targets(head)]


_THROUGHPUT_TARGETS = {
    "pool_vs_threads_64": "pool throughput at 64 envs: {ratio}x threaded clients",
    "pool_vs_openenv_64": "pool throughput at 64 envs: {ratio}x OpenEnv's client",
    "pool_lean_vs_openenv_64": (
        "pool on lean servers, throughput at 64 envs: {ratio}x OpenEnv's client on openenv servers"
    ),
}
_OLD_TARGET_KEYS = {
    "pool_vs_threads_64": "pool_vs_threads_at_64_min",
    "pool_vs_openenv_64": "pool_vs_openenv_at_64_min",
}


def pool_targets(head: dict[str, Any]) -> list[str]:
    """One line per target with its verdict; under each throughput target, what it needs
    and the pool's ceiling on this machine (results from before have no ceiling)."""
    targets, met = head["targets"], head["met"]
    lines = []
    for envs in (16, 64):
        key = f"pool_cpu_{envs}"
        if key not in met:
            continue
        ratio = head.get(f"pool_cpu_vs_single_{envs}")
        measured = f"{ratio}x, " if ratio is not None else ""
        lines.append(
            f"- pool CPU/env-step at {envs} envs: {measured}{head[f'pool_{envs}_cpu_per_step_us']}"
            f" us vs a single client's {head['single_cpu_per_step_us']} us (target <= "
            f"{targets['pool_cpu_vs_single_max']}x): {_verdict(met[key])}"
        )
        floor = head.get(f"floor_{envs}_cpu_per_step_us")
        if floor is not None:
            own = round(head[f"pool_{envs}_cpu_per_step_us"] - floor, 1)
            lines.append(
                f"  - the floor, raw lock-step rounds over as many sessions (`floor`: no "
                f"client code), costs {floor} us: the pool's own code is the other {own} us"
            )
    detail = head.get("throughput_targets", {})
    for key, text in _THROUGHPUT_TARGETS.items():
        if key not in met:
            continue
        verdict = detail.get(key)
        target = verdict["target"] if verdict else targets[_OLD_TARGET_KEYS[key]]
        lines.append(
            f"- {text.format(ratio=head[key])} (target >= {target}x): {_verdict(met[key])}"
        )
        if verdict and verdict.get("ceiling_steps_per_s") is not None:
            reach = "within" if verdict["reachable"] else "**beyond**"
            lines.append(
                f"  - the target needs {verdict['needed_steps_per_s']} env-steps/s; the pool's "
                f"ceiling here is {verdict['ceiling_steps_per_s']} (cores / its servers' + "
                f"client CPU per env-step): {reach} reach on this machine"
            )
    return lines


def verify_section(data: dict[str, Any]) -> list[str]:
    before = data.get("before")
    lines = [
        "## envgen verify over the example envs",
        "",
        f"`envgen verify ENV --local` with default settings; target: each within "
        f"{data['target_s']:.0f} s, server start included.",
    ]
    if before:
        lines.append(
            f"Wall time: median of {data['runs']} runs of this tree against {before['runs']} of "
            f"`{before['rev']}`, interleaved on the same cores."
        )
    lines += [
        "",
        "| env | wall time | before | ratio | episodes (at boundaries) | steps | negative cases "
        "| verdict | within target |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in data["rows"]:
        verdict = "conforms" if row["ok"] else ", ".join(sorted(set(row["violations"])))
        was = before["seconds"].get(row["env"]) if before else None
        then = f"{was:.1f} s | {row['seconds'] / was:.2f}" if was else "- | -"
        lines.append(
            f"| {row['env']} | {row['seconds']:.1f} s | {then} | {row['episodes']} "
            f"({row.get('boundaries', 0)}) | {row['steps']} | {row['negative_cases']} "
            f"| {verdict} | {_verdict(row['within_target'])} |"
        )
    if before:
        now = sum(row["seconds"] for row in data["rows"])
        was_total = sum(before["seconds"].values())
        lines += ["", f"All envs: {now:.1f} s against {was_total:.1f} s ({now / was_total:.2f})."]
    return lines


SERVE_ROWS = {
    "openenv": "openenv 0.10's app",
    "lean": "envgen's lean app (echo_env sets `RUNS_ON_EVENT_LOOP`: steps on the loop)",
    "lean+thread": "lean, the same env with its steps on a thread of their own",
    "floor+hop": "floor: uvicorn + starlette, a fixed reply after a thread round trip",
    "floor": "floor: uvicorn + starlette, a fixed reply on the loop",
}
"""bench_serve's servers, in the table's order, and what each row is."""


def serve_section(data: dict[str, Any]) -> list[str]:
    """The server backends (`benchmarks/bench_serve.py`) and the lean server's floors,
    interleaved in one run."""
    medians = data["median"]
    lean, openenv = medians["lean"], medians["openenv"]
    ready, cpu = data["ready_ratio_lean_over_openenv"], data["cpu_ratio_lean_over_openenv"]
    load = ", ".join(f"{value:.2f}" for value in data["load"])
    rows = [
        f"| {name} | {what} | {medians[name]['ready_s']:.2f} s | "
        f"{medians[name]['server_cpu_us']:.0f} us | "
        f"{medians[name]['server_cpu_us'] / openenv['server_cpu_us']:.2f}x |"
        for name, what in SERVE_ROWS.items()
        if name in medians
    ]
    lines = [
        "## Server backends (`benchmarks/bench_serve.py`)",
        "",
        f"echo_env served by `--backend openenv` and `--backend lean`, {data['runs']} "
        f"interleaved runs, {data['steps']} WebSocket steps each; medians."
        + ("" if data.get("machine") else f" Load average (1, 5, 15 min) at the start: {load}."),
        *describe(data.get("machine")),
        "",
        "| server | what | spawn to ready | server CPU per step | vs openenv |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "Targets:",
        "",
        f"- lean ready: {lean['ready_s']:.2f} s (target <= 1.0 s): "
        f"{_verdict(lean['ready_s'] <= 1.0)} ({ready:.2f}x openenv's)",
        f"- lean server CPU per step: {cpu:.3f}x openenv's (target <= 0.4x): "
        f"{_verdict(cpu <= 0.4)}",
    ]
    floor = medians.get("floor")
    if floor is not None:
        own = lean["server_cpu_us"] - floor["server_cpu_us"]
        share = floor["server_cpu_us"] / openenv["server_cpu_us"]
        lines.append(
            f"  - the floor (the ASGI stack alone, no env, no parsing) costs "
            f"{floor['server_cpu_us']:.0f} us, {share:.2f}x openenv's: envgen's session code "
            f"and the env's own step are the other {own:.0f} us"
        )
    threaded = medians.get("lean+thread")
    if threaded is not None:
        hop = threaded["server_cpu_us"] - lean["server_cpu_us"]
        lines.append(
            f"  - an env on a thread of its own (the default without `RUNS_ON_EVENT_LOOP`, and "
            f"what openenv's app does for every env) pays {hop:.0f} us more per step: "
            f"{threaded['server_cpu_us'] / openenv['server_cpu_us']:.3f}x openenv's"
        )
    return lines


def ab_section(data: dict[str, Any]) -> list[str]:
    """The last refactor A/B (`benchmarks/ab.py`): head / base medians, per headline figure."""
    load = data.get("load_average")
    lines = [
        "## Refactor A/B (`benchmarks/ab.py`)",
        "",
        f"The tree at `{data.get('head', 'HEAD')}` against `{data['base']}`, quick form of each "
        "benchmark, "
        f"{data['rounds']} alternating rounds per side; ratio = head / base (a cost: above 1 "
        "is slower).",
    ]
    if load:
        lines.append(f"1-minute load average {load[0]} at the start, {load[1]} at the end.")
    lines += ["", "| benchmark | figure | base | head | ratio |", "|---|---|---|---|---|"]
    for bench in ("step", "codegen"):
        for name, row in data.get(bench, {}).items():
            lines.append(f"| {bench} | {name} | {row['base']} | {row['head']} | {row['ratio']} |")
    return lines


def _pool_start_lines(startup: dict[str, Any]) -> list[str]:
    """The pool's own start (results from before it was measured have none)."""
    if "pool_start_ratio" not in startup:
        return []
    return [
        "",
        f"`EchoEnvPool({startup['pool_slots']})` until its first `reset()` is answered: "
        f"{startup['pool_one_per_server_s']} s with `sessions_per_server=1` "
        f"({startup['pool_one_per_server_servers']} servers), {startup['pool_default_s']} s by "
        f"default (packed by the server's published capacity: "
        f"{startup['pool_default_servers']} server): **{startup['pool_start_ratio']}x** faster.",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--results", type=Path, default=HERE / "results", help="folder of <benchmark>.json"
    )
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md", help="file to write")
    args = parser.parse_args(argv)
    sections: list[str] = ["# Benchmark results", "", "Written by `make bench`; do not edit.", ""]
    sections += _machine()
    renderers = (
        ("codegen", codegen_section),
        ("step", step_section),
        ("pool", pool_section),
        ("verify", verify_section),
        ("serve", serve_section),
        ("ab", ab_section),
    )
    for name, render in renderers:
        path = args.results / f"{name}.json"
        if path.is_file():
            sections += ["", *render(json.loads(path.read_text()))]
    args.out.write_text("\n".join(sections) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
