"""How to make a failing diff pass: the version to raise to, and the ignore entries to add.

A break is allowed once the env's compatibility version is raised (the leftmost non-zero
part of its semantic version, see `model.compat_level`), or when an ignore file lists it
with a reason. Both hints are exact: copying either one makes the change stop failing.
"""

from __future__ import annotations

import json

from generator.diff.model import Change, EnvReport, compat_level

REASON_PROMPT = "say why existing clients can live with this"


def next_compat_version(version: str) -> str:
    """The lowest version that raises the compatibility level: 1.4.2 -> 2.0.0, 0.1.3 -> 0.2.0."""
    major, minor, patch = compat_level(version)
    if major:
        return f"{major + 1}.0.0"
    if minor:
        return f"0.{minor + 1}.0"
    return f"0.0.{patch + 1}"


def version_hint(env: EnvReport) -> str | None:
    """`0.1.0 -> 0.2.0` when raising the env's version would allow its failing changes."""
    if not env.failing() or not env.version.base:
        return None
    return f"{env.version.base} -> {next_compat_version(env.version.base)}"


def ignore_entry(change: Change) -> list[str]:
    """The `[[ignore]]` table (TOML lines) that accepts `change`; the reason is for the user."""
    lines = [
        "[[ignore]]",
        f"rule = {json.dumps(change.rule)}",
        f"pointer = {json.dumps(change.pointer)}",
    ]
    if change.role:
        lines.append(f"role = {json.dumps(change.role)}")
    if change.role == "tool":  # every tool file has the same pointers: name the file
        lines.append(f"file = {json.dumps(change.file)}")
    lines.append(f"reason = {json.dumps(REASON_PROMPT)}")
    return lines


def ignore_target(env: EnvReport) -> str:
    """Where the entries go: the env's own ignore file, or (comparing files) an --ignore FILE."""
    return env.ignore_file or "a file passed with --ignore FILE"
