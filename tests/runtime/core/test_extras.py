"""Optional libraries: a missing extra names the pip line; a broken one is not disguised."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from envgen_runtime import EnvgenRuntimeError, MissingExtraError
from envgen_runtime.core.extras import EXTRAS, require


def _without(module: str, code: str) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter where importing `module` fails as if not installed."""
    blocker = textwrap.dedent(
        f"""
        import sys
        class _Block:
            def find_spec(self, name, path=None, target=None):
                if name == {module!r} or name.startswith({module!r} + "."):
                    raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                return None
        sys.meta_path.insert(0, _Block())
        """
    )
    return subprocess.run(
        [sys.executable, "-c", blocker + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_every_optional_module_maps_to_a_declared_extra() -> None:
    assert EXTRAS == {
        "docker": "docker",
        "fastapi": "openenv",
        "fastmcp": "openenv",
        "gymnasium": "gym",
        "httpx": "mcp",
        "mcp": "mcp",
        "openenv": "openenv",
        "ray": "ray",
        "starlette": "server",
        "uvicorn": "server",
    }


def test_a_present_module_is_returned() -> None:
    assert require("docker", "testing").__name__ == "docker"


def test_missing_docker_names_the_docker_extra() -> None:
    proc = _without(
        "docker",
        """
        from envgen_runtime import LocalDockerProvider, MissingExtraError
        try:
            LocalDockerProvider("envgen/echo-env:0.1.0").start()
        except MissingExtraError as exc:
            print(type(exc).__mro__[1].__name__, exc.extra, exc.module, "|", exc)
        """,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.strip()
    assert out.startswith("EnvgenRuntimeError docker docker |"), out
    assert "pip install 'envgen-runtime[docker]'" in out


def test_missing_gymnasium_names_the_gym_extra_and_the_rest_of_the_runtime_imports() -> None:
    proc = _without(
        "gymnasium",
        """
        import envgen_runtime
        from envgen_runtime import EnvPool, MissingExtraError
        try:
            from envgen_runtime import GymVectorEnv
        except MissingExtraError as exc:
            print(exc.extra, exc.module, "|", exc)
        """,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.strip()
    assert out.startswith("gym gymnasium |"), out
    assert "pip install 'envgen-runtime[gym]'" in out and "GymVectorEnv" in out


def test_missing_fastmcp_names_the_openenv_extra_and_server_tool_data_still_imports() -> None:
    proc = _without(
        "fastmcp",
        """
        from envgen_runtime import MissingExtraError
        from envgen_runtime.server import ServerTool, ToolMismatchError
        try:
            from envgen_runtime.server import ToolEnvironment
        except MissingExtraError as exc:
            print(exc.extra, exc.module, "|", exc)
        """,
    )
    assert proc.returncode == 0, proc.stderr
    head, _, message = proc.stdout.partition(" | ")
    assert head == "openenv fastmcp"
    assert "pip install 'envgen-runtime[openenv]'" in message


def test_asyncio_http_needs_no_httpx(legacy_url: str) -> None:
    # The asyncio HTTP transport runs on the standard library's streams (the engine in
    # _http_engine): with httpx unimportable, a request still gets its reply.
    proc = _without(
        "httpx",
        f"""
        import asyncio
        from envgen_runtime import AsyncHttpTransport
        async def go():
            transport = AsyncHttpTransport({legacy_url!r}, timeout_s=10)
            try:
                return await transport.request("reset", {{}})
            finally:
                await transport.close()
        print(sorted(asyncio.run(go())))
        """,
    )
    assert proc.returncode == 0, proc.stderr
    assert "'observation'" in proc.stdout


def test_a_broken_dependency_of_an_installed_extra_is_not_reported_as_missing() -> None:
    # docker is installed but one of its own imports fails: that is not "install the extra".
    proc = _without(
        "requests",
        """
        from envgen_runtime.core.extras import require
        try:
            require("docker", "testing")
        except ModuleNotFoundError as exc:
            print(type(exc).__name__, exc.name)
        """,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ModuleNotFoundError", "requests"]


def test_missing_extra_error_is_both_a_runtime_error_and_an_import_error() -> None:
    error = MissingExtraError("x", extra="docker", module="docker")
    assert isinstance(error, EnvgenRuntimeError) and isinstance(error, ImportError)
    with pytest.raises(ImportError):
        raise error
