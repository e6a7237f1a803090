"""Each benchmark script runs both as `python -m benchmarks.x` and as `python benchmarks/x.py`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO


def _run(how: str, script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    target = (
        ["-m", f"benchmarks.{script}"]
        if how == "module"
        else [str(REPO / f"benchmarks/{script}.py")]
    )
    return subprocess.run(
        [sys.executable, *target, *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("how", ["module", "script"])
def test_bench_codegen_starts_either_way(how: str, tmp_path: Path) -> None:
    cwd = REPO if how == "module" else tmp_path
    proc = _run(how, "bench_codegen", "--help", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    assert "--quick" in proc.stdout
    assert "--sizes" in proc.stdout


def test_bench_codegen_sizes_must_be_counts() -> None:
    for bad in (["--sizes", "0"], ["--sizes", "ten"], ["--quick", "--sizes", "5"]):
        proc = _run("module", "bench_codegen", *bad, cwd=REPO)
        assert proc.returncode == 2, (bad, proc.stdout)
        assert "--sizes" in proc.stderr, bad


@pytest.mark.parametrize("how", ["module", "script"])
def test_bench_step_preflight_either_way(how: str, tmp_path: Path) -> None:
    cwd = REPO if how == "module" else tmp_path
    proc = _run(how, "bench_step", "--preflight", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok: generated.echo_env")


@pytest.mark.parametrize("how", ["module", "script"])
def test_report_either_way(how: str, tmp_path: Path) -> None:
    cwd = REPO if how == "module" else tmp_path
    results = tmp_path / "results"
    shutil.copytree(REPO / "benchmarks/results", results)
    out = tmp_path / "RESULTS.md"
    proc = _run(how, "report", "--results", str(results), "--out", str(out), cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert text.startswith("# Benchmark results") and "import of a generated client" in text


def test_bench_verify_help_as_a_module() -> None:
    proc = _run("module", "bench_verify", "--help", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "--quick" in proc.stdout


def test_bench_verify_quick_as_a_script_verifies_echo_env(tmp_path: Path) -> None:
    out = tmp_path / "verify.json"
    proc = _run("script", "bench_verify", "--quick", "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(out.read_text())["rows"]
    assert row["env"] == "echo_env" and row["ok"] and row["episodes"] >= 10
    assert json.loads(proc.stdout.splitlines()[-1])["all_within_target"] is True


@pytest.mark.parametrize("how", ["module", "script"])
def test_bench_serve_has_a_quick_form_either_way(how: str, tmp_path: Path) -> None:
    cwd = REPO if how == "module" else tmp_path
    proc = _run(how, "bench_serve", "--help", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    assert "--quick" in proc.stdout
