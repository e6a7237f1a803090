"""The committed schemas and manifests: well-formed, authored to the house rules, and meaning
what the example servers need them to mean (checked on hand-written instances)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Resource

from .serving import ENVS, SCHEMAS, TOOL_ENVS, command, manifest
from .wire import REGISTRY, ROLES, SchemaViolation, check, schema_path

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_FILES = sorted(SCHEMAS.glob("*/*.schema.json"))


def _walk(node: Any, pointer: str = "") -> Any:
    """Yield (pointer, subschema) for every schema object in a document."""
    if isinstance(node, dict):
        yield pointer, node
        for key, value in node.items():
            if key in ("properties", "$defs", "patternProperties"):
                for name, sub in value.items():
                    yield from _walk(sub, f"{pointer}/{key}/{name}")
            elif key in ("items", "not", "additionalProperties", "contains"):
                yield from _walk(value, f"{pointer}/{key}")
            elif key in ("oneOf", "anyOf", "allOf", "prefixItems"):
                for index, sub in enumerate(value):
                    yield from _walk(sub, f"{pointer}/{key}/{index}")


def _load(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def test_every_env_has_a_manifest_and_three_role_schemas() -> None:
    found = sorted(p.parent.name for p in SCHEMAS.glob("*/env.toml"))
    assert found == sorted(ENVS + TOOL_ENVS)
    for env in ENVS + TOOL_ENVS:
        for role in ROLES:
            assert schema_path(env, role).is_file(), (env, role)


@pytest.mark.parametrize("env", ENVS)
def test_manifest(env: str) -> None:
    data = manifest(env)
    assert set(data) <= {
        "name",
        "version",
        "description",
        "transport",
        "class_prefix",
        "model_type",
        "server",
        "docker",
    }
    assert data["name"] == env
    assert data["transport"] in ("websocket", "http")
    assert data.get("model_type", "pydantic") == (
        "dataclasses" if env == "reacher_env" else "pydantic"
    )
    server = data["server"]
    assert isinstance(server, dict)
    assert set(server) == {"command", "health_path", "startup_timeout_s"}
    assert command(env, "http", 1234)[-6:] == [
        "--host",
        "127.0.0.1",
        "--port",
        "1234",
        "--protocol",
        "http",
    ]
    assert data["docker"] == {
        "image": f"envgen/{env.replace('_', '-')}",  # tagged with the version
        "port": 8000,
        "requirements": ["openenv==0.10.0", "uvicorn>=0.30"],
    }


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_schema_file_follows_the_house_rules(path: Path) -> None:
    doc = _load(path)
    Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == DRAFT
    assert doc.get("type") == "object"
    assert isinstance(doc.get("title"), str) and doc["title"]
    assert isinstance(doc.get("description"), str) and doc["description"]
    is_action = path.name == "action.schema.json"
    for pointer, node in _walk(doc):
        if "/properties/" in pointer and pointer.rsplit("/", 2)[-2] == "properties":
            assert node.get("description"), f"{pointer}: property without a description"
        if is_action and "properties" in node:
            assert node.get("additionalProperties") is False, f"{pointer}: actions are closed"


@pytest.mark.parametrize("path", SCHEMA_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_ref_resolves(path: Path) -> None:
    doc = _load(path)
    uri = path.resolve().as_uri()
    resolver = REGISTRY.with_resource(uri, Resource.from_contents(doc)).resolver(base_uri=uri)
    refs = [node["$ref"] for _, node in _walk(doc) if "$ref" in node]
    for ref in refs:
        assert resolver.lookup(ref).contents, ref


CASES: list[tuple[str, str, Any, bool]] = [
    ("echo_env", "action", {"message": "hi"}, True),
    ("echo_env", "action", {"message": "hi", "metadata": {"k": 1}}, True),
    ("echo_env", "action", {"message": 3}, False),
    ("coding_env", "action", {"code": "1", "timeout_s": 30}, True),
    ("coding_env", "action", {"code": "1", "timeout_s": 0}, False),
    ("coding_env", "action", {"code": "1", "timeout_s": 30.5}, False),
    # the cross-file $ref is really followed:
    (
        "coding_env",
        "observation",
        {"result": {"stdout": "", "stderr": "", "exit_code": "0", "timed_out": False}},
        False,
    ),
    ("coding_env", "observation", {"result": {"stdout": "", "stderr": ""}}, False),
    ("coding_env", "state", {"episode_id": None, "step_count": 0, "last_exit_code": None}, True),
    ("coding_env", "state", {"episode_id": "e", "step_count": -1, "last_exit_code": 0}, False),
    ("grid_env", "action", {"type": "move", "direction": "north"}, True),
    ("grid_env", "action", {"type": "move", "direction": "up"}, False),
    ("grid_env", "action", {"type": "turn", "rotation": "left"}, True),
    ("grid_env", "action", {"type": "turn", "direction": "north"}, False),
    ("grid_env", "action", {"type": "pick", "cells": [[0, 1], [2, 3]]}, True),
    ("grid_env", "action", {"type": "pick", "cells": []}, False),
    ("grid_env", "action", {"type": "pick", "cells": [[0, 1, 2]]}, False),
    ("grid_env", "action", {"type": "pick", "cells": [[0.5, 1]]}, False),
    ("grid_env", "action", {"type": "jump"}, False),
    (
        "grid_env",
        "observation",
        {
            "grid": [["."]],
            "position": {"row": 0, "col": 0},
            "facing": "east",
            "inventory": [],
            "message": "",
            "class": "edge",
        },
        True,
    ),
    (
        "grid_env",
        "observation",
        {
            "grid": [["."]],
            "position": {"row": 0, "col": 0},
            "facing": "east",
            "inventory": [],
            "message": "",
            "class_": "edge",
        },
        False,
    ),
    ("reacher_env", "action", {"torques": [1, -1]}, True),
    ("reacher_env", "action", {"torques": [1.01, 0]}, False),
    ("reacher_env", "action", {"torques": [0, 0, 0]}, False),
    ("quiz_env", "action", {"answer": "a", "confidence": None}, True),
    ("quiz_env", "action", {"answer": "a", "confidence": 1.5}, False),
    ("quiz_env", "action", {"answer": "a", "from": "me", "note": "n"}, True),
    ("quiz_env", "action", {"answer": "a", "from_": "me"}, False),
    ("quiz_env", "action", {"answer": "a", "note": None}, False),
    ("quiz_env", "observation", {"question": "q", "hint": None, "time-left": 3}, True),
    ("quiz_env", "observation", {"question": "q", "time-left": 3}, False),
    (
        "quiz_env",
        "observation",
        {"question": "q", "hint": None, "time-left": 3, "feedback": None},
        False,
    ),
    (
        "quiz_env",
        "state",
        {
            "episode_id": "e",
            "step_count": 1,
            "question_index": 0,
            "total_score": 0,
            "history": [{"question_id": "q1", "answer": "x", "correct": False}],
        },
        True,
    ),
    (
        "quiz_env",
        "state",
        {
            "episode_id": "e",
            "step_count": 1,
            "question_index": 0,
            "total_score": 0,
            "history": [{"question_id": "q1"}],
        },
        False,
    ),
]


@pytest.mark.parametrize(("env", "role", "instance", "valid"), CASES)
def test_schemas_mean_what_the_servers_need(
    env: str, role: str, instance: Any, valid: bool
) -> None:
    if valid:
        check(env, role, instance)
    else:
        with pytest.raises(SchemaViolation):
            check(env, role, instance)
