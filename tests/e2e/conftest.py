"""Real example servers for the end-to-end tests, each started once per test session.

Servers are started in parallel through the runtime's own LocalProcessProvider (the same
code path `from_local_process()` uses), with the command from each generated client's SPEC.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from envgen_runtime import LocalProcessProvider

from tests.e2e.trainer_venv import TrainerVenv, build_trainer_venv
from tests.helpers import REPO

WEBSOCKET_ENVS = ["echo_env", "coding_env", "grid_env", "quiz_env", "reacher_env"]
# envgen_runtime.server's HTTP app keeps one environment across requests: the stateful protocol.
HTTP_ENVS = ["echo_env", "coding_env", "grid_env", "quiz_env", "reacher_env"]
SERVED = [(env, "websocket") for env in WEBSOCKET_ENVS] + [(env, "http") for env in HTTP_ENVS]


def client_class(env: str, *, asynchronous: bool = False) -> Any:
    """The generated sync client class of ``env`` (or its ``Async`` twin)."""
    module = importlib.import_module(f"generated.{env}")
    names = [n for n in module.__all__ if n.endswith("Env")]
    return getattr(module, next(n for n in names if n.startswith("Async") == asynchronous))


def _start(env: str, transport: str) -> LocalProcessProvider:
    spec = client_class(env).SPEC
    provider = LocalProcessProvider(
        spec.server_command,
        health_path=spec.health_path,
        startup_timeout_s=spec.startup_timeout_s,
        cwd=REPO,
        transport=transport,
    )
    provider.start()
    return provider


@pytest.fixture(scope="session")
def servers() -> Iterator[dict[tuple[str, str], str]]:
    """Base URL of every (env, transport) server; all stopped at the end of the session."""
    with ThreadPoolExecutor(max_workers=len(SERVED)) as pool:
        futures = {key: pool.submit(_start, *key) for key in SERVED}
    providers: dict[tuple[str, str], LocalProcessProvider] = {}
    errors: list[str] = []
    for key, future in futures.items():
        try:
            providers[key] = future.result()
        except Exception as exc:  # report every server that failed, not just the first
            errors.append(f"{key}: {exc}")
    try:
        if errors:
            pytest.fail("example servers failed to start:\n" + "\n".join(errors))
        yield {key: p.base_url for key, p in providers.items() if p.base_url}
    finally:
        for provider in providers.values():
            provider.stop()


@pytest.fixture(scope="session")
def trainer_venv(tmp_path_factory: pytest.TempPathFactory) -> TrainerVenv:
    """A venv with only the runtime's and echo_env's client wheels (one per session)."""
    return build_trainer_venv(tmp_path_factory.mktemp("trainer"))
