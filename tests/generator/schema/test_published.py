"""`schemas.json`: the committed schemas in `GET /schema`'s shape, and the one schema hash."""

from __future__ import annotations

import json
from pathlib import Path

from envgen_runtime.schemadiff import drift

from generator.schema.loader import Layout, load_env
from generator.schema.published import schemas_json
from tests.helpers import REPO, write_env


def test_each_role_holds_its_root_and_only_the_defs_it_reaches(tmp_path: Path) -> None:
    pos = {"type": "object", "properties": {"row": {"type": "integer", "minimum": 0}}}
    to = {"to": {"$ref": "#/$defs/Pos"}}
    action = {"type": "object", "properties": to, "$defs": {"Pos": pos}}
    write_env(tmp_path, "alpha", action=action)
    env = load_env(Layout.at(tmp_path), "alpha")
    document = json.loads(schemas_json(env))
    assert document["schema_hash"] == env.schema_hash
    assert sorted(document) == ["action", "observation", "schema_hash", "state"]
    assert document["action"]["properties"]["to"] == {"$ref": "#/$defs/Pos"}
    assert list(document["action"]["$defs"]) == ["Pos"]
    assert "$defs" not in document["state"]


def test_the_committed_schemas_are_no_drift_from_themselves() -> None:
    text = (REPO / "generated" / "grid_env" / "schemas.json").read_text(encoding="utf-8")
    document = json.loads(text)
    assert "reset" in document  # grid_env has reset parameters
    report = drift(document, document)
    assert report.breaking == () and report.compatible == ()


def test_no_other_generated_file_names_the_schema_hash() -> None:
    for env_dir in (REPO / "generated").iterdir():
        if not (env_dir / "schemas.json").is_file():
            continue
        document = json.loads((env_dir / "schemas.json").read_text(encoding="utf-8"))
        digest = document["schema_hash"].removeprefix("sha256:")
        holders = [p.name for p in env_dir.iterdir() if p.is_file() and digest in p.read_text()]
        assert holders == ["schemas.json"], env_dir.name
