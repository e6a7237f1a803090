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
from pathlib import Path

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


_SERVE = """
import sys
from envgen_runtime.server import Environment
from generated.{env}.server import main
class Env(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True
main(Env, argv=sys.argv[1:])
"""


def _served_backend(root: Path, env: str, *argv: str) -> str:
    """Which backend `generated/<env>/server.py`'s `main` serves on, given `argv`: FastAPI's
    `/docs` answers on openenv's app and not on the lean one."""
    import http.client
    import socket
    import time

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = _SERVE.format(env=env)
    command = [sys.executable, "-c", code, "--port", str(port), *argv]
    proc = subprocess.Popen(command, cwd=root, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the server did not answer"
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/docs")
                status = conn.getresponse().status
                conn.close()
                break
            except OSError:
                time.sleep(0.05)
        return {200: "openenv", 404: "lean"}[status]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_generated_main_serves_on_env_toml_backend_and_backend_overrides_it(
    tmp_path: Path,
) -> None:
    from click.testing import CliRunner

    from generator.cli import main
    from tests.helpers import manifest, write_env

    write_env(tmp_path, "fast_env", toml=manifest("fast_env") + '[server]\nbackend = "lean"\n')
    write_env(tmp_path, "plain_env")  # no key: openenv, as before the key existed
    result = CliRunner().invoke(main, ["--root", str(tmp_path), "generate"])
    assert result.exit_code == 0, result.output
    assert 'BACKEND = "lean"' in (tmp_path / "generated/fast_env/server.py").read_text()
    assert 'BACKEND = "openenv"' in (tmp_path / "generated/plain_env/server.py").read_text()
    assert _served_backend(tmp_path, "fast_env") == "lean"
    assert _served_backend(tmp_path, "fast_env", "--backend", "openenv") == "openenv"
    assert _served_backend(tmp_path, "plain_env") == "openenv"


def test_a_schema_type_named_like_what_server_py_defines_is_refused(tmp_path: Path) -> None:
    from generator.codegen.render import render_env
    from generator.errors import GenerationError
    from tests.helpers import write_env

    action = {
        "type": "object",
        "properties": {"b": {"$ref": "#/$defs/BACKEND"}},
        "$defs": {"BACKEND": {"type": "object", "properties": {"zz": {"type": "string"}}}},
    }
    write_env(tmp_path, "clash_env", action=action)
    with pytest.raises(GenerationError, match=r"'BACKEND', which server\.py defines beside"):
        render_env(load_env(Layout.at(tmp_path), "clash_env"))
