"""The envgen command line, driven through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from generator import __version__
from generator.cli import main
from tests.helpers import snapshot, write_env


def run(root: Path, *args: str):
    return CliRunner().invoke(main, ["--root", str(root), *args], catch_exceptions=False)


def test_help_and_version() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for command in ("generate", "check", "new", "list"):
        assert command in result.output
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_new_generate_check_cycle(tmp_path: Path) -> None:
    result = run(tmp_path, "new", "foo")
    assert result.exit_code == 0, result.output
    assert "created schemas/foo/" in result.output
    result = run(tmp_path, "generate", "foo")
    assert result.exit_code == 0, result.output
    assert "foo: written (generated/foo)" in result.output
    result = run(tmp_path, "check")
    assert result.exit_code == 0, result.output
    assert "up to date (1 envs checked)" in result.output
    result = run(tmp_path, "generate")
    assert "foo: unchanged" in result.output
    assert run(tmp_path, "list").output == "foo\n"


def test_new_refuses_existing_env(tmp_path: Path) -> None:
    assert run(tmp_path, "new", "foo").exit_code == 0
    (tmp_path / "schemas/foo/action.schema.json").write_text('{"type": "object"}')
    before = snapshot(tmp_path / "schemas")
    result = run(tmp_path, "new", "foo")
    assert result.exit_code == 2
    assert "already exists" in result.output
    assert snapshot(tmp_path / "schemas") == before


def test_new_rejects_bad_name(tmp_path: Path) -> None:
    result = run(tmp_path, "new", "Bad-Name")
    assert result.exit_code == 2
    assert "Invalid value for NAME" in result.output
    assert not (tmp_path / "schemas").exists()


def test_check_fails_with_diff(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha")
    assert run(tmp_path, "generate").exit_code == 0
    models = tmp_path / "generated/alpha/models.py"
    models.write_text(models.read_text().replace("class AlphaAction", "class Renamed"))
    (tmp_path / "generated/alpha/README.md").unlink()
    result = run(tmp_path, "check")
    assert result.exit_code == 1
    assert "differs: generated/alpha/models.py" in result.output
    assert "-class Renamed" in result.output and "+class AlphaAction" in result.output
    assert "missing: generated/alpha/README.md" in result.output
    assert "1 differ, 1 missing, 0 stale" in result.output


def test_check_after_schema_change_without_regenerating(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha")
    run(tmp_path, "generate")
    write_env(tmp_path, "alpha", action={"type": "object", "properties": {"y": {"type": "string"}}})
    result = run(tmp_path, "check")
    assert result.exit_code == 1
    assert "Schema hash" in result.output


def test_bad_input_exits_2_naming_file_and_pointer(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha", action={"type": "object", "properties": {"x": {"type": 5}}})
    result = run(tmp_path, "generate")
    assert result.exit_code == 2
    assert "schemas/alpha/action.schema.json at /properties/x/type (JSON pointer)" in result.output
    assert not (tmp_path / "generated").exists()


def test_invalid_json_reports_line_and_column(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha", raw={"alpha/state.schema.json": '{\n  "type": "object",,\n}'})
    result = run(tmp_path, "generate")
    assert result.exit_code == 2
    assert "schemas/alpha/state.schema.json:2:20: invalid JSON" in result.output


def test_unknown_env(tmp_path: Path) -> None:
    result = run(tmp_path, "generate", "nope")
    assert result.exit_code == 2
    assert "no environment named 'nope'" in result.output
    assert "envgen new nope" in result.output


def test_several_bad_envs_all_reported(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha", raw={"alpha/env.toml": "name = 1\n"})
    write_env(tmp_path, "beta", state={})
    result = run(tmp_path, "check")
    assert result.exit_code == 2
    assert result.output.count("error:") == 2
    assert (
        "schemas/alpha/env.toml" in result.output
        and "schemas/beta/state.schema.json" in result.output
    )


def test_usage_error_exits_2(tmp_path: Path) -> None:
    result = run(tmp_path, "generate", "--bogus")
    assert result.exit_code == 2
    assert "No such option" in result.output


def test_json_pointer_escaping_in_errors(tmp_path: Path) -> None:
    action = {"type": "object", "properties": {"a/b~c": {"type": "nope"}}}
    write_env(tmp_path, "alpha", action=action)
    result = run(tmp_path, "generate")
    assert "/properties/a~1b~0c/type" in result.output, result.output
    assert json.loads(json.dumps(action))  # the file itself stays untouched
