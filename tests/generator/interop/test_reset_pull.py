"""`envgen pull` and reset parameters: written when the server publishes them under `reset`,
never invented when it does not, and a hand-written one kept by `pull --force`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.generator.interop.test_pull_import import GOOD_SCHEMA, METADATA, _pull
from tests.generator.interop.test_pull_import import fake_server as fake_server  # the fixture

RESET = {
    "title": "FakeResetParams",
    "type": "object",
    "additionalProperties": False,
    "properties": {"level": {"type": "integer", "minimum": 1, "default": 1, "title": "Level"}},
}


def _serve(fake: Any, schema: dict[str, Any]) -> str:
    url, routes = fake
    routes["/schema"] = (200, json.dumps(schema))
    routes["/metadata"] = (200, json.dumps(METADATA))
    return str(url)


def test_published_reset_schema_is_written_and_typed(fake_server: Any, tmp_path: Path) -> None:
    url = _serve(fake_server, {**GOOD_SCHEMA, "reset": RESET})
    result = _pull(tmp_path, url)
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "schemas/fake_env/reset.schema.json").read_text())
    assert written == RESET
    client = (tmp_path / "generated/fake_env/client.py").read_text()
    assert "        level: int = 1,\n" in client


def test_no_reset_key_writes_no_reset_schema(fake_server: Any, tmp_path: Path) -> None:
    url = _serve(fake_server, GOOD_SCHEMA)
    assert _pull(tmp_path, url).exit_code == 0
    assert not (tmp_path / "schemas/fake_env/reset.schema.json").exists()
    assert "_reset_params" not in (tmp_path / "generated/fake_env/client.py").read_text()


def test_force_keeps_a_reset_schema_the_server_does_not_publish(
    fake_server: Any, tmp_path: Path
) -> None:
    url = _serve(fake_server, GOOD_SCHEMA)
    assert _pull(tmp_path, url).exit_code == 0
    kept = tmp_path / "schemas/fake_env/reset.schema.json"
    kept.write_text(json.dumps(RESET))
    result = _pull(tmp_path, url, "--force")
    assert result.exit_code == 0, result.output
    assert json.loads(kept.read_text()) == RESET
    assert "level: int = 1" in (tmp_path / "generated/fake_env/client.py").read_text()


def test_bad_published_reset_schema_names_the_pointer(fake_server: Any, tmp_path: Path) -> None:
    bad = {"type": "object", "properties": {"seed": {"type": "integer"}}}
    url = _serve(fake_server, {**GOOD_SCHEMA, "reset": bad})
    result = _pull(tmp_path, url)
    assert result.exit_code == 2, result.output
    assert f"{url}/schema at /reset/properties/seed (JSON pointer)" in result.output
    assert not (tmp_path / "schemas").exists() and not (tmp_path / "generated").exists()
