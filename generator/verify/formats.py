"""The verify report as text (for people), JSON (for tools) and GitHub annotations (for CI)."""

from __future__ import annotations

import json
from pathlib import Path

from generator.diff.formats.github import escape_data, escape_property
from generator.diff.locate import line_of
from generator.verify.model import CHECKS, VerifyReport, Violation

FORMATS = ("text", "json", "github")


def _value(value: object, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _reproduction(violation: Violation) -> str:
    if violation.seed is None and not violation.actions:
        return ""
    steps = "".join(f"\n      step({_value(a, 400)})" for a in violation.actions)
    params = "".join(
        f", {key}={_value(value)}" for key, value in sorted((violation.reset_params or {}).items())
    )
    return f"\n    reproduce: reset(seed={violation.seed}{params}){steps}"


def render_text(report: VerifyReport) -> str:
    lines = [
        f"envgen verify {report.env} at {report.url} ({report.transport}), seed {report.seed}: "
        f"{report.episodes} episodes ({report.boundaries} at boundaries), "
        f"{report.steps} steps, {report.negative_cases} negative cases"
    ]
    lines += [f"  note: {note}" for note in report.notes]
    for v in report.violations:
        where = f" at {v.pointer}" if v.pointer else ""
        value = f" (value: {_value(v.value)})" if v.value is not None else ""
        lines.append(f"  FAIL {v.check}{where}: {v.message}{value}{_reproduction(v)}")
    verdict = "conforms" if report.ok else f"{len(report.violations)} violation(s)"
    lines.append(f"{report.env}: {verdict}")
    return "\n".join(lines) + "\n"


def render_json(report: VerifyReport) -> str:
    body = {
        "env": report.env,
        "url": report.url,
        "transport": report.transport,
        "seed": report.seed,
        "ok": report.ok,
        "episodes": report.episodes,
        "steps": report.steps,
        "negative_cases": report.negative_cases,
        "boundaries": report.boundaries,
        "notes": report.notes,
        "violations": [v.as_dict() for v in report.violations],
    }
    return json.dumps(body, indent=2, sort_keys=True, default=repr) + "\n"


def render_github(report: VerifyReport, root: Path) -> str:
    out: list[str] = []
    for v in report.violations:
        props = [f"title={escape_property(f'envgen verify: {v.check}')}"]
        if v.file:
            props.insert(0, f"file={escape_property(v.file)}")
            line = line_of(root / v.file, v.pointer) if v.check.startswith("drift.") else None
            if line is not None:
                props.insert(1, f"line={line}")
        where = f" at {v.pointer}" if v.pointer else ""
        detail = f"{CHECKS[v.check]}{where}: {v.message}{_reproduction(v)}"
        out.append(f"::error {','.join(props)}::{escape_data(detail)}")
    if report.ok:
        out.append(f"::notice title=envgen verify::{report.env} conforms to its schemas")
    return "\n".join(out) + "\n"
