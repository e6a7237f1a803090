"""reset.schema.json: loading it, refusing what cannot be a keyword argument, and the typed
`reset()` the generated clients get from it."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from envgen_runtime import EnvValidationError

from generated.grid_env import AsyncGridEnv, GridEnv, GridEnvPool
from generated.grid_env.client import _reset_params
from generator.cli import main
from generator.codegen.reset_params import reset_signature
from generator.schema.loader import Layout, load_env
from tests.helpers import REPO, write_env

PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "size": {"type": "integer", "minimum": 2, "default": 4, "description": "Board size."},
        "name": {"type": "string"},
    },
    "required": ["name"],
}


def _project(tmp_path: Path, reset: Any) -> Path:
    text = reset if isinstance(reset, str) else json.dumps(reset)
    write_env(tmp_path, "my_env", raw={"my_env/reset.schema.json": text})
    return tmp_path


def _generate(root: Path) -> Any:
    return CliRunner().invoke(main, ["--root", str(root), "generate", "my_env"])


def test_absent_reset_schema_changes_nothing(tmp_path: Path) -> None:
    write_env(tmp_path, "my_env")
    env = load_env(Layout.at(tmp_path), "my_env")
    assert env.reset_class is None
    assert not any("reset" in source for source in env.sources)
    result = _generate(tmp_path)
    assert result.exit_code == 0, result.output
    client = (tmp_path / "generated/my_env/client.py").read_text()
    assert "def reset" not in client and "_RESET" not in client


def test_reset_schema_is_loaded_as_a_fourth_model(tmp_path: Path) -> None:
    env = load_env(Layout.at(_project(tmp_path, PARAMS)), "my_env")
    assert env.reset_class == "MyResetParams"
    assert "schemas/my_env/reset.schema.json" in env.sources
    assert env.bundle.defs["MyResetParams"]["required"] == ["name"]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("seed", "clashes with reset()"),
        ("episode_id", "clashes with reset()"),
        ("headers", "clashes with reset()"),
        ("seeds", "clashes with reset()"),  # the pool's reset() takes it
        ("slots", "clashes with reset()"),
        ("super", "clashes with reset()"),  # reset() calls super()
        ("class", "Python keyword"),
        ("match", "Python keyword"),
        ("my-size", "not a Python identifier"),
        ("_size", "private"),
    ],
)
def test_unusable_parameter_names_are_input_errors(tmp_path: Path, name: str, why: str) -> None:
    schema = {"type": "object", "properties": {name: {"type": "integer"}}}
    result = _generate(_project(tmp_path, schema))
    assert result.exit_code == 2, result.output
    assert "schemas/my_env/reset.schema.json" in result.output
    assert f"/properties/{name} (JSON pointer)" in result.output
    assert why in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "generated").exists()


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        ({"type": "string"}, "/type"),
        ({}, "/"),
        ({"type": "object", "oneOf": [{"properties": {"a": {}}}]}, "/oneOf"),
        ({"type": "object", "properties": {"size": {"type": "integer", "default": "x"}}}, None),
    ],
)
def test_bad_reset_schemas_are_input_errors(
    tmp_path: Path, schema: dict[str, Any], pointer: str | None
) -> None:
    result = _generate(_project(tmp_path, schema))
    assert result.exit_code == 2, result.output
    assert "schemas/my_env/reset.schema.json" in result.output
    if pointer is not None:
        assert f"at {pointer} (JSON pointer)" in result.output
    assert not (tmp_path / "generated").exists()


def test_invalid_json_names_the_file(tmp_path: Path) -> None:
    result = _generate(_project(tmp_path, "{not json"))
    assert result.exit_code == 2
    assert "schemas/my_env/reset.schema.json:1:2" in result.output


def test_generated_client_has_typed_keyword_arguments(tmp_path: Path) -> None:
    result = _generate(_project(tmp_path, PARAMS))
    assert result.exit_code == 0, result.output
    client = (tmp_path / "generated/my_env/client.py").read_text()
    assert "        name: str,\n        size: int = 4,\n" in client  # required first
    assert client.count("def reset(  # type: ignore[override]") == 4  # sync, async, 2 pools
    assert "- size (default 4): Board size." in client


@pytest.mark.parametrize(
    "schema",
    [
        {
            "type": "object",
            "properties": {
                name: {"type": "string"} for name in ("params", "Mapping", "StepResult", "Any")
            },
        },
        {  # a def named like a typing name (found by test_odd_schema_packages): client.py
            # and trl.py imported typing's Literal for the model's name too
            "type": "object",
            "properties": {"item": {"$ref": "#/$defs/Literal"}},
            "$defs": {"Literal": {"type": "object", "properties": {"odd": {"type": "integer"}}}},
        },
    ],
    ids=["locals", "typing-name-model"],
)
def test_parameters_named_like_reset_locals_or_types_pass_mypy(
    tmp_path: Path, schema: dict[str, Any]
) -> None:
    """`reset()` binds no local a parameter could be (`params` once was one)."""
    result = _generate(_project(tmp_path, schema))
    assert result.exit_code == 0, result.output
    config = [
        "--config-file",
        str(REPO / "pyproject.toml"),
        "--cache-dir",
        str(REPO / ".mypy_cache"),
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *config, "generated/my_env"],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout


def test_signature_reads_the_generated_model() -> None:
    source = (
        "class P(EnvModel):\n"
        "    model_config = ConfigDict(extra='forbid')\n"
        "    when: AwareDatetime | None = None\n"
        "    level: Annotated[int, Field(ge=0)]\n"
        "    kind: Kind = Kind.a\n"
        "    tags: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)\n"
        "class Kind(Enum):\n"
        "    a = 'a'\n"
    )
    sig = reset_signature(source, "P", {"properties": {"tags": {"default": []}}})
    by_name = {p.name: p for p in sig.params}
    assert sig.params[0].name == "level"  # required first
    assert by_name["level"].annotation == "int" and by_name["level"].default is None
    assert by_name["when"].annotation == "Any"  # a pydantic type client.py does not import
    assert by_name["kind"].default == "Kind.a"
    assert by_name["tags"].annotation == "list[str] | None"  # computed default: the server's
    assert by_name["tags"].default == "None"
    assert sig.model_imports == ["Kind"]
    assert sig.typing_imports == ["Any"]


def test_builtins_the_models_import_under_another_name_keep_their_type() -> None:
    """A field named `int` makes the models import `int as int_aliased`; reset() says int."""
    source = (
        "from builtins import int as int_aliased\n"
        "from typing import Literal as Literal_aliased\n"
        "class P(EnvModel):\n"
        "    int: int_aliased | None = None\n"
        "    Literal: Literal_aliased['a', 'b'] = 'a'\n"
        "    size: list[int_aliased] | None = None\n"
    )
    by_name = {p.name: p for p in reset_signature(source, "P", {}).params}
    assert by_name["int"].annotation == "int | None"
    assert by_name["Literal"].annotation == "Literal['a', 'b']"
    assert by_name["size"].annotation == "list[int] | None"


def test_a_typing_name_that_is_also_a_model_keeps_its_alias() -> None:
    """A def named `Literal` (a model client.py imports too) and a literal-typed argument:
    the typing name keeps the models' alias, imported as that alias (once, a mypy error)."""
    source = (
        "from builtins import int as int_aliased\n"
        "from typing import Literal as Literal_aliased\n"
        "class Literal(EnvModel):\n"
        "    x: int_aliased\n"
        "class int(EnvModel):\n"
        "    y: str\n"
        "class P(EnvModel):\n"
        "    mode: Literal_aliased['a', 'b'] = 'a'\n"
        "    item: Literal | None = None\n"
        "    count: int_aliased = 0\n"
    )
    sig = reset_signature(source, "P", {})
    by_name = {p.name: p for p in sig.params}
    assert by_name["mode"].annotation == "Literal_aliased['a', 'b']"
    assert by_name["item"].annotation == "Literal | None"
    assert by_name["count"].annotation == "Any"  # `int` is the model here: no way to say int
    assert sig.typing_imports == ["Any", "Literal as Literal_aliased"]
    assert sig.model_imports == ["Literal"]


def test_committed_client_validates_and_sends_only_what_differs() -> None:
    assert _reset_params({"size": 5, "difficulty": "easy"}) == {}
    assert _reset_params({"size": 7, "difficulty": "easy"}) == {"size": 7}
    with pytest.raises(EnvValidationError) as caught:
        _reset_params({"size": 30, "difficulty": "easy"})
    assert caught.value.role == "reset"
    assert [e.loc for e in caught.value.errors] == [("size",)]


@pytest.mark.parametrize("cls", [GridEnv, AsyncGridEnv, GridEnvPool])
def test_committed_signatures_are_keyword_only_with_defaults(cls: type[Any]) -> None:
    params = inspect.signature(cls.reset).parameters
    assert params["size"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["size"].default == 5
    assert params["difficulty"].default == "easy"


def test_bad_value_is_refused_before_any_connection() -> None:
    env = GridEnv("http://127.0.0.1:9", transport="http")  # nothing listens there
    try:
        with pytest.raises(EnvValidationError, match="nothing was sent"):
            env.reset(size=3)
    finally:
        env.close()


def test_adding_or_removing_the_reset_schema_regenerates(tmp_path: Path) -> None:
    """The cache records inputs that exist; a reset schema added later is a new input."""
    write_env(tmp_path, "my_env")
    assert _generate(tmp_path).exit_code == 0
    client = tmp_path / "generated/my_env/client.py"
    assert "_reset_params" not in client.read_text()
    reset = tmp_path / "schemas/my_env/reset.schema.json"
    reset.write_text(json.dumps(PARAMS))
    result = _generate(tmp_path)
    assert result.exit_code == 0, result.output
    assert "size: int = 4" in client.read_text()
    check = CliRunner().invoke(main, ["--root", str(tmp_path), "check"])
    assert check.exit_code == 0, check.output
    reset.unlink()
    assert _generate(tmp_path).exit_code == 0
    assert "_reset_params" not in client.read_text()


def test_server_passes_validated_params_under_their_wire_names() -> None:
    """A field renamed in Python (`schema` -> `schema_`) reaches the env's reset as `schema`."""
    from typing import Annotated

    import pydantic
    from envgen_runtime.server import ServerModel
    from envgen_runtime.server.serving import serving_class

    class Params(ServerModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        schema_: Annotated[str, pydantic.Field(alias="schema")] = "plain"
        size: int = 5

    seen: dict[str, Any] = {}

    class Env:
        def reset(self, seed: int | None = None, **kwargs: Any) -> None:
            seen.update(kwargs, seed=seed)

    served = serving_class(Env, Params)()
    served.reset(seed=1, schema="fancy")
    assert seen == {"seed": 1, "episode_id": None, "schema": "fancy", "size": 5}
    with pytest.raises(pydantic.ValidationError):
        served.reset(size="big")
    with pytest.raises(pydantic.ValidationError):
        served.reset(colour="red")
