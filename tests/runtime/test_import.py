"""The runtime's import contract: cheap, self-contained, a small sorted public API."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import envgen_runtime as runtime

from tests.helpers import REPO

REPO_ROOT = REPO

VERSION_NAMES = {"API_VERSION", "__version__"}


PROVIDER_ONLY = ("subprocess", "tempfile", "socket", "signal", "shlex", "selectors", "shutil")
"""Standard modules only starting or stopping a server needs: a client's import skips them."""

HEAVY = ("jinja2", "datamodel_code_generator", "click", "requests", "websockets", "httpx", "ray")
HEAVY += ("gymnasium", "numpy")  # the `gym` extra: loaded when GymEnv, ... are first named


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
    loaded = _modules_loaded_by("import envgen_runtime")
    for name in HEAVY:
        assert name not in loaded, f"import envgen_runtime loaded {name}"
    assert not {m for m in loaded if m == "generator" or m.startswith("generator.")}


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
    # loaded by the first async client, http.client by the first HTTP connection; pydantic's
    # plugin loader (importlib.metadata) by the first model validator built (EnvModel defers
    # that to first use); logging by the first WebSocket connection (its redacting logger).
    loaded = _modules_loaded_by("import generated.echo_env")
    # jsonschema and the schema comparer: by the first reset that finds the server's schemas
    # differ from the committed ones (the drift check at connect).
    deferred = ("asyncio", "http.client", "ssl", "pydantic.plugin._loader", "logging")
    deferred += ("jsonschema", "envgen_runtime.schemadiff")
    for name in (*deferred, *HEAVY):
        assert name not in loaded, f"import generated.echo_env loaded {name}"


def test_all_is_sorted_and_names_only_the_runtimes_own() -> None:
    """Which names: tests/runtime/public_api.txt (test_public_api.py) records them."""
    assert runtime.__all__ == sorted(runtime.__all__)
    for name in set(runtime.__all__) - VERSION_NAMES:
        assert getattr(runtime, name).__module__.startswith("envgen_runtime")


def test_py_typed_marker_exists() -> None:
    assert (REPO_ROOT / "runtime" / "envgen_runtime" / "py.typed").is_file()


def test_runtime_never_imports_the_generator_or_its_tools() -> None:
    # The import-time test above sees only what loads eagerly; this reads every import line,
    # lazy ones included. (tests/e2e/test_installed_client.py proves it in a venv without them.)
    forbidden = ("generator", "jinja2", "datamodel_code_generator", "ruff", "click")
    pattern = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_][\w]*)", re.M)
    package = REPO_ROOT / "runtime" / "envgen_runtime"
    for path in sorted(package.rglob("*.py")):
        text = path.read_text()
        tops = set(pattern.findall(text))
        assert not tops & set(forbidden), f"{path.name} imports {sorted(tops & set(forbidden))}"
        depth = len(path.relative_to(package).parts)  # a relative import may climb depth - 1
        assert f"from {'.' * (depth + 1)}" not in text, f"{path} imports from outside the package"
        if path.name != "validation.py":  # the one module that validates, and lazily
            assert "jsonschema" not in tops, f"{path.name} imports jsonschema"


def test_importing_a_client_loads_no_provider_only_module() -> None:
    loaded = _modules_loaded_by("import generated.echo_env")
    assert sorted(loaded & set(PROVIDER_ONLY)) == []
