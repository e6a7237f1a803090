"""The servers `envgen verify` is tested against, each started once per test session.

counter_env: one real openenv 0.10 process (tests/generator/verify/counter_server.py) serving
each planted fault at its own prefix. boundary_env: one process
(tests/generator/verify/boundary_server.py) serving every boundary fault over both protocols.
Both are stopped by their providers at the session's end.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from envgen_runtime import LocalProcessProvider

from tests.generator.verify.counter_server import FAULTS
from tests.helpers import REPO

HERE = Path(__file__).resolve().parent


def _provider(*args: str) -> LocalProcessProvider:
    return LocalProcessProvider(
        ["{python}", "-m", *args, "--port", "{port}"],
        startup_timeout_s=120.0,
        cwd=REPO,
        env={"ENABLE_WEB_INTERFACE": "false"},
    )


@pytest.fixture(scope="session")
def counter_servers() -> Iterator[dict[str, str]]:
    """Base URL of the counter_env server for each fault (and "none"): one process, each
    fault's app at /<fault>."""
    provider = _provider("tests.generator.verify.counter_server", "--all")
    try:
        base = provider.start()
        yield {fault: f"{base}/{fault}" for fault in FAULTS}
    finally:
        provider.stop()


@pytest.fixture(scope="session")
def boundary_server() -> Iterator[str]:
    """Base URL of the boundary_env process; a fault's app is at /<protocol>/<fault>."""
    provider = _provider("tests.generator.verify.boundary_server")
    try:
        yield provider.start()
    finally:
        provider.stop()


@pytest.fixture
def boundary_project(tmp_path: Path) -> Path:
    """A project whose schemas/ holds the committed boundary_env schemas."""
    shutil.copytree(HERE / "boundary_env", tmp_path / "schemas" / "boundary_env")
    return tmp_path


@pytest.fixture
def counter_project(tmp_path: Path) -> Path:
    """A project whose schemas/ holds the committed counter_env schemas."""
    shutil.copytree(HERE / "counter_env", tmp_path / "schemas" / "counter_env")
    return tmp_path
