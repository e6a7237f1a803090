"""Schema drift: a server's published schemas against the ones a client was generated from.

The committed schemas are the old side and the server's the new, so the direction-aware
rules of `envgen diff` say what the running server breaks in the committed client: an
action it may now reject, an observation or state it may now send that the client rejects.
Changes a client cannot notice are not reported as drift (see `QUIET`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from .policy import Policy
from .published import NO_RESET_SCHEMA, pointer_in, role_schemas, version
from .roles import CLIENT_WRITTEN, ROLES
from .wire import WireChange, wire_changes

QUIET = frozenset({"annotation.changed", "default.added", "object.closed"})
"""Safe changes that leave what either side sends and accepts as it was: titles and
descriptions, a default the reader never needed, a server-written object now declared
closed. (The optional `metadata` OpenEnv puts on every action is quiet too.)"""
_OPENENV_ACTION_FIELDS = ("metadata",)


@dataclass(frozen=True)
class DriftReport:
    """What differs between the committed and the published schemas, breaks first."""

    breaking: tuple[WireChange, ...] = ()
    compatible: tuple[WireChange, ...] = ()

    @property
    def first_breaking(self) -> WireChange | None:
        return self.breaking[0] if self.breaking else None

    @property
    def drifted(self) -> bool:
        return bool(self.breaking or self.compatible)


def canonical_hash(roles: dict[str, Any]) -> str:
    """sha256 of the role schemas' canonical JSON (sorted keys, no spaces), as `sha256:...`."""
    text = json.dumps(roles, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def drift(committed: dict[str, Any], published: Any, policy: Policy | None = None) -> DriftReport:
    """Compare the committed schemas (`schemas.json`, in `/schema`'s shape) with a server's.

    `published` is the server's `GET /schema` reply; a reply that is not OpenEnv's shape
    has nothing to compare and reports no drift. A reset parameters schema the server does
    not publish is not judged; one the committed side lacks means "no parameters".
    """
    theirs = role_schemas(published)
    ours = role_schemas(committed)
    if theirs is None or ours is None:
        return DriftReport()
    if "reset" in theirs and "reset" not in ours:
        ours["reset"] = NO_RESET_SCHEMA
    policy = policy or Policy()
    old, new = version(ours), version(theirs)
    breaking: list[WireChange] = []
    compatible: list[WireChange] = []
    for role in ROLES:
        if role not in theirs:
            continue

        def where(def_name: str, pointer: str, role: str = role) -> tuple[str, str]:
            return "/schema", pointer_in(role, def_name, pointer)

        for change in wire_changes(role, old[role], new[role], policy, where):
            if change.breaking:
                breaking.append(change)
            elif not _quiet(change):
                compatible.append(change)
    return DriftReport(tuple(breaking), tuple(compatible))


def _quiet(change: WireChange) -> bool:
    if change.rule in QUIET:
        return True
    added_base_field = change.rule == "property.added" and change.role in CLIENT_WRITTEN
    return added_base_field and change.pointer.rsplit("/", 1)[-1] in _OPENENV_ACTION_FIELDS
