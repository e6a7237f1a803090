from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.errors import EnvExistsError, EnvgenError
from generator.scaffold.env import new_env
from generator.schema.loader import Layout, load_env


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


def test_new_env_writes_a_server_module_that_env_toml_serves(tmp_path: Path) -> None:
    layout = Layout.at(tmp_path)
    new_env(layout, "card_env", transport="http", class_prefix="Cards")
    module = tmp_path / "servers" / "card_env" / "server.py"
    text = module.read_text()
    assert "from generated.card_env.server import CardsAction, CardsObservation, CardsState" in text
    assert (tmp_path / "servers" / "__init__.py").read_text() == ""
    assert (tmp_path / "servers" / "card_env" / "__init__.py").is_file()
    compile(text, str(module), "exec")
    manifest = load_env(layout, "card_env").manifest
    assert manifest.server_command == (
        "{python}", "-m", "servers.card_env.server", "--host", "{host}", "--port", "{port}",
        "--protocol", "{transport}",
    )  # fmt: skip
    assert manifest.docker_image == "card-env:0.1.0"
    assert manifest.transport == "http"
    assert "\n    main(CardsEnvironment)" in text  # the generated main: env.toml's backend


def test_a_new_env_serves_on_the_lean_backend_and_its_image_installs_no_openenv(
    tmp_path: Path,
) -> None:
    from generator.schema.manifest import DOCKER_REQUIREMENTS

    layout = Layout.at(tmp_path)
    target = new_env(layout, "card_env")
    toml = (target / "env.toml").read_text()
    assert '\nbackend = "lean"\n' in toml  # written out, so the choice is visible
    manifest = load_env(layout, "card_env").manifest
    assert manifest.backend == "lean"
    assert manifest.docker_requirements == DOCKER_REQUIREMENTS["lean"]
    assert not {"openenv", "gradio"} & set(manifest.docker_requirements)
    switched = toml.replace('backend = "lean"', 'backend = "openenv"')
    (target / "env.toml").write_text(switched)
    assert load_env(layout, "card_env").manifest.backend == "openenv"


def test_server_dir_names_the_package(tmp_path: Path) -> None:
    layout = Layout.at(tmp_path)
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "__init__.py").write_text("KEEP = 1\n")
    new_env(layout, "card_env", server_dir="apps/cards")
    assert (tmp_path / "apps" / "__init__.py").read_text() == "KEEP = 1\n"  # left alone
    assert (tmp_path / "apps" / "cards" / "server.py").is_file()
    command = load_env(layout, "card_env").manifest.server_command
    assert command[1:3] == ("-m", "apps.cards.server")


def test_an_existing_server_module_is_never_overwritten_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    layout = Layout.at(tmp_path)
    existing = tmp_path / "servers" / "card_env" / "server.py"
    existing.parent.mkdir(parents=True)
    existing.write_text("mine\n")
    with pytest.raises(EnvExistsError, match=r"servers/card_env/server\.py already exists"):
        new_env(layout, "card_env")
    assert existing.read_text() == "mine\n"
    assert not (tmp_path / "schemas" / "card_env").exists()


@pytest.mark.parametrize("server_dir", ["/abs/path", "../outside", "my-dir", "", "generated/x"])
def test_cli_rejects_a_server_dir_that_cannot_be_imported(tmp_path: Path, server_dir: str) -> None:
    from click.testing import CliRunner

    from generator.cli import main

    result = CliRunner().invoke(
        main, ["--root", str(tmp_path), "new", "card_env", "--server-dir", server_dir]
    )
    assert result.exit_code == 2, result.output
    assert "--server-dir" in result.output
    assert not (tmp_path / "schemas").exists() and not (tmp_path / "servers").exists()
