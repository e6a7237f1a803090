"""bench_pool starts either way (`-m` and as a script); its targets, ratios to rivals measured in
the same run with the machine's ceiling beside them; report.py renders its results."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bench_pool import ceiling_steps_per_s, headline
from benchmarks.report import pool_section, pool_targets
from tests.helpers import REPO


@pytest.mark.parametrize("how", ["module", "script"])
def test_bench_pool_starts_either_way(how: str, tmp_path: Path) -> None:
    target = (
        ["-m", "benchmarks.bench_pool"]
        if how == "module"
        else [str(REPO / "benchmarks/bench_pool.py")]
    )
    proc = subprocess.run(
        [sys.executable, *target, "--help"],
        cwd=REPO if how == "module" else tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "--quick" in proc.stdout


def test_report_renders_the_recorded_pool_run(tmp_path: Path) -> None:
    recorded = REPO / "benchmarks/results/pool.json"
    data = json.loads(recorded.read_text())
    results = tmp_path / "results"
    results.mkdir()
    (results / "pool.json").write_text(json.dumps(data))
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.report", "--results", str(results), "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "## Many envs (`benchmarks/bench_pool.py`)" in text
    for row in data["stepping"]:
        assert f"| {row['variant']} | {row['envs']} |" in text
    verdicts = [line for line in text.splitlines() if line.startswith("- pool ")]
    assert len(verdicts) == len(data["headline"]["met"])
    for line, ok in zip(verdicts, data["headline"]["met"].values(), strict=True):
        assert line.endswith(": met" if ok else ": **missed**"), line


def _row(variant: str, envs: int, backend: str, rate: float, cpu: float, server: float) -> Any:
    return {
        "variant": variant,
        "envs": envs,
        "backend": backend,
        "servers": 1 if envs == 1 else 4,
        "steps_per_s": rate,
        "cpu_per_step_us": cpu,
        "server_cpu_per_step_us": server,
        "ceiling_steps_per_s": ceiling_steps_per_s(2, server, cpu),
    }


ROWS = [
    _row("single", 1, "openenv", 3000.0, 120.0, 200.0),
    _row("raw", 1, "openenv", 5000.0, 60.0, 125.0),
    _row("raw", 1, "lean", 7000.0, 55.0, 70.0),
    _row("pool", 16, "openenv", 5800.0, 78.0, 150.0),
    _row("threads", 16, "openenv", 3900.0, 140.0, 300.0),
    _row("openenv", 16, "openenv", 3700.0, 95.0, 270.0),
    _row("pool", 64, "openenv", 6000.0, 60.0, 190.0),
    _row("threads", 64, "openenv", 2900.0, 135.0, 240.0),
    _row("openenv", 64, "openenv", 4000.0, 100.0, 300.0),
    _row("pool", 64, "lean", 11000.0, 60.0, 40.0),
]


def test_the_ceiling_is_cores_over_the_cpu_each_env_step_costs() -> None:
    assert ceiling_steps_per_s(2, 150.0, 50.0) == 10000.0
    assert ceiling_steps_per_s(4, 150.0, 50.0) == 20000.0


def test_the_headline_states_each_target_as_a_ratio_with_what_it_needs() -> None:
    head = headline(ROWS, None)
    assert head["pool_cpu_vs_single_16"] == 0.65
    assert head["pool_cpu_vs_single_64"] == 0.5
    assert head["met"] == {
        "pool_cpu_16": False,
        "pool_cpu_64": True,
        "pool_vs_threads_64": True,  # 6000 / 2900 = 2.07
        "pool_vs_openenv_64": False,  # 6000 / 4000 = 1.5
        "pool_lean_vs_openenv_64": False,  # 11000 / 4000 = 2.75
    }
    threads, openenv, lean = (
        head["throughput_targets"][key]
        for key in ("pool_vs_threads_64", "pool_vs_openenv_64", "pool_lean_vs_openenv_64")
    )
    assert threads == {
        "ratio": 2.07,
        "target": 2.0,
        "met": True,
        "needed_steps_per_s": 5800.0,
        "ceiling_steps_per_s": 8000.0,  # 2 cores / (190 + 60 us)
        "reachable": True,
    }
    assert (openenv["needed_steps_per_s"], openenv["reachable"]) == (8000.0, True)
    assert (lean["needed_steps_per_s"], lean["ceiling_steps_per_s"]) == (12000.0, 20000.0)
    # the floors measured in the same run
    assert head["raw_openenv_server_cpu_per_step_us"] == 125.0
    assert head["raw_lean_cpu_per_step_us"] == 55.0
    assert "start_local_s" not in head  # --stepping-only: no start-up figures


def test_a_target_beyond_the_machines_ceiling_says_so() -> None:
    rows = [
        *ROWS[:6],
        _row("pool", 64, "openenv", 3000.0, 100.0, 400.0),  # ceiling 2 / 500 us = 4000
        ROWS[7],
        ROWS[8],
    ]
    lines = pool_targets(headline(rows, None))
    assert lines[-2:] == [
        "- pool throughput at 64 envs: 0.75x OpenEnv's client (target >= 2.0x): **missed**",
        "  - the target needs 8000.0 env-steps/s; the pool's ceiling here is 4000.0 (cores / "
        "its servers' + client CPU per env-step): **beyond** reach on this machine",
    ]
    assert not any("lean" in line for line in lines)  # no lean row measured: no lean target


def test_the_report_renders_every_target_and_the_lean_row() -> None:
    head = headline(ROWS, None)
    data = {
        "settings": {"seconds": 4.0, "rounds": 3},
        "stepping": ROWS,
        "startup": None,
        "headline": head,
        "machine": {"cores": 2, "load_start": [0.5, 0.4, 0.3], "load_end": [2.0, 1.0, 0.5]},
    }
    lines = pool_section(data)
    assert "| pool | 64 | lean | 4 | 11000.0 | 60.0 | 40.0 | 20000.0 |" in lines
    assert (
        "- pool on lean servers, throughput at 64 envs: 2.75x OpenEnv's client on openenv "
        "servers (target >= 3.0x): **missed**"
    ) in lines
    assert (
        "- pool CPU/env-step at 64 envs: 0.5x, 60.0 us vs a single client's 120.0 us "
        "(target <= 0.5x): met"
    ) in lines
    assert any(line.startswith("Machine during the run: 2 cores; load average") for line in lines)
    verdicts = [line for line in lines if line.startswith("- pool ")]
    assert len(verdicts) == len(head["met"])


def test_the_pools_floor_is_stated_under_its_cpu_target() -> None:
    rows = [*ROWS, _row("floor", 64, "openenv", 9000.0, 12.5, 150.0)]
    head = headline(rows, None)
    assert head["floor_64_cpu_per_step_us"] == 12.5
    assert "floor_16_cpu_per_step_us" not in head  # not measured at 16 here
    lines = pool_targets(head)
    at_64 = lines.index(next(line for line in lines if "CPU/env-step at 64 envs" in line))
    assert lines[at_64 + 1] == (
        "  - the floor, raw lock-step rounds over as many sessions (`floor`: no client code), "
        "costs 12.5 us: the pool's own code is the other 47.5 us"
    )
