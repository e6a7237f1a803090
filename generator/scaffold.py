"""`envgen new`: a new environment's schema folder with a small example that generates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.env_folder import EnvFiles, write_env_folder
from generator.errors import EnvExistsError, EnvgenError
from generator.loader import Layout
from generator.manifest import check_env_name, default_class_prefix

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def _schemas(prefix: str) -> dict[str, dict[str, Any]]:
    return {
        "action": {
            "$schema": DRAFT,
            "title": f"{prefix}Action",
            "description": "What the agent sends on each step.",
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "message": {"type": "string", "description": "Text sent to the environment."}
            },
            "required": ["message"],
        },
        "observation": {
            "$schema": DRAFT,
            "title": f"{prefix}Observation",
            "description": "What the environment returns after each reset and step.",
            "type": "object",
            "properties": {
                "reply": {"type": "string", "description": "The environment's answer."},
                "turn": {
                    "type": "integer",
                    "minimum": 0,
                    "default": 0,
                    "description": "Steps taken so far in this episode.",
                },
            },
            "required": ["reply"],
        },
        "state": {
            "$schema": DRAFT,
            "title": f"{prefix}State",
            "description": "The environment's episode bookkeeping.",
            "type": "object",
            "properties": {
                "episode_id": {
                    "anyOf": [{"type": "string"}, {"type": "null"}],
                    "default": None,
                    "description": "Identifier of the current episode.",
                },
                "step_count": {
                    "type": "integer",
                    "minimum": 0,
                    "default": 0,
                    "description": "Steps taken in the current episode.",
                },
            },
        },
    }


def new_env(
    layout: Layout, name: str, *, transport: str = "websocket", class_prefix: str | None = None
) -> Path:
    """Create schemas/<name>/ atomically; refuse to touch an existing folder.

    `class_prefix` (checked by the CLI) names the classes; without it they derive from `name`.
    """
    problem = check_env_name(name)
    if problem:
        raise EnvgenError(f"env name {name!r} {problem}", hint="for example: envgen new my_env")
    target = layout.schemas / name
    if target.exists():
        raise EnvExistsError(
            f"{layout.display(target)} already exists; envgen new never overwrites an env",
            hint="edit its schemas, or remove the folder first",
        )
    write_env_folder(
        target,
        EnvFiles(
            name=name,
            version="0.1.0",
            description=f"Describe what the {name} environment does.",
            transport=transport,
            schemas=_schemas(class_prefix or default_class_prefix(name)),
            class_prefix=class_prefix,
        ),
    )
    return target
