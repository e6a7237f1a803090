"""Temporary git repositories holding copies of the example envs, for git-mode tests."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import REPO

ENVS = ("echo_env", "grid_env", "quiz_env")


def git(root: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        check=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_NOSYSTEM": "1",
            "PATH": "/usr/bin:/bin:/usr/local/bin",
        },
    )
    return result.stdout


def make_repo(root: Path, envs: tuple[str, ...] = ENVS) -> Path:
    """A git repo with copies of `envs`' schemas, committed once ("base")."""
    root.mkdir(parents=True, exist_ok=True)
    for env in envs:
        shutil.copytree(REPO / "schemas" / env, root / "schemas" / env)
    git(root, "init", "-q", "-b", "main")
    commit(root, "base")
    return root


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)


def edit_json(path: Path, change: Any) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=2) + "\n")


def set_version(root: Path, env: str, version: str) -> None:
    path = root / "schemas" / env / "env.toml"
    lines = [
        f'version = "{version}"' if line.startswith("version") else line
        for line in path.read_text().splitlines()
    ]
    path.write_text("\n".join(lines) + "\n")


def add_facing(doc: dict[str, Any]) -> None:
    doc["properties"]["facing"]["enum"].append("up")
