"""The files that make a generated env an installable package: pyproject.toml and _runtime.py."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from envgen_runtime import API_VERSION
from envgen_runtime.compat import compatible_range
from hypothesis import given
from hypothesis import strategies as st

from generator.codegen.output import build
from generator.codegen.render import OUTPUT_FILES, PACKAGE_FILES, distribution_name, toml
from generator.schema.loader import Layout
from tests.helpers import write_env

_NO_SURROGATES = st.text(st.characters(blacklist_categories=("Cs",)))


@given(_NO_SURROGATES)
def test_toml_strings_round_trip_any_text(text: str) -> None:
    assert tomllib.loads(f"x = {toml(text)}")["x"] == text


def test_toml_string_cannot_open_a_new_key_or_table() -> None:
    evil = '"\nname = "evil"\n[tool.x]\n# \\'
    parsed = tomllib.loads(f"x = {toml(evil)}\n")
    assert parsed == {"x": evil}
    assert "\n" not in toml(evil)


def test_toml_replaces_a_lone_surrogate() -> None:
    literal = toml("a\ud800b")
    assert tomllib.loads(f"x = {literal}")["x"] == "a\ufffdb"


def test_distribution_name_is_normalized() -> None:
    assert distribution_name("echo_env") == "echo-env-client"


def _files(tmp_path: Path, name: str) -> dict[str, str]:
    write_env(tmp_path, name)
    return build(Layout.at(tmp_path), use_cache=False).env_files(name)


def test_every_generated_env_is_an_installable_package(tmp_path: Path) -> None:
    files = _files(tmp_path, "card_env")
    assert sorted(files) == sorted(OUTPUT_FILES)
    project = tomllib.loads(files["pyproject.toml"])
    assert project["build-system"]["build-backend"] == "hatchling.build"
    meta = project["project"]
    assert (meta["name"], meta["version"]) == ("card-env-client", "1.0.0")  # from env.toml
    assert meta["requires-python"] == ">=3.11"
    runtime = f"envgen-runtime{compatible_range(API_VERSION)}"
    assert runtime in meta["dependencies"]
    assert meta["optional-dependencies"]["docker"] == [
        f"envgen-runtime[docker]{compatible_range(API_VERSION)}"
    ]
    wheel = project["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["only-include"] == list(PACKAGE_FILES)
    assert "py.typed" in wheel["only-include"]
    assert wheel["sources"] == {"": "envgen_clients/card_env"}


def test_the_package_records_and_checks_the_runtime_api_first(tmp_path: Path) -> None:
    files = _files(tmp_path, "card_env")
    runtime = ast.parse(files["_runtime.py"])
    assigned = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in runtime.body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }
    assert assigned == {"RUNTIME_API": API_VERSION}
    calls = [n for n in ast.walk(runtime) if isinstance(n, ast.Call)]
    assert any(getattr(c.func, "id", None) == "check_generated" for c in calls)
    init = ast.parse(files["__init__.py"])
    imports = [n for n in init.body if isinstance(n, ast.ImportFrom)]
    assert imports[0].module == "_runtime"  # checked before client or models import anything
    assert "RUNTIME_API" in files["__init__.py"]
