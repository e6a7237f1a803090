"""A trainer's venv: the runtime's and one generated env's wheels in a fresh venv, nothing else.

Built once per test session (the ``trainer_venv`` fixture in conftest) and shared by every
test that plays the trainer: building wheels and a venv costs tens of seconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import REPO

__all__ = ["TrainerVenv", "build_trainer_venv", "clean_env", "fresh_venv", "pip"]


@dataclass(frozen=True)
class TrainerVenv:
    """Where the venv is (``root``), its interpreter, and a directory outside the checkout."""

    root: Path
    python: Path
    outside: Path


def pip(python: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), *args],
        check=True,
        capture_output=True,
        timeout=600,
    )


def fresh_venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=False).create(path)
    return path / "bin" / "python"


def clean_env() -> dict[str, str]:
    """This process's environment without what would let the venv see the checkout."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def _wheel(source: Path, out: Path, stem: str) -> Path:
    """Build `source` into a wheel in `out` (no isolation: hatchling is in the test venv)."""
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run(
        [*command, "-w", str(out), str(source)], check=True, capture_output=True, timeout=300
    )
    (wheel,) = out.glob(f"{stem}-*.whl")
    return wheel


def build_trainer_venv(base: Path) -> TrainerVenv:
    """The runtime's and echo_env's client wheels, installed into a new venv under ``base``."""
    wheels = base / "wheels"
    runtime_wheel = _wheel(REPO / "runtime", wheels, "envgen_runtime")
    client_wheel = _wheel(REPO / "generated" / "echo_env", wheels, "echo_env_client")
    python = fresh_venv(base / "trainer")
    pip(python, "install", "-q", str(runtime_wheel), str(client_wheel))
    outside = base / "elsewhere"
    outside.mkdir()
    return TrainerVenv(base / "trainer", python, outside)
