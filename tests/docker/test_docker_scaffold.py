"""`envgen new card_env && envgen generate card_env && envgen image card_env`, then an episode
in the container with `CardEnv.from_docker_image()`: no edits anywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from generator.cli import main
from tests.docker.conftest import record

pytestmark = pytest.mark.docker

TAG = "card-env:0.1.0"  # what envgen new writes into [docker] image

_PLAY = """
import json
from generated.card_env import CardAction, CardEnv

with CardEnv.from_docker_image() as env:
    result = env.reset(seed=1, episode_id="ep-docker")
    steps = 0
    while not result.done:
        result = env.step(CardAction(message="king"))
        steps += 1
    state = env.state()
print(json.dumps({"steps": steps, "reply": result.observation.reply,
                  "episode_id": state.episode_id, "step_count": state.step_count}))
"""


def test_scaffolded_env_image_plays_an_episode(docker_engine: Any, tmp_path: Path) -> None:
    runner = CliRunner()
    for args in (["new", "card_env"], ["generate", "card_env"]):
        result = runner.invoke(main, ["--root", str(tmp_path), *args])
        assert result.exit_code == 0, result.output
    started = time.monotonic()
    build = subprocess.run(
        [sys.executable, "-m", "generator", "--root", str(tmp_path), "image", "card_env"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    record("scaffolded card_env image build", time.monotonic() - started)
    try:
        play = subprocess.run(
            [sys.executable, "-c", _PLAY],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert play.returncode == 0, play.stderr[-4000:]
        assert json.loads(play.stdout) == {
            "steps": 5,
            "reply": "you said: king",
            "episode_id": "ep-docker",
            "step_count": 5,
        }
        leftover = docker_engine.containers.list(all=True, filters={"ancestor": TAG})
        assert leftover == []
    finally:
        docker_engine.images.remove(TAG, force=True)
