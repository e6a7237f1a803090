"""The same server behaviour gives the same StepResult over WebSocket and over HTTP.

The example servers run one env logic behind two apps: openenv 0.10's over WebSocket and
envgen_runtime.server's stateful one over HTTP, both sending the observation's `metadata`
(`{}` when empty; an openenv-core 0.1 server that strips it is tests/runtime's legacy-http
server). Everything but `raw` (the reply as received) must come out equal.
"""

from __future__ import annotations

from typing import Any

import pytest

from generated.coding_env import CodingAction, CodingEnv
from generated.echo_env import EchoAction, EchoEnv
from generated.grid_env import GridEnv, MoveAction, PickAction, TurnAction
from generated.reacher_env import ReacherAction, ReacherEnv

pytestmark = pytest.mark.e2e

EPISODES: dict[str, tuple[Any, list[Any]]] = {
    "echo_env": (EchoEnv, [EchoAction(message="hi"), EchoAction(message="")]),
    "coding_env": (CodingEnv, [CodingAction(code="print(6 * 7)")]),
    "grid_env": (
        GridEnv,
        [TurnAction(rotation="right"), MoveAction(direction="south"), PickAction(cells=[[0, 0]])],
    ),
    "reacher_env": (ReacherEnv, [ReacherAction(torques=[0.5, -0.25])] * 2),
}


def _play(url: str, transport: str, env_name: str) -> list[Any]:
    client_cls, actions = EPISODES[env_name]
    with client_cls(url, transport=transport) as env:
        # No seed: both use the default one.
        results = [env.reset()]
        results += [env.step(action) for action in actions]
    return results


@pytest.mark.parametrize("env_name", sorted(EPISODES))
def test_both_transports_give_the_same_step_results(
    servers: dict[tuple[str, str], str], env_name: str
) -> None:
    over_ws = _play(servers[(env_name, "websocket")], "websocket", env_name)
    over_http = _play(servers[(env_name, "http")], "http", env_name)
    for ws, http in zip(over_ws, over_http, strict=True):
        assert ws.observation == http.observation
        assert (ws.reward, ws.done, dict(ws.extra)) == (http.reward, http.done, dict(http.extra))
        assert ws.metadata == http.metadata
    assert over_ws[0].observation.metadata == {}  # OpenEnv's empty metadata, on both
