"""`envgen import`: an environment's schemas from pydantic (v2) model classes.

For authors who have OpenEnv-style models but no running server. Actions are described as
the server validates them (`mode="validation"`); observations and states as the server
serializes them (`mode="serialization"`), which is what a client reads.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from generator.errors import EnvgenError
from generator.interop.openenv import without_envelope_fields

# OpenEnv's base State, used when no state model is given.
BASE_STATE: dict[str, Any] = {
    "title": "State",
    "description": "Episode bookkeeping common to every OpenEnv environment.",
    "type": "object",
    "additionalProperties": True,
    "properties": {
        "episode_id": {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "default": None,
            "description": "Unique identifier for the current episode",
        },
        "step_count": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Number of steps taken in the current episode",
        },
    },
}


class ImportModelError(EnvgenError):
    """A MODULE:CLASS argument does not name an importable pydantic model."""


def load_model(spec: str, root: Path) -> Any:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ImportModelError(f"{spec!r} is not MODULE:CLASS", hint="e.g. my_env.models:MyAction")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # any import-time failure of user code
        raise ImportModelError(f"cannot import {module_name!r}: {exc}") from None
    target: Any = module
    for part in attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ImportModelError(f"{module_name!r} has no attribute {attr!r}")
    if not hasattr(target, "model_json_schema"):
        raise ImportModelError(f"{spec} is not a pydantic v2 model class")
    return target


def schemas_from_models(
    action: str, observation: str, state: str | None, root: Path
) -> dict[str, Any]:
    def schema(spec: str, mode: str) -> Any:
        try:
            return load_model(spec, root).model_json_schema(mode=mode)
        except ImportModelError:
            raise
        except Exception as exc:  # pydantic cannot describe some custom types
            raise ImportModelError(f"{spec}: cannot make a JSON Schema: {exc}") from None

    return {
        "action": schema(action, "validation"),
        "observation": without_envelope_fields(schema(observation, "serialization")),
        "state": schema(state, "serialization") if state else dict(BASE_STATE),
    }
