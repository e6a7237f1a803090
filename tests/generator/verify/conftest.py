"""The servers `envgen verify` is tested against, each started once per test session.

counter_env: real openenv 0.10 servers (tests/generator/verify/counter_server.py), one per
planted fault, started in parallel. boundary_env: one process
(tests/generator/verify/boundary_server.py) serving every boundary fault over both protocols.
All are stopped by their providers at the session's end.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from envgen_runtime import LocalProcessProvider

from tests.generator.verify.counter_server import FAULTS
from tests.helpers import REPO

HERE = Path(__file__).resolve().parent


def _provider(fault: str) -> LocalProcessProvider:
    return LocalProcessProvider(
        [
            "{python}",
            "-m",
            "tests.generator.verify.counter_server",
            "--port",
            "{port}",
            "--fault",
            fault,
        ],
        startup_timeout_s=120.0,
        cwd=REPO,
        env={"ENABLE_WEB_INTERFACE": "false"},
    )


@pytest.fixture(scope="session")
def counter_servers() -> Iterator[dict[str, str]]:
    """Base URL of the counter_env server for each fault (and "none")."""
    providers = {fault: _provider(fault) for fault in FAULTS}
    try:
        with ThreadPoolExecutor(len(providers)) as pool:
            urls = dict(
                zip(providers, pool.map(lambda p: p.start(), providers.values()), strict=True)
            )
        yield urls
    finally:
        for provider in providers.values():
            provider.stop()


@pytest.fixture(scope="session")
def boundary_server() -> Iterator[str]:
    """Base URL of the boundary_env process; a fault's app is at /<protocol>/<fault>."""
    provider = LocalProcessProvider(
        ["{python}", "-m", "tests.generator.verify.boundary_server", "--port", "{port}"],
        startup_timeout_s=120.0,
        cwd=REPO,
        env={"ENABLE_WEB_INTERFACE": "false"},
    )
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
