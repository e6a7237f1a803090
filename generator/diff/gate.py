"""Deciding which changes fail: the threshold, ignore files, then the version gate."""

from __future__ import annotations

from generator.diff.ignore import IgnoreSet
from generator.diff.model import EnvReport

FAIL_ON = ("breaking", "breaking-code", "none")
_COUNTED = {
    "breaking": {"breaking"},
    "breaking-code": {"breaking", "breaking-code"},
    "none": set(),
}


def judge(report: EnvReport, fail_on: str, ignores: IgnoreSet) -> None:
    """Set each change's status.

    safe -> ok. Otherwise, in order: listed in an ignore file -> ignored (with its reason);
    below the --fail-on threshold -> reported; the env's compatibility version was raised
    (a major bump, or a minor bump below 1.0) -> allowed; else -> fails.
    """
    counted = _COUNTED[fail_on]
    for change in report.changes:
        if change.change_class == "safe":
            change.status = "ok"
            continue
        entry = ignores.match(report.env, change)
        if entry is not None:
            change.status = "ignored"
            change.ignore_reason = entry.reason
        elif change.change_class not in counted:
            change.status = "reported"
        elif report.version.major_bumped:
            change.status = "allowed"
        else:
            change.status = "fails"
    report.stale_ignores = ignores.stale(report.env)
