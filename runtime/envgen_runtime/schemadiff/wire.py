"""One role's wire changes: run the comparer in the role's direction, prove the breaks.

Both `envgen diff` and the client's drift check at connect call `wire_changes`; each says
through `where` how a location inside a def is shown to its reader (a file and pointer in
the schemas people edit, or a pointer into a server's `GET /schema`). The comparer is
imported by the first call: a client whose server publishes its own schemas never loads it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .policy import Policy
from .roles import Role, writer_is_old

if TYPE_CHECKING:
    from .compare import Context, Finding

NO_WITNESS: Any = object()

Where = Callable[[str, str], tuple[str, str]]
"""(def name, pointer inside it) -> (file, pointer) as the reader of a change sees them."""

_EFFECT = {
    True: "old clients may still send what the new server now rejects",
    False: "the new server may now send what old clients reject",
}


@dataclass(frozen=True)
class Version:
    """One version of a set of schemas: every def by name, and which def is each role's root."""

    defs: Mapping[str, Any]
    roots: Mapping[str, str]


@dataclass(frozen=True)
class WireChange:
    """One wire difference of a role, classed for its direction (`witness`: MISSING or a value)."""

    rule: str
    breaking: bool
    role: Role
    file: str
    pointer: str
    message: str
    path: str = ""
    note: str = ""
    witness: Any = NO_WITNESS

    @property
    def has_witness(self) -> bool:
        return self.witness is not NO_WITNESS


def wire_changes(
    role: Role, old: Version, new: Version, policy: Policy, where: Where
) -> list[WireChange]:
    """Every wire difference of `role` between `old` and `new`, once per place it shows."""
    from .compare import Comparer, Context, TooComplex

    writer, reader = (old, new) if writer_is_old(role) else (new, old)
    ctx = Context(role, dict(writer.defs), dict(reader.defs), policy)
    comparer = Comparer(ctx)
    try:
        findings = comparer.run(writer.roots[role], reader.roots[role])
    except TooComplex:
        file, pointer = where(new.roots[role], "")
        message = "the schemas are too large or recursive to compare; treated as breaking"
        return [WireChange("schema.too-complex", True, role, file, pointer, message)]
    changes: list[WireChange] = []
    seen: set[tuple[str, str, str, bool]] = set()
    for finding in findings:
        file, pointer = where(finding.new_loc.def_name, finding.new_loc.pointer)
        key = (finding.rule, file, pointer, finding.breaking)
        if key in seen:
            continue
        seen.add(key)
        changes.append(_change(ctx, finding, role, file, pointer, writer, reader))
    return changes


def _change(
    ctx: Context,
    finding: Finding,
    role: Role,
    file: str,
    pointer: str,
    writer: Version,
    reader: Version,
) -> WireChange:
    if not finding.breaking:
        return WireChange(
            finding.rule, False, role, file, pointer, finding.message, finding.path, finding.note
        )
    from .examples import MISSING
    from .witness import prove

    message = f"{finding.message}; {_EFFECT[writer_is_old(role)]}"
    witness = prove(ctx, finding, writer.roots[role], reader.roots[role])
    witness = NO_WITNESS if witness is MISSING else witness
    return WireChange(
        finding.rule, True, role, file, pointer, message, finding.path, finding.note, witness
    )
