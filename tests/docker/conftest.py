"""Fixtures for the real-Docker tests: an engine, the example images, and a leak check.

The engine comes from ``scripts/ensure-docker.sh`` (installs docker.io and starts dockerd
when none answers). Only when no engine can be had are the docker-marked tests skipped, with
the script's reason. Images are built once per session by ``envgen image`` (the documented
way); a warm build takes about a second. After the session no container
labelled ``envgen.session`` may be left by this run or by a process that is gone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from envgen_runtime.containers import LABEL_SESSION, SESSION_ID, owner_state

from tests.helpers import REPO

ENSURE_DOCKER = REPO / "scripts" / "ensure-docker.sh"
ENVGEN_IMAGE = [sys.executable, "-m", "generator", "image"]

# Measurements printed in the terminal summary (see pytest_terminal_summary).
TIMINGS: dict[str, list[float]] = {}

_engine_state: dict[str, Any] = {}


def record(name: str, seconds: float) -> None:
    """Keep a measurement for the summary at the end of the run."""
    TIMINGS.setdefault(name, []).append(seconds)


def _engine_client() -> Any:
    import docker

    client = docker.from_env(timeout=120)
    client.ping()
    return client


def _engine_or_reason() -> tuple[Any | None, str]:
    """A client for a running engine (starting one if need be), or why there is none."""
    if "client" in _engine_state:
        return _engine_state["client"], _engine_state["reason"]
    client: Any | None = None
    reason = ""
    try:
        client = _engine_client()
    except Exception:
        proc = subprocess.run(
            ["bash", str(ENSURE_DOCKER)], capture_output=True, text=True, check=False
        )
        try:
            client = _engine_client()
        except Exception as exc:
            output = (proc.stderr or proc.stdout).strip().splitlines()
            reason = "no Docker engine could be started: " + (output[-1] if output else str(exc))
    _engine_state.update(client=client, reason=reason)
    return client, reason


@pytest.fixture(scope="session")
def docker_engine() -> Any:
    """A docker-py client for a running engine; skips the test (with the reason) without one."""
    client, reason = _engine_or_reason()
    if client is None:
        pytest.skip(reason)
    return client


@pytest.fixture(scope="session")
def example_images(docker_engine: Any) -> dict[str, str]:
    """Build (or confirm) every example env image with the documented command."""
    started = time.monotonic()
    proc = subprocess.run(
        ENVGEN_IMAGE,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert proc.returncode == 0, f"envgen image failed:\n{proc.stderr[-4000:]}"
    record("image build (session start)", time.monotonic() - started)
    listing = subprocess.run(
        [*ENVGEN_IMAGE, "--list"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return dict(line.split("\t") for line in listing.splitlines() if line)


@pytest.fixture
def session_containers(docker_engine: Any) -> Iterator[Any]:
    """A function listing this session's containers; the test fails if it leaves any."""

    def current() -> list[Any]:
        return list(
            docker_engine.containers.list(
                all=True, filters={"label": f"{LABEL_SESSION}={SESSION_ID}"}
            )
        )

    yield current
    left = current()
    for container in left:
        container.remove(force=True)
    assert not left, f"test left containers behind: {[c.short_id for c in left]}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run if a container of this session, or of a dead owner, is still there."""
    client = _engine_state.get("client")
    if client is None:
        return
    leaked = []
    for container in client.containers.list(all=True, filters={"label": LABEL_SESSION}):
        labels = container.labels or {}
        if labels.get(LABEL_SESSION) == SESSION_ID or owner_state(labels) == "gone":
            leaked.append(f"{container.short_id} ({labels.get('envgen.env', '?')})")
            container.remove(force=True)
    if leaked:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = f"envgen containers left after the run (now removed): {', '.join(leaked)}"
        if reporter is not None:
            reporter.write_line(message, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the measured start-to-ready and build times (asked for in the issue)."""
    if not TIMINGS:
        return
    terminalreporter.section("docker timings")
    for name, values in sorted(TIMINGS.items()):
        shown = ", ".join(f"{v:.2f}" for v in values)
        terminalreporter.write_line(f"{name}: {shown} s")


def run_python(code: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter at the repository root (own envgen session)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
