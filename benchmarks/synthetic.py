"""Synthetic environments of realistic size for the code-generation benchmark.

Each env has a tagged-union action (three variants, enums, nested arrays, a cross-file
`$ref`), a nested observation (objects three levels deep, arrays of objects, optional and
nullable fields) and a state with fields beyond the base state: about 45 properties.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SHARED = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Point",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "x": {"type": "number", "minimum": -100, "maximum": 100},
        "y": {"type": "number", "minimum": -100, "maximum": 100},
    },
    "required": ["x", "y"],
}


def _action(i: int) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Env{i}Action",
        "oneOf": [{"$ref": "#/$defs/Move"}, {"$ref": "#/$defs/Say"}, {"$ref": "#/$defs/Grab"}],
        "discriminator": {"propertyName": "type"},
        "$defs": {
            "Move": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "type": {"const": "move"},
                    "direction": {"enum": ["north", "east", "south", "west", f"warp{i}"]},
                    "speed": {"type": "number", "exclusiveMinimum": 0, "maximum": 10},
                    "path": {"type": "array", "items": {"$ref": "../_shared/point.schema.json"}},
                },
                "required": ["type", "direction"],
            },
            "Say": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "type": {"const": "say"},
                    "text": {"type": "string", "maxLength": 280},
                    "tone": {"enum": ["calm", "loud"], "default": "calm"},
                },
                "required": ["type", "text"],
            },
            "Grab": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "type": {"const": "grab"},
                    "cells": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "array",
                            "items": {"type": "integer", "minimum": 0},
                            "minItems": 2,
                            "maxItems": 2,
                        },
                    },
                    "force": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
                },
                "required": ["type", "cells"],
            },
        },
    }


def _observation(i: int) -> dict[str, Any]:
    sensor = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "reading": {"type": "number"},
            "unit": {"enum": ["m", "s", "kg", f"u{i}"]},
            "history": {"type": "array", "items": {"type": "number"}, "maxItems": 16},
            "calibration": {
                "type": "object",
                "properties": {
                    "offset": {"type": "number", "default": 0},
                    "scale": {"type": "number", "default": 1},
                    "valid": {"type": "boolean"},
                },
            },
        },
        "required": ["name", "reading"],
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Env{i}Observation",
        "type": "object",
        "properties": {
            "position": {"$ref": "../_shared/point.schema.json"},
            "sensors": {"type": "array", "items": {"$ref": "#/$defs/Sensor"}},
            "grid": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
            "message": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "score": {"type": "number", "minimum": 0, "default": 0},
            "flags": {"type": "object", "additionalProperties": {"type": "boolean"}},
            "phase": {"enum": ["start", "middle", "end"]},
            "metadata": {"type": "object"},
        },
        "required": ["position", "sensors", "message"],
        "$defs": {"Sensor": sensor},
    }


def _state(i: int) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Env{i}State",
        "type": "object",
        "properties": {
            "episode_id": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "step_count": {"type": "integer", "minimum": 0, "default": 0},
            "seed": {"type": "integer"},
            "visited": {"type": "array", "items": {"$ref": "../_shared/point.schema.json"}},
            "budget": {"type": "number", "minimum": 0},
            "inventory": {"type": "array", "items": {"type": "string"}, "default": []},
            "mode": {"enum": ["train", "eval"], "default": "train"},
            "notes": {"type": "string", "maxLength": 1000},
        },
    }


def write_envs(root: Path, count: int) -> list[str]:
    """Create `count` envs under root/schemas/; returns their names."""
    shared = root / "schemas" / "_shared"
    shared.mkdir(parents=True, exist_ok=True)
    (shared / "point.schema.json").write_text(json.dumps(SHARED, indent=2))
    names = []
    for i in range(count):
        name = f"bench_{i:03d}_env"
        env = root / "schemas" / name
        env.mkdir(parents=True, exist_ok=True)
        (env / "env.toml").write_text(
            f'name = "{name}"\nversion = "1.0.0"\ndescription = "Synthetic env {i}."\n'
        )
        for role, schema in (
            ("action", _action(i)),
            ("observation", _observation(i)),
            ("state", _state(i)),
        ):
            (env / f"{role}.schema.json").write_text(json.dumps(schema, indent=2))
        names.append(name)
    return names


def touch_env(root: Path, name: str, field: str = "added_later") -> None:
    """A realistic edit: one new optional observation field (another `field` edits it again)."""
    path = root / "schemas" / name / "observation.schema.json"
    schema = json.loads(path.read_text())
    schema["properties"][field] = {"type": "integer", "description": "new"}
    path.write_text(json.dumps(schema, indent=2))
