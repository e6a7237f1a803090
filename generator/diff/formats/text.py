"""Plain text for a terminal; click strips the colours when output is not a terminal."""

from __future__ import annotations

import click

from generator.diff.formats.common import STATUS_TEXT, summary, version_text, where, witness_text
from generator.diff.model import Change, Report

_COLOURS = {"fails": "red", "allowed": "yellow", "ignored": "yellow", "reported": "yellow"}
_CLASS_COLOURS = {"breaking": "red", "breaking-code": "magenta", "safe": "green"}


def render(report: Report) -> str:
    lines = [
        click.style(f"envgen diff: {report.base} -> {report.head}", bold=True)
        + f" (fail on {report.fail_on})",
        "",
    ]
    for env in report.envs:
        header = f"{env.env} {version_text(env)}: {env.status}"
        if env.status == "unchanged":
            lines.append(click.style(header, dim=True))
            continue
        lines.append(click.style(header, bold=True))
        for change in env.changes:
            lines.extend(_change(change))
        for stale in env.stale_ignores:
            lines.append(click.style(f"  note: ignore entry matched nothing: {stale}", fg="yellow"))
        lines.append("")
    colour = "red" if report.failed else "green"
    lines.append(click.style(summary(report), fg=colour, bold=True))
    return "\n".join(lines) + "\n"


def _change(change: Change) -> list[str]:
    status = click.style(f"{STATUS_TEXT[change.status]:8}", fg=_COLOURS.get(change.status))
    cls = click.style(f"{change.change_class:13}", fg=_CLASS_COLOURS[change.change_class])
    role = f"{change.role or '-':11}"
    out = [f"  {status} {cls} {role} {change.rule}  {where(change)}"]
    out.append(f"           {change.message}")
    if change.note:
        out.append(f"           note: {change.note}")
    if change.path:
        out.append(f"           at: {change.path}")
    if change.has_witness:
        out.append(f"           witness: {witness_text(change.witness)}")
    if change.ignore_reason:
        out.append(f"           ignored because: {change.ignore_reason}")
    return out
