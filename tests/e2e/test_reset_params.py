"""Typed reset parameters end to end: grid_env's generated `reset(size=..., difficulty=...)`
against the real example server, over WebSocket (openenv 0.10's app) and stateful HTTP.

The parameter takes effect on the server (the board and the state's `grid_size` follow it), a
bad value is refused by the client before anything is sent, and a bad value that does reach
the server (sent around the typed signature) is refused there by the same generated model.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from envgen_runtime import EnvValidationError, ServerValidationError

from generated.grid_env import AsyncGridEnv, GridEnv, GridEnvPool, MoveAction
from generator.cli import main
from tests.generator.diff.gitrepo import edit_json
from tests.helpers import REPO

pytestmark = pytest.mark.e2e
TRANSPORTS = ("websocket", "http")


@pytest.fixture
def grid_servers(servers: dict[tuple[str, str], str]) -> dict[str, str]:
    """grid_env's servers of the session (tests/e2e/conftest.py), by protocol."""
    return {transport: servers[("grid_env", transport)] for transport in TRANSPORTS}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_size_takes_effect(grid_servers: dict[str, str], transport: str) -> None:
    with GridEnv(grid_servers[transport], transport=transport) as env:  # type: ignore[arg-type]
        result = env.reset(seed=3, size=8, difficulty="hard")
        assert len(result.observation.grid) == 8
        assert all(len(row) == 8 for row in result.observation.grid)
        walls = sum(row.count("#") for row in result.observation.grid)
        assert walls == 8 * 8 // 4
        assert env.state().grid_size == 8
        env.step(MoveAction(direction="south", steps=3))
        assert env.state().grid_size == 8
        default = env.reset(seed=3)  # nothing sent: the server's defaults
        assert len(default.observation.grid) == 5
        assert sum(row.count("#") for row in default.observation.grid) == 3


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_bad_value_refused_before_sending(grid_servers: dict[str, str], transport: str) -> None:
    with GridEnv(grid_servers[transport], transport=transport) as env:  # type: ignore[arg-type]
        env.reset(seed=1, size=6)
        with pytest.raises(EnvValidationError) as caught:
            env.reset(seed=2, size=30)
        assert caught.value.role == "reset"
        assert [issue.loc for issue in caught.value.errors] == [("size",)]
        assert "nothing was sent" in str(caught.value)
        with pytest.raises(EnvValidationError, match="difficulty"):
            env.reset(difficulty="brutal")  # type: ignore[arg-type]
        assert env.state().grid_size == 6  # the episode of the last good reset goes on


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_server_refuses_what_bypasses_the_client(
    grid_servers: dict[str, str], transport: str
) -> None:
    """The base class's untyped reset sends anything; the server's model refuses it."""
    with GridEnv(grid_servers[transport], transport=transport) as env:  # type: ignore[arg-type]
        untyped = super(GridEnv, env).reset
        with pytest.raises(ServerValidationError):
            untyped(seed=1, size=30)
        with pytest.raises(ServerValidationError):
            untyped(seed=1, colour="red")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_async_client(grid_servers: dict[str, str], transport: str) -> None:
    async def play() -> None:
        async with AsyncGridEnv(grid_servers[transport], transport=transport) as env:  # type: ignore[arg-type]
            result = await env.reset(seed=4, size=4)
            assert len(result.observation.grid) == 4
            with pytest.raises(EnvValidationError):
                await env.reset(size=3)

    asyncio.run(play())


def test_pool_reset_takes_params() -> None:
    """The generated pool's reset: typed, validated once, passed on to every slot's client."""
    with GridEnvPool(
        2,
        sessions_per_server=2,
        provider_options={"cwd": REPO},
        client_options={"transport": "websocket"},
    ) as pool:
        with pytest.raises(EnvValidationError):
            pool.reset(size=10)  # refused before any server is started
        results = pool.reset(seeds=1, size=7)
        assert [r.error for r in results] == [None, None]
        assert [len(r.observation.grid) for r in results if r.observation] == [7, 7]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_schema_publishes_reset(grid_servers: dict[str, str], transport: str) -> None:
    with urllib.request.urlopen(grid_servers[transport] + "/schema", timeout=10) as reply:
        body = json.load(reply)
    committed = json.loads((REPO / "schemas/grid_env/reset.schema.json").read_text())
    assert set(body["reset"]["properties"]) == set(committed["properties"])
    assert body["reset"]["properties"]["size"]["maximum"] == 9
    assert {"action", "observation", "state"} <= set(body)


def test_verify_draws_reset_params(grid_servers: dict[str, str], tmp_path: Path) -> None:
    """A committed reset schema that allows more than the server accepts is caught by verify,
    which draws reset parameters from the schema; the reproduction names them."""
    shutil.copytree(REPO / "schemas/grid_env", tmp_path / "schemas/grid_env")
    edit_json(
        tmp_path / "schemas/grid_env/reset.schema.json",
        lambda doc: doc["properties"]["size"].update(maximum=20),
    )
    args = [
        "--root", str(tmp_path), "verify", "grid_env", "--url", grid_servers["websocket"],
        "--max-examples", "40", "--time-budget", "20", "--no-negative", "--format", "json",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    [rejected] = [v for v in report["violations"] if v["check"] == "server.rejected-valid"]
    assert rejected["file"] == "schemas/grid_env/reset.schema.json"
    assert 9 < rejected["reset_params"]["size"] <= 20
    assert rejected["actions"] == []
