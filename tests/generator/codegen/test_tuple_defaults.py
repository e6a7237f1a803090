"""Array defaults of tuple-typed fields are written as tuples, at any depth."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from generator.codegen.models import generate_models
from generator.codegen.tuple_defaults import fix_tuple_defaults
from generator.schema.loader import Layout, load_env
from tests.helpers import REPO, write_env

HEAD = (
    "from typing import Annotated, Optional\n"
    "from pydantic import BaseModel, Field\n"
    "from typing_extensions import TypeAliasType\n"
)


@pytest.mark.parametrize(
    ("field", "fixed"),
    [
        ("a: tuple[float, float] = [0.0, 1.0]", "(0.0, 1.0)"),
        ("a: Annotated[tuple[int, int], Field(ge=0)] = [1, 2]", "(1, 2)"),
        ("a: tuple[tuple[int, int], str] = [[1, 2], 'x']", "((1, 2), 'x')"),
        ("a: list[tuple[int, int]] = [[1, 2], [3, 4]]", "[(1, 2), (3, 4)]"),
        ("a: dict[str, tuple[int, int]] = {'k': [1, 2]}", "{'k': (1, 2)}"),
        ("a: tuple[int, int] | None = [1, 2]", "(1, 2)"),
        ("a: Optional[tuple[int, int]] = [1, 2]", "(1, 2)"),
        ("a: tuple[int, ...] = [1, 2, 3]", "(1, 2, 3)"),
        ("a: Alias = [1, 2]", "(1, 2)"),
        ("a: list[Alias] | int = [[1, 2]]", "[(1, 2)]"),
        ("a: tuple[float, float] = Field(default_factory=lambda: [0.0, 1.0])", "(0.0, 1.0)"),
        ("a: tuple[float, float] = Field(default=[0.0, 1.0], title='t')", "(0.0, 1.0)"),
        ("a: list[int] = [1, 2]", "[1, 2]"),
        ("a: tuple[int, int] = [1, 2, 3]", "[1, 2, 3]"),  # does not fit: left as it is
        ("a: list[tuple[float, float]] = [[1, -2]]", "[(1.0, -2.0)]"),
        ("a: float = 1", "1"),
        ("a: list[list[int]] | tuple[int, int] = [[1]]", "[[1]]"),
    ],
)
def test_defaults_follow_the_annotation(field: str, fixed: str) -> None:
    alias = "Alias = TypeAliasType('Alias', Annotated[tuple[int, int], Field(max_length=2)])\n"
    source = HEAD + alias + f"class M(BaseModel):\n    {field}\n"
    out = fix_tuple_defaults(source)
    stmt = ast.parse(out).body[-1].body[0]  # type: ignore[attr-defined]
    assert isinstance(stmt, ast.AnnAssign)
    assert stmt.value is not None
    assert fixed in ast.unparse(stmt.value)


def test_untouched_source_is_returned_as_is() -> None:
    source = HEAD + "class M(BaseModel):\n    a: list[int] = [1]  # kept\n    b: int = 3\n"
    assert fix_tuple_defaults(source) == source


@pytest.mark.parametrize("model_type", ["pydantic", "dataclasses"])
def test_generated_tuple_defaults_pass_mypy_strict(tmp_path: Path, model_type: str) -> None:
    vec = {"type": "array", "prefixItems": [{"type": "number"}] * 3, "minItems": 3, "maxItems": 3}
    action = {
        "type": "object",
        "$defs": {"Vec": vec},
        "properties": {
            "location": {**vec, "default": [0.0, 0.0, 0.0]},
            "path": {"type": "array", "items": {"$ref": "#/$defs/Vec"}, "default": [[1, 2, 3]]},
            "pose": {
                "type": "array",
                "prefixItems": [{"$ref": "#/$defs/Vec"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
                "default": [[0.0, 0.0, 0.0], "up"],
            },
            "named": {"type": "object", "additionalProperties": vec, "default": {"o": [0, 0, 0]}},
        },
    }
    toml = f'name = "tup"\nversion = "1.0.0"\nmodel_type = "{model_type}"\n'
    write_env(tmp_path, "tup", action=action, toml=toml)
    models = tmp_path / "models.py"
    models.write_text(generate_models(load_env(Layout.at(tmp_path), "tup"), "# header"))
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", str(REPO / "pyproject.toml"),
         "--cache-dir", str(REPO / ".mypy_cache"), str(models)],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout
    namespace: dict[str, object] = {}
    exec(compile(models.read_text(), "models.py", "exec"), namespace)
    action_cls = namespace["TupAction"]
    made = action_cls()  # type: ignore[operator]
    assert made.location == (0.0, 0.0, 0.0)
    assert made.pose == ((0.0, 0.0, 0.0), "up")


@pytest.mark.parametrize("sep", ["\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"])
def test_a_tuple_default_after_text_with_a_non_line_end_is_rewritten(sep: str) -> None:
    source = f'class M:\n    """€{sep}b"""\n\n    a: tuple[int, int] = [1, 2]\n'
    assert fix_tuple_defaults(source).endswith("a: tuple[int, int] = (1, 2)\n")
