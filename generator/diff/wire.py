"""One role's wire changes: run the comparer in the role's direction, prove the breaks."""

from __future__ import annotations

from generator.diff.compare import Comparer, Context, Finding, TooComplex
from generator.diff.examples import MISSING
from generator.diff.model import Change, Role, writer_is_old
from generator.diff.policy import Policy
from generator.diff.sides import Side
from generator.diff.witness import prove

_EFFECT = {
    True: "old clients may still send what the new server now rejects",
    False: "the new server may now send what old clients reject",
}


def wire_changes(role: Role, old: Side, new: Side, policy: Policy) -> list[Change]:
    """Every wire difference of `role` between `old` and `new`, classed for its direction."""
    writer, reader = (old, new) if writer_is_old(role) else (new, old)
    ctx = Context(role, writer.bundle.defs, reader.bundle.defs, policy)
    comparer = Comparer(ctx)
    try:
        findings = comparer.run(writer.role_def(role), reader.role_def(role))
    except TooComplex:
        file, pointer = new.where(new.role_def(role), "")
        return [
            Change(
                rule="schema.too-complex",
                change_class="breaking",
                role=role,
                file=file,
                pointer=pointer,
                message="the schemas are too large or recursive to compare; treated as breaking",
            )
        ]
    changes: list[Change] = []
    seen: set[tuple[str, str, str, bool]] = set()
    for finding in findings:
        file, pointer = new.where(finding.new_loc.def_name, finding.new_loc.pointer)
        key = (finding.rule, file, pointer, finding.breaking)
        if key in seen:
            continue
        seen.add(key)
        changes.append(_change(ctx, finding, role, file, pointer, writer, reader))
    return changes


def _change(
    ctx: Context, finding: Finding, role: Role, file: str, pointer: str, writer: Side, reader: Side
) -> Change:
    message = finding.message
    change = Change(
        rule=finding.rule,
        change_class="breaking" if finding.breaking else "safe",
        role=role,
        file=file,
        pointer=pointer,
        message=message,
        path=finding.path,
        note=finding.note,
    )
    if finding.breaking:
        change.message = f"{message}; {_EFFECT[writer_is_old(role)]}"
        witness = prove(ctx, finding, writer.role_def(role), reader.role_def(role))
        if witness is not MISSING:
            change.witness = witness
    return change
