"""`envgen check --format json|github`: the check report for programs and for CI.

`github` writes GitHub Actions workflow commands, one `::error file=...::` per file that
differs, is missing or is stale, so each shows on the pull request's file view.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from generator.codegen.output import CheckReport

CHECK_FORMATS = ("text", "json", "github")
_HOW = "run `envgen generate` and commit the result"


def render_json(report: CheckReport, envs: list[str]) -> str:
    document = {
        "ok": report.ok,
        "envs_checked": envs,
        "differs": [{"path": path, "diff": diff} for path, diff in report.diffs.items()],
        "missing": report.missing,
        "stale": report.stale,
    }
    return json.dumps(document, indent=2) + "\n"


def render_github(report: CheckReport, prefix: str = "") -> str:
    """Annotations naming files from the repository's top (`prefix` is the project's place)."""
    from generator.diff.formats.github import escape_data, escape_property

    lines = []
    for kind, paths, message in (
        ("differs", list(report.diffs), "differs from what envgen generate writes"),
        ("missing", report.missing, "is missing: envgen generate writes it"),
        ("stale", report.stale, "is stale: envgen generate no longer writes it"),
    ):
        for path in paths:
            title = escape_property(f"envgen check: {kind}")
            text = escape_data(f"{path} {message}; {_HOW}")
            lines.append(f"::error file={escape_property(prefix + path)},title={title}::{text}")
    return "".join(line + "\n" for line in lines)
