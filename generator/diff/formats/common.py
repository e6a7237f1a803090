"""Wording shared by the formats."""

from __future__ import annotations

import json
from typing import Any

from generator.diff.model import Change, EnvReport, Report

STATUS_TEXT = {
    "fails": "FAIL",
    "allowed": "allowed",
    "ignored": "ignored",
    "reported": "reported",
    "ok": "ok",
}
STATUS_HELP = {
    "fails": "fails the check",
    "allowed": "the env's major version was raised",
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
    return f"{base} -> {head}" + (" (major)" if env.version.major_bumped else "")


def summary(report: Report) -> str:
    counts = report.counts()
    tally = (
        f"breaking {counts['breaking']}, breaking-code {counts['breaking-code']}, "
        f"safe {counts['safe']}"
    )
    if report.failed:
        return f"FAIL: {counts['failing']} change(s) fail ({tally}; --fail-on {report.fail_on})"
    return f"PASS: nothing fails ({tally}; --fail-on {report.fail_on})"
