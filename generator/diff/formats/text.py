"""Plain text for a terminal; click strips the colours when output is not a terminal."""

from __future__ import annotations

import click

from generator.diff.formats.common import (
    STATUS_TEXT,
    resolution,
    summary,
    version_text,
    where,
    witness_text,
)
from generator.diff.model import Change, Report
from generator.verbosity import Verbosity

_COLOURS = {"fails": "red", "allowed": "yellow", "ignored": "yellow", "reported": "yellow"}
_CLASS_COLOURS = {"breaking": "red", "breaking-code": "magenta", "safe": "green"}


def render(report: Report, level: Verbosity = Verbosity.NORMAL) -> str:
    """--quiet: failing changes and the summary only; --verbose: also each env's policy."""
    lines = []
    if level >= Verbosity.NORMAL:
        lines += [
            click.style(f"envgen diff: {report.base} -> {report.head}", bold=True)
            + f" (fail on {report.fail_on})",
            "",
        ]
    for env in report.envs:
        header = f"{env.env} {version_text(env)}: {env.status}"
        if level == Verbosity.QUIET:
            for change in env.failing():
                lines.append(f"{env.env}: {_change(change)[0].strip()}")
            continue
        if env.status == "unchanged":
            lines.append(click.style(header, dim=True))
            continue
        lines.append(click.style(header, bold=True))
        if level == Verbosity.VERBOSE:
            policy = ", ".join(f"{k}={str(v).lower()}" for k, v in env.policy.items())
            lines.append(f"  policy: {policy}")
        for change in env.changes:
            lines.extend(_change(change))
        for stale in env.stale_ignores:
            lines.append(click.style(f"  note: ignore entry matched nothing: {stale}", fg="yellow"))
        hints = resolution(env)
        if hints:
            lines.append(click.style(f"  {hints[0]}", fg="cyan"))
            lines += [f"    {line}" if line else "" for line in hints[1:]]
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
