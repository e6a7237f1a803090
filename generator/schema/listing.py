"""`envgen list`: every folder under schemas/, and for each one that is not a valid env, why.

Folders whose names start with `_` or `.` hold shared schemas (or are hidden) and are not
candidates: an env name starts with a letter.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import EnvgenError
from generator.schema.loader import MANIFEST, Layout, load_env


@dataclass(frozen=True)
class Listed:
    name: str
    path: str
    reason: str = ""  # empty when the folder is a valid env
    version: str = ""
    transport: str = ""
    class_prefix: str = ""
    description: str = ""

    @property
    def valid(self) -> bool:
        return not self.reason

    def as_json(self) -> dict[str, Any]:
        if not self.valid:
            return {"name": self.name, "path": self.path, "valid": False, "reason": self.reason}
        return {
            "name": self.name,
            "path": self.path,
            "valid": True,
            "version": self.version,
            "transport": self.transport,
            "class_prefix": self.class_prefix,
            "description": self.description,
        }


def list_envs(layout: Layout) -> list[Listed]:
    """Each candidate folder, loaded as `generate` would load it (so the reason is the same)."""
    if not layout.schemas.is_dir():
        return []
    folders = sorted(
        p for p in layout.schemas.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
    )
    return [_listed(layout, folder) for folder in folders]


def _listed(layout: Layout, folder: Path) -> Listed:
    shown = layout.display(folder)
    if not (folder / MANIFEST).is_file():
        return Listed(folder.name, shown, reason=f"no {MANIFEST}")
    try:
        env = load_env(layout, folder.name)
    except EnvgenError as exc:
        return Listed(folder.name, shown, reason=exc.message)
    manifest = env.manifest
    return Listed(
        folder.name,
        shown,
        version=manifest.version,
        transport=manifest.transport,
        class_prefix=manifest.class_prefix,
        description=manifest.description,
    )
