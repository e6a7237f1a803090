"""The main job of `make demo`: serve example envs locally and play short episodes with
their generated clients, printing every step.

No Docker is needed: each server runs as a local process on a free loopback port and is
stopped when its client closes.
"""

from __future__ import annotations

import sys
import time

from generated.echo_env import EchoAction, EchoEnv
from generated.grid_env import GridEnv, MoveAction, PickAction, TurnAction


def _show(label: str, result: object) -> None:
    print(f"  {label}: {result}")


def echo_episode(transport: str) -> None:
    started = time.perf_counter()
    with EchoEnv.from_local_process(transport=transport) as env:  # type: ignore[arg-type]
        print(
            f"echo_env over {transport} at {env.base_url} "
            f"(ready in {time.perf_counter() - started:.1f} s)"
        )
        result = env.reset(seed=7, episode_id="demo-echo")
        _show("reset", result.observation)
        for message in ("hello", "typed clients", "from JSON Schemas"):
            result = env.step(EchoAction(message=message))
            _show(
                f"step {message!r}",
                f"{result.observation} reward={result.reward} done={result.done}",
            )
        _show("state", env.state())


def grid_episode() -> None:
    with GridEnv.from_local_process() as env:
        print(f"grid_env over websocket at {env.base_url}")
        result = env.reset(seed=3, episode_id="demo-grid")
        _show("reset", f"at {result.observation.position} facing {result.observation.facing}")
        actions: list[MoveAction | TurnAction | PickAction] = [
            MoveAction(type="move", direction="east", steps=1),
            TurnAction(type="turn", rotation="left"),
            MoveAction(type="move", direction="south", steps=2),
            PickAction(type="pick", cells=[[0, 0], [1, 1]]),
        ]
        for action in actions:
            result = env.step(action)
            obs = result.observation
            _show(
                f"{action.type:<4}",
                f"at {obs.position} facing {obs.facing} "
                f"reward={result.reward} done={result.done} {obs.message!r}",
            )
        _show("state", env.state())


def main() -> int:
    echo_episode("websocket")
    echo_episode("http")
    grid_episode()
    return 0


if __name__ == "__main__":
    sys.exit(main())
