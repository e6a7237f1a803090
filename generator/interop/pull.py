"""`envgen pull`: an environment's schemas from a running OpenEnv server.

Reads `GET /schema` (action, observation, state and, when the server declares them,
reset_observation and reset, the reset parameters that envgen_runtime.server publishes) and
`GET /metadata` (name, description, version). A tool env (its action is OpenEnv's
`CallToolAction`) also gets its tools (`tool_listing`), one `tools/<tool>.json` each, and its
observation adapted (`tool_listing.tool_env_observation`). Nothing is
written unless every reply is usable and the schemas generate a client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from envgen_runtime import normalize_base_url

from generator.errors import EnvgenError, SchemaError
from generator.interop.fetch import PullError as PullError
from generator.interop.fetch import fetch_json as fetch_json
from generator.interop.openenv import (
    check_schemas,
    env_name_from_server,
    semver_or_default,
    without_envelope_fields,
)
from generator.interop.tool_listing import is_tool_env, pull_tools, tool_env_observation
from generator.schema.check import check_meta_schema, check_reset_params
from generator.schema.jsonio import pretty_json


class BadURLError(EnvgenError):
    """The URL argument is not an http(s) address of a server; the CLI makes it a usage error."""


def server_url(text: str) -> str:
    """The base URL to read from: `host:port` means `http://host:port`; others must be http(s).

    The runtime's `normalize_base_url` (what clients accept too), limited to http(s), which is
    what `requests` speaks; its ValueError becomes a usage error naming the argument.
    """
    try:
        return normalize_base_url(text, schemes=("http", "https"))
    except ValueError as exc:
        raise BadURLError(str(exc)) from None


@dataclass(frozen=True)
class Pulled:
    name: str
    version: str
    description: str
    schemas: dict[str, Any]
    extra_files: dict[str, str]
    notes: tuple[str, ...] = ()
    """What the user should know about the pull (a tool listing without output schemas)."""
    tools: int = 0
    """How many tool files (`tools/<tool>.json`, in `extra_files`) a tool env's pull wrote."""


def pull(base_url: str, name: str | None = None) -> Pulled:
    """Read and check a server's schemas; raise before anything is written."""
    base_url = server_url(base_url)
    origin = base_url.rstrip("/") + "/schema"
    body = fetch_json(base_url, "/schema")
    if not isinstance(body, dict):
        raise SchemaError(
            "expected a JSON object with action, observation and state", file=origin, pointer=""
        )
    metadata = fetch_json(base_url, "/metadata", optional=True)
    metadata = metadata if isinstance(metadata, dict) else {}
    env_name = name or env_name_from_server(str(metadata.get("name") or ""))
    if not env_name:
        raise PullError("the server reports no name", hint="pass --name NAME")
    schemas: dict[str, dict[str, Any]] = {}
    for role in ("action", "observation", "state"):
        schema = body.get(role)
        if not isinstance(schema, dict):
            raise SchemaError(
                f"{role} schema missing or not an object", file=origin, pointer=f"/{role}"
            )
        schemas[role] = schema
    check_schemas(schemas, origin)
    schemas["observation"] = without_envelope_fields(schemas["observation"])
    if "reset" in body:  # absent (openenv 0.10 publishes none): no reset.schema.json
        schemas["reset"] = _reset_schema(body["reset"], origin)
    extra: dict[str, str] = {}
    reset = body.get("reset_observation")
    if isinstance(reset, dict) and without_envelope_fields(reset) != schemas["observation"]:
        extra["reset_observation.schema.json"] = pretty_json(without_envelope_fields(reset))
    notes: tuple[str, ...] = ()
    tools = 0
    if is_tool_env(schemas["action"]):
        schemas["observation"] = tool_env_observation(schemas["observation"])
        listing = pull_tools(base_url)
        extra.update(listing.files)
        notes, tools = listing.notes, len(listing.files)
    description = metadata.get("description")
    return Pulled(
        name=env_name,
        version=semver_or_default(metadata.get("version")),
        description=description if isinstance(description, str) else "",
        schemas=schemas,
        extra_files=extra,
        notes=notes,
        tools=tools,
    )


def _reset_schema(schema: Any, origin: str) -> dict[str, Any]:
    """The server's reset parameters schema, checked as `reset.schema.json` would be."""
    try:
        check_meta_schema(schema, origin)
        check_reset_params(schema, origin)
    except SchemaError as exc:
        pointer = f"/reset{exc.pointer or ''}"
        raise SchemaError(exc.detail, file=origin, pointer=pointer, hint=exc.hint) from None
    if not isinstance(schema, dict):  # check_reset_params refuses `true` and `false`
        raise SchemaError("reset schema is not an object", file=origin, pointer="/reset")
    return schema
