"""Shared helpers for the diff tests: run a role diff on two schema dicts, check witnesses."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

from envgen_runtime.schemadiff import Policy
from envgen_runtime.schemadiff.validation import formats, view
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from generator.diff.engine import compare_sides
from generator.diff.model import Change, Role, writer_is_old
from generator.diff.sides import load_role_side

_counter = itertools.count()

# Rules whose breaks reject nothing (a default read differently) or that envgen cannot
# prove with a value: no witness is expected for them.
NO_WITNESS = {
    "default.changed",
    "default.removed",
    "keyword.changed",
    "schema.too-complex",
    "env.removed",
    "string.pattern-changed",
}


def diff(
    tmp: Path,
    role: Role,
    old: Any,
    new: Any,
    policy: Policy | None = None,
    code: bool = False,
    files: dict[str, Any] | None = None,
) -> list[Change]:
    """Every change of `role` from `old` to `new` (schema documents), as the CLI computes it."""
    folder = tmp / f"case{next(_counter)}"
    folder.mkdir(parents=True)
    for name, doc in (files or {}).items():
        (folder / name).write_text(json.dumps(doc, indent=2))
    (folder / "old.json").write_text(json.dumps(old, indent=2))
    (folder / "new.json").write_text(json.dumps(new, indent=2))
    old_side = load_role_side(folder / "old.json", role, "old.json", folder)
    new_side = load_role_side(folder / "new.json", role, "new.json", folder)
    return compare_sides(old_side, new_side, policy or Policy(), roles=(role,), code=code)


def writer_reader(role: Role, old: Any, new: Any) -> tuple[Any, Any]:
    return (old, new) if writer_is_old(role) else (new, old)


def reader_view(role: Role, reader: Any, policy: Policy) -> Any:
    """The reader's schema as its policy applies it (unknown fields, defaults, enums)."""
    return view(
        copy.deepcopy(reader),
        policy.reader_ignores_unknown(role),
        policy.default_satisfies_required,
        policy.extensible_enums,
    )


def accepts(schema: Any, value: Any, files: dict[str, Any] | None = None) -> bool:
    """jsonschema's verdict; `files` are other documents reached by relative $ref."""
    registry: Registry[Any] = Registry().with_resources(
        (name, DRAFT202012.create_resource(doc)) for name, doc in (files or {}).items()
    )
    validator = Draft202012Validator(schema, registry=registry, format_checker=formats())
    return bool(validator.is_valid(value))


def assert_witness(
    role: Role,
    old: Any,
    new: Any,
    change: Change,
    policy: Policy,
    files: dict[str, Any] | None = None,
) -> None:
    """The witness is valid for the writer's schema and rejected by the reader's."""
    writer, reader = writer_reader(role, old, new)
    assert change.has_witness, f"{change.rule} at {change.pointer} has no witness"
    assert accepts(writer, change.witness, files), (change.rule, change.witness)
    assert not accepts(reader_view(role, reader, policy), change.witness, files), (
        change.rule,
        change.witness,
    )


def worst(changes: list[Change]) -> str:
    order = {"safe": 0, "breaking-code": 1, "breaking": 2}
    return max((c.change_class for c in changes), key=order.__getitem__, default="safe")
