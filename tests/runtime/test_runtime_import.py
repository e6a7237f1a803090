"""The runtime's import contract: cheap, self-contained, a small sorted public API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import generator.runtime as runtime

REPO_ROOT = Path(__file__).resolve().parents[2]

PUBLIC_API = {
    "AsyncClientStart",
    "AsyncEnvClient",
    "AsyncHttpTransport",
    "AsyncTransport",
    "AsyncWebSocketTransport",
    "EnvClient",
    "EnvConnectionError",
    "EnvModel",
    "EnvSpec",
    "EnvTimeoutError",
    "EnvValidationError",
    "EnvgenRuntimeError",
    "HttpTransport",
    "LocalDockerProvider",
    "LocalProcessProvider",
    "ModelCodec",
    "ProtocolError",
    "Provider",
    "ProviderError",
    "RetryPolicy",
    "ServerError",
    "ServerValidationError",
    "SessionLostError",
    "StepResult",
    "Transport",
    "ValidationIssue",
    "WebSocketTransport",
}


HEAVY = ("jinja2", "datamodel_code_generator", "click", "requests", "websockets", "httpx")


def _modules_loaded_by(code: str) -> set[str]:
    """Every module a fresh interpreter has loaded after running ``code``."""
    code += "\nimport json, sys; print(json.dumps(sorted(m for m in sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_import_does_not_load_heavy_or_generator_modules() -> None:
    loaded = _modules_loaded_by("import generator.runtime")
    for name in HEAVY:
        assert name not in loaded, f"import generator.runtime loaded {name}"
    generator_modules = {m for m in loaded if m == "generator" or m.startswith("generator.")}
    assert all(
        m in ("generator", "generator.runtime") or m.startswith("generator.runtime.")
        for m in generator_modules
    ), generator_modules


def test_building_clients_loads_no_transport_library() -> None:
    # Transports import requests, httpx or websockets on their first request, not before.
    code = (
        "from generated.echo_env import AsyncEchoEnv, EchoEnv\n"
        "for cls in (EchoEnv, AsyncEchoEnv):\n"
        "    for name in ('http', 'websocket'):\n"
        "        cls('http://127.0.0.1:9', transport=name, trace=True)\n"
    )
    loaded = _modules_loaded_by(code)
    for name in HEAVY:
        assert name not in loaded, f"building clients loaded {name}"


def test_importing_a_generated_client_defers_asyncio_and_http_client() -> None:
    # Each costs milliseconds of the import budget (benchmarks/bench_step.py): asyncio is
    # loaded by the first async client, http.client by the first HTTP connection.
    loaded = _modules_loaded_by("import generated.echo_env")
    for name in ("asyncio", "http.client", "ssl", *HEAVY):
        assert name not in loaded, f"import generated.echo_env loaded {name}"


def test_all_is_sorted_and_complete() -> None:
    assert runtime.__all__ == sorted(runtime.__all__)
    assert set(runtime.__all__) == PUBLIC_API
    for name in runtime.__all__:
        assert getattr(runtime, name).__module__.startswith("generator.runtime")


def test_py_typed_marker_exists() -> None:
    assert (REPO_ROOT / "generator" / "runtime" / "py.typed").is_file()


def test_runtime_never_imports_the_rest_of_generator() -> None:
    for path in (REPO_ROOT / "generator" / "runtime").glob("*.py"):
        text = path.read_text()
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith(("import generator", "from generator")):
                assert stripped.startswith(("from generator.runtime", "import generator.runtime"))
            assert not stripped.startswith("from .."), f"{path.name}: {stripped}"
