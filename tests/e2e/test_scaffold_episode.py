"""`envgen new card_env && envgen generate card_env`, then an episode with no edits.

The client starts the scaffolded server module with from_local_process() (env.toml's
`[server] command`) and plays until the example logic ends the episode, over both transports;
a step after that is refused as EpisodeEndedError, and /metadata reports env.toml's version
(bumped after `envgen new`: the generated server module's `main` carries it); on both server
backends, chosen by env.toml's `[server] backend` (`envgen new` writes "lean").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main

_PLAY = """
import json, sys, urllib.error, urllib.request
from envgen_runtime import EpisodeEndedError
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
        try:
            env.step(CardAction(message="one more"))
            refused = None
        except EpisodeEndedError as exc:
            refused = exc.op
        with urllib.request.urlopen(env.provider.base_url + "/metadata") as reply:
            version = json.load(reply)["version"]
        try:  # FastAPI's (the openenv backend's) API docs page; the lean app has none
            docs = urllib.request.urlopen(env.provider.base_url + "/docs").status
        except urllib.error.HTTPError as exc:
            docs = exc.code
        played[transport] = {
            "refused": refused,
            "version": version,
            "docs": docs,
            "reply": result.observation.reply,
            "turn": result.observation.turn,
            "rewards": rewards,
            "episode_id": state.episode_id,
            "step_count": state.step_count,
        }
print(json.dumps(played))
"""


@pytest.mark.parametrize("backend", ["openenv", "lean"])
def test_new_then_generate_then_from_local_process_plays_an_episode(
    tmp_path: Path, backend: str
) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["--root", str(tmp_path), "new", "card_env"])
    assert result.exit_code == 0, result.output
    toml = tmp_path / "schemas" / "card_env" / "env.toml"  # a version bump reaches /metadata
    text = toml.read_text().replace('version = "0.1.0"', 'version = "0.2.0"')
    served = text.replace('backend = "lean"', f'backend = "{backend}"')  # env.toml's choice
    assert 'backend = "lean"' in text
    toml.write_text(served)
    result = runner.invoke(main, ["--root", str(tmp_path), "generate", "card_env"])
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
            "refused": "step",
            "version": "0.2.0",
            "docs": 200 if backend == "openenv" else 404,  # the backend env.toml chose
            "reply": "you said: ace",
            "turn": 5,
            "rewards": [3.0] * 5,
            "episode_id": f"ep-{transport}",
            "step_count": 5,
        }
