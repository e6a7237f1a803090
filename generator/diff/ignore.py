"""Ignore files: breaking changes accepted on purpose, each with its rule, pointer and reason.

Two places are read: `schemas/<env>/compat-ignore.toml` for one env, and
`.envgen-diff-ignore.toml` at the project root for any env (its entries name the env, or
"*"). `--ignore FILE` adds another file of the repo-level kind. Each entry::

    [[ignore]]
    rule = "enum.value-added"                 # a rule id from `envgen diff --rules`
    pointer = "/properties/facing/enum"       # the change's JSON pointer, exactly
    reason = "every client maps unknown facings to north (#123)"
    role = "observation"                      # optional
    file = "schemas/grid_env/observation.schema.json"   # optional
    env = "grid_env"                          # repo-level files only; "*" for any env

An entry that no change matched is reported as stale, so ignore files do not rot.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.diff.errors import IgnoreFileError
from generator.diff.model import REPORT_ROLES, Change
from generator.diff.rules import RULES

ENV_FILE = "compat-ignore.toml"
REPO_FILE = ".envgen-diff-ignore.toml"
_KEYS = {"rule", "pointer", "reason", "role", "file", "env"}


@dataclass
class Entry:
    rule: str
    pointer: str
    reason: str
    source: str
    index: int
    env: str | None = None
    role: str | None = None
    file: str | None = None
    used: bool = False

    def matches(self, env: str, change: Change) -> bool:
        return (
            self.rule == change.rule
            and self.pointer == change.pointer
            and (self.env in (None, "*", env))
            and (self.role is None or self.role == change.role)
            and (self.file is None or self.file == change.file)
        )

    def describe(self) -> str:
        return f"{self.source} entry {self.index}: {self.rule} at {self.pointer or '/'}"


@dataclass
class IgnoreSet:
    entries: list[Entry] = field(default_factory=list)

    def match(self, env: str, change: Change) -> Entry | None:
        for entry in self.entries:
            if entry.matches(env, change):
                entry.used = True
                return entry
        return None

    def stale(self, env: str) -> list[str]:
        return [
            e.describe() for e in self.entries if not e.used and (e.env is None or e.env == env)
        ]


def load(path: Path, display: str, env: str | None) -> list[Entry]:
    """Entries of one ignore file; `env` is set for an env's own file (entries need none)."""
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise IgnoreFileError(f"invalid TOML: {exc}", file=display) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise IgnoreFileError(f"cannot read file: {exc}", file=display) from None
    unknown = set(data) - {"ignore"}
    if unknown:
        raise IgnoreFileError(
            f"unknown key {sorted(unknown)[0]!r}",
            file=display,
            pointer=f"/{sorted(unknown)[0]}",
            hint="entries go in [[ignore]] tables",
        )
    raw = data.get("ignore", [])
    if not isinstance(raw, list):
        raise IgnoreFileError(
            "`ignore` must be an array of tables ([[ignore]])", file=display, pointer="/ignore"
        )
    return [_entry(item, display, index, env) for index, item in enumerate(raw)]


def _entry(item: Any, display: str, index: int, env: str | None) -> Entry:
    where = f"/ignore/{index}"

    def fail(key: str, message: str, hint: str | None = None) -> IgnoreFileError:
        return IgnoreFileError(
            message, file=display, pointer=f"{where}/{key}" if key else where, hint=hint
        )

    if not isinstance(item, dict):
        raise fail("", "each entry must be a table")
    for key in item:
        if key not in _KEYS:
            raise fail(key, f"unknown key {key!r}", hint="known keys: " + ", ".join(sorted(_KEYS)))
    for key in ("rule", "pointer", "reason"):
        if not isinstance(item.get(key), str):
            raise fail(
                key, f"missing or non-string {key!r}; every entry needs rule, pointer and reason"
            )
    if not item["reason"].strip():
        raise fail("reason", "reason must say why the break is accepted")
    if item["rule"] not in RULES:
        raise fail(
            "rule", f"unknown rule {item['rule']!r}", hint="`envgen diff --rules` lists them"
        )
    pointer = item["pointer"]
    if pointer and not pointer.startswith("/"):
        raise fail("pointer", f"pointer {pointer!r} must be empty or start with '/'")
    role = item.get("role")
    if role is not None and role not in REPORT_ROLES:
        raise fail("role", f"role must be one of {', '.join(REPORT_ROLES)}")
    entry_env = item.get("env")
    if env is not None and entry_env not in (None, env):
        raise fail("env", f"this file belongs to {env!r}; leave env out")
    if env is None and not isinstance(entry_env, str):
        raise fail("env", 'entries in a repo-level ignore file must name their env (or "*")')
    file = item.get("file")
    if file is not None and not isinstance(file, str):
        raise fail("file", "file must be a string")
    return Entry(
        rule=item["rule"],
        pointer=pointer,
        reason=item["reason"].strip(),
        source=display,
        index=index,
        env=env if env is not None else entry_env,
        role=role,
        file=file,
    )
