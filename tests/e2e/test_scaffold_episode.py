"""`envgen new card_env && envgen generate card_env`, then an episode with no edits.

The client starts the scaffolded server module with from_local_process() (env.toml's
`[server] command`) and plays until the example logic ends the episode, over both transports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from generator.cli import main

_PLAY = """
import json, sys
from generated.card_env import CardAction, CardEnv

played = {}
for transport in ("websocket", "http"):
    with CardEnv.from_local_process(transport=transport) as env:
        result = env.reset(seed=3, episode_id=f"ep-{transport}")
        rewards = []
        while not result.done:
            result = env.step(CardAction(message="ace"))
            rewards.append(result.reward)
        state = env.state()
        played[transport] = {
            "reply": result.observation.reply,
            "turn": result.observation.turn,
            "rewards": rewards,
            "episode_id": state.episode_id,
            "step_count": state.step_count,
        }
print(json.dumps(played))
"""


def test_new_then_generate_then_from_local_process_plays_an_episode(tmp_path: Path) -> None:
    runner = CliRunner()
    for args in (["new", "card_env"], ["generate", "card_env"]):
        result = runner.invoke(main, ["--root", str(tmp_path), *args])
        assert result.exit_code == 0, result.output
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", _PLAY],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    played = json.loads(proc.stdout)
    for transport in ("websocket", "http"):
        assert played[transport] == {
            "reply": "you said: ace",
            "turn": 5,
            "rewards": [3.0] * 5,
            "episode_id": f"ep-{transport}",
            "step_count": 5,
        }
