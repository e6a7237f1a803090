"""generated/<env>/server.py: server models made from the same schemas as the client.

They subclass openenv 0.10's wire bases as envgen_runtime.server restates them (so no
openenv is needed to serve on the lean backend); test_lean holds those equal to openenv's.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap

import pytest
from envgen_runtime.server.bases import Action, Observation, State
from pydantic import BaseModel

from generator.codegen.server_models import generate_server_models
from generator.schema.loader import Layout, load_env
from tests.helpers import REPO

EXAMPLES = sorted(p.parent.name for p in (REPO / "schemas").glob("*/env.toml"))
GOLDEN = REPO / "tests" / "golden" / "cases" / "tricky"
BASE_FIELDS = {
    "action": {"metadata"},
    "observation": {"done", "reward", "metadata"},
    "state": {"episode_id", "step_count"},
}


def _schema_names(env: str, role: str) -> set[str]:
    doc = json.loads((REPO / "schemas" / env / f"{role}.schema.json").read_text())
    return set(doc.get("properties", {}))


def _wire_names(model: type[BaseModel]) -> set[str]:
    return set(model.model_json_schema(by_alias=True).get("properties", {}))


@pytest.mark.parametrize("env", EXAMPLES)
def test_server_models_subclass_the_wire_bases_and_carry_the_schema_wire_names(env: str) -> None:
    module = importlib.import_module(f"generated.{env}.server")
    prefix = load_env(Layout.at(REPO), env).manifest.class_prefix
    bases = {"action": Action, "observation": Observation, "state": State}
    for role, base in bases.items():
        cls = getattr(module, f"{prefix}{role.capitalize()}")
        assert issubclass(cls, base)
        if role == "action" and "union" in vars(cls):
            continue  # a tagged union: checked below
        expected = _schema_names(env, role) | BASE_FIELDS[role]
        assert _wire_names(cls) == expected, role


def test_union_action_validates_to_its_members_and_rejects_a_wrong_tag() -> None:
    from generated.grid_env import server

    move = server.GridAction.model_validate({"type": "move", "direction": "east"})
    assert isinstance(move, server.MoveAction) and isinstance(move, Action)
    assert server.MoveAction(direction="west").type == "move"  # the tag defaults
    with pytest.raises(ValueError):
        server.GridAction.model_validate({"type": "move", "direction": "up"})
    with pytest.raises(ValueError):
        server.GridAction.model_validate({"type": "fly"})
    schema = server.GridAction.model_json_schema()
    assert schema["title"] == "GridAction" and "oneOf" in schema
    assert schema["discriminator"]["propertyName"] == "type"


def test_wire_names_survive_a_bare_model_dump() -> None:
    from generated.grid_env import server

    obs = server.GridObservation.model_validate(
        {
            "grid": [["."]],
            "position": {"row": 0, "col": 0},
            "facing": "north",
            "inventory": [],
            "message": "",
            "class": "wall",
        }
    )
    assert obs.model_dump()["class"] == "wall"


def test_dataclass_env_still_gets_pydantic_server_models() -> None:
    env = load_env(Layout.at(GOLDEN), "dataclass_env")
    assert env.manifest.model_type == "dataclasses"
    source = generate_server_models(env, "# header").source
    assert "dataclass" not in source
    assert "(ServerAction)" in source and "(ServerObservation)" in source


def test_union_alias_name_avoids_an_existing_def() -> None:
    layout = Layout.at(REPO)
    env = load_env(layout, "grid_env")
    env.bundle.defs["GridActionUnion"] = {"type": "string"}
    models = generate_server_models(env, "# header")
    assert models.union_alias == "GridActionUnion2"
    assert "GridActionUnion2 = TypeAliasType(" in models.source


def test_the_client_package_never_imports_openenv() -> None:
    code = textwrap.dedent(
        """
        import sys
        class _Block:
            def find_spec(self, name, path=None, target=None):
                if name == "openenv" or name.startswith("openenv."):
                    raise ModuleNotFoundError(name, name=name)
                return None
        sys.meta_path.insert(0, _Block())
        import generated.grid_env, generated.quiz_env
        assert not any(m.startswith("openenv") for m in sys.modules)
        print("ok")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert proc.stdout.strip() == "ok", proc.stderr
