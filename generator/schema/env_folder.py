"""Writing one environment's schema folder (`schemas/<env>/`) atomically.

`envgen new`, `envgen pull` and `envgen import` all produce the same four files; they are
staged in a hidden sibling folder and renamed into place, so a failure or an interrupt
never leaves a half-written environment behind.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.schema.jsonio import pretty_json
from generator.schema.manifest import default_class_prefix


@dataclass(frozen=True)
class EnvFiles:
    """The content of a new schemas/<env>/ folder."""

    name: str
    version: str
    description: str
    transport: str
    schemas: dict[str, Any]  # role ("action", ...) -> schema
    extra_files: dict[str, str] | None = None  # more files (relative paths: tools/x.json)
    server_command: tuple[str, ...] = ()
    class_prefix: str | None = None  # None: derived from the name (and left commented out)
    docker_image: str | None = None  # None: a commented-out suggestion
    startup_timeout_s: int = 60
    backend: str | None = None  # None: no key (the manifest's default, openenv)
    docker_requirements: tuple[str, ...] | None = None  # None: no key (the backend's default)
    backend_note: str | None = None  # a comment line above `backend` (why this one)

    def manifest_text(self) -> str:
        other = "http" if self.transport == "websocket" else "websocket"
        lines = [
            f"name = {_toml_str(self.name)}",
            f"version = {_toml_str(self.version)}",
            f"description = {_toml_str(self.description)}",
            f"transport = {_toml_str(self.transport)}          # or {_toml_str(other)}",
        ]
        if self.class_prefix:
            lines.append(f"class_prefix = {_toml_str(self.class_prefix)}")
        else:
            prefix = default_class_prefix(self.name)
            lines.append(
                f"# class_prefix = {_toml_str(prefix)}          # optional; derived from the name"
            )
        lines += [
            '# model_type = "pydantic"        # or "dataclasses"',
            "",
            "[server]",
        ]
        if self.backend:
            lines += [
                "# lean: envgen's own app (starlette + uvicorn), ready in a fraction of a second;",
                "# openenv: openenv 0.10's app, for its web interface or the Hugging Face Spaces",
                "# layout (pip install 'envgen-runtime[openenv]'). --backend overrides it.",
                *([f"# {self.backend_note}"] if self.backend_note else []),
                f"backend = {_toml_str(self.backend)}",
            ]
        if self.server_command:
            args = ", ".join(_toml_str(a) for a in self.server_command)
            lines.append(f"command = [{args}]")
        else:
            lines += [
                "# The argv that serves this env locally; {python}, {host}, {port} and",
                "# {transport} are filled in by the client's from_local_process().",
                '# command = ["{python}", "-m", "my_package.server", "--port", "{port}"]',
            ]
        lines += [
            'health_path = "/health"',
            f"startup_timeout_s = {self.startup_timeout_s}",
            "",
            "[docker]",
            f"image = {_toml_str(self.docker_image)}"
            if self.docker_image
            else f"# image = {_toml_str(self.name.replace('_', '-'))}  # tagged with the version",
            "port = 8000",
        ]
        if self.docker_requirements is not None:
            names = ", ".join(_toml_str(r) for r in self.docker_requirements)
            lines += [
                "# What the image pip-installs for the server (the runtime is copied in);",
                "# keep it in step with backend: the openenv backend needs openenv.",
                f"requirements = [{names}]",
            ]
        lines.append("")
        return "\n".join(lines)


def _toml_str(value: str) -> str:
    """A TOML basic string: JSON string escapes are valid TOML escapes."""
    return json.dumps(value, ensure_ascii=False)


def _stage_dir(parent: Path, name: str) -> Path:
    """A fresh hidden folder beside the target, made with the user's umask.

    Not `tempfile.mkdtemp`: its folders are always 0700, and the stage is renamed into place,
    so the env folder would end up unreadable to everyone else.
    """
    while True:
        stage = parent / f".{name}-new-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            stage.mkdir()
        except FileExistsError:
            continue
        return stage


def write_env_folder(target: Path, files: EnvFiles, *, replace: bool = False) -> None:
    """Create (or with `replace`, swap in) `target` holding `files`, all or nothing."""
    target.parent.mkdir(parents=True, exist_ok=True)
    stage = _stage_dir(target.parent, files.name)
    aside = target.parent / f".{files.name}-old-{os.getpid()}"
    try:
        (stage / "env.toml").write_text(files.manifest_text(), encoding="utf-8")
        for role, schema in files.schemas.items():
            (stage / f"{role}.schema.json").write_text(pretty_json(schema), encoding="utf-8")
        for name, text in (files.extra_files or {}).items():  # "tools/x.json": a subfolder
            (stage / name).parent.mkdir(parents=True, exist_ok=True)
            (stage / name).write_text(text, encoding="utf-8")
        if replace and target.exists():
            os.rename(target, aside)
        os.rename(stage, target)
    except BaseException:
        if aside.exists() and not target.exists():
            os.rename(aside, target)
        shutil.rmtree(stage, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)
