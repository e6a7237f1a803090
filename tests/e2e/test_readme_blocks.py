"""README.md's code blocks, run: what a reader copies must work as printed.

A ```python block preceded by ``<!-- readme-test: trainer -->`` runs in the session's trainer
venv (only the runtime's and echo_env's client wheels) outside the checkout, with
``ENV_REPO``/``ENV_PYTHON`` naming this checkout and its venv as the env's repository; one
tagged ``repo`` runs in this venv from the checkout. ``skip (reason)`` says why a block is not
run here. A section's blocks of one kind run as one script, in order, so later blocks may use
earlier ones' names. Every python block of the sections named in ``TESTED`` must be tagged.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.trainer_venv import TrainerVenv, clean_env
from tests.helpers import REPO

pytestmark = pytest.mark.e2e

TESTED = ("For trainers", "Many envs")
_TAG = re.compile(r"<!-- readme-test: (trainer|repo|skip \([^)]+\)) -->\n```python\n")
_BLOCK = re.compile(r"(<!-- readme-test: [^>]*-->\n)?```python\n(.*?)```", re.S)


def _section(title: str) -> str:
    text = (REPO / "README.md").read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _blocks(title: str, kind: str) -> str:
    section = _section(title)
    script = []
    for match in _BLOCK.finditer(section):
        tag = match[1] or ""
        assert _TAG.match(tag + "```python\n"), f"untagged python block in {title!r}:\n{match[2]}"
        if f"readme-test: {kind} -->" in tag:
            script.append(match[2])
    return "\n".join(script)


def _run(python: Path | str, script: str, cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        [str(python), "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"


def test_every_block_of_the_tested_sections_is_tagged_and_some_run() -> None:
    for title in TESTED:
        assert _blocks(title, "trainer") or _blocks(title, "repo"), title


def test_for_trainers_runs_from_a_venv_with_only_the_runtime_and_the_client(
    trainer_venv: TrainerVenv,
) -> None:
    env = {**clean_env(), "ENV_REPO": str(REPO), "ENV_PYTHON": sys.executable}
    _run(trainer_venv.python, _blocks("For trainers", "trainer"), trainer_venv.outside, env)


def test_the_trainers_default_server_fails_naming_the_image_and_the_command_way(
    trainer_venv: TrainerVenv,
) -> None:
    # What the section's first paragraph says happens without command=/cwd=.
    script = (
        "from envgen_clients.echo_env import EchoEnvPool\n"
        "from envgen_runtime import ProviderError\n"
        "try:\n"
        "    EchoEnvPool(8, auto_reset=True).start()\n"
        "except ProviderError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [str(trainer_venv.python), "-c", script],
        cwd=trainer_venv.outside,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "The server cannot import 'examples'" in done.stdout
    assert 'EchoEnvPool(..., provider="docker")' in done.stdout
    assert "envgen/echo-env:0.1.0" in done.stdout and '"cwd": ' in done.stdout


def test_many_envs_runs_from_the_checkout() -> None:
    _run(sys.executable, _blocks("Many envs", "repo"), REPO, clean_env())


def test_the_generated_packages_readme_says_where_a_trainer_gets_the_server() -> None:
    # What a trainer reads first: the installed package's own README.
    readme = " ".join((REPO / "generated" / "echo_env" / "README.md").read_text().split())
    assert "The env's server is not in this package" in readme
    assert "`EchoEnv.from_docker_image()`" in readme and "`envgen/echo-env:0.1.0`" in readme
    assert "`command=` and `cwd=`" in readme
