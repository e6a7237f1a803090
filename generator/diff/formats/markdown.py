"""A pull-request comment: a summary table, then each env's changes and witnesses."""

from __future__ import annotations

import html

from generator.diff.formats.common import STATUS_HELP, summary, version_text, witness_text
from generator.diff.model import Change, Report

_MARK = {
    "fails": "❌ fails",
    "allowed": "⚠️ allowed",
    "ignored": "⚠️ ignored",
    "reported": "⚠️ reported",
    "ok": "✅ ok",
}


def cell(text: str) -> str:
    """Text safe inside a table cell: no pipes, no line breaks, no HTML."""
    return (
        html.escape(text, quote=False).replace("|", "\\|").replace("\n", " ").replace("`", "&#96;")
    )


def render(report: Report) -> str:
    icon = "❌" if report.failed else "✅"
    lines = [
        f"## {icon} envgen diff",
        "",
        f"Compared `{cell(report.base)}` with `{cell(report.head)}`. {cell(summary(report))}",
        "",
        "| env | version | status | breaking | breaking-code | safe | failing |",
        "|---|---|---|---|---|---|---|",
    ]
    for env in report.envs:
        count = {
            k: sum(c.change_class == k for c in env.changes)
            for k in ("breaking", "breaking-code", "safe")
        }
        failing = len(env.failing())
        lines.append(
            f"| {cell(env.env)} | {cell(version_text(env))} | {env.status} | {count['breaking']} "
            f"| {count['breaking-code']} | {count['safe']} | {failing} |"
        )
    for env in report.envs:
        if not env.changes:
            continue
        lines += [
            "",
            f"### {cell(env.env)}",
            "",
            "| status | class | role | rule | where | change |",
            "|---|---|---|---|---|---|",
        ]
        for change in env.changes:
            lines.append(_row(change))
        witnesses = [c for c in env.changes if c.has_witness]
        if witnesses:
            lines += [
                "",
                "<details><summary>Witnesses: values one side may send that the other "
                "rejects</summary>",
                "",
            ]
            for change in witnesses:
                lines += [
                    f"- `{cell(change.rule)}` at `{cell(change.pointer or '/')}`:",
                    "",
                    "  ```json",
                    "  " + witness_text(change.witness, 2000),
                    "  ```",
                ]
            lines += ["", "</details>"]
        if env.stale_ignores:
            lines += ["", "Ignore entries that matched nothing:", ""]
            lines += [f"- {cell(s)}" for s in env.stale_ignores]
    lines += [
        "",
        "<sub>Statuses: "
        + "; ".join(f"{_MARK[k]}: {v}" for k, v in STATUS_HELP.items())
        + ".</sub>",
    ]
    return "\n".join(lines) + "\n"


def _row(change: Change) -> str:
    place = f"`{cell(change.file)}`" + (f" line {change.line}" if change.line else "")
    place += f" `{cell(change.pointer or '/')}`"
    text = cell(change.message)
    if change.note:
        text += f" <br>_{cell(change.note)}_"
    if change.ignore_reason:
        text += f" <br>ignored: {cell(change.ignore_reason)}"
    return (
        f"| {_MARK[change.status]} | {change.change_class} | {change.role or '-'} "
        f"| `{cell(change.rule)}` | {place} | {text} |"
    )
