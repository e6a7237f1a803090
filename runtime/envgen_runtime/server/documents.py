"""The documents both backends publish: ``GET /schema`` and ``GET /metadata``."""

from __future__ import annotations

from typing import Any


def schema_document(
    action: type[Any], observation: type[Any], state: type[Any], reset: type[Any] | None
) -> dict[str, Any]:
    """`GET /schema`: openenv's keys in its order, plus `reset` (the reset parameters) when
    there are any."""
    roles = {
        "action": action,
        "observation": observation,
        "state": state,
        "reset_observation": observation,
        "reset": reset,
    }
    return {role: cls.model_json_schema() for role, cls in roles.items() if cls is not None}


def metadata_document(name: str, description: str, version: str, capacity: int) -> dict[str, Any]:
    """`GET /metadata`: openenv 0.10's EnvironmentMetadata keys plus `max_concurrent_envs`,
    which pools pack slots by."""
    return {
        "name": name,
        "description": description,
        "readme_content": None,
        "version": version,
        "author": None,
        "documentation_url": None,
        "max_concurrent_envs": capacity,
    }
