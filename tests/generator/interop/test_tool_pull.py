"""`envgen pull` from a live tool env: one `tools/<tool>.json` per tool, as committed.

calc_env's server is started once for the module per protocol (LocalProcessProvider, the
command in its SPEC, stopped by its handle): over WebSocket openenv's own app, which serves
MCP's `tools/list` on `/mcp`; over HTTP envgen's stateful app, which does not, so the tools
come from OpenEnv's `list_tools` step. Broken listings come from a small local HTTP server.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner, Result
from envgen_runtime import LocalProcessProvider

from generated.calc_env import CalcEnv
from generator.cli import main
from generator.interop.tool_listing import is_tool_env, tool_env_observation, tool_file_text
from tests.helpers import REPO, snapshot

COMMITTED = REPO / "schemas" / "calc_env"
TRANSPORTS = ("websocket", "http")


@pytest.fixture(scope="module")
def calc_servers() -> Iterator[dict[str, str]]:
    spec = CalcEnv.SPEC
    providers: dict[str, LocalProcessProvider] = {}
    try:
        for transport in TRANSPORTS:
            providers[transport] = LocalProcessProvider(
                spec.server_command,
                health_path=spec.health_path,
                startup_timeout_s=spec.startup_timeout_s,
                cwd=REPO,
                transport=transport,
            )
            providers[transport].start()
        yield {t: p.base_url for t, p in providers.items() if p.base_url}
    finally:
        for provider in providers.values():
            provider.stop()


def _pull(root: Path, url: str, *extra: str) -> Result:
    return CliRunner().invoke(main, ["--root", str(root), "pull", url, *extra])


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_pull_from_a_live_tool_env_gives_the_committed_tool_files(
    calc_servers: dict[str, str], tmp_path: Path
) -> None:
    result = _pull(tmp_path, calc_servers["websocket"])
    assert result.exit_code == 0, result.output
    assert "a tool env: 4 tool(s) written to schemas/calc_env/tools/" in result.output
    pulled = tmp_path / "schemas" / "calc_env"
    committed = snapshot(COMMITTED / "tools")
    assert committed and snapshot(pulled / "tools") == committed  # byte for byte
    for role in ("action", "state"):
        expected = _json(COMMITTED / f"{role}.schema.json")
        expected.pop("$schema")
        assert _json(pulled / f"{role}.schema.json") == expected, role
    observation = _json(pulled / "observation.schema.json")
    assert "required" not in observation  # reset's observation has no tool_name
    assert set(observation["$defs"]) == {"CallToolError", "CallToolErrorType"}
    assert (tmp_path / "generated/calc_env/tools.py").is_file()
    again = _pull(tmp_path, calc_servers["websocket"], "--force")
    assert again.exit_code == 0, again.output
    assert "schemas unchanged" in again.output


def test_pull_without_mcp_reads_openenvs_tool_listing(
    calc_servers: dict[str, str], tmp_path: Path
) -> None:
    result = _pull(tmp_path, calc_servers["http"])
    assert result.exit_code == 0, result.output
    assert "/mcp is not served" in result.output and "no output schemas" in result.output
    for path in sorted((COMMITTED / "tools").glob("*.json")):
        pulled = _json(tmp_path / "schemas/calc_env/tools" / path.name)
        expected = {k: v for k, v in _json(path).items() if k != "outputSchema"}
        assert pulled == expected, path.name
        assert list(pulled["inputSchema"]["properties"]) == list(
            expected["inputSchema"]["properties"]
        )


def test_force_over_an_env_replaces_its_tools_and_shows_them(
    calc_servers: dict[str, str], tmp_path: Path
) -> None:
    assert _pull(tmp_path, calc_servers["http"]).exit_code == 0
    stale = tmp_path / "schemas/calc_env/tools/sqrt.json"
    stale.write_text((COMMITTED / "tools/add.json").read_text().replace('"add"', '"sqrt"'))
    forced = _pull(tmp_path, calc_servers["websocket"], "--force")
    assert forced.exit_code == 0, forced.output
    assert not stale.exists()
    assert "tools/add.json (pulled)" in forced.output  # outputSchema added
    assert "tools/sqrt.json (before)" in forced.output
    assert snapshot(tmp_path / "schemas/calc_env/tools") == snapshot(COMMITTED / "tools")


ACTION = _json(COMMITTED / "action.schema.json")
SCHEMA_BODY = {
    "action": ACTION,
    "observation": {"type": "object", "properties": {"tool_name": {"type": "string"}}},
    "state": {"type": "object", "properties": {"step_count": {"type": "integer"}}},
}
TOOL = {"name": "add", "inputSchema": {"type": "object", "properties": {}}}


class _Handler(BaseHTTPRequestHandler):
    routes: ClassVar[dict[str, tuple[int, str]]] = {}

    def _answer(self) -> None:
        status, body = self.routes.get(f"{self.command} {self.path}", (404, "not found"))
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._answer()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def fake_tool_server() -> Iterator[tuple[str, dict[str, tuple[int, str]]]]:
    routes: dict[str, tuple[int, str]] = {
        "GET /schema": (200, json.dumps(SCHEMA_BODY)),
        "GET /metadata": (200, json.dumps({"name": "calc_env", "version": "0.1.0"})),
    }
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (_Handler,), {"routes": routes}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", routes
    finally:
        server.shutdown()
        server.server_close()


def _listing(*tools: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": list(tools)}})


@pytest.mark.parametrize(
    ("mcp", "words"),
    [
        ((200, _listing({**TOOL, "name": "reset"})), "at /result/tools/0/name"),
        ((200, _listing(TOOL, {**TOOL, "description": "again"})), "lists tool 'add' twice"),
        ((200, _listing({**TOOL, "inputSchema": {"type": "array"}})), "/inputSchema/type"),
        ((200, json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}})), "result.tools"),
        ((200, json.dumps({"jsonrpc": "2.0", "error": {"message": "no"}})), "refused tools/list"),
        ((500, "boom"), "/mcp answered HTTP 500"),
    ],
)
def test_a_broken_tool_listing_names_the_url_and_writes_nothing(
    fake_tool_server: Any, tmp_path: Path, mcp: tuple[int, str], words: str
) -> None:
    url, routes = fake_tool_server
    routes["POST /mcp"] = (200, _listing(TOOL))
    first = _pull(tmp_path, url)
    assert first.exit_code == 0, first.output
    before = snapshot(tmp_path)
    routes["POST /mcp"] = mcp
    result = _pull(tmp_path, url, "--force")
    assert result.exit_code == 2, result.output
    assert f"{url}/mcp" in result.output and words in result.output
    assert snapshot(tmp_path) == before  # the env as it was, its tools/ included


def test_tool_env_detection_and_observation() -> None:
    assert is_tool_env(ACTION)
    assert not is_tool_env(SCHEMA_BODY["state"]) and not is_tool_env(None)
    assert not is_tool_env({"properties": {"tool_name": {}, "type": {"const": "other"}}})
    observation = {
        "$defs": {"ToolError": {"title": "ToolError", "properties": {"t": {"$ref": "#/$defs/T"}}}},
        "properties": {"error": {"$ref": "#/$defs/ToolError"}, "tool_name": {"type": "string"}},
        "required": ["tool_name", "other"],
    }
    adapted = tool_env_observation(observation)
    assert adapted["required"] == ["other"]
    assert adapted["$defs"] == {
        "CallToolError": {"title": "CallToolError", "properties": {"t": {"$ref": "#/$defs/T"}}}
    }
    assert adapted["properties"]["error"] == {"$ref": "#/$defs/CallToolError"}
    text = tool_file_text({"name": "x", "title": None, "inputSchema": {"b": 1, "a": 2}, "meta": {}})
    assert text == '{\n  "name": "x",\n  "inputSchema": {\n    "b": 1,\n    "a": 2\n  }\n}\n'
