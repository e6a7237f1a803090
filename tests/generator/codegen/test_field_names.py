"""Property names that Python folds (NFKC) keep their own field and their wire name."""

from __future__ import annotations

import ast
import itertools
import sys
import types
from pathlib import Path

import pytest
from envgen_runtime import ModelCodec

from generator.codegen.field_names import fix_folded_names
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
    assert fix_folded_names(source) == source
