"""`envgen pull` and `envgen import`: results, refusals and clear errors that write nothing."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner, Result

from generator.cli import main
from generator.interop.openenv import env_name_from_server, snake_case
from tests.helpers import snapshot

GOOD_SCHEMA = {
    "action": {
        "type": "object",
        "additionalProperties": False,
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "title": "A",
    },
    "observation": {
        "type": "object",
        "properties": {
            "seen": {"type": "integer"},
            "done": {"type": "boolean", "default": False},
            "reward": {
                "anyOf": [
                    {"type": "boolean"},
                    {"type": "integer"},
                    {"type": "number"},
                    {"type": "null"},
                ],
                "default": None,
            },
        },
    },
    "state": {
        "type": "object",
        "additionalProperties": True,
        "properties": {"step_count": {"type": "integer", "default": 0}},
    },
}
METADATA = {"name": "FakeEnvironment", "description": "A fake.", "version": "2.3.4"}


class _Handler(BaseHTTPRequestHandler):
    routes: ClassVar[dict[str, tuple[int, str]]] = {}

    def do_GET(self) -> None:
        status, body = self.routes.get(self.path, (404, "not found"))
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def fake_server() -> Iterator[tuple[str, dict[str, tuple[int, str]]]]:
    routes: ClassVar[dict[str, tuple[int, str]]] = {}
    handler = type("H", (_Handler,), {"routes": routes})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", routes
    finally:
        server.shutdown()
        server.server_close()


def _pull(root: Path, url: str, *extra: str) -> Result:
    return CliRunner().invoke(main, ["--root", str(root), "pull", url, *extra])


def test_pull_writes_manifest_schemas_and_client(fake_server: Any, tmp_path: Path) -> None:
    url, routes = fake_server
    routes["/schema"] = (200, json.dumps(GOOD_SCHEMA))
    routes["/metadata"] = (200, json.dumps(METADATA))
    result = _pull(tmp_path, url)
    assert result.exit_code == 0, result.output
    env = tmp_path / "schemas/fake_env"
    manifest = (env / "env.toml").read_text()
    assert 'name = "fake_env"' in manifest and 'version = "2.3.4"' in manifest
    assert 'transport = "websocket"' in manifest and 'description = "A fake."' in manifest
    observation = json.loads((env / "observation.schema.json").read_text())
    assert set(observation["properties"]) == {"seen"}  # reward/done live in the envelope
    text = (env / "action.schema.json").read_text()
    assert text == json.dumps(GOOD_SCHEMA["action"], indent=2, sort_keys=True) + "\n"
    assert (tmp_path / "generated/fake_env/client.py").is_file()
    assert "FakeEnv" in (tmp_path / "generated/fake_env/__init__.py").read_text()


def test_pull_refuses_to_overwrite_then_force_shows_changes(
    fake_server: Any, tmp_path: Path
) -> None:
    url, routes = fake_server
    routes["/schema"] = (200, json.dumps(GOOD_SCHEMA))
    routes["/metadata"] = (200, json.dumps(METADATA))
    assert _pull(tmp_path, url).exit_code == 0
    before = snapshot(tmp_path)
    again = _pull(tmp_path, url)
    assert again.exit_code == 2 and "--force" in again.output
    assert snapshot(tmp_path) == before
    changed = json.loads(json.dumps(GOOD_SCHEMA))
    changed["action"]["properties"]["m"] = {"type": "string"}
    changed["observation"]["properties"]["seen"] = {"type": "string"}
    routes["/schema"] = (200, json.dumps(changed))
    forced = _pull(tmp_path, url, "--force")
    assert forced.exit_code == 0, forced.output
    assert "replaced schemas/fake_env/" in forced.output
    assert '+    "m": {' in forced.output
    # Classified as `envgen diff` classes it: the observation's type change breaks readers,
    # the new optional action field does not; the version did not move, so it warns.
    assert "classified as envgen diff would: 1 breaking" in forced.output
    breaking = [line for line in forced.output.splitlines() if line.startswith("  breaking ")]
    assert breaking and "observation" in breaking[0] and "/properties/seen" in breaking[0]
    assert any(
        line.startswith("  safe") and "action" in line and "/properties/m" in line
        for line in forced.output.splitlines()
    )
    assert "warning: " in forced.output and "version stayed 2.3.4" in forced.output


@pytest.mark.parametrize(
    ("routes", "words"),
    [
        ({}, "does not exist (HTTP 404)"),
        ({"/schema": (200, "<html>nope</html>")}, "did not return JSON"),
        ({"/schema": (500, "boom")}, "answered HTTP 500"),
        ({"/schema": (200, json.dumps({"action": {}, "observation": {}}))}, "state schema missing"),
        ({"/schema": (200, json.dumps({**GOOD_SCHEMA, "action": {}}))}, "action schema is empty"),
        (
            {"/schema": (200, json.dumps({**GOOD_SCHEMA, "state": {"type": "strin"}}))},
            "at /state/type",
        ),
        ({"/schema": (200, json.dumps([1]))}, "expected a JSON object"),
    ],
)
def test_pull_errors_are_clear_and_write_nothing(
    fake_server: Any, tmp_path: Path, routes: dict[str, tuple[int, str]], words: str
) -> None:
    url, served = fake_server
    served.update(routes)
    served.setdefault("/metadata", (200, json.dumps(METADATA)))
    result = _pull(tmp_path, url)
    assert result.exit_code == 2, result.output
    assert words in result.output
    assert not (tmp_path / "schemas").exists() and not (tmp_path / "generated").exists()


def test_pull_unreachable(tmp_path: Path) -> None:
    result = _pull(tmp_path, "http://127.0.0.1:9")
    assert result.exit_code == 2
    assert "cannot reach http://127.0.0.1:9/schema" in result.output


def test_pull_without_metadata_needs_a_name(fake_server: Any, tmp_path: Path) -> None:
    url, routes = fake_server
    routes["/schema"] = (200, json.dumps(GOOD_SCHEMA))
    assert "pass --name" in _pull(tmp_path, url).output
    assert _pull(tmp_path, url, "--name", "named_env").exit_code == 0
    assert (tmp_path / "schemas/named_env/env.toml").is_file()


def test_import_from_pydantic_models(tmp_path: Path) -> None:
    base = "tests.generator.interop.openenv_style.counter_env"
    result = CliRunner().invoke(
        main,
        [
            "--root",
            str(tmp_path),
            "import",
            f"{base}:CounterAction",
            f"{base}:CounterObservation",
            f"{base}:CounterState",
            "--name",
            "counter_env",
            "--version",
            "1.2.0",
        ],
    )
    assert result.exit_code == 0, result.output
    state = json.loads((tmp_path / "schemas/counter_env/state.schema.json").read_text())
    assert {"total", "history", "target", "episode_id", "step_count"} <= set(state["properties"])
    models = (tmp_path / "generated/counter_env/models.py").read_text()
    assert "class CounterState" in models and "total: Annotated[int" in models


def test_import_bad_reference(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["--root", str(tmp_path), "import", "nope.mod:X", "tests.helpers:REPO", "--name", "x_env"],
    )
    assert result.exit_code == 2
    assert "cannot import 'nope.mod'" in result.output


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("EchoEnvironment", "echo_env"),
        ("grid_env", "grid_env"),
        ("HTTPServerEnv", "http_server_env"),
        ("my-env 2", "my_env_2"),
        ("Chess", "chess"),
    ],
)
def test_env_names_from_servers(given: str, expected: str) -> None:
    assert env_name_from_server(given) == expected
    assert snake_case("9lives") == "env_9lives"


def test_pull_accepts_bare_host_port(fake_server: Any, tmp_path: Path) -> None:
    url, routes = fake_server
    routes["/schema"] = (200, json.dumps(GOOD_SCHEMA))
    routes["/metadata"] = (200, json.dumps(METADATA))
    result = _pull(tmp_path, url.removeprefix("http://"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "schemas/fake_env/env.toml").is_file()


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("", "empty"),
        ("ftp://127.0.0.1:8000", "http:// or https://"),
        ("http://", "no host"),
        ("http://127.0.0.1:notaport", "port"),
        ("http://127.0.0.1:99999", "port"),
        ("http://127.0.0.1:8000/?x=1", "query"),
        ("http://127.0.0.1:8000/#top", "fragment"),
        ("http://127.0.0.1 :8000", "space"),
    ],
)
def test_pull_malformed_url_is_a_usage_error(tmp_path: Path, url: str, words: str) -> None:
    result = _pull(tmp_path, url)
    assert result.exit_code == 2, result.output
    assert "Invalid value for 'URL'" in result.output and words in result.output
    assert "No connection adapters" not in result.output
    assert not (tmp_path / "schemas").exists()


def test_pull_with_class_prefix_and_version(fake_server: Any, tmp_path: Path) -> None:
    url, routes = fake_server
    routes["/schema"] = (200, json.dumps(GOOD_SCHEMA))
    routes["/metadata"] = (200, json.dumps(METADATA))
    result = _pull(tmp_path, url, "--class-prefix", "Shop", "--version", "0.3.0")
    assert result.exit_code == 0, result.output
    manifest = (tmp_path / "schemas/fake_env/env.toml").read_text()
    assert 'class_prefix = "Shop"\n' in manifest and 'version = "0.3.0"' in manifest
    models = (tmp_path / "generated/fake_env/models.py").read_text()
    assert "class ShopAction" in models and "class FakeAction" not in models
    assert "class ShopEnv" in (tmp_path / "generated/fake_env/client.py").read_text()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--class-prefix", "shop"),
        ("--class-prefix", "Sh_op"),
        ("--version", "1.0"),
        ("--version", "v1.0.0"),
    ],
)
def test_pull_rejects_bad_prefix_or_version(tmp_path: Path, option: str, value: str) -> None:
    result = _pull(tmp_path, "http://127.0.0.1:9", option, value)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}'" in result.output and repr(value) in result.output
    assert not (tmp_path / "schemas").exists()


def test_import_rejects_a_bad_version(tmp_path: Path) -> None:
    base = "tests.generator.interop.openenv_style.counter_env"
    result = CliRunner().invoke(
        main,
        [
            "--root",
            str(tmp_path),
            "import",
            f"{base}:CounterAction",
            f"{base}:CounterObservation",
            "--name",
            "counter_env",
            "--version",
            "latest",
        ],
    )
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--version'" in result.output
    assert not (tmp_path / "schemas").exists()
