# mypy: disallow-subclassing-any=False
"""Real environment servers for the runtime tests, run as a script in a subprocess.

    python servers.py ws           --host H --port P   openenv 0.10.0 app, up to 8 sessions
    python servers.py ws-cap1      --host H --port P   the same app, one session at a time
    python servers.py legacy-http  --host H --port P   openenv-core 0.1.1 stateful HTTP app
    python servers.py mini         --host H --port P   stdlib server answering /health only

The environment is a counter: each step adds ``delta`` to a total and echoes ``message``;
``sleep_s`` makes a step slow and ``fail`` makes it raise. Observations carry a field the
client models do not declare (``server_only``) and metadata, to prove nothing is dropped.
"""

from __future__ import annotations

import argparse
import http.server
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import time
import types
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def build_openenv_app(max_sessions: int) -> Any:
    """The counter environment on openenv 0.10.0 (WebSocket sessions, per-request HTTP)."""
    from openenv.core.env_server.http_server import create_app  # type: ignore[import-untyped]
    from openenv.core.env_server.interfaces import Environment  # type: ignore[import-untyped]
    from openenv.core.env_server.types import (  # type: ignore[import-untyped]
        Action,
        Observation,
        State,
    )
    from pydantic import Field

    class CounterAction(Action):
        message: str
        delta: int = 1
        sleep_s: float = Field(default=0.0, ge=0.0)
        fail: bool = False

    class CounterObservation(Observation):
        echoed: str = ""
        total: int = 0
        step: int = 0
        seed: int | None = None
        episode_id: str | None = None
        server_only: str = "kept"

    class CounterState(State):
        total: int = 0
        seed: int | None = None
        label: str = "counter"

    class CounterEnvironment(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self._state = CounterState(episode_id=None, step_count=0)

        def reset(
            self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
        ) -> Any:
            self._state = CounterState(
                episode_id=episode_id or uuid.uuid4().hex, step_count=0, total=0, seed=seed
            )
            return CounterObservation(
                seed=seed,
                episode_id=self._state.episode_id,
                reward=None,
                done=False,
                metadata={"phase": "reset"},
            )

        def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
            if action.fail:
                raise RuntimeError("the action asked the server to fail")
            if action.sleep_s:
                time.sleep(action.sleep_s)
            self._state.step_count += 1
            self._state.total += action.delta
            return CounterObservation(
                echoed=action.message,
                total=self._state.total,
                step=self._state.step_count,
                seed=self._state.seed,
                episode_id=self._state.episode_id,
                reward=action.delta,  # an int on purpose: clients must make it a float
                done=self._state.total >= 10,
                metadata={"step": self._state.step_count},
            )

        @property
        def state(self) -> Any:
            return self._state

    return create_app(
        CounterEnvironment,
        CounterAction,
        CounterObservation,
        env_name="counter",
        max_concurrent_envs=max_sessions,
        state_cls=CounterState,
    )


def _import_openenv_core_0_1() -> types.ModuleType:
    """openenv-core 0.1.1's own server code.

    openenv 0.10.0 overwrites ``openenv_core/__init__.py`` with a shim that re-exports
    ``openenv.core``; load the 0.1.1 subpackage without running that shim.
    """
    spec = importlib.util.find_spec("openenv_core")
    if spec is None or spec.origin is None:
        raise SystemExit("openenv-core is not installed")
    package = types.ModuleType("openenv_core")
    package.__path__ = [str(Path(spec.origin).parent)]
    sys.modules["openenv_core"] = package
    return importlib.import_module("openenv_core.env_server")


def build_legacy_app() -> Any:
    """The counter environment on openenv-core 0.1.1's stateful HTTP server."""
    env_server: Any = _import_openenv_core_0_1()
    http_server: Any = importlib.import_module("openenv_core.env_server.http_server")

    @dataclass(kw_only=True)
    class LegacyAction(env_server.Action):
        message: str
        delta: int = 1

    @dataclass(kw_only=True)
    class LegacyObservation(env_server.Observation):
        echoed: str = ""
        total: int = 0
        step: int = 0
        server_only: str = "kept"

    @dataclass
    class LegacyState(env_server.State):
        total: int = 0

    class LegacyEnvironment(env_server.Environment):
        def __init__(self) -> None:
            super().__init__()
            self._state = LegacyState()

        def reset(self) -> Any:
            self._state = LegacyState(episode_id=uuid.uuid4().hex, step_count=0, total=0)
            return LegacyObservation(reward=None, done=False)

        def step(self, action: Any) -> Any:
            self._state.step_count += 1
            self._state.total += action.delta
            return LegacyObservation(
                echoed=action.message,
                total=self._state.total,
                step=self._state.step_count,
                reward=float(action.delta),
                done=self._state.total >= 10,
            )

        @property
        def state(self) -> Any:
            return self._state

    return http_server.create_fastapi_app(LegacyEnvironment(), LegacyAction, LegacyObservation)


class _MiniHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status = 200 if self.path == "/health" else 404
        body = json.dumps({"status": "healthy" if status == 200 else "missing"}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def run_mini(args: argparse.Namespace) -> None:
    """A tiny health-only server for provider tests (starts in milliseconds)."""
    if args.pid_file:
        Path(args.pid_file).write_text(str(os.getpid()))
    if args.fail_once_marker and not os.path.exists(args.fail_once_marker):
        Path(args.fail_once_marker).write_text("failed once")
        print(
            f"OSError: [Errno 98] error while attempting to bind on port {args.port}: "
            "address already in use",
            flush=True,
        )
        raise SystemExit(1)
    if args.child_pid_file:
        code = "import time; time.sleep(120)"
        child = subprocess.Popen([sys.executable, "-c", code])
        Path(args.child_pid_file).write_text(str(child.pid))
    print(f"mini server on {args.host}:{args.port}", flush=True)
    server = http.server.ThreadingHTTPServer((args.host, args.port), _MiniHandler)
    server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["ws", "ws-cap1", "legacy-http", "mini"])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid-file")
    parser.add_argument("--child-pid-file")
    parser.add_argument("--fail-once-marker")
    args = parser.parse_args()
    if args.kind == "mini":
        run_mini(args)
        return
    import uvicorn

    if args.kind == "legacy-http":
        app = build_legacy_app()
    else:
        app = build_openenv_app(max_sessions=1 if args.kind == "ws-cap1" else 8)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
