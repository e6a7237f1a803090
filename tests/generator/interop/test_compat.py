"""envgen's generated clients against OpenEnv's own clients, on the same real servers.

Each env is pulled fresh from its running server (`envgen pull`), then the same seeded
episode is played twice: once with OpenEnv's GenericEnvClient (the server's replies as raw
dicts, nothing dropped) and once with the generated client. Observations, rewards, done
flags, metadata and states must be equal, step for step.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from openenv.core.generic_client import GenericEnvClient
from pydantic import TypeAdapter

from tests.generator.interop.conftest import PACKAGE, pulled_module
from tests.helpers import REPO

pytestmark = pytest.mark.e2e

EPISODES: dict[str, list[dict[str, Any]]] = {
    "echo_env": [{"message": "hello"}, {"message": "ünï ✓"}, {"message": ""}],
    "coding_env": [{"code": "print(6 * 7)"}, {"code": "raise SystemExit(2)", "timeout_s": 3}],
    "grid_env": [
        {"type": "turn", "rotation": "right"},
        {"type": "move", "direction": "south", "steps": 2},
        {"type": "pick", "cells": [[1, 1], [2, 2]]},
        {"type": "move", "direction": "east"},
    ],
    "quiz_env": [
        {"answer": "?", "hint_requested": True},
        {"answer": "x", "confidence": 0.5, "from": "me"},
        {"answer": "y", "confidence": None},
    ],
    "reacher_env": [{"torques": [0.5, -0.5]}, {"torques": [1.0, 1.0]}, {"torques": [-1, 0]}],
    "inventory_env": [
        {"op": "take", "index": 1},
        {"op": "take", "index": 0},
        {"op": "drop", "index": 0},
    ],
    "counter_env": [{"delta": 3}, {"delta": -1}, {"delta": 5}],
}


def _client_class(module: Any) -> Any:
    return next(
        getattr(module, n)
        for n in module.__all__
        if n.endswith("Env") and not n.startswith("Async")
    )


def _wire(value: Any) -> Any:
    """What a parsed value says on the wire: the fields the server sent, by wire name."""
    return TypeAdapter(type(value)).dump_python(
        value, mode="json", by_alias=True, exclude_unset=True
    )


def _play_openenv(url: str, actions: list[dict[str, Any]]) -> list[Any]:
    with GenericEnvClient(base_url=url).sync() as env:
        steps = [env.reset(seed=7, episode_id="compat")]
        steps += [env.step(action) for action in actions]
        return [(s.observation, s.reward, s.done, s.metadata) for s in steps] + [env.state()]


def _play_envgen(client_cls: Any, url: str, actions: list[dict[str, Any]]) -> list[Any]:
    action_type = client_cls.__orig_bases__[0].__args__[0]
    adapter = TypeAdapter(action_type)
    with client_cls(url) as env:
        steps = [env.reset(seed=7, episode_id="compat")]
        steps += [env.step(adapter.validate_python(action)) for action in actions]
        rows: list[Any] = [(_wire(s.observation), s.reward, s.done, s.metadata) for s in steps]
        return [*rows, _wire(env.state())]


@pytest.mark.parametrize("name", list(EPISODES))
def test_generated_client_matches_openenv_client_step_for_step(
    name: str, openenv_servers: dict[str, str], pulled_project: Path
) -> None:
    url = openenv_servers[name]
    module = pulled_module(name)
    theirs = _play_openenv(url, EPISODES[name])
    ours = _play_envgen(_client_class(module), url, EPISODES[name])
    assert json.dumps(ours, sort_keys=True) == json.dumps(theirs, sort_keys=True)


def test_hand_written_clients_drop_what_envgen_keeps(
    openenv_servers: dict[str, str], pulled_project: Path
) -> None:
    from tests.generator.interop.openenv_style.counter_env import (
        CounterAction,
        HandWrittenCounterClient,
    )
    from tests.generator.interop.openenv_style.inventory_env import (
        HandWrittenInventoryClient,
        InventoryAction,
    )

    url = openenv_servers["counter_env"]
    with HandWrittenCounterClient(base_url=url).sync() as hand:
        hand.reset(seed=1)
        hand_step = hand.step(CounterAction(delta=2))
        hand_state = hand.state()
    counter = _client_class(pulled_module("counter_env"))
    with counter(url) as ours:
        ours.reset(seed=1)
        our_step = ours.step(counter.__orig_bases__[0].__args__[0](delta=2))
        our_state = ours.state()
    assert not hasattr(hand_state, "total")  # the State subclass fields are lost
    assert (our_state.total, our_state.history, our_state.target) == (2, [2], 4)
    assert hand_step.metadata is None  # metadata dropped by the hand-written parser
    assert our_step.metadata == {"target": 4}

    url = openenv_servers["inventory_env"]
    with HandWrittenInventoryClient(base_url=url).sync() as hand_inv:
        hand_inv.reset(seed=3)
        dropped = hand_inv.step(InventoryAction(op="take", index=0))
    inventory = _client_class(pulled_module("inventory_env"))
    with inventory(url) as ours_inv:
        ours_inv.reset(seed=3)
        kept = ours_inv.step(inventory.__orig_bases__[0].__args__[0](op="take", index=0))
    assert dropped.observation.metadata == {}
    assert kept.metadata == {"load": kept.reward}
    assert kept.observation.bag.items[0].tags == ["shelf"]  # nested $defs models, typed


def test_pulled_clients_pass_mypy_strict(pulled_project: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",
            str(REPO / ".mypy_cache"),
            PACKAGE,
        ],
        cwd=pulled_project,
        env={**os.environ, "MYPYPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
