from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.errors import EnvExistsError, EnvgenError
from generator.loader import Layout, load_env
from generator.scaffold import new_env


def test_new_env_loads_cleanly(tmp_path: Path) -> None:
    layout = Layout.at(tmp_path)
    target = new_env(layout, "my_env")
    assert sorted(p.name for p in target.iterdir()) == [
        "action.schema.json",
        "env.toml",
        "observation.schema.json",
        "state.schema.json",
    ]
    env = load_env(layout, "my_env")
    assert env.client_name == "MyEnv"
    assert json.loads((target / "action.schema.json").read_text())["required"] == ["message"]


def test_refuses_existing_and_leaves_no_temp_folder(tmp_path: Path) -> None:
    layout = Layout.at(tmp_path)
    new_env(layout, "my_env")
    with pytest.raises(EnvExistsError):
        new_env(layout, "my_env")
    assert sorted(p.name for p in (tmp_path / "schemas").iterdir()) == ["my_env"]


@pytest.mark.parametrize("name", ["My", "1x", "a-b", "class", "generated", ""])
def test_rejects_bad_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(EnvgenError):
        new_env(Layout.at(tmp_path), name)
    assert not (tmp_path / "schemas").exists()
