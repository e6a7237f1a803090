"""diff/apiread.py: a generated models module read as its API, through its import bindings."""

from __future__ import annotations

import json
from pathlib import Path

from generator.diff.apiread import api_of
from generator.diff.sides import load_role_side


def test_attributes_keep_their_wire_names_and_plain_types(tmp_path: Path) -> None:
    """A field named `int` makes the module import `Annotated`/`int` under other names."""
    schema = {
        "title": "ProbeObservation",
        "type": "object",
        "properties": {"count": {"type": "integer", "minimum": 0}, "int": {"type": "string"}},
        "required": ["count"],
    }
    path = tmp_path / "observation.json"
    path.write_text(json.dumps(schema))
    api = api_of(load_role_side(path, "observation", path.name, tmp_path))
    attrs = api.classes[api.role_classes["observation"]]
    assert {wire: (a.name, a.annotation, a.required) for wire, a in attrs.items()} == {
        "count": ("count", "int", True),
        "int": ("int_", "str | None", False),
    }
