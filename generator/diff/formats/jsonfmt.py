"""The machine-readable report; its shape is documented in README ("Breaking-change checks")."""

from __future__ import annotations

import json
from typing import Any

from generator.diff.model import Change, Report

SCHEMA_VERSION = 1


def as_dict(report: Report) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "base": report.base,
        "head": report.head,
        "fail_on": report.fail_on,
        "result": "fail" if report.failed else "pass",
        "counts": report.counts(),
        "envs": [
            {
                "env": env.env,
                "status": env.status,
                "version": {
                    "base": env.version.base,
                    "head": env.version.head,
                    "major_bumped": env.version.major_bumped,
                },
                "policy": env.policy,
                "stale_ignores": env.stale_ignores,
                "changes": [_change(c) for c in env.changes],
            }
            for env in report.envs
        ],
    }


def _change(change: Change) -> dict[str, Any]:
    out: dict[str, Any] = {
        "rule": change.rule,
        "class": change.change_class,
        "status": change.status,
        "role": change.role,
        "file": change.file,
        "line": change.line,
        "pointer": change.pointer,
        "path": change.path,
        "message": change.message,
        "note": change.note,
        "has_witness": change.has_witness,
    }
    if change.has_witness:
        out["witness"] = change.witness
    if change.ignore_reason:
        out["ignore_reason"] = change.ignore_reason
    return out


def render(report: Report) -> str:
    return json.dumps(as_dict(report), indent=2, ensure_ascii=False) + "\n"
