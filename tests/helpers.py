"""Small helpers shared by the generator's tests: build a project tree in a temp folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.codegen.cache import CACHE_DIR
from generator.codegen.template_cache import TEMPLATES_FOLDER

REPO = Path(__file__).resolve().parent.parent

OBJECT = {"type": "object", "properties": {"x": {"type": "integer"}}}
ODD_CHARS = (
    "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\r\n\t\x00\x1b\x7f"
    "\"'\\{}%#é€😀中文\u0301\U00010348\ufeff\u200b"
)
"""Characters that end a line for str.splitlines() but not for Python, control characters,
quotes and escapes, 2-, 3- and 4-byte UTF-8, a lone combining mark, emoji, CJK: for text
that property tests put into schemas."""


def manifest(name: str, **extra: str) -> str:
    lines = [f'name = "{name}"', 'version = "1.0.0"', f'description = "The {name} env."']
    lines += [f"{key} = {json.dumps(value)}" for key, value in extra.items()]
    return "\n".join(lines) + "\n"


def write_env(
    root: Path,
    name: str,
    *,
    action: Any = OBJECT,
    observation: Any = OBJECT,
    state: Any = OBJECT,
    toml: str | None = None,
    raw: dict[str, str] | None = None,
) -> Path:
    """Create schemas/<name>/ under `root`; `raw` overrides files with literal text."""
    env_dir = root / "schemas" / name
    env_dir.mkdir(parents=True, exist_ok=True)
    (env_dir / "env.toml").write_text(toml if toml is not None else manifest(name))
    for role, schema in (("action", action), ("observation", observation), ("state", state)):
        (env_dir / f"{role}.schema.json").write_text(json.dumps(schema, indent=2))
    for rel, text in (raw or {}).items():
        path = root / "schemas" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return env_dir


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes: to prove nothing changed. Compiled code is
    left out: Python's, and the templates' (`template_cache`, kept whenever they load)."""
    if not folder.exists():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and not _template_cache(p)
    }


def _template_cache(path: Path) -> bool:
    parts = path.parts
    return any(parts[i : i + 2] == (CACHE_DIR, TEMPLATES_FOLDER) for i in range(len(parts)))
