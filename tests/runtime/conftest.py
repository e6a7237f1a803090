"""Fixtures for the runtime tests: real counter servers, started once per test session."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from envgen_runtime import LocalProcessProvider

from tests.runtime.clients import server_command

# openenv imports gradio and more: several seconds per server, so they start in parallel.
_KINDS = ("ws", "ws-cap1", "legacy-http")


@pytest.fixture(scope="session")
def servers() -> Iterator[dict[str, str]]:
    """Base URLs of the real servers, keyed by kind (see servers.py)."""
    providers = {
        kind: LocalProcessProvider(
            server_command(kind),
            startup_timeout_s=90.0,
            env={"ENABLE_WEB_INTERFACE": "false"},
        )
        for kind in _KINDS
    }
    try:
        with ThreadPoolExecutor(len(providers)) as pool:
            futures = {kind: pool.submit(p.start) for kind, p in providers.items()}
            urls = {kind: future.result() for kind, future in futures.items()}
        yield urls
    finally:
        for provider in providers.values():
            provider.stop()


@pytest.fixture(scope="session")
def ws_url(servers: dict[str, str]) -> str:
    """openenv 0.10.0 server with up to 8 WebSocket sessions."""
    return servers["ws"]


@pytest.fixture(scope="session")
def ws_cap1_url(servers: dict[str, str]) -> str:
    """openenv 0.10.0 server that allows a single WebSocket session."""
    return servers["ws-cap1"]


@pytest.fixture(scope="session")
def legacy_url(servers: dict[str, str]) -> str:
    """openenv-core 0.1.1 stateful HTTP server."""
    return servers["legacy-http"]
