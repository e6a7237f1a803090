from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import ManifestError
from generator.schema.manifest import default_class_prefix, load_manifest


def _load(tmp_path: Path, text: str, name: str = "echo_env"):
    path = tmp_path / "env.toml"
    path.write_text(text)
    return load_manifest(path, "schemas/echo_env/env.toml", name)


def test_defaults(tmp_path: Path) -> None:
    m = _load(tmp_path, 'name = "echo_env"\nversion = "1.2.3"\n')
    assert m.class_prefix == "Echo"
    assert m.transport == "websocket"
    assert m.model_type == "pydantic"
    assert m.health_path == "/health"
    assert m.docker_port == 8000
    assert m.server_command == ()
    assert m.major_version == 1
    assert m.auth_token_env is None


def test_full(tmp_path: Path) -> None:
    m = _load(
        tmp_path,
        'name = "echo_env"\nversion = "2.0.0-rc.1"\ndescription = "d"\nclass_prefix = "Ec"\n'
        'transport = "http"\nmodel_type = "dataclasses"\n[server]\n'
        'command = ["{python}", "-m", "x", "--port", "{port}"]\nhealth_path = "/healthz"\n'
        'startup_timeout_s = 5\n[docker]\nimage = "img"\nport = 9000\n',
    )
    assert (m.class_prefix, m.transport, m.model_type) == ("Ec", "http", "dataclasses")
    assert m.server_command == ("{python}", "-m", "x", "--port", "{port}")
    assert (m.health_path, m.startup_timeout_s, m.docker_image, m.docker_port) == (
        "/healthz",
        5.0,
        "img:2.0.0-rc.1",  # tagged with the version
        9000,
    )


def _image(tmp_path: Path, image: str, version: str = "1.2.0") -> str | None:
    text = f'name = "echo_env"\nversion = "{version}"\n[docker]\nimage = "{image}"\n'
    return _load(tmp_path, text).docker_image


@pytest.mark.parametrize(
    ("image", "version", "expected"),
    [
        ("me/echo", "1.2.0", "me/echo:1.2.0"),  # derived from the version
        ("me/echo:1.2.0", "1.2.0", "me/echo:1.2.0"),  # an old file's matching tag: kept
        ("localhost:5000/echo", "1.2.0", "localhost:5000/echo:1.2.0"),  # a port, not a tag
        ("localhost:5000/echo:1.2.0", "1.2.0", "localhost:5000/echo:1.2.0"),
        ("me/echo", "1.2.0+build.5", "me/echo:1.2.0_build.5"),  # Docker tags have no '+'
        ("me/echo@sha256:" + "a" * 64, "1.2.0", "me/echo@sha256:" + "a" * 64),
    ],
)
def test_image_tag_is_the_version(tmp_path: Path, image: str, version: str, expected: str) -> None:
    assert _image(tmp_path, image, version) == expected


def test_image_tag_contradicting_the_version_names_file_and_pointer(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as info:
        _image(tmp_path, "me/echo:0.1.0", "0.2.0")
    assert (info.value.file, info.value.pointer) == ("schemas/echo_env/env.toml", "/docker/image")
    assert "'0.1.0' contradicts version '0.2.0'" in str(info.value)
    assert 'image = "me/echo"' in str(info.value)


@pytest.mark.parametrize(
    ("text", "pointer", "words"),
    [
        ('version = "1.0.0"\n', "/name", "missing required key"),
        ('name = "other"\nversion = "1.0.0"\n', "/name", "does not match its folder"),
        ('name = "echo_env"\nversion = "1.0"\n', "/version", "semantic version"),
        ('name = "echo_env"\nversion = "1.0.0"\ntransport = "grpc"\n', "/transport", "'http'"),
        ('name = "echo_env"\nversion = "1.0.0"\nmodel_type = "attrs"\n', "/model_type", "attrs"),
        (
            'name = "echo_env"\nversion = "1.0.0"\nclass_prefix = "echo"\n',
            "/class_prefix",
            "capitalised",
        ),
        ('name = "echo_env"\nversion = "1.0.0"\nverison = "1"\n', "/verison", "unknown key"),
        *(  # TOML has nan and inf; either was written into the client as a bare name
            (
                f'name = "echo_env"\nversion = "1.0.0"\n[server]\nstartup_timeout_s = {value}\n',
                "/server/startup_timeout_s",
                "must be a finite positive number",
            )
            for value in ("nan", "inf", "-inf", "0", "true")
        ),
        (
            'name = "echo_env"\nversion = "1.0.0"\n[server]\ncomand = []\n',
            "/server/comand",
            "unknown key",
        ),
        (
            'name = "echo_env"\nversion = "1.0.0"\n[server]\ncommand = "python x"\n',
            "/server/command",
            "list of strings",
        ),
        (
            'name = "echo_env"\nversion = "1.0.0"\n[server]\ncommand = ["{nope}"]\n',
            "/server/command/0",
            "placeholder",
        ),
        *(
            (
                f'name = "echo_env"\nversion = "1.0.0"\n[server]\nbackend = {value}\n',
                "/server/backend",
                "backend must be 'lean' or 'openenv'",
            )
            for value in ('"fast"', '"Lean"', '""', "1", "true", '["lean"]')
        ),
        (
            'name = "echo_env"\nversion = "1.0.0"\n[server]\nhealth_path = "health"\n',
            "/server/health_path",
            "starting with '/'",
        ),
        (
            'name = "echo_env"\nversion = "1.0.0"\n[docker]\nport = 70000\n',
            "/docker/port",
            "1 to 65535",
        ),
        ('name = "echo_env"\nversion = 1\n', "/version", "must be a string"),
        ('name = "echo_env"\nversion = "1.0.0"\nauth = 1\n', "/auth", "must be a table"),
        (
            'name = "echo_env"\nversion = "1.0.0"\n[auth]\ntoken = "x"\n',
            "/auth/token",
            "unknown key",
        ),
        (
            'name = "echo_env"\nversion = "1.0.0"\n[auth]\ntoken_env = 5\n',
            "/auth/token_env",
            "name of an environment variable",
        ),
        (
            'name = "echo_env"\nversion = "1.0.0"\n[auth]\ntoken_env = "MY-TOKEN"\n',
            "/auth/token_env",
            "name of an environment variable",
        ),
    ],
)
def test_errors_name_file_and_key(tmp_path: Path, text: str, pointer: str, words: str) -> None:
    with pytest.raises(ManifestError) as info:
        _load(tmp_path, text)
    assert info.value.file == "schemas/echo_env/env.toml"
    assert info.value.pointer == pointer
    assert words in str(info.value)


def test_without_a_backend_key_an_env_stays_on_openenv(tmp_path: Path) -> None:
    m = _load(tmp_path, 'name = "echo_env"\nversion = "1.0.0"\n')
    assert m.backend == "openenv"  # env.toml files written before the key: unchanged
    assert m.docker_requirements == ("openenv", "uvicorn")


def test_the_backend_chooses_what_the_image_installs(tmp_path: Path) -> None:
    m = _load(tmp_path, 'name = "echo_env"\nversion = "1.0.0"\n[server]\nbackend = "lean"\n')
    assert m.backend == "lean"
    assert "openenv" not in m.docker_requirements and "uvicorn" in m.docker_requirements
    m = _load(tmp_path, 'name = "echo_env"\nversion = "1.0.0"\n[server]\nbackend = "openenv"\n')
    assert (m.backend, m.docker_requirements) == ("openenv", ("openenv", "uvicorn"))
    written = '[server]\nbackend = "lean"\n[docker]\nrequirements = ["uvicorn", "mylib"]\n'
    m = _load(tmp_path, 'name = "echo_env"\nversion = "1.0.0"\n' + written)
    assert m.docker_requirements == ("uvicorn", "mylib")  # written ones win


def test_a_bad_backend_fails_the_command_with_exit_code_2(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from generator.cli import main

    assert CliRunner().invoke(main, ["--root", str(tmp_path), "new", "echo_env"]).exit_code == 0
    toml = tmp_path / "schemas" / "echo_env" / "env.toml"
    toml.write_text(toml.read_text().replace('backend = "lean"', 'backend = "fast"'))
    result = CliRunner().invoke(main, ["--root", str(tmp_path), "generate"])
    assert result.exit_code == 2, result.output
    assert "schemas/echo_env/env.toml" in result.output and "/server/backend" in result.output
    assert "backend must be 'lean' or 'openenv', not 'fast'" in result.output


def test_invalid_toml(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="invalid TOML"):
        _load(tmp_path, 'name = "echo_env\n')


def test_bad_env_name(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="Python keyword"):
        _load(tmp_path, 'name = "class"\nversion = "1.0.0"\n', name="class")


@pytest.mark.parametrize(
    ("name", "prefix"),
    [("echo_env", "Echo"), ("grid_world_env", "GridWorld"), ("chess", "Chess"), ("a_b", "AB")],
)
def test_default_class_prefix(name: str, prefix: str) -> None:
    assert default_class_prefix(name) == prefix


def test_auth_token_env(tmp_path: Path) -> None:
    m = _load(tmp_path, 'name = "echo_env"\nversion = "1.0.0"\n[auth]\ntoken_env = "ECHO_TOKEN"\n')
    assert m.auth_token_env == "ECHO_TOKEN"


def test_a_token_pasted_into_token_env_is_not_echoed(tmp_path: Path) -> None:
    secret = "sk-live-0123456789abcdef"
    with pytest.raises(ManifestError) as info:
        _load(tmp_path, f'name = "echo_env"\nversion = "1.0.0"\n[auth]\ntoken_env = "{secret}"\n')
    assert info.value.pointer == "/auth/token_env"
    assert secret not in str(info.value) and "never the token" in str(info.value)
