"""Real OpenEnv servers for the compatibility suite, and one project that pulled them all.

Five are envgen's examples, two are written in the style of the public OpenEnv envs and
are unknown to envgen until the suite pulls them. All run the openenv 0.10 WebSocket app.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from envgen_runtime import LocalProcessProvider

from generator.cli import main
from tests.helpers import REPO

PACKAGE = "pulled_envs"
COMMANDS: dict[str, list[str]] = {
    **{
        name: [
            "{python}",
            "-m",
            f"examples.{name}.server",
            "--host",
            "{host}",
            "--port",
            "{port}",
            "--protocol",
            "websocket",
        ]
        for name in ("echo_env", "coding_env", "grid_env", "quiz_env", "reacher_env")
    },
    **{
        name: [
            "{python}",
            "-m",
            "tests.generator.interop.openenv_style.serve",
            name,
            "--port",
            "{port}",
        ]
        for name in ("inventory_env", "counter_env")
    },
}


def _start(command: list[str]) -> LocalProcessProvider:
    provider = LocalProcessProvider(command, cwd=REPO, startup_timeout_s=90)
    provider.start()
    return provider


@pytest.fixture(scope="session")
def openenv_servers() -> Iterator[dict[str, str]]:
    with ThreadPoolExecutor(max_workers=len(COMMANDS)) as pool:
        futures = {name: pool.submit(_start, cmd) for name, cmd in COMMANDS.items()}
    providers = {}
    errors = []
    for name, future in futures.items():
        try:
            providers[name] = future.result()
        except Exception as exc:
            errors.append(f"{name}: {exc}")
    try:
        if errors:
            pytest.fail("servers failed to start:\n" + "\n".join(errors))
        yield {name: p.base_url for name, p in providers.items() if p.base_url}
    finally:
        for provider in providers.values():
            provider.stop()


@pytest.fixture(scope="session")
def pulled_project(
    openenv_servers: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """A fresh project into which `envgen pull` fetched every server's schemas."""
    root = tmp_path_factory.mktemp("pulled")
    runner = CliRunner()
    for name, url in openenv_servers.items():
        result = runner.invoke(main, ["--root", str(root), "--generated", PACKAGE, "pull", url])
        assert result.exit_code == 0, f"{name}: {result.output}"
    sys.path.insert(0, str(root))
    try:
        yield root
    finally:
        sys.path.remove(str(root))


def pulled_module(name: str) -> Any:
    return importlib.import_module(f"{PACKAGE}.{name}")
