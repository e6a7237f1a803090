"""GitHub Actions workflow commands: one annotation per change that is not safe."""

from __future__ import annotations

from generator.diff.formats.common import summary, witness_text
from generator.diff.model import Change, Report

_LEVEL = {"fails": "error", "allowed": "warning", "ignored": "notice", "reported": "warning"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: Report) -> str:
    lines = []
    for env in report.envs:
        for change in env.changes:
            if change.status != "ok":
                lines.append(_annotation(env.env, change, report.path_prefix))
        for stale in env.stale_ignores:
            lines.append(
                f"::warning title={escape_property('envgen diff: stale ignore')}::"
                f"{escape_data(stale + ' matched nothing')}"
            )
    lines.append(summary(report))
    return "\n".join(lines) + "\n"


def _annotation(env: str, change: Change, prefix: str) -> str:
    props = [f"file={escape_property(prefix + change.file)}"]
    if change.line:
        props.append(f"line={change.line}")
    title = f"envgen diff {env}: {change.rule} ({change.change_class}, {change.status})"
    props.append(f"title={escape_property(title)}")
    message = f"{change.message} [{change.role or 'env'} {change.pointer or '/'}]"
    if change.has_witness:
        message += f"\nwitness: {witness_text(change.witness)}"
    if change.ignore_reason:
        message += f"\nignored: {change.ignore_reason}"
    return f"::{_LEVEL[change.status]} {','.join(props)}::{escape_data(message)}"
