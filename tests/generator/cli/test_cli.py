"""The envgen command line, driven through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
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
    assert "up to date (1 env checked)" in result.output
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


def test_check_after_schema_change_leads_with_the_fix_and_lists_only_changed_files(
    tmp_path: Path,
) -> None:
    write_env(tmp_path, "alpha")
    write_env(tmp_path, "beta")
    run(tmp_path, "generate")
    write_env(tmp_path, "alpha", action={"type": "object", "properties": {"y": {"type": "string"}}})
    result = run(tmp_path, "check")
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "generated/ is out of date: 5 differ, 0 missing, 0 stale. "
        "Run `envgen generate alpha` and commit the result."
    )
    # The schema hash lives in schemas.json alone: files whose content the edit leaves as it
    # was (py.typed, _runtime.py, __init__.py, pyproject.toml) are not rewritten; trl.py's
    # step() takes the action's fields.
    differs = sorted(line for line in result.output.splitlines() if line.startswith("differs"))
    assert differs == [
        f"differs: generated/alpha/{name}"
        for name in ("README.md", "models.py", "schemas.json", "server.py", "trl.py")
    ]


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


def test_a_typo_in_an_env_name_gets_did_you_mean(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha_env")
    for args in (
        ["generate", "alpah_env"],
        ["image", "alpah_env"],
        ["verify", "alpah_env", "--local"],
    ):
        result = run(tmp_path, *args)
        assert result.exit_code == 2, result.output
        assert "did you mean 'alpha_env'?" in result.output
    assert "did you mean" not in run(tmp_path, "generate", "zzz").output  # nothing close


def test_an_image_tag_contradicting_the_version_exits_2(tmp_path: Path) -> None:
    toml = 'name = "alpha"\nversion = "0.2.0"\n[docker]\nimage = "me/alpha:0.1.0"\n'
    write_env(tmp_path, "alpha", toml=toml)
    result = run(tmp_path, "generate")
    assert result.exit_code == 2
    assert "schemas/alpha/env.toml at /docker/image" in result.output
    assert "'0.1.0' contradicts version '0.2.0'" in result.output


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


def test_short_version_flag() -> None:
    result = CliRunner().invoke(main, ["-V"])
    assert result.exit_code == 0 and result.output == f"envgen, version {__version__}\n"


def test_check_count_is_pluralised(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha")
    write_env(tmp_path, "beta")
    assert run(tmp_path, "generate").exit_code == 0
    assert "(2 envs checked)" in run(tmp_path, "check").output
    assert "(1 env checked)" in run(tmp_path, "check", "alpha").output


def test_new_manifest_names_the_other_transport(tmp_path: Path) -> None:
    assert run(tmp_path, "new", "foo").exit_code == 0
    manifest = (tmp_path / "schemas/foo/env.toml").read_text()
    assert 'transport = "websocket"          # or "http"\n' in manifest
    assert "/" not in manifest.split("transport =", 1)[1].splitlines()[0]
    assert run(tmp_path, "new", "bar", "--transport", "http").exit_code == 0
    manifest = (tmp_path / "schemas/bar/env.toml").read_text()
    assert 'transport = "http"          # or "websocket"\n' in manifest


def test_new_with_transport_and_class_prefix(tmp_path: Path) -> None:
    result = run(tmp_path, "new", "foo", "--transport", "http", "--class-prefix", "MyGame")
    assert result.exit_code == 0, result.output
    manifest = (tmp_path / "schemas/foo/env.toml").read_text()
    assert 'class_prefix = "MyGame"\n' in manifest and 'transport = "http"' in manifest
    assert run(tmp_path, "generate").exit_code == 0
    models = (tmp_path / "generated/foo/models.py").read_text()
    assert "class MyGameAction" in models and "class MyGameObservation" in models
    client = (tmp_path / "generated/foo/client.py").read_text()
    assert "class MyGameEnv" in client and '"http"' in client


@pytest.mark.parametrize("prefix", ["myGame", "My-Game", "1Game", "None", ""])
def test_new_rejects_bad_class_prefix(tmp_path: Path, prefix: str) -> None:
    result = run(tmp_path, "new", "foo", "--class-prefix", prefix)
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--class-prefix'" in result.output
    assert not (tmp_path / "schemas").exists()


def test_new_rejects_unknown_transport(tmp_path: Path) -> None:
    result = run(tmp_path, "new", "foo", "--transport", "grpc")
    assert result.exit_code == 2 and "Invalid value for '--transport'" in result.output


def test_list_marks_folders_that_are_not_envs(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha")
    write_env(tmp_path, "beta", action={"type": "object", "properties": {"x": {"type": 5}}})
    (tmp_path / "schemas/empty").mkdir()
    (tmp_path / "schemas/_shared").mkdir()
    result = run(tmp_path, "list")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "alpha"
    assert lines[1].startswith(
        "beta  (not an env: schemas/beta/action.schema.json at /properties/x"
    )
    assert lines[2] == "empty  (not an env: no env.toml)"
    assert len(lines) == 3  # _shared holds shared schemas: not a candidate
    assert run(tmp_path, "list", "--quiet").output == "alpha\n"
    verbose = run(tmp_path, "list", "-v").output.splitlines()[0]
    assert verbose == "alpha  1.0.0  websocket  Alpha  (schemas/alpha)"


def test_list_json(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha")
    (tmp_path / "schemas/empty").mkdir()
    result = run(tmp_path, "list", "--json")
    assert result.exit_code == 0, result.output
    items = json.loads(result.output)
    assert [item["name"] for item in items] == ["alpha", "empty"]
    assert items[0]["valid"] is True and items[0]["class_prefix"] == "Alpha"
    assert items[0]["version"] == "1.0.0" and items[0]["path"] == "schemas/alpha"
    assert items[1] == {
        "name": "empty",
        "path": "schemas/empty",
        "valid": False,
        "reason": "no env.toml",
    }
    assert json.loads(run(tmp_path.joinpath("nowhere"), "list", "--json").output) == []


def test_check_format_json_and_github(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha")
    assert run(tmp_path, "generate").exit_code == 0
    ok = run(tmp_path, "check", "--format", "json")
    assert ok.exit_code == 0
    assert json.loads(ok.output) == {
        "ok": True,
        "envs_checked": ["alpha"],
        "differs": [],
        "missing": [],
        "stale": [],
    }
    assert run(tmp_path, "check", "--format", "github").output == ""
    models = tmp_path / "generated/alpha/models.py"
    models.write_text(models.read_text() + "# edited\n")
    (tmp_path / "generated/alpha/README.md").unlink()
    (tmp_path / "generated/alpha/extra.py").write_text("")
    bad = run(tmp_path, "check", "--format", "json")
    assert bad.exit_code == 1
    document = json.loads(bad.output)
    assert document["ok"] is False
    assert [d["path"] for d in document["differs"]] == ["generated/alpha/models.py"]
    assert "-# edited" in document["differs"][0]["diff"]
    assert document["missing"] == ["generated/alpha/README.md"]
    assert document["stale"] == ["generated/alpha/extra.py"]
    github = run(tmp_path, "check", "--format", "github")
    assert github.exit_code == 1
    lines = github.output.splitlines()
    assert len(lines) == 3 and all(line.startswith("::error file=") for line in lines)
    assert lines[0].startswith(
        "::error file=generated/alpha/models.py,title=envgen check%3A differs::"
    )
    assert "generated/alpha/README.md is missing" in lines[1]
    assert lines[2].startswith("::error file=generated/alpha/extra.py,")


def test_quiet_and_verbose(tmp_path: Path) -> None:
    created = run(tmp_path, "new", "foo", "-v")
    assert "  schemas/foo/env.toml" in created.output
    assert run(tmp_path, "-q", "generate").output == ""
    assert run(tmp_path, "check", "--quiet").output == ""
    assert run(tmp_path, "generate", "--no-cache", "-v").output.splitlines()[0] == (
        "foo: unchanged (generated/foo)"
    )
    (tmp_path / "generated/foo/models.py").write_text("x = 1\n")
    verbose = run(tmp_path, "generate", "--verbose").output
    assert "foo: written (generated/foo)" in verbose and "  generated/foo/models.py" in verbose
    (tmp_path / "generated/foo/models.py").write_text("x = 1\n")
    quiet = run(tmp_path, "check", "-q")
    assert quiet.exit_code == 1
    assert quiet.stdout == "differs: generated/foo/models.py\n"  # no diff body
    assert "out of date" in quiet.stderr  # errors always print
    assert "checked foo" in run(tmp_path, "-v", "check").output
    both = run(tmp_path, "-q", "check", "-v")
    assert both.exit_code == 2 and "--quiet and --verbose" in both.output


def test_every_command_takes_quiet_and_verbose() -> None:
    from generator.cli.containers import containers

    with click.Context(main) as ctx:
        listed = [main.get_command(ctx, name) for name in main.list_commands(ctx)]
    assert None not in listed and {"diff", "verify", "image", "containers"} <= set(main.commands)
    commands = [*filter(None, listed), *containers.commands.values(), main]
    for command in commands:
        names = {opt for param in command.params for opt in param.opts}
        assert {"-q", "--quiet", "-v", "--verbose"} <= names, command.name


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (["new"], ["--transport", "--class-prefix", "--quiet", "--verbose"]),
        (["pull"], ["--class-prefix", "--version", "HOST:PORT"]),
        (["import"], ["--class-prefix", "SEMVER"]),
        (["list"], ["--json", "not a valid env"]),
        (["check"], ["--format", "github", "::error"]),
        (["generate"], ["--no-cache", "ENVGEN_JOBS"]),
        (["containers", "list"], ["--json"]),
        (["diff"], ["to resolve it", "--quiet"]),
        ([], ["-V, --version", "--quiet", "--verbose"]),
    ],
)
def test_help_describes_the_new_flags(command: list[str], words: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    for word in words:
        assert word in result.output, (command, word)
