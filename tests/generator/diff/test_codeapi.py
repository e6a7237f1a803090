"""diff/codeapi.py: the generated API read through the module's own import bindings.

A field named like a builtin or a typing/pydantic name makes the generator import those
under another name (`from typing import Annotated as Annotated_aliased`, `from builtins
import int as int_aliased`); the API must read the same types and wire names either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.generator.diff.helpers import diff


def _observation(**extra: Any) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "ProbeObservation",
        "type": "object",
        "properties": {"count": {"type": "integer", "minimum": 0}, **extra},
        "required": ["count"],
    }


def test_a_new_field_named_int_does_not_change_the_other_fields_types(tmp_path: Path) -> None:
    new = _observation(int={"type": "integer"}, Field={"type": "string"})
    changes = diff(tmp_path, "observation", _observation(), new, code=True)
    code = [c for c in changes if c.rule.startswith("code.")]
    assert {c.rule for c in code} == {"code.attribute-added"}, [c.message for c in code]
    assert not [c for c in code if c.change_class == "breaking-code"]


def test_a_builtin_imported_under_another_name_is_still_that_type(tmp_path: Path) -> None:
    """`count: int` stays `int` when a field named `int` makes the module alias the builtin."""
    old = _observation(int={"type": "integer"})
    new = _observation(int={"type": "string"})  # new module: `from builtins import int as ...`
    code = [c for c in diff(tmp_path, "observation", old, new, code=True) if c.rule[:5] == "code."]
    assert [(c.rule, c.message) for c in code] == [
        ("code.type-changed", "Observation.int_: int | None -> str | None (read by code)")
    ]
