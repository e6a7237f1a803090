"""Deciding which changes fail: the threshold, ignore files, then the version gate."""

from __future__ import annotations

from generator.diff.ignore import IgnoreSet
from generator.diff.model import Change, EnvReport

FAIL_ON = ("breaking", "breaking-code", "none")
_COUNTED = {
    "breaking": {"breaking"},
    "breaking-code": {"breaking", "breaking-code"},
    "none": set(),
}


def judge(report: EnvReport, fail_on: str, ignores: IgnoreSet) -> None:
    """Set each change's status.

    safe -> ok. Otherwise, in order: listed in an ignore file (or, for a code change, its
    wire companion is) -> ignored (with its reason);
    below the --fail-on threshold -> reported; the env's compatibility version was raised
    (a major bump, or a minor bump below 1.0) -> allowed; else -> fails.
    """
    counted = _COUNTED[fail_on]
    wire = [c for c in report.changes if not c.rule.startswith("code.")]
    code = [c for c in report.changes if c.rule.startswith("code.")]
    for change in [*wire, *code]:  # code changes follow an ignored wire break at their place
        if change.change_class == "safe":
            change.status = "ok"
            continue
        entry = ignores.match(report.env, change)
        companion = wire_companion(change, wire)
        if entry is not None:
            change.status = "ignored"
            change.ignore_reason = entry.reason
        elif companion is not None and companion.status == "ignored":
            change.status = "ignored"
            change.ignore_reason = f"{companion.ignore_reason} (with {companion.rule})"
        elif change.change_class not in counted:
            change.status = "reported"
        elif report.version.major_bumped:
            change.status = "allowed"
        else:
            change.status = "fails"
    report.stale_ignores = ignores.stale(report.env)


def wire_companion(change: Change, changes: list[Change]) -> Change | None:
    """The wire break at (or below) a code change's place, which explains it; else None.

    Ignoring that wire break ignores the code change too: one reason covers both. A tool
    removed explains every code change in its tool file (its method, its models).
    """
    if not change.rule.startswith("code."):
        return None
    for other in changes:
        if other.rule.startswith("code.") or other.change_class != "breaking":
            continue
        if other.file != change.file:
            continue
        if (
            other.pointer == change.pointer
            or other.pointer.startswith(change.pointer + "/")
            or other.rule == "tool.removed"
        ):
            return other
    return None
