"""mypy --strict and ruff over the generator, the committed clients and the golden clients."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.golden.regenerate import CASES
from tests.helpers import REPO

RUFF_RULES = "E,F,W,I,B,UP,SIM"


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": str(REPO)}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def _mypy(targets: list[str], cwd: Path) -> None:
    proc = _run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",
            str(REPO / ".mypy_cache"),
            *targets,
        ],
        cwd,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_generator_and_committed_clients() -> None:
    targets = ["generator"]
    if any((REPO / "generated").glob("*/client.py")):
        targets.append("generated")
    _mypy(targets, REPO)


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_mypy_strict_golden_clients(case: str) -> None:
    _mypy(["generated"], CASES / case)


def test_ruff_clean_generated_code() -> None:
    folders = [str(REPO / "generated"), *(str(p / "generated") for p in CASES.iterdir())]
    ruff = [sys.executable, "-m", "ruff"]
    check = _run(
        [
            *ruff,
            "check",
            "--isolated",
            "--no-cache",
            "--line-length",
            "100",
            "--select",
            RUFF_RULES,
            *folders,
        ],
        REPO,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    fmt = _run(
        [*ruff, "format", "--isolated", "--no-cache", "--line-length", "100", "--check", *folders],
        REPO,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_ruff_clean_project_code() -> None:
    targets = [t for t in ("generator", "tests", "examples") if (REPO / t).exists()]
    check = _run([sys.executable, "-m", "ruff", "check", "--no-cache", *targets], REPO)
    assert check.returncode == 0, check.stdout + check.stderr
    fmt = _run([sys.executable, "-m", "ruff", "format", "--no-cache", "--check", *targets], REPO)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
