"""Start example servers as real processes, the way env.toml says, and stop them again.

Used by the example-server tests; small enough to reuse elsewhere. A server is started from
its manifest's `[server] command` on a free 127.0.0.1 port and counts as ready once its
health path answers 200. Waiting notices a process that died, and every failure carries the
tail of the server's own output.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import requests

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas"
HOST = "127.0.0.1"
ENVS = ("echo_env", "coding_env", "grid_env", "reacher_env", "quiz_env")
TOOL_ENVS = ("calc_env",)
"""Tool environments: openenv's MCPEnvironment on its own app (see tests/e2e/test_tool_env.py)."""
PROTOCOLS = ("websocket", "http")


class ServerStartError(RuntimeError):
    """A server exited or never became healthy; the message ends with its output."""


def free_port() -> int:
    """A port that was free a moment ago (the OS picks it; the race is acceptable in tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def manifest(env: str) -> dict[str, object]:
    """The env's parsed env.toml."""
    with (SCHEMAS / env / "env.toml").open("rb") as fh:
        return tomllib.load(fh)


def command(env: str, protocol: str, port: int) -> list[str]:
    """The manifest's server command with its placeholders filled in."""
    server = manifest(env)["server"]
    assert isinstance(server, dict)
    return [
        arg.format(python=sys.executable, host=HOST, port=port, transport=protocol)
        for arg in server["command"]
    ]


@dataclass
class RunningServer:
    """One server process and where to reach it."""

    env: str
    protocol: str
    port: int
    process: subprocess.Popen[bytes]
    log_file: IO[bytes]
    health_path: str = "/health"
    started_at: float = field(default_factory=time.monotonic)

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{HOST}:{self.port}/ws"

    def log(self, limit: int = 4000) -> str:
        """The tail of everything the server printed."""
        self.log_file.flush()
        data = Path(self.log_file.name).read_bytes()
        return data[-limit:].decode("utf-8", "replace")

    def wait_ready(self, timeout_s: float) -> float:
        """Poll the health path; return seconds taken, or raise with the server's output."""
        deadline = self.started_at + timeout_s
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                raise ServerStartError(
                    f"{self.env} ({self.protocol}) exited with code {code} before it was "
                    f"healthy; output:\n{self.log()}"
                )
            with contextlib.suppress(requests.RequestException):
                reply = requests.get(self.base_url + self.health_path, timeout=1)
                if reply.status_code == 200:
                    return time.monotonic() - self.started_at
            time.sleep(0.1)
        raise ServerStartError(
            f"{self.env} ({self.protocol}) not healthy after {timeout_s:.0f} s; output:\n"
            f"{self.log()}"
        )

    def stop(self, grace_s: float = 5.0) -> None:
        """Terminate, then kill if it lingers; always close the log."""
        try:
            if self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(grace_s)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(grace_s)
        finally:
            self.log_file.close()
            with contextlib.suppress(OSError):
                os.unlink(self.log_file.name)


def start(env: str, protocol: str) -> RunningServer:
    """Launch without waiting: callers start several, then wait for each."""
    port = free_port()
    log_file = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed by RunningServer.stop
        prefix=f"{env}-{protocol}-", suffix=".log", delete=False
    )
    env_vars = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        command(env, protocol, port),
        cwd=ROOT,
        env=env_vars,
        stdin=subprocess.DEVNULL,
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )
    server = manifest(env)["server"]
    assert isinstance(server, dict)
    return RunningServer(
        env, protocol, port, process, log_file, server.get("health_path", "/health")
    )


@dataclass
class Fleet:
    """Servers started together; one that failed to start fails only its own users."""

    ready: dict[tuple[str, str], RunningServer]
    errors: dict[tuple[str, str], str]

    def get(self, env: str, protocol: str) -> RunningServer:
        """The running server, or ServerStartError saying why there is none."""
        if (env, protocol) in self.errors:
            raise ServerStartError(self.errors[(env, protocol)])
        server = self.ready[(env, protocol)]
        if server.process.poll() is not None:
            raise ServerStartError(f"{env} ({protocol}) died during the session:\n{server.log()}")
        return server

    def stop(self) -> None:
        for server in self.ready.values():
            server.stop()


def start_all(pairs: Iterable[tuple[str, str]], timeout_s: float = 60.0) -> Fleet:
    """Start every (env, protocol) at once, then wait for each: start-ups overlap."""
    launched = {pair: start(*pair) for pair in pairs}
    fleet = Fleet({}, {})
    for pair, server in launched.items():
        try:
            server.wait_ready(timeout_s)
        except ServerStartError as exc:
            server.stop()
            if "address already in use" not in str(exc).lower():
                fleet.errors[pair] = str(exc)
                continue
            # Another process took the port between free_port() and bind: try once more.
            server = start(*pair)
            try:
                server.wait_ready(timeout_s)
            except ServerStartError as again:
                server.stop()
                fleet.errors[pair] = str(again)
                continue
        fleet.ready[pair] = server
    return fleet
