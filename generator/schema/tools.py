"""A tool environment's tools: `schemas/<env>/tools/<tool>.json`, one MCP tool per file.

Each file holds one tool as MCP's `tools/list` describes it (`name`, `description`,
`inputSchema`, optional `outputSchema`; `title` and `annotations` are allowed and ignored), so
a listing can be written out as it is. The two schemas are embedded documents: a `$ref`
starting with `#` inside one points into that schema (MCP's reading, and what pydantic's
`$defs` inside an `inputSchema` need), so it is rewritten here to point into the file before
the bundler follows it; refs to other files under `schemas/` work as in role schemas. Every
problem names the tool file and the JSON pointer within it.
"""

from __future__ import annotations

import copy
import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import SchemaError
from generator.schema.check import check_meta_schema, check_role_root, json_pointer

TOOLS_DIR = "tools"
TOOL_KEYS = {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}
# MCP's tool name rule (2025-11-25 spec): 1-128 of letters, digits, '_', '-' and '.'.
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
_TOOL_FILE = re.compile(r"^[A-Za-z0-9_.\-]+\.json$")
RESERVED_TOOL_NAMES = frozenset({"reset", "step", "state", "close"})
"""Names OpenEnv refuses for tools (its `RESERVED_TOOL_NAMES`): they are the env's own API."""


@dataclass(frozen=True)
class ToolInput:
    """One tool as the generator sees it; pointers are into `path`'s document."""

    name: str  # the wire name, as MCP lists it
    description: str
    path: Path
    display: str  # the file, repo-relative
    input_pointer: str
    output_pointer: str | None


@dataclass(frozen=True)
class ToolFiles:
    """The tools of one env and their documents, refs already pointing into each file."""

    tools: tuple[ToolInput, ...]
    documents: dict[Path, Any]


def load_tools(env_dir: Path, display_of: Any) -> ToolFiles:
    """Read and check every `tools/*.json` of `env_dir`, sorted by file name.

    `display_of` maps a path to what errors show (the layout's repo-relative form).
    """
    from generator.schema.jsonio import read_json

    folder = env_dir / TOOLS_DIR
    tools: list[ToolInput] = []
    documents: dict[Path, Any] = {}
    seen: dict[str, str] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        display = display_of(path)
        if not _TOOL_FILE.match(path.name):  # the path reaches generated headers
            raise SchemaError(
                "tool file names may only use letters, digits, '_', '-' and '.'", file=display
            )
        doc = read_json(path, display)
        tool = check_tool(doc, display, path)
        if tool.name in seen:
            raise SchemaError(
                f"tool {tool.name!r} is also defined in {seen[tool.name]}",
                file=display,
                pointer="/name",
            )
        seen[tool.name] = display
        documents[path.resolve()] = embed_refs(doc)
        tools.append(tool)
    return ToolFiles(tuple(tools), documents)


def check_tool(doc: Any, display: str, path: Path) -> ToolInput:
    """One tool file's shape, its name and both schemas (meta-schema and object root)."""
    if not isinstance(doc, dict):
        raise SchemaError("a tool file must hold one JSON object", file=display, pointer="")
    unknown = sorted(set(doc) - TOOL_KEYS)
    if unknown:
        raise SchemaError(
            f"unknown key {unknown[0]!r} in a tool file",
            file=display,
            pointer=json_pointer([unknown[0]]),
            hint="a tool file holds " + ", ".join(sorted(TOOL_KEYS)),
        )
    name = doc.get("name")
    if not isinstance(name, str):
        raise SchemaError("a tool needs a string 'name'", file=display, pointer="/name")
    if not _TOOL_NAME.match(name):
        raise SchemaError(
            f"tool name {name!r} is not an MCP tool name (1-128 letters, digits, '_', '-', '.')",
            file=display,
            pointer="/name",
        )
    if name in RESERVED_TOOL_NAMES:
        raise SchemaError(
            f"tool name {name!r} is reserved by OpenEnv (reset, step, state and close are "
            "the environment's own API)",
            file=display,
            pointer="/name",
        )
    description = doc.get("description", "")
    if not isinstance(description, str):
        raise SchemaError("'description' must be a string", file=display, pointer="/description")
    if "inputSchema" not in doc:
        raise SchemaError(
            "a tool needs an 'inputSchema'",
            file=display,
            pointer="",
            hint='{"type": "object", "properties": {}} for a tool without arguments',
        )
    for key in ("inputSchema", "outputSchema"):
        if key in doc:
            _check_embedded(doc[key], display, key)
    props = doc["inputSchema"].get("properties", {})
    for arg in props if isinstance(props, dict) else []:
        if not isinstance(arg, str) or not arg:
            raise SchemaError(
                "an argument needs a non-empty name",
                file=display,
                pointer=json_pointer(["inputSchema", "properties", arg]),
            )
    return ToolInput(
        name=name,
        description=description,
        path=path.resolve(),
        display=display,
        input_pointer="/inputSchema",
        output_pointer="/outputSchema" if "outputSchema" in doc else None,
    )


def _check_embedded(schema: Any, display: str, key: str) -> None:
    """A tool's schema, checked as its own document, reported at its place in the file."""
    try:
        check_meta_schema(schema, display)
        check_role_root(schema, display, f"tool {key}")
    except SchemaError as exc:
        raise SchemaError(
            exc.detail, file=display, pointer=f"/{key}{exc.pointer or ''}", hint=exc.hint
        ) from None
    for word in ("oneOf", "anyOf"):
        if isinstance(schema, dict) and word in schema and key == "inputSchema":
            raise SchemaError(
                f"an inputSchema lists its arguments under properties; {word!r} at its root "
                "is not supported",
                file=display,
                pointer=f"/{key}/{word}",
            )


def embed_refs(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` with each `#...` ref inside an embedded schema pointing into the file instead."""
    out = copy.deepcopy(doc)
    for key in ("inputSchema", "outputSchema"):
        if key in out:
            out[key] = _retarget(out[key], "/" + key)
    return out


def _retarget(node: Any, prefix: str) -> Any:
    if isinstance(node, list):
        return [_retarget(item, prefix) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("enum", "const", "default", "examples"):
            out[key] = value
        elif key == "$ref" and isinstance(value, str) and value.startswith("#"):
            out[key] = "#" + prefix + value[1:]
        else:
            out[key] = _retarget(value, prefix)
    return out


def python_name(name: str) -> str:
    """The Python identifier a tool or argument name maps to: `get-weather` -> `get_weather`,
    `class` -> `class_`, `2fa` -> `t_2fa` (ASCII letters, digits and '_')."""
    text = re.sub(r"[^0-9A-Za-z_]", "_", name)
    if not text or text[0].isdigit():
        text = "t_" + text
    if keyword.iskeyword(text) or keyword.issoftkeyword(text):
        text += "_"
    return text
