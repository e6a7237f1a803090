"""bench_pool starts either way (`-m` and as a script) and report.py renders its results."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
