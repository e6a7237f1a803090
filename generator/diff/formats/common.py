"""Wording shared by the formats."""

from __future__ import annotations

import json
from typing import Any

from generator.diff.gate import wire_companion
from generator.diff.model import Change, EnvReport, Report
from generator.diff.resolve import ignore_entry, ignore_target, version_hint

STATUS_TEXT = {
    "fails": "FAIL",
    "allowed": "allowed",
    "ignored": "ignored",
    "reported": "reported",
    "ok": "ok",
}
STATUS_HELP = {
    "fails": "fails the check",
    "allowed": "the env's compatibility version was raised",
    "ignored": "ignored by an ignore file",
    "reported": "below the --fail-on threshold",
    "ok": "safe",
}


def where(change: Change) -> str:
    place = change.file + (f":{change.line}" if change.line else "")
    return f"{place} {change.pointer or '/'}"


def witness_text(value: Any, limit: int = 400) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def version_text(env: EnvReport) -> str:
    base, head = env.version.base or "-", env.version.head or "-"
    if base == head:
        return base
    raised = " (compatibility version raised)" if env.version.major_bumped else ""
    return f"{base} -> {head}{raised}"


def summary(report: Report) -> str:
    counts = report.counts()
    tally = (
        f"breaking {counts['breaking']}, breaking-code {counts['breaking-code']}, "
        f"safe {counts['safe']}"
    )
    if report.failed:
        return f"FAIL: {counts['failing']} change(s) fail ({tally}; --fail-on {report.fail_on})"
    return f"PASS: nothing fails ({tally}; --fail-on {report.fail_on})"


def resolution(env: EnvReport) -> list[str]:
    """How to make `env`'s failing changes pass, as plain lines (empty when nothing fails)."""
    failing = env.failing()
    if not failing:
        return []
    lines = []
    raise_to = version_hint(env)
    if raise_to:
        where = f" in {env.manifest_file}" if env.manifest_file else ""
        lines.append(
            f"to resolve: raise the version {raise_to}{where} (allows every break), or accept "
            f"each failing change in {ignore_target(env)}:"
        )
    else:
        lines.append(f"to resolve: accept each failing change in {ignore_target(env)}:")
    # An entry for a wire break also covers the code change it explains.
    needed = [c for c in failing if wire_companion(c, env.changes) not in failing]
    for index, change in enumerate(needed):
        if index:
            lines.append("")
        lines += ignore_entry(change)
    return lines
