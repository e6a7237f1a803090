"""Odd but parseable schema input: a clear error (exit 2, file and pointer), never a crash."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.cli import main
from generator.errors import SchemaError
from generator.schema.check import check_role_root
from tests.helpers import ODD_CHARS, write_env

ROLES = ("action", "observation", "state")


def _generate(root: Path) -> Any:
    return CliRunner().invoke(main, ["--root", str(root), "generate", "my_env"])


def _assert_clean(result: Any, role: str) -> None:
    """Exit 0, or exit 2 naming the file; any other outcome is a crash."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"crashed: {result.exception!r}") from result.exception
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        assert f"schemas/my_env/{role}.schema.json" in result.output, result.output
        assert "Traceback" not in result.output


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("root", [[1, 2, 3], "hello", None, 1.5, 7])
def test_non_object_root_exits_2_naming_file_and_pointer(
    tmp_path: Path, role: str, root: Any
) -> None:
    write_env(tmp_path, "my_env", **{role: root})
    result = _generate(tmp_path)
    _assert_clean(result, role)
    assert result.exit_code == 2
    assert "at / (JSON pointer)" in result.output
    assert not (tmp_path / "generated").exists()


@pytest.mark.parametrize("doc", [[1, 2], "x", None, 3])
def test_role_root_check_rejects_non_schemas(doc: Any) -> None:
    with pytest.raises(SchemaError) as info:
        check_role_root(doc, "schemas/x/state.schema.json", "state")
    assert info.value.pointer == ""


TEXT = st.text(st.sampled_from(ODD_CHARS) | st.characters(blacklist_categories=("Cs",)), max_size=3)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
KEYWORDS = [
    "type", "properties", "required", "enum", "const", "$defs", "items", "prefixItems",
    "oneOf", "anyOf", "allOf", "title", "description", "default", "additionalProperties",
    "discriminator", "minimum", "maxLength", "pattern", "format", "$ref", "minItems",
]  # fmt: skip
BASE: dict[str, Any] = {
    "type": "object",
    "title": "Thing",
    "properties": {"x": {"type": "integer", "default": 1}, "tags": {"type": "array"}},
    "required": ["x"],
}


def _mutations() -> st.SearchStrategy[Any]:
    """A valid schema with one keyword (at the root or in a property) set to any JSON."""
    where = st.sampled_from(["root", "x", "tags"])
    return st.one_of(
        JSON,
        st.tuples(where, st.sampled_from(KEYWORDS), JSON).map(_mutate),
    )


def _mutate(args: tuple[str, str, Any]) -> dict[str, Any]:
    where, keyword, value = args
    doc = json.loads(json.dumps(BASE))
    node = doc if where == "root" else doc["properties"][where]
    node[keyword] = value
    return doc


@settings(
    max_examples=int(os.environ.get("ENVGEN_PROP_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(role=st.sampled_from(ROLES), doc=_mutations())
def test_any_json_in_any_schema_file_is_handled(role: str, doc: Any) -> None:
    root = Path(tempfile.mkdtemp(prefix="envgen-prop-"))
    try:
        write_env(root, "my_env", **{role: doc})
        _assert_clean(_generate(root), role)
    finally:
        shutil.rmtree(root)


NAMES = st.sampled_from(
    ["MyEnv", "AsyncMyEnv", "MyEnvAction", "MyEnvState", "EnvgenBundleRoot", "RUNTIME_API",
     "class", "Model", "Field", "EnvModel", "x", "Any", "list", "None", "1a", "a b", "_p",
     "ℌ", "H", "ﬁ", "int", "Annotated", "Literal", "BaseModel", "x\u2028y", "é", "e\u0301",
     "中文", "😀", "model_dump"]
)  # fmt: skip
"""Names for the checks; tests/generator/codegen/test_odd_schema_packages.py also imports,
type-checks and round-trips the packages that odd names and text give."""


def _named(args: tuple[str, str, str]) -> dict[str, Any]:
    """A schema whose $defs key, nested title and property name are taken from NAMES."""
    def_name, title, prop = args
    return {
        "type": "object",
        "$defs": {def_name: {"type": "object", "properties": {"v": {"type": "integer"}}}},
        "properties": {
            prop: {"$ref": f"#/$defs/{def_name}"},
            "inner": {"type": "object", "title": title, "properties": {"w": {"type": "string"}}},
        },
    }


@settings(
    max_examples=int(os.environ.get("ENVGEN_PROP_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(role=st.sampled_from(ROLES), doc=st.tuples(NAMES, NAMES, NAMES).map(_named))
def test_any_names_in_any_schema_file_are_handled(role: str, doc: Any) -> None:
    root = Path(tempfile.mkdtemp(prefix="envgen-prop-"))
    try:
        write_env(root, "my_env", **{role: doc})
        _assert_clean(_generate(root), role)
    finally:
        shutil.rmtree(root)


def test_type_named_like_the_client_points_at_its_origin(tmp_path: Path) -> None:
    write_env(tmp_path, "my_env", state=_named(("MyEnv", "Inner", "p")))
    result = _generate(tmp_path)
    assert result.exit_code == 2, result.output
    assert "schemas/my_env/state.schema.json at /$defs/MyEnv (JSON pointer)" in result.output


@pytest.mark.parametrize(
    ("prop", "pointer"),
    [
        ({"type": "integer", "default": "abc"}, "/properties/x/default"),
        ({"type": "string", "default": 3}, "/properties/x/default"),
        ({"type": ["string", "null"], "default": [1]}, "/properties/x/default"),
        (
            {"type": "array", "items": {"type": "integer", "default": True}},
            "/properties/x/items/default",
        ),
    ],
)
def test_default_of_the_wrong_type_is_an_input_error(
    tmp_path: Path, prop: dict[str, Any], pointer: str
) -> None:
    write_env(tmp_path, "my_env", observation={"type": "object", "properties": {"x": prop}})
    result = _generate(tmp_path)
    assert result.exit_code == 2, result.output
    assert f"schemas/my_env/observation.schema.json at {pointer} (JSON pointer)" in result.output


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "integer", "default": None},  # optional but not nullable: the generator's job
        {"type": "integer", "default": 2.0},
        {"type": "number", "default": 1},
        {"type": ["integer", "string"], "default": "a"},
        {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    ],
)
def test_defaults_of_a_declared_type_pass(tmp_path: Path, prop: dict[str, Any]) -> None:
    write_env(tmp_path, "my_env", observation={"type": "object", "properties": {"x": prop}})
    assert _generate(tmp_path).exit_code == 0


@pytest.mark.parametrize(
    ("prop", "pointer"),
    [
        ({"type": "string", "description": "a\ud800b"}, "/properties/x/description"),
        ({"enum": ["ok", "\udfff"]}, "/properties/x/enum/1"),
        ({"type": "object", "properties": {"\udc80": {}}}, "/properties/x/properties/\udc80"),
    ],
)
def test_an_escaped_lone_surrogate_is_an_input_error(
    tmp_path: Path, prop: dict[str, Any], pointer: str
) -> None:
    """JSON may escape half a UTF-16 pair (`"\\ud800"`); no UTF-8 file can hold it."""
    write_env(tmp_path, "my_env", action={"type": "object", "properties": {"x": prop}})
    result = _generate(tmp_path)
    _assert_clean(result, "action")
    assert result.exit_code == 2, result.output
    assert "lone surrogate" in result.output
    assert pointer.encode("utf-8", "backslashreplace").decode() in result.output
