"""calc_env's committed schemas are what its server publishes (openenv's app, in process).

The tool files are the server's MCP `tools/list` entries (name, description, inputSchema,
outputSchema) as they are; the action and state schemas are its `GET /schema`'s. The
observation differs on purpose in one place: `tool_name` is not required, because reset's
observation (openenv's plain Observation) has none. Functions that do not match the
committed tools stop the server before it listens.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from fastapi.testclient import TestClient

from examples.calc_env.server import build_app
from tests.helpers import REPO

from .serving import SCHEMAS

ENV = SCHEMAS / "calc_env"
TOOL_KEYS = ("name", "description", "inputSchema", "outputSchema")


@pytest.fixture(scope="module")
def published() -> dict[str, Any]:
    with TestClient(build_app()) as client:
        listing = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        schema = client.get("/schema")
    return {"tools": listing.json()["result"]["tools"], "schema": schema.json()}


def _load(name: str) -> Any:
    return json.loads((ENV / name).read_text(encoding="utf-8"))


def test_tool_files_are_the_servers_tool_listing(published: dict[str, Any]) -> None:
    live = {
        tool["name"]: {k: tool[k] for k in TOOL_KEYS if tool.get(k) is not None}
        for tool in published["tools"]
    }
    committed: dict[str, Any] = {}
    for path in sorted((ENV / "tools").glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert path.stem == doc["name"]
        committed[doc["name"]] = doc
    assert committed == live


def test_action_and_state_are_the_servers(published: dict[str, Any]) -> None:
    for role in ("action", "state"):
        committed = _load(f"{role}.schema.json")
        committed.pop("$schema")
        assert committed == published["schema"][role], role


def test_observation_differs_only_where_reset_needs_it(published: dict[str, Any]) -> None:
    live = published["schema"]["observation"]
    committed = _load("observation.schema.json")
    assert live["required"] == ["tool_name"] and "required" not in committed
    assert set(live["properties"]) - set(committed["properties"]) == {"done", "reward"}
    for name, prop in committed["properties"].items():
        if name != "tool_name":
            assert _renamed(prop) == live["properties"][name], name


def _renamed(node: Any) -> Any:
    """The committed observation calls openenv's ToolError def CallToolError (ToolError is
    the runtime's exception); read it back under openenv's names."""
    text = json.dumps(node).replace("CallToolError", "ToolError")
    return json.loads(text)


_MISMATCHED = """
from envgen_runtime.server import tool_main
from examples.calc_env.server import CalcEnvironment, add, divide, stats


class Missing(CalcEnvironment):
    def tool_functions(self):
        return [add, divide, stats]  # format-number has no function


tool_main(Missing, ["--port", "1"])
"""


def test_a_server_whose_functions_miss_a_tool_stops_before_it_listens() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _MISMATCHED],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert (
        "ToolMismatchError: calc_env: tool 'format-number' (schemas/calc_env/tools/"
        "format-number.json) has no implementation: define format_number(value, digits)"
    ) in done.stderr
