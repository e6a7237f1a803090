"""Diffing whole envs: wire changes for each role and tool, then the generated API, merged."""

from __future__ import annotations

from envgen_runtime.schemadiff import Policy, WireChange, wire_changes

from generator.diff.codeapi import code_changes
from generator.diff.model import NO_WITNESS, REPORT_ROLES, ROLES, Change, ReportRole
from generator.diff.sides import Side
from generator.diff.tooldiff import tool_changes
from generator.schema.jsonio import canonical_json

# Safe code changes that a wire break at the same place already explains. A code change
# that breaks generated-API users (breaking-code) is always kept, even beside a wire break:
# fixing the wire (say, with a compatibility version raise) does not fix callers' code.
_EXPLAINED = {"code.type-changed-compatibly", "code.attribute-added"}


def unchanged(old: Side, new: Side) -> bool:
    """Same bundle, same class names, same model kind: nothing can differ."""
    if canonical_json(old.bundle.defs) != canonical_json(new.bundle.defs):
        return False
    if old.bundle.role_names != new.bundle.role_names:
        return False
    if _tool_texts(old) != _tool_texts(new):
        return False
    old_m, new_m = old.manifest, new.manifest
    return not (old_m and new_m and old_m.model_type != new_m.model_type)


def _tool_texts(side: Side) -> list[tuple[str, str, bool]]:
    """What of a side's tools is not in its defs: names, descriptions, output or not."""
    return [(t.name, t.description, t.output_pointer is None) for t in side.tools]


def compare_sides(
    old: Side,
    new: Side,
    policy: Policy,
    roles: tuple[ReportRole, ...] = REPORT_ROLES,
    code: bool = True,
) -> list[Change]:
    """All changes between two versions of one env, in a stable order.

    `roles` restricts the report (`tool`: the tool files'); code changes with no role (the
    model kind, a generation failure) are always kept."""
    if unchanged(old, new):
        return []
    changes: list[Change] = []
    for role in ROLES:
        if role in roles:
            found = wire_changes(role, old.version, new.version, policy, new.where)
            changes.extend(_as_change(change) for change in found)
    if "tool" in roles:
        changes += tool_changes(old, new, policy)
    if code:
        wire_breaks = [c for c in changes if c.change_class == "breaking"]
        paths = {(c.file, c.pointer): c.path for c in changes if c.path}
        for change in code_changes(old, new):
            if change.rule in _EXPLAINED and _explained(change, wire_breaks):
                continue
            if change.role is not None and change.role not in roles:
                continue
            change.path = paths.get((change.file, change.pointer)) or _path_in_role(
                change, (old, new)
            )
            changes.append(change)
    return sorted(changes, key=Change.sort_key)


def _as_change(wire: WireChange) -> Change:
    """A wire change as the report holds it (its class, and no witness as NO_WITNESS)."""
    return Change(
        rule=wire.rule,
        change_class="breaking" if wire.breaking else "safe",
        role=wire.role,
        file=wire.file,
        pointer=wire.pointer,
        message=wire.message,
        path=wire.path,
        note=wire.note,
        witness=wire.witness if wire.has_witness else NO_WITNESS,
    )


def _path_in_role(change: Change, sides: tuple[Side, Side]) -> str:
    """The instance path of a code change inside its role's root schema, else ""."""
    if change.role is None:
        return ""
    if change.role == "tool":  # a tool file: the path inside its input or output schema
        for root in ("/inputSchema", "/outputSchema"):
            if change.pointer == root or change.pointer.startswith(root + "/"):
                return instance_path(change.pointer.removeprefix(root))
        return ""
    for side in sides:
        if side.where(side.role_def(change.role), "") == (change.file, ""):
            return instance_path(change.pointer)
    return ""


def instance_path(pointer: str) -> str:
    """The value's path for a schema pointer made of properties/items steps from the root.

    `/properties/a/items/properties/b` -> `/a/0/b` (an item stands for every item). Pointers
    into `$defs` (a class used in several places) have no single path: "".
    """
    tokens = pointer.split("/")[1:] if pointer else []
    out: list[str] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token in ("properties", "prefixItems") and index + 1 < len(tokens):
            out.append(tokens[index + 1])
            index += 2
        elif token == "items":
            out.append("0")
            index += 1
        else:
            return ""
    return "".join(f"/{part}" for part in out)


def _explained(change: Change, breaks: list[Change]) -> bool:
    for other in breaks:
        if other.file != change.file:
            continue
        if other.pointer == change.pointer or other.pointer.startswith(change.pointer + "/"):
            return True
    return False
