"""`envgen new`: a new environment that generates and serves with no edits.

Writes schemas/<env>/ (three small schemas and an env.toml whose `[server] command` runs the
server module, on `backend = "lean"`: envgen's own app, without openenv, and an image that
installs only what that needs) and a server module (default `servers/<env>/server.py`)
holding a working Environment on the models `envgen generate` makes. Nothing existing is
overwritten: any clash is found before anything is written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

from generator.errors import EnvExistsError, EnvgenError
from generator.scaffold import tool_env
from generator.scaffold.server_module import server_module
from generator.scaffold.tool_server_module import tool_server_module
from generator.schema.env_folder import EnvFiles, write_env_folder
from generator.schema.loader import Layout
from generator.schema.manifest import (
    DOCKER_REQUIREMENTS,
    Backend,
    check_env_name,
    default_class_prefix,
)

SERVERS_DIR = "servers"
"""Where server modules go by default: servers/<env>/server.py, imported as servers.<env>."""
BACKEND: Backend = "lean"
"""What a new env serves on: the fast path (env.toml's `[server] backend`)."""
TOOLS_BACKEND: Backend = "openenv"
"""What a new tool env serves on: lean does not serve MCP environments yet."""
STARTUP_TIMEOUT_S = 180  # ample on a busy machine even after a switch to the openenv backend

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


def _tool_schemas() -> dict[str, dict[str, Any]]:
    return {"action": tool_env.ACTION, "observation": tool_env.OBSERVATION, "state": tool_env.STATE}


def _tool_files() -> dict[str, str]:
    """tools/<name>.json as `envgen pull` writes them: MCP's key order, indent 2."""
    return {
        f"tools/{name}.json": json.dumps(tool, indent=2, ensure_ascii=False) + "\n"
        for name, tool in tool_env.TOOLS.items()
    }


class ServerDirError(EnvgenError):
    """`--server-dir` cannot hold an importable server module."""


def server_package(layout: Layout, name: str, server_dir: str | None) -> tuple[Path, str]:
    """The folder for the server module and its dotted package name.

    The folder must lie inside the project and every part must be a Python identifier, so
    that `python -m <package>.server` run from the project root imports it.
    """
    raw = server_dir if server_dir is not None else f"{SERVERS_DIR}/{name}"
    rel = PurePosixPath(raw.replace("\\", "/"))
    parts = [p for p in rel.parts if p != "."]
    if rel.is_absolute() or not parts or any(not p.isidentifier() for p in parts):
        raise ServerDirError(
            f"{raw!r} must be a folder inside the project whose parts are Python identifiers",
            hint=f"for example: --server-dir {SERVERS_DIR}/{name}",
        )
    if parts[0] in {"generated", "schemas"}:
        raise ServerDirError(f"{raw!r} is inside envgen's own {parts[0]}/ folder")
    return layout.root.joinpath(*parts), ".".join(parts)


def new_env(
    layout: Layout,
    name: str,
    *,
    transport: str = "websocket",
    class_prefix: str | None = None,
    server_dir: str | None = None,
    tools: bool = False,
) -> Path:
    """Create schemas/<name>/ and the server module; refuse to touch anything existing.

    `tools`: a tool env (OpenEnv's call-tool action, tools/echo.json and tools/add.json, a
    `ToolEnvironment` server module on the openenv backend). `class_prefix` (checked by the
    CLI) names the classes; without it they derive from `name`.
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
    folder, package = server_package(layout, name, server_dir)
    module_file = folder / "server.py"
    if module_file.exists():
        raise EnvExistsError(
            f"{layout.display(module_file)} already exists; envgen new never overwrites it",
            hint="choose another --server-dir, or remove the file first",
        )
    prefix = class_prefix or default_class_prefix(name)
    version = "0.1.0"
    description = f"Describe what the {name} environment does."
    module = f"{package}.server"
    backend = TOOLS_BACKEND if tools else BACKEND
    write_env_folder(
        target,
        EnvFiles(
            name=name,
            version=version,
            description=description,
            transport=transport,
            schemas=_tool_schemas() if tools else _schemas(prefix),
            extra_files=_tool_files() if tools else None,
            class_prefix=class_prefix,
            server_command=(
                "{python}",
                "-m",
                module,
                "--host",
                "{host}",
                "--port",
                "{port}",
                "--protocol",
                "{transport}",
            ),
            docker_image=name.replace("_", "-"),  # tagged with `version` (env.toml's)
            startup_timeout_s=STARTUP_TIMEOUT_S,
            backend=backend,
            docker_requirements=DOCKER_REQUIREMENTS[backend],
            backend_note=(
                "A tool env (MCPEnvironment) needs openenv: lean does not serve MCP envs yet."
                if tools
                else None
            ),
        ),
    )
    try:
        render = tool_server_module if tools else server_module
        _write_server(layout, folder, render(name, prefix, module))
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return target


def _write_server(layout: Layout, folder: Path, text: str) -> None:
    """server.py plus an empty `__init__.py` in each package folder that lacks one."""
    created: list[Path] = []
    try:
        current = layout.root
        for part in folder.relative_to(layout.root).parts:
            current = current / part
            if not current.exists():
                current.mkdir()
                created.append(current)
            init = current / "__init__.py"
            if not init.exists():
                init.write_text("", encoding="utf-8")
                created.append(init)
        module_file = folder / "server.py"
        with module_file.open("x", encoding="utf-8") as fh:  # never overwrite
            created.append(module_file)
            fh.write(text)
    except BaseException:
        for path in reversed(created):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        raise


def server_file(layout: Layout, name: str, server_dir: str | None) -> Path:
    """Where `new_env` puts the server module (for the CLI's report)."""
    return server_package(layout, name, server_dir)[0] / "server.py"
