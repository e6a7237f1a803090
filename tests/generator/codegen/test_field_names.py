"""Property names that Python folds (NFKC) keep their own field and their wire name."""

from __future__ import annotations

import ast
import itertools
import sys
import types
from pathlib import Path

import pytest
from envgen_runtime import ModelCodec

from generator.codegen.field_names import fix_field_names
from generator.codegen.models import generate_models
from generator.schema.loader import Layout, load_env
from tests.helpers import write_env

_COUNTER = itertools.count()
WIRE = {"ﬁ": 1, "fi": "x", "ﬁ-x": 2, "ℌ": 3.5, "H": True, "fi_": "taken"}


def _module(source: str) -> dict[str, object]:
    name = f"envgen_test_folded_{next(_COUNTER)}"
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, f"{name}.py", "exec"), module.__dict__)
    return module.__dict__


@pytest.mark.parametrize("model_type", ["pydantic", "dataclasses"])
def test_folded_names_keep_their_field_and_wire_name(tmp_path: Path, model_type: str) -> None:
    types_of = {"ﬁ": "integer", "fi": "string", "ﬁ-x": "integer", "ℌ": "number", "H": "boolean"}
    props = {name: {"type": kind} for name, kind in types_of.items()}
    props["fi_"] = {"type": "string"}
    schema = {"type": "object", "additionalProperties": False, "properties": props}
    toml = f'name = "demo"\nversion = "1.0.0"\nmodel_type = "{model_type}"\n'
    write_env(tmp_path, "demo", observation=schema, action=schema, toml=toml)
    source = generate_models(load_env(Layout.at(tmp_path), "demo"), "# header")
    ns = _module(source)
    for role in ("DemoAction", "DemoObservation"):
        codec = ModelCodec(ns[role], "action")
        value = codec.decode(WIRE, strict=True)
        assert codec.encode(value) == WIRE
    for cls in ast.parse(source).body:
        if isinstance(cls, ast.ClassDef) and cls.name in ("DemoAction", "DemoObservation"):
            names = [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign)]  # type: ignore[union-attr]
            assert len(names) == len(set(names)) == 6


def test_plain_names_are_left_alone() -> None:
    source = "class M:\n    fi: int = 1\n    x_y: str\n"
    assert fix_field_names(source) == source


SEPARATORS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


@pytest.mark.parametrize("sep", list(SEPARATORS))
def test_folded_name_after_a_description_splitlines_would_break(tmp_path: Path, sep: str) -> None:
    """`ast` lines end only at \\n, \\r\\n and \\r: other breaks in a docstring move no field."""
    schema = {
        "type": "object",
        "description": f"desc a{sep}b",
        "properties": {
            "ﬁeld": {"type": "integer", "description": f"€{sep}😀 中"},
            "ℌ": {"type": "string"},
            "e": {"type": "string", "default": f"é{sep}́"},
        },
    }
    write_env(tmp_path, "demo", observation=schema, action=schema)
    source = generate_models(load_env(Layout.at(tmp_path), "demo"), "# header")
    ns = _module(source)
    wire = {"ﬁeld": 1, "ℌ": "h", "e": f"é{sep}́"}
    for role in ("DemoAction", "DemoObservation"):
        codec = ModelCodec(ns[role], "action")
        assert codec.encode(codec.decode(wire, strict=True)) == wire


# Names the generated modules' annotations use, builtins among them, and NFKC twins.
COLLIDING = [
    "int", "str", "float", "bool", "list", "dict", "None", "Any", "Field", "Annotated",
    "Literal", "BaseModel", "ConfigDict", "RootModel", "EnvModel", "Field_aliased",
    "Annotated_aliased", "ℌ", "H", "H_", "ﬁ", "fi", "fi_", "int_", "Item",
]  # fmt: skip


@pytest.mark.parametrize("model_type", ["pydantic", "dataclasses"])
def test_names_colliding_with_the_modules_own_names_keep_their_field(
    tmp_path: Path, model_type: str
) -> None:
    kinds = [{"type": "integer"}, {"type": "string"}, {"type": "number"}, {"type": "boolean"}]
    props: dict[str, object] = {n: kinds[i % 4] for i, n in enumerate(COLLIDING)}
    props["tags"] = {"type": "array", "items": {"type": "integer"}}
    props["meta"] = {"type": "object", "additionalProperties": {"type": "string"}}
    props["mode"] = {"enum": ["a", "b"]}
    props["item"] = {"$ref": "#/$defs/Item"}
    props["any"] = {}
    item = {"type": "object", "properties": {"int": {"type": "integer"}}}
    schema = {"type": "object", "properties": props, "$defs": {"Item": item}}
    toml = f'name = "demo"\nversion = "1.0.0"\nmodel_type = "{model_type}"\n'
    write_env(tmp_path, "demo", observation=schema, action=schema, state=schema, toml=toml)
    source = generate_models(load_env(Layout.at(tmp_path), "demo"), "# header")
    ns = _module(source)
    wire: dict[str, object] = {n: [1, "s", 1.5, True][i % 4] for i, n in enumerate(COLLIDING)}
    wire.update(tags=[1], meta={"k": "v"}, mode="b", item={"int": 2}, any=[None])
    for role in ("DemoAction", "DemoObservation", "DemoState"):
        codec = ModelCodec(ns[role], "action")
        assert codec.encode(codec.decode(wire, strict=True)) == wire


@pytest.mark.parametrize("kind", ["integer", "string"])
def test_a_field_named_like_a_builtin_type_gets_the_same_name_whatever_its_type(
    tmp_path: Path, kind: str
) -> None:
    """`int` is `int_` on the model whether or not the module itself uses `int` (user code
    reading `obs.int_` must not break when the field's type changes)."""
    props = {"count": {"type": "integer"}, "int": {"type": kind}, "str": {"type": kind}}
    schema = {"type": "object", "properties": props}
    write_env(tmp_path, "demo", observation=schema, action=schema)
    source = generate_models(load_env(Layout.at(tmp_path), "demo"), "# header")
    for cls in ast.parse(source).body:
        if isinstance(cls, ast.ClassDef) and cls.name == "DemoObservation":
            names = [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign)]  # type: ignore[union-attr]
            assert names == ["count", "int_", "str_"]
