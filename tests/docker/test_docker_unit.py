"""The Docker pieces that need no engine: names, options, error mapping, ownership, the CLI."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, ClassVar

import docker.errors
import pytest
from click.testing import CliRunner
from envgen_runtime import EnvSpec, LocalDockerProvider, ProviderError
from envgen_runtime._docker import (
    LABEL_ENV,
    LABEL_HOST,
    LABEL_PID,
    LABEL_PID_START,
    LABEL_SESSION,
    owner_labels,
    owner_state,
    process_start_time,
)
from envgen_runtime._errormap import map_docker_exception
from envgen_runtime._launchers import hub_image

from generated.echo_env import EchoEnv
from generator.cli import main
from tests.helpers import REPO

ENGINE = "unix:///var/run/docker.sock"


def _load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


build_images = _load_script("build_images")


# --------------------------------------------------------------------------- from_hub names


@pytest.mark.parametrize(
    ("repo_id", "tag", "image"),
    [
        ("openenv/echo-env", "latest", "registry.hf.space/openenv-echo-env:latest"),
        ("OpenEnv/Echo_Env", "v1.2", "registry.hf.space/openenv-echo-env:v1.2"),
        ("burtenshaw/coding.env", "latest", "registry.hf.space/burtenshaw-coding-env:latest"),
        ("a b+c/Dé", "x", "registry.hf.space/a-b-c-d-:x"),
        ("user/env2", "sha-abc_1", "registry.hf.space/user-env2:sha-abc_1"),
    ],
)
def test_hub_image_maps_repo_ids_like_the_original_client(
    repo_id: str, tag: str, image: str
) -> None:
    assert hub_image(repo_id, tag) == image


def test_hub_image_defaults_to_latest_and_rejects_bad_input() -> None:
    assert hub_image("org/env") == "registry.hf.space/org-env:latest"
    with pytest.raises(ValueError, match="not a valid Docker tag"):
        hub_image("org/env", "bad tag")
    with pytest.raises(ValueError, match="repo_id"):
        hub_image("  ")


class _FakeImages:
    def __init__(self) -> None:
        self.pulled: list[str] = []

    def get(self, name: str) -> Any:
        raise docker.errors.ImageNotFound(f"No such image: {name}")

    def pull(self, name: str) -> Any:
        self.pulled.append(name)
        raise docker.errors.APIError("pull denied", explanation="registry unreachable")


class _FakeEngine:
    """Just enough of a DockerClient for image lookups; no container is ever created."""

    def __init__(self) -> None:
        self.images = _FakeImages()
        self.api = SimpleNamespace(base_url="http+docker://localhost")


def test_from_hub_pulls_a_missing_image_by_default() -> None:
    engine = _FakeEngine()
    with pytest.raises(ProviderError) as caught:
        EchoEnv.from_hub("openenv/Echo_Env", docker_client=engine)
    assert engine.images.pulled == ["registry.hf.space/openenv-echo-env:latest"]
    message = str(caught.value)  # the fake registry is unreachable: a clear error
    assert "pulling image 'registry.hf.space/openenv-echo-env:latest' failed" in message
    assert "registry unreachable" in message and "could not be pulled" in message
    assert "docker load" in message


def test_from_hub_with_pull_false_refuses_to_pull() -> None:
    engine = _FakeEngine()
    with pytest.raises(ProviderError) as caught:
        EchoEnv.from_hub("openenv/Echo_Env", pull=False, docker_client=engine)
    message = str(caught.value)
    assert "Docker image 'registry.hf.space/openenv-echo-env:latest' is not available" in message
    assert "(pull=False)" in message and "unless pull=False" in message
    assert "docker pull registry.hf.space/openenv-echo-env:latest" in message
    assert engine.images.pulled == []


def test_from_docker_image_never_pulls_unless_asked() -> None:
    engine = _FakeEngine()
    with pytest.raises(ProviderError, match="not available locally"):
        EchoEnv.from_docker_image("envgen/x:1", docker_client=engine)
    assert engine.images.pulled == []


def test_async_from_hub_pulls_by_default_too() -> None:
    import inspect

    from generated.echo_env import AsyncEchoEnv

    for cls in (EchoEnv, AsyncEchoEnv):
        assert inspect.signature(cls.from_hub).parameters["pull"].default is True
        assert inspect.signature(cls.from_docker_image).parameters["pull"].default is False


def test_pull_true_pulls_and_maps_the_engine_error() -> None:
    engine = _FakeEngine()
    with pytest.raises(ProviderError, match=r"pulling image 'envgen/x:1' failed.*unreachable"):
        EchoEnv.from_docker_image("envgen/x:1", pull=True, docker_client=engine)
    assert engine.images.pulled == ["envgen/x:1"]


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize("option", ["auto_remove", "remove", "detach", "stream"])
def test_reserved_run_options_are_refused(option: str) -> None:
    with pytest.raises(ValueError, match=f"run option '{option}' is not supported"):
        options: dict[str, Any] = {option: True}
        LocalDockerProvider("img:1", **options)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"port": 0}, "port must be in 1..65535"),
        ({"host_port": 70000}, "host_port must be in 1..65535"),
        ({"health_path": "health"}, "must start with '/'"),
        ({"startup_timeout_s": 0}, "startup_timeout_s must be positive"),
    ],
)
def test_provider_arguments_are_checked(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LocalDockerProvider("img:1", **kwargs)


def test_provider_keeps_run_options_and_defaults_from_the_spec() -> None:
    provider = LocalDockerProvider("img:1", environment={"A": "1"}, mem_limit="1g")
    assert dict(provider.run_options) == {"environment": {"A": "1"}, "mem_limit": "1g"}
    assert provider.base_url is None and provider.container_id is None
    assert repr(provider) == "LocalDockerProvider('img:1', stopped)"
    provider.stop()  # nothing started: a no-op


def test_from_docker_image_with_a_provider_refuses_provider_options() -> None:
    provider = LocalDockerProvider("img:1")
    with pytest.raises(TypeError, match=r"\['environment', 'port'\]"):
        EchoEnv.from_docker_image(provider=provider, port=9000, environment={"A": "1"})
    with pytest.raises(ValueError, match="differs from the provider's image"):
        EchoEnv.from_docker_image("other:2", provider=provider)


def test_client_options_must_not_name_the_server() -> None:
    with pytest.raises(TypeError, match="client_options must not set"):
        EchoEnv.from_docker_image(
            provider=LocalDockerProvider("img:1"),
            client_options={"base_url": "http://x"},  # type: ignore[arg-type]
        )


def test_spec_without_an_image_needs_one_passed() -> None:
    class NoImage(EchoEnv):
        SPEC: ClassVar[EnvSpec] = dataclasses.replace(EchoEnv.SPEC, docker_image=None)

    with pytest.raises(ValueError, match="has no docker_image"):
        NoImage.from_docker_image()


# --------------------------------------------------------------------------- errors


def test_unreachable_engine_says_how_to_start_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(ProviderError) as caught:
        EchoEnv.from_docker_image()
    message = str(caught.value)
    assert "cannot reach the Docker engine at unix:///nonexistent/docker.sock" in message
    assert "dockerd" in message and "scripts/ensure-docker.sh" in message


def test_api_errors_become_provider_errors_with_the_explanation() -> None:
    response = SimpleNamespace(status_code=500, reason="Server Error", url="http://x")
    error = docker.errors.APIError(
        "500 Server Error", response=response, explanation="port is already allocated"
    )
    mapped = map_docker_exception(error, action="starting container abc", engine=ENGINE)
    assert isinstance(mapped, ProviderError)
    assert str(mapped) == (
        "starting container abc failed: the Docker engine answered HTTP 500: "
        "port is already allocated"
    )


def test_engine_errors_are_mapped_by_cause() -> None:
    fetch = docker.errors.DockerException(
        "Error while fetching server API version: ('Connection aborted.', "
        "FileNotFoundError(2, 'No such file or directory'))"
    )
    unreachable = map_docker_exception(fetch, action="connecting", engine=ENGINE)
    assert isinstance(unreachable, ProviderError)
    assert "cannot reach the Docker engine" in str(unreachable)

    denied = PermissionError(13, "Permission denied")
    wrapped = docker.errors.DockerException("Error while fetching server API version")
    wrapped.__cause__ = denied
    permission = map_docker_exception(wrapped, action="connecting", engine=ENGINE)
    assert permission is not None and "docker group" in str(permission)

    other = map_docker_exception(docker.errors.InvalidArgument("bad"), action="x", engine=ENGINE)
    assert isinstance(other, ProviderError) and str(other) == "x failed: bad"

    assert map_docker_exception(ValueError("a bug"), action="x", engine=ENGINE) is None


def test_import_generator_runtime_does_not_import_docker() -> None:
    code = "import json, sys; import envgen_runtime; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    assert not [m for m in json.loads(out) if m == "docker" or m.startswith("docker.")]


def test_only_the_docker_module_of_the_runtime_imports_docker() -> None:
    importing = [
        path.name
        for path in (REPO / "runtime" / "envgen_runtime").glob("*.py")
        if re.search(r"^\s*(import docker|from docker)", path.read_text(), re.M)
    ]
    assert importing == ["_docker.py"]


# --------------------------------------------------------------------------- ownership


def test_owner_labels_name_this_process() -> None:
    labels = owner_labels("echo_env")
    assert labels[LABEL_ENV] == "echo_env"
    assert labels[LABEL_PID] == str(os.getpid())
    assert labels[LABEL_HOST] == socket.gethostname()
    assert re.fullmatch(r"[0-9a-f]{32}", labels[LABEL_SESSION])
    assert owner_state(labels) == "running"


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_owner_state_sees_gone_reused_and_foreign_owners() -> None:
    here = socket.gethostname()
    assert owner_state({LABEL_HOST: here, LABEL_PID: str(_dead_pid())}) == "gone"
    me = {LABEL_HOST: here, LABEL_PID: str(os.getpid())}
    assert owner_state({**me, LABEL_PID_START: "1"}) == "gone"  # pid reused by a newer process
    assert owner_state({**me, LABEL_PID_START: process_start_time(os.getpid()) or ""}) in (
        "running",
        "gone",
    )
    assert owner_state({LABEL_HOST: "elsewhere", LABEL_PID: "1"}) == "other host"
    assert owner_state({LABEL_HOST: here, LABEL_PID: "x"}) == "unknown"


# --------------------------------------------------------------------------- the CLI


class _FakeContainer:
    def __init__(self, cid: str, labels: dict[str, str], status: str = "running") -> None:
        self.id = cid
        self.labels = labels
        self.attrs = {
            "Name": f"/name-{cid[:4]}",
            "Config": {"Image": "envgen/echo-env:0.1.0"},
            "State": {"Status": status},
        }


class _FakeCli:
    def __init__(self, containers: list[_FakeContainer]) -> None:
        self.removed: list[str] = []
        self.closed = False
        self.containers = SimpleNamespace(list=lambda **kw: list(containers))
        self.api = SimpleNamespace(remove_container=self._remove)

    def _remove(self, cid: str, force: bool, v: bool) -> None:
        assert force and v
        self.removed.append(cid)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[_FakeCli]:
    here = socket.gethostname()
    base = {LABEL_SESSION: "s", LABEL_ENV: "echo_env", LABEL_HOST: here}
    engine = _FakeCli(
        [
            _FakeContainer("a" * 64, {**base, LABEL_PID: str(_dead_pid())}, "exited"),
            _FakeContainer("b" * 64, {**base, LABEL_PID: str(os.getpid())}),
            _FakeContainer("c" * 64, {**base, LABEL_HOST: "other", LABEL_PID: "1"}),
        ]
    )
    monkeypatch.setattr("generator.containers_cli.docker_client", lambda: engine)
    yield engine
    assert engine.closed


def test_containers_list_shows_owner_state(fake_engine: _FakeCli) -> None:
    result = CliRunner().invoke(main, ["containers", "list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["CONTAINER", "ENV", "STATUS", "OWNER", "IMAGE"]
    assert re.match(r"aaaaaaaaaaaa  echo_env  exited\s+pid \d+ \(gone\)", lines[1])
    assert f"pid {os.getpid()} (running)" in lines[2]
    assert "host other" in lines[3]


def test_containers_prune_removes_only_orphans(fake_engine: _FakeCli) -> None:
    dry = CliRunner().invoke(main, ["containers", "prune", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would remove aaaaaaaaaaaa (echo_env, pid" in dry.output
    assert fake_engine.removed == []
    result = CliRunner().invoke(main, ["containers", "prune"])
    assert result.exit_code == 0, result.output
    assert fake_engine.removed == ["a" * 64]
    assert result.output.splitlines()[-1] == (
        "removed 1 container(s); kept 2 whose owner is running, unknown or on another host"
    )


def test_containers_commands_report_an_unreachable_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    result = CliRunner().invoke(main, ["containers", "prune"])
    assert result.exit_code == 1
    assert "cannot reach the Docker engine" in result.output


def test_containers_list_with_none(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = _FakeCli([])
    monkeypatch.setattr("generator.containers_cli.docker_client", lambda: engine)
    result = CliRunner().invoke(main, ["containers", "list"])
    assert (result.exit_code, result.output) == (0, "no envgen containers\n")


# --------------------------------------------------------------------------- images


def test_build_script_lists_every_example_env_with_its_env_toml_tag() -> None:
    envs = build_images.discover_envs(REPO)
    names = [env.name for env in envs]
    assert names == sorted(
        p.name for p in (REPO / "examples").iterdir() if (p / "server.py").is_file()
    )
    for env in envs:
        docker = tomllib.loads((REPO / "schemas" / env.name / "env.toml").read_text())["docker"]
        manifest = tomllib.loads((REPO / "schemas" / env.name / "env.toml").read_text())
        assert (env.image, env.port) == (docker["image"], docker["port"])
        assert env.transport == manifest["transport"]
    listed = subprocess.run(
        [sys.executable, "scripts/build_images.py", "--list"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert listed.splitlines() == [f"{env.name}\t{env.image}" for env in envs]


def test_env_image_dockerfile_needs_no_shell() -> None:
    env = build_images.ExampleEnv("echo_env", "envgen/echo-env:0.1.0", 8000, "websocket")
    text = build_images.env_dockerfile(env)
    assert text.startswith(f"FROM {build_images.DEPS_TAG}\n")
    assert 'CMD ["python", "/app/serve_env.py"]' in text  # exec form: the image has no shell
    assert "ENVGEN_SERVER_MODULE=examples.echo_env.server ENVGEN_PROTOCOL=websocket" in text
    assert "RUN" not in text


def test_shared_libraries_come_from_ldd() -> None:
    libs = build_images.shared_libraries([os.path.realpath(sys.executable)])
    assert any(Path(lib).name.startswith("libc.so") for lib in libs)
    assert all(os.path.isabs(lib) for lib in libs)


@pytest.mark.parametrize("env", [e.name for e in build_images.discover_envs(REPO)])
def test_registry_dockerfile_per_env(env: str) -> None:
    text = (REPO / "examples" / env / "Dockerfile").read_text()
    assert "\nFROM python:3.11-slim\n" in text
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    pins = [p for p in pyproject["project"]["optional-dependencies"]["test"] if "openenv" in p]
    for pin in pins:
        assert f'"{pin}"' in text, pin
    assert f"ENVGEN_SERVER_MODULE=examples.{env}.server" in text
    transport = tomllib.loads((REPO / "schemas" / env / "env.toml").read_text())["transport"]
    assert f"ENVGEN_PROTOCOL={transport} " in text  # env.toml's default protocol
    assert 'CMD ["python", "/app/serve_env.py"]' in text
    for line in text.splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (REPO / source).exists(), f"{env}/Dockerfile copies missing {source}"


def test_containers_list_json(fake_engine: _FakeCli) -> None:
    result = CliRunner().invoke(main, ["containers", "list", "--json"])
    assert result.exit_code == 0, result.output
    items = json.loads(result.output)
    assert [item["id"] for item in items] == ["a" * 64, "b" * 64, "c" * 64]
    assert [item["owner"] for item in items] == ["gone", "running", "other host"]
    first = items[0]
    assert first["env"] == "echo_env" and first["status"] == "exited"
    assert first["image"] == "envgen/echo-env:0.1.0" and first["session"] == "s"
    assert first["name"] == "name-aaaa" and first["labels"][LABEL_ENV] == "echo_env"
    assert items[2]["host"] == "other" and items[2]["pid"] == "1"


def test_containers_quiet_and_verbose(fake_engine: _FakeCli) -> None:
    quiet = CliRunner().invoke(main, ["containers", "list", "-q"])
    assert quiet.output == "aaaaaaaaaaaa\nbbbbbbbbbbbb\ncccccccccccc\n"
    verbose = CliRunner().invoke(main, ["containers", "list", "--verbose"])
    assert verbose.output.splitlines()[0].split() == [
        "CONTAINER",
        "ENV",
        "STATUS",
        "OWNER",
        "SESSION",
        "IMAGE",
    ]
    dry = CliRunner().invoke(main, ["containers", "prune", "--dry-run", "-v"])
    assert "kept bbbbbbbbbbbb (echo_env, pid" in dry.output
    dry = CliRunner().invoke(main, ["-q", "containers", "prune", "--dry-run"])
    assert dry.output == "would remove aaaaaaaaaaaa (echo_env, pid " + dry.output.split("pid ")[1]
    assert "kept" not in dry.output
