"""A pull-request comment: a summary table, then each env's changes and witnesses."""

from __future__ import annotations

import html

from generator.diff.formats.common import (
    STATUS_HELP,
    resolution,
    summary,
    version_text,
    witness_text,
)
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
    ]
    changed = [env for env in report.envs if env.status != "unchanged"]
    if changed:
        lines += [
            "",
            "| env | version | status | breaking | breaking-code | safe | failing |",
            "|---|---|---|---|---|---|---|",
        ]
    for env in changed:
        count = {
            k: sum(c.change_class == k for c in env.changes)
            for k in ("breaking", "breaking-code", "safe")
        }
        failing = len(env.failing())
        lines.append(
            f"| {cell(env.env)} | {cell(version_text(env))} | {env.status} | {count['breaking']} "
            f"| {count['breaking-code']} | {count['safe']} | {failing} |"
        )
    unchanged = len(report.envs) - len(changed)
    if unchanged:
        lines += ["", f"{unchanged} unchanged env{'' if unchanged == 1 else 's'} not listed."]
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
        hints = resolution(env)
        if hints:
            fence = "`" * max(3, 1 + _longest_backtick_run(hints))
            lines += ["", f"**{cell(hints[0][:1].upper() + hints[0][1:])}**", "", fence + "toml"]
            lines += [*hints[1:], fence]
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


def _longest_backtick_run(lines: list[str]) -> int:
    """So a code fence is longer than any run of backticks inside it (names are user text)."""
    longest = 0
    for line in lines:
        run = 0
        for char in line:
            run = run + 1 if char == "`" else 0
            longest = max(longest, run)
    return longest
