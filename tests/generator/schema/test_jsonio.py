from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import SchemaError
from generator.schema.jsonio import canonical_json, read_json


def test_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('{\n  "type": "object",\n  "properties": {,}\n}\n')
    with pytest.raises(SchemaError) as info:
        read_json(path, "schemas/x/action.schema.json")
    err = info.value
    assert (err.file, err.line, err.column) == ("schemas/x/action.schema.json", 3, 18)
    assert "schemas/x/action.schema.json:3:18" in str(err)


def test_rejects_nan(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('{"default": NaN}')
    with pytest.raises(SchemaError, match="NaN is not valid JSON"):
        read_json(path, "a.json")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="file not found"):
        read_json(tmp_path / "nope.json", "nope.json")


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(SchemaError, match="not UTF-8"):
        read_json(path, "a.json")


def test_canonical_json_is_order_independent() -> None:
    assert canonical_json({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == canonical_json(
        {"a": [1, {"c": 3, "d": 2}], "b": 1}
    )
