"""Containers never outlive their owner: interpreter exit, and `envgen containers prune`."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner
from envgen_runtime import LocalDockerProvider
from envgen_runtime.containers import LABEL_PID, LABEL_SESSION

from generator.cli import main

from .conftest import run_python

pytestmark = pytest.mark.docker

ECHO_IMAGE = "envgen/echo-env:0.1.0"

# Start an echo_env container in a child interpreter and print its id and session.
START_CHILD = """
from generated.echo_env import EchoEnv
from envgen_runtime.containers import SESSION_ID
env = EchoEnv.from_docker_image(transport="http")
print(env.provider.container_id, SESSION_ID, flush=True)
"""


def _containers_of(docker_engine: Any, session: str) -> list[Any]:
    return list(
        docker_engine.containers.list(all=True, filters={"label": f"{LABEL_SESSION}={session}"})
    )


def test_interpreter_exit_removes_unclosed_containers(
    example_images: dict[str, str], docker_engine: Any
) -> None:
    proc = run_python(START_CHILD + "# exits without close(): atexit must remove it\n")
    assert proc.returncode == 0, proc.stderr
    container_id, session = proc.stdout.split()
    assert _containers_of(docker_engine, session) == []
    assert container_id not in {c.id for c in docker_engine.containers.list(all=True)}


def test_prune_removes_only_containers_whose_owner_is_gone(
    example_images: dict[str, str], docker_engine: Any, session_containers: Any
) -> None:
    # os._exit skips atexit, as a SIGKILL would: the container is orphaned.
    proc = run_python(START_CHILD + "import os; os._exit(0)\n")
    assert proc.returncode == 0, proc.stderr
    orphan_id, orphan_session = proc.stdout.split()
    try:
        (orphan,) = _containers_of(docker_engine, orphan_session)
        assert orphan.id == orphan_id
        runner = CliRunner()
        with LocalDockerProvider(ECHO_IMAGE, environment={"ENVGEN_PROTOCOL": "http"}) as mine:
            listed = runner.invoke(main, ["containers", "list"])
            assert listed.exit_code == 0, listed.output
            assert f"{orphan_id[:12]}  echo_env" in listed.output
            assert f"pid {orphan.labels[LABEL_PID]} (gone)" in listed.output
            assert f"{mine.container_id[:12]}" in listed.output  # type: ignore[index]
            assert "(running)" in listed.output

            dry = runner.invoke(main, ["containers", "prune", "--dry-run"])
            assert dry.exit_code == 0, dry.output
            assert f"would remove {orphan_id[:12]}" in dry.output
            assert len(_containers_of(docker_engine, orphan_session)) == 1

            pruned = runner.invoke(main, ["containers", "prune"])
            assert pruned.exit_code == 0, pruned.output
            assert f"removed {orphan_id[:12]} (echo_env, pid" in pruned.output
            assert mine.container_id not in pruned.output  # type: ignore[operator]
            assert _containers_of(docker_engine, orphan_session) == []
            assert len(session_containers()) == 1  # a live owner's container is kept
    finally:
        for container in _containers_of(docker_engine, orphan_session):
            container.remove(force=True)


def test_a_forked_child_exiting_leaves_the_parents_container(
    example_images: dict[str, str], docker_engine: Any
) -> None:
    code = START_CHILD + (
        "import os, sys\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    sys.exit(0)  # a normal exit runs the child's atexit handlers\n"
        "os.waitpid(pid, 0)\n"
        "print(env.reset().done, flush=True)  # the parent's container still serves\n"
        "env.close()\n"
    )
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.splitlines()
    _, session = first.split()
    assert second == "False"
    assert _containers_of(docker_engine, session) == []
