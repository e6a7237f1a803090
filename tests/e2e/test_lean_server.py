"""The lean backend as a real server: envgen's generated clients (sync and async, both
protocols), OpenEnv 0.10's own client, `envgen verify` and `envgen pull` against it, with
results equal to the openenv backend's for the same seeds.

One server per (env, protocol, backend), started once for the module through the runtime's
LocalProcessProvider with the env's own command plus `--backend`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from envgen_runtime import LocalProcessProvider
from openenv.core.generic_client import GenericEnvClient

from generated.echo_env import EchoAction
from generated.grid_env import MoveAction, PickAction, TurnAction
from generator.cli import main as envgen_main
from tests.e2e.conftest import client_class
from tests.helpers import REPO

pytestmark = pytest.mark.e2e

ENVS = ["echo_env", "grid_env"]  # played on both backends
VERIFIED = [*ENVS, "coding_env", "quiz_env", "reacher_env"]  # every example, on lean
PROTOCOLS = ["websocket", "http"]
BACKENDS = ["lean", "openenv"]
ACTIONS: dict[str, list[Any]] = {
    "echo_env": [EchoAction(message=m) for m in ("hello", "", "ünïcödé ✓")],
    "grid_env": [
        TurnAction(rotation="right"),
        MoveAction(direction="south", steps=2),
        PickAction(cells=[[1, 1], [2, 2]]),
        MoveAction(direction="east"),
        TurnAction(rotation="left"),
    ],
}
Key = tuple[str, str, str]


def _start(env: str, protocol: str, backend: str) -> LocalProcessProvider:
    spec = client_class(env).SPEC
    provider = LocalProcessProvider(
        [*spec.server_command, "--backend", backend],
        health_path=spec.health_path,
        startup_timeout_s=spec.startup_timeout_s,
        cwd=REPO,
        transport=protocol,
    )
    provider.start()
    return provider


@pytest.fixture(scope="module")
def urls() -> Iterator[dict[Key, str]]:
    keys = [(e, p, b) for e in ENVS for p in PROTOCOLS for b in BACKENDS]
    keys += [(e, p, "lean") for e in VERIFIED if e not in ENVS for p in PROTOCOLS]
    with ThreadPoolExecutor(max_workers=len(keys)) as pool:
        futures = {key: pool.submit(_start, *key) for key in keys}
    started = {key: f.result() for key, f in futures.items() if f.exception() is None}
    try:
        failed = [f"{key}: {f.exception()}" for key, f in futures.items() if key not in started]
        if failed:
            pytest.fail("servers failed to start:\n" + "\n".join(failed))
        yield {key: p.base_url for key, p in started.items() if p.base_url}
    finally:
        for provider in started.values():
            provider.stop()


def _rows(results: list[Any], state: Any) -> str:
    rows = [(r.raw, r.reward, r.done) for r in results]
    return json.dumps([rows, state.model_dump(mode="json", by_alias=True)], sort_keys=True)


def _play_sync(env: str, url: str, protocol: str) -> str:
    with client_class(env)(url, transport=protocol) as client:
        results = [client.reset(seed=3, episode_id="lean")]
        results += [client.step(action) for action in ACTIONS[env]]
        return _rows(results, client.state())


def _play_async(env: str, url: str, protocol: str) -> str:
    async def play() -> str:
        async with client_class(env, asynchronous=True)(url, transport=protocol) as client:
            results = [await client.reset(seed=3, episode_id="lean")]
            results += [await client.step(action) for action in ACTIONS[env]]
            return _rows(results, await client.state())

    return asyncio.run(play())


@pytest.mark.parametrize("env", ENVS)
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("play", [_play_sync, _play_async], ids=["sync", "async"])
def test_generated_clients_play_the_same_episode_on_both_backends(
    urls: dict[Key, str], env: str, protocol: str, play: Any
) -> None:
    lean = play(env, urls[(env, protocol, "lean")], protocol)
    assert lean == play(env, urls[(env, protocol, "openenv")], protocol)
    assert '"done"' in lean


def _play_openenv_client(url: str, env: str) -> str:
    actions = [a.model_dump(mode="json", by_alias=True, exclude_none=True) for a in ACTIONS[env]]
    with GenericEnvClient(base_url=url).sync() as client:
        steps = [client.reset(seed=3, episode_id="lean")]
        steps += [client.step(action) for action in actions]
        rows = [(s.observation, s.reward, s.done, s.metadata) for s in steps]
        return json.dumps([rows, client.state()], sort_keys=True, default=str)


@pytest.mark.parametrize("env", ENVS)
def test_openenv_s_own_client_plays_against_the_lean_websocket_unchanged(
    urls: dict[Key, str], env: str
) -> None:
    lean = _play_openenv_client(urls[(env, "websocket", "lean")], env)
    assert lean == _play_openenv_client(urls[(env, "websocket", "openenv")], env)


@pytest.mark.parametrize("env", VERIFIED)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_envgen_verify_finds_the_lean_server_conforming(
    urls: dict[Key, str], env: str, protocol: str
) -> None:
    args = ["--root", str(REPO), "verify", env, "--url", urls[(env, protocol, "lean")]]
    args += ["--transport", protocol, "--max-examples", "10"]
    result = CliRunner().invoke(envgen_main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith(f"{env}: conforms")


def _pulled(url: str, root: Path) -> dict[str, bytes]:
    root.mkdir()
    result = CliRunner().invoke(
        envgen_main, ["--root", str(root), "pull", url, "--quiet"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("env", ENVS)
def test_envgen_pull_writes_the_same_project_from_either_backend(
    urls: dict[Key, str], env: str, tmp_path: Path
) -> None:
    lean = _pulled(urls[(env, "websocket", "lean")], tmp_path / "lean")
    assert any(name.endswith("action.schema.json") for name in lean)
    assert lean == _pulled(urls[(env, "websocket", "openenv")], tmp_path / "openenv")
