"""Schemas from OpenEnv servers and models: what `envgen pull` and `envgen import` share.

OpenEnv publishes pydantic `model_json_schema()` output. Its serializer moves `reward` and
`done` out of the observation into the reply's envelope, where the runtime reads them, so
they are dropped from the observation schema when they are OpenEnv's optional base fields:
a generated observation then has no stale copies of them.
"""

from __future__ import annotations

import re
from typing import Any

from envgen_runtime.schemadiff import without_envelope_fields as without_envelope_fields

from generator.errors import SchemaError
from generator.schema.check import check_meta_schema, check_role_root
from generator.schema.manifest import SEMVER_RE

ROLES = ("action", "observation", "state")


def snake_case(name: str) -> str:
    """`EchoEnvironment` -> `echo_environment`, `my-env` -> `my_env`."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name.strip())
    text = re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_").lower()
    if text and text[0].isdigit():
        text = "env_" + text
    return text


def env_name_from_server(name: str) -> str:
    """OpenEnv servers report their class name by default: `EchoEnvironment` -> `echo_env`."""
    snake = snake_case(name)
    if snake.endswith("_environment"):
        snake = snake.removesuffix("_environment") + "_env"
    return snake


def semver_or_default(version: Any) -> str:
    return version if isinstance(version, str) and SEMVER_RE.match(version) else "0.1.0"


def check_schemas(schemas: dict[str, Any], origin: str) -> None:
    """Each role schema must be a valid JSON Schema describing an object."""
    for role in ROLES:
        if role not in schemas:
            raise SchemaError(f"no {role!r} schema", file=origin, pointer=f"/{role}")
        schema = schemas[role]
        try:
            check_meta_schema(schema, origin)
            check_role_root(schema, origin, role)
        except SchemaError as exc:
            pointer = f"/{role}{exc.pointer or ''}"
            raise SchemaError(exc.detail, file=origin, pointer=pointer, hint=exc.hint) from None
