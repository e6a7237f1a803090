"""Diffing whole envs: wire changes for each role, then the generated API, then merged."""

from __future__ import annotations

from generator.diff.codeapi import code_changes
from generator.diff.model import ROLES, Change, Role
from generator.diff.policy import Policy
from generator.diff.sides import Side
from generator.diff.wire import wire_changes
from generator.jsonio import canonical_json

# Code changes that a wire break at the same place already explains.
_EXPLAINED = {
    "code.attribute-removed",
    "code.attribute-renamed",
    "code.type-changed",
    "code.type-changed-compatibly",
    "code.attribute-now-required",
    "code.attribute-added",
}


def unchanged(old: Side, new: Side) -> bool:
    """Same bundle, same class names, same model kind: nothing can differ."""
    if canonical_json(old.bundle.defs) != canonical_json(new.bundle.defs):
        return False
    if old.bundle.role_names != new.bundle.role_names:
        return False
    old_m, new_m = old.manifest, new.manifest
    return not (old_m and new_m and old_m.model_type != new_m.model_type)


def compare_sides(
    old: Side, new: Side, policy: Policy, roles: tuple[Role, ...] = ROLES, code: bool = True
) -> list[Change]:
    """All changes between two versions of one env, in a stable order."""
    if unchanged(old, new):
        return []
    changes: list[Change] = []
    for role in roles:
        changes.extend(wire_changes(role, old, new, policy))
    if code:
        wire_breaks = [c for c in changes if c.change_class == "breaking"]
        for change in code_changes(old, new):
            if change.rule in _EXPLAINED and _explained(change, wire_breaks):
                continue
            if change.role is not None and change.role not in roles:
                continue
            changes.append(change)
    return sorted(changes, key=Change.sort_key)


def _explained(change: Change, breaks: list[Change]) -> bool:
    for other in breaks:
        if other.file != change.file:
            continue
        if other.pointer == change.pointer or other.pointer.startswith(change.pointer + "/"):
            return True
    return False
