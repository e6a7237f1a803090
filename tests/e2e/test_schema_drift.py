"""The drift check at connect, against real echo_env servers whose `/schema` was changed.

Each server (tests/e2e/drift_server.py) plays echo_env's episodes and publishes one variant
of its schemas; the generated EchoEnv and AsyncEchoEnv connect over both transports. The
check makes one `GET /schema` per process and server, however many clients connect, and
none per step.
"""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.request
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from envgen_runtime import (
    EnvgenRuntimeError,
    LocalProcessProvider,
    SchemaDriftError,
    SchemaDriftWarning,
)
from envgen_runtime.client import schema_check

from generated.echo_env import AsyncEchoEnv, EchoAction, EchoEnv
from tests.e2e.drift_server import MODES
from tests.helpers import REPO

pytestmark = pytest.mark.e2e

TRANSPORTS = ("websocket", "http")
FLAVOURS = ("sync", "async")
CLIENTS = 3  # a small pool: one request for all of them


@pytest.fixture(scope="module")
def drift_servers() -> Iterator[dict[tuple[str, str], str]]:
    """Base URL of each (mode, transport) server, all stopped at the end of the module."""

    def start(key: tuple[str, str]) -> LocalProcessProvider:
        mode, transport = key
        command = [sys.executable, "-m", "tests.e2e.drift_server", mode]
        command += ["--host", "{host}", "--port", "{port}", "--protocol", "{transport}"]
        provider = LocalProcessProvider(command, cwd=REPO, transport=transport)
        provider.start()
        return provider

    keys = [(mode, transport) for mode in MODES for transport in TRANSPORTS]
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(start, key) for key in keys]
    providers = [future.result() for future in futures]
    try:
        yield {key: p.base_url for key, p in zip(keys, providers, strict=True) if p.base_url}
    finally:
        for provider in providers:
            provider.stop()


@pytest.fixture(autouse=True)
def fresh_process_cache() -> Iterator[None]:
    """Each test is a new process as far as the check's per-process memory goes."""
    schema_check.forget()
    yield
    schema_check.forget()


def schema_requests(url: str) -> int:
    with urllib.request.urlopen(url + "/test/schema-requests", timeout=10) as reply:
        return int(json.loads(reply.read()))


def play(url: str, transport: str, flavour: str, **options: Any) -> list[str]:
    """CLIENTS clients each reset, step twice and reset again; the warnings they gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if flavour == "sync":
            for _ in range(CLIENTS):
                with EchoEnv(url, transport=transport, **options) as env:
                    env.reset()
                    env.step(EchoAction(message="hello"))
                    env.step(EchoAction(message="hello"))
                    env.reset()
        else:

            async def one() -> None:
                async with AsyncEchoEnv(url, transport=transport, **options) as env:
                    await env.reset()
                    await env.step(EchoAction(message="hello"))
                    await env.step(EchoAction(message="hello"))
                    await env.reset()

            async def many() -> None:
                if transport == "websocket":  # at once: they wait for one request
                    await asyncio.gather(*(one() for _ in range(CLIENTS)))
                else:  # the HTTP server keeps one environment: one episode at a time
                    for _ in range(CLIENTS):
                        await one()

            asyncio.run(many())
    return [str(w.message) for w in caught if issubclass(w.category, SchemaDriftWarning)]


def first_reset(url: str, transport: str, flavour: str) -> Callable[[], None]:
    def sync() -> None:
        with EchoEnv(url, transport=transport) as env:
            env.reset()

    async def aio() -> None:
        async with AsyncEchoEnv(url, transport=transport) as env:
            await env.reset()

    return sync if flavour == "sync" else lambda: asyncio.run(aio())


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", ["committed", "own"])
def test_unchanged_schemas_pass_silently_after_one_request(
    drift_servers: dict[tuple[str, str], str], mode: str, transport: str, flavour: str
) -> None:
    # `own` is what every generated server publishes: pydantic's titles, OpenEnv's metadata
    # on the action and a closed observation differ from the committed text, unnoticeably.
    url = drift_servers[(mode, transport)]
    before = schema_requests(url)
    assert play(url, transport, flavour) == []
    assert schema_requests(url) - before == 1


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_compatible_change_warns_once(
    drift_servers: dict[tuple[str, str], str], transport: str, flavour: str
) -> None:
    url = drift_servers[("compatible", transport)]
    before = schema_requests(url)
    (message,) = play(url, transport, flavour)
    assert "/observation/properties/mood" in message
    assert f"envgen pull {url} --name echo_env --force" in message
    assert schema_requests(url) - before == 1


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("mode", "role", "pointer", "rule"),
    [
        ("breaking", "observation", "/observation/properties/message_length", "property."),
        ("breaking-action", "action", "/action/properties/message/enum", "enum.added"),
    ],
)
def test_a_breaking_change_fails_the_first_reset_naming_it_and_the_fix(
    drift_servers: dict[tuple[str, str], str],
    mode: str,
    role: str,
    pointer: str,
    rule: str,
    transport: str,
    flavour: str,
) -> None:
    url = drift_servers[(mode, transport)]
    before = schema_requests(url)
    for _ in range(2):  # every client meets it; the server is asked once
        with pytest.raises(SchemaDriftError) as caught:
            first_reset(url, transport, flavour)()
        error = caught.value
        assert isinstance(error, EnvgenRuntimeError)
        assert (error.role, error.pointer, error.url) == (role, pointer, url + "/schema")
        assert error.rule.startswith(rule)
        assert f"{role} {pointer}: " in error.message
        assert f"envgen pull {url} --name echo_env --force" in error.message
        assert "envgen generate echo_env" in error.message
    assert schema_requests(url) - before == 1


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_server_without_schema_is_asked_once_and_plays(
    drift_servers: dict[tuple[str, str], str], transport: str, flavour: str
) -> None:
    url = drift_servers[("none", transport)]
    before = schema_requests(url)
    assert play(url, transport, flavour) == []
    assert schema_requests(url) - before == 1


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_check_schema_false_asks_nothing(
    drift_servers: dict[tuple[str, str], str], transport: str, flavour: str
) -> None:
    url = drift_servers[("breaking", transport)]
    before = schema_requests(url)
    assert play(url, transport, flavour, check_schema=False) == []
    assert schema_requests(url) - before == 0
