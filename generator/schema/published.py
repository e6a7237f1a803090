"""An env's committed schemas in `GET /schema`'s shape: `schemas.json`, and what verify compares.

Each role (`action`, `observation`, `state`, and `reset` when the env has reset parameters)
is its root def with the defs it reaches under `$defs`, the shape an OpenEnv server publishes
and `envgen pull` reads; `schema_hash` identifies the sources. `generated/<env>/schemas.json`
is the one generated file that names the hash, so a schema edit rewrites only the files whose
content it changes; clients compare it with the server's `/schema` at connect, and
`envgen verify` does the same (both through `envgen_runtime.schemadiff.drift`).
"""

from __future__ import annotations

from typing import Any

from generator.schema.jsonio import pretty_json
from generator.schema.loader import EnvInput

_REF = "#/$defs/"
_DATA = ("enum", "const", "default", "examples")  # values, not schemas: no refs inside


def schemas_json(env: EnvInput) -> str:
    """The text of `generated/<env>/schemas.json`: sorted keys, two-space indent."""
    return pretty_json(published_schemas(env))


def published_schemas(env: EnvInput) -> dict[str, Any]:
    """The committed schemas as a server publishes them, plus `schema_hash`."""
    defs = env.bundle.defs
    document: dict[str, Any] = {"schema_hash": env.schema_hash}
    for role, root in env.bundle.role_names.items():
        reached = _reachable(defs, root)
        schema = dict(defs[root])  # a role's root is an object schema (schema.check)
        if reached:
            schema["$defs"] = reached
        document[role] = schema
    return document


def _reachable(defs: dict[str, Any], root: str) -> dict[str, Any]:
    """The defs `root` refers to, directly or not (`root` itself only when it recurses)."""
    found: dict[str, Any] = {}
    stack: list[Any] = [defs[root]]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(_REF):
                name = ref[len(_REF) :].replace("~1", "/").replace("~0", "~")
                if name in defs and name not in found:
                    found[name] = defs[name]
                    stack.append(defs[name])
            stack.extend(value for key, value in node.items() if key not in _DATA)
    return dict(sorted(found.items()))
