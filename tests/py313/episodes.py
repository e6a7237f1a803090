"""Seeded episodes of every example env's installed client, run under another Python.

Run by ``scripts/py313.py`` inside the Python 3.13 chroot, in a venv that holds only the
runtime's and the generated clients' wheels (so ``envgen_clients.<env>``, never the
checkout's ``generated`` package). The servers run on the host and are reached on
127.0.0.1; their base URLs come as JSON on the command line:

    python episodes.py '{"echo_env": {"websocket": "http://127.0.0.1:P", "http": ...}, ...}'

Each env plays the same seeded episode four ways (sync and async, WebSocket and stateful
HTTP). Each play is checked on its own, and sync and async must see the same observations,
rewards and done flags over each protocol: the servers replay a seed exactly, so any
difference is the client's. Prints one line per play and a pytest-style summary; exits 1
on any failure.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import math
import platform
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

PROTOCOLS = ("websocket", "http")


@dataclass(frozen=True)
class Episode:
    """What one env plays: a seed, actions built from its module, and checks on the results."""

    seed: int
    actions: Callable[[Any], list[Any]]
    check: Callable[[Any, list[Any], Any], None]


def _check_echo(module: Any, results: list[Any], state: Any) -> None:
    for result, message in zip(results[1:], ECHO_MESSAGES, strict=True):
        assert result.observation.echoed_message == message, result.observation
        assert result.observation.message_length == len(message)
        assert math.isclose(result.reward, len(message) * 0.1, abs_tol=1e-9), result.reward
    assert isinstance(state, module.EchoState) and state.step_count == len(ECHO_MESSAGES)


def _check_coding(module: Any, results: list[Any], state: Any) -> None:
    ok, failed = results[1].observation.result, results[2].observation.result
    assert (ok.stdout, ok.stderr, ok.exit_code) == ("hi\n", "err\n", 0), ok
    assert results[1].reward == 1.0 and failed.exit_code == 3 and results[2].reward == 0.0
    assert isinstance(state, module.CodingState) and state.last_exit_code == 3


def _check_grid(module: Any, results: list[Any], state: Any) -> None:
    order = ["north", "west", "south", "east"]
    facing = results[0].observation.facing
    assert results[1].observation.facing == order[(order.index(facing) + 1) % 4]
    assert results[2].observation.facing == "south"
    assert "class" in results[0].raw["observation"]  # the keyword kept its wire name
    assert isinstance(state, module.GridState) and state.step_count == 3
    assert state.agent_position == results[3].observation.position


def _check_quiz(module: Any, results: list[Any], state: Any) -> None:
    assert results[0].observation.hint is None  # required but nullable
    assert isinstance(results[1].observation.hint, str) and results[1].observation.correct is False
    assert results[2].observation.time_left >= 0
    assert isinstance(state, module.QuizState) and len(state.history) == 2


def _check_reacher(module: Any, results: list[Any], state: Any) -> None:
    for result in results[1:]:
        obs = result.observation
        assert len(obs.joint_angles) == 2
        assert math.isclose(result.reward, -obs.distance, rel_tol=1e-9), result.reward
        assert math.isclose(math.dist(obs.fingertip, obs.target), obs.distance, abs_tol=1e-6)
    assert isinstance(state, module.ReacherState) and state.step_count == 5


ECHO_MESSAGES = ("hello", "", "ünïcödé ✓")
EPISODES: dict[str, Episode] = {
    "echo_env": Episode(
        1, lambda m: [m.EchoAction(message=text) for text in ECHO_MESSAGES], _check_echo
    ),
    "coding_env": Episode(
        0,
        lambda m: [
            m.CodingAction(code="print('hi'); import sys; print('err', file=sys.stderr)"),
            m.CodingAction(code="raise SystemExit(3)", timeout_s=5),
        ],
        _check_coding,
    ),
    "grid_env": Episode(
        5,
        lambda m: [
            m.TurnAction(type="turn", rotation="left"),
            m.MoveAction(type="move", direction="south", steps=1),
            m.PickAction(type="pick", cells=[[0, 0]]),
        ],
        _check_grid,
    ),
    "quiz_env": Episode(
        2,
        lambda m: [
            m.QuizAction(answer="no idea", hint_requested=True),
            m.QuizAction(answer="x", confidence=None, from_="tester"),
        ],
        _check_quiz,
    ),
    "reacher_env": Episode(
        4, lambda m: [m.ReacherAction(torques=[0.5, -0.25]) for _ in range(5)], _check_reacher
    ),
}


def client_class(module: Any, *, asynchronous: bool) -> Any:
    """The module's sync client class, or its ``Async`` twin."""
    names = [n for n in module.__all__ if n.endswith("Env")]
    return getattr(module, next(n for n in names if n.startswith("Async") == asynchronous))


def play_sync(module: Any, url: str, protocol: str, episode: Episode) -> tuple[list[Any], Any]:
    with client_class(module, asynchronous=False)(url, transport=protocol) as env:
        results = [env.reset(seed=episode.seed)]
        results += [env.step(action) for action in episode.actions(module)]
        return results, env.state()


def play_async(module: Any, url: str, protocol: str, episode: Episode) -> tuple[list[Any], Any]:
    async def play() -> tuple[list[Any], Any]:
        async with client_class(module, asynchronous=True)(url, transport=protocol) as env:
            results = [await env.reset(seed=episode.seed)]
            for action in episode.actions(module):
                results.append(await env.step(action))
            return results, await env.state()

    return asyncio.run(play())


def trace(results: list[Any]) -> list[Any]:
    """What a replay of the seed must reproduce exactly (observations may be dataclasses)."""
    return [(repr(r.observation), r.reward, r.done) for r in results]


def _same_as_before(
    traces: dict[str, list[Any]], name: str, protocol: str, seen: list[Any]
) -> None:
    """Sync and async clients see the same trace over one protocol. (Across protocols the
    servers differ: openenv 0.10 sends observation metadata, openenv-core 0.1 leaves it out.)"""
    for other, before in traces.items():
        if other.split()[1] == protocol:
            assert seen == before, f"differs from {other}: {seen} != {before}"
    traces[name] = seen


def main(urls: dict[str, dict[str, str]]) -> int:
    started = time.monotonic()
    passed, failed = 0, 0
    for env_name, episode in EPISODES.items():
        module = importlib.import_module(f"envgen_clients.{env_name}")
        assert module.__name__.startswith("envgen_clients."), module
        traces: dict[str, list[Any]] = {}
        for protocol in PROTOCOLS:
            for mode, play in (("sync", play_sync), ("async", play_async)):
                name = f"{env_name} {protocol} {mode}"
                try:
                    results, state = play(module, urls[env_name][protocol], protocol, episode)
                    episode.check(module, results, state)
                    _same_as_before(traces, name, protocol, trace(results))
                except Exception:
                    failed += 1
                    print(f"FAILED {name}\n{traceback.format_exc()}", flush=True)
                else:
                    passed += 1
                    print(f"PASSED {name}", flush=True)
    elapsed = time.monotonic() - started
    counts = ", ".join(
        part for part in (f"{failed} failed" if failed else "", f"{passed} passed") if part
    )
    print(f"== episodes: {counts} in {elapsed:.2f}s (Python {platform.python_version()}) ==")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
