"""A server's `GET /schema` reply read as envgen reads it, with one version shape for both.

OpenEnv's serializer moves `reward` and `done` out of the observation into the reply's
envelope, where the runtime reads them, so they are dropped from a published observation
schema when they are OpenEnv's optional base fields. `envgen pull` writes what this reads;
the client's drift check and `envgen verify` compare against it.
"""

from __future__ import annotations

import copy
from typing import Any

from .roles import Role
from .schemaops import json_pointer
from .wire import Version

ENVELOPE_FIELDS = ("reward", "done")
PUBLISHED_ROLES: tuple[Role, ...] = ("action", "observation", "state")
"""What every OpenEnv `/schema` holds; `reset` (the reset parameters) is envgen's addition."""
NO_RESET_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": False}
"""The reset parameters of an env that declares none: only `{}` is sent or accepted."""


def without_envelope_fields(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop `reward`/`done` from an observation schema when they are optional base fields."""
    out = copy.deepcopy(schema)
    props = out.get("properties")
    if not isinstance(props, dict):
        return out
    required = out.get("required", [])
    for name in ENVELOPE_FIELDS:
        if name in props and name not in required:
            del props[name]
    return out


def role_schemas(body: Any) -> dict[str, Any] | None:
    """The role schemas of a `/schema` reply (observation without envelope), else None.

    None when the reply is not OpenEnv's shape (an object with an object schema for each of
    action, observation and state): such a server publishes no schemas to compare.
    """
    if not isinstance(body, dict):
        return None
    roles: dict[str, Any] = {}
    for role in PUBLISHED_ROLES:
        schema = body.get(role)
        if not isinstance(schema, dict):
            return None
        roles[role] = schema
    roles["observation"] = without_envelope_fields(roles["observation"])
    if isinstance(body.get("reset"), dict):
        roles["reset"] = body["reset"]
    return roles


def root_name(role: str) -> str:
    """The def name of a role's root: brackets keep it apart from every `$defs` name."""
    return f"<{role}>"


def version(roles: dict[str, Any]) -> dict[str, Version]:
    """Each role schema as a `Version` of its own: its root and its `$defs`, by name."""
    out: dict[str, Version] = {}
    for role, schema in roles.items():
        defs = dict(schema.get("$defs") or {}) if isinstance(schema, dict) else {}
        root = {k: v for k, v in schema.items() if k != "$defs"} if defs else schema
        defs[root_name(role)] = root
        out[role] = Version(defs=defs, roots={role: root_name(role)})
    return out


def pointer_in(role: str, def_name: str, pointer: str) -> str:
    """Where a location inside a def is in the `/schema` document: `/<role>/...`."""
    if def_name == root_name(role):
        return f"/{role}{pointer}"
    return f"/{role}/$defs{json_pointer([def_name])}{pointer}"
