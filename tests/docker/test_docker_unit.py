"""The Docker pieces that need no engine: names, options, error mapping, ownership, the CLI."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import docker.errors
import pytest
from click.testing import CliRunner
from envgen_runtime import EnvSpec, LocalDockerProvider, ProviderError
from envgen_runtime.client.launchers import docker_image_plan, hub_image, hub_plan
from envgen_runtime.containers import (
    LABEL_ENV,
    LABEL_HOST,
    LABEL_PID,
    LABEL_PID_START,
    LABEL_SESSION,
    owner_state,
)
from envgen_runtime.providers.docker import map_docker_exception, owner_labels, process_start_time

from generated.echo_env import EchoEnv
from generator.cli import main
from generator.errors import ManifestError
from generator.image.build import image_envs
from generator.image.envimage import (
    SERVE,
    default_include,
    dockerfile,
    included_files,
    runtime_files,
)
from generator.image.rootfs import shared_libraries
from generator.schema.loader import Layout
from tests.helpers import REPO, write_env
from tests.helpers import manifest as manifest_text

ENGINE = "unix:///var/run/docker.sock"


EXAMPLES = Layout.at(REPO)


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
        ({"startup_timeout_s": float("nan")}, "startup_timeout_s must be positive"),
        ({"stop_timeout_s": -1}, "stop_timeout_s must not be negative"),
        ({"stop_timeout_s": float("nan")}, "stop_timeout_s must not be negative"),
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


def test_client_options_must_not_decide_who_owns_the_server() -> None:
    # The launcher hands the server it started to the client (owns_provider) itself.
    with pytest.raises(TypeError, match=r"client_options must not set \['owns_provider'\]"):
        EchoEnv.from_docker_image(
            provider=LocalDockerProvider("img:1"),
            client_options={"owns_provider": False},  # type: ignore[typeddict-unknown-key]
        )


def test_transport_in_client_options_is_refused_naming_the_transport_argument() -> None:
    for launcher in (EchoEnv.from_docker_image, EchoEnv.from_hub):
        with pytest.raises(TypeError, match=r"pass transport='http' to the launcher itself"):
            launcher("x/y", client_options={"transport": "http"})


def test_transport_sets_the_containers_protocol_and_the_clients() -> None:
    provider, options = docker_image_plan(EchoEnv, transport="http", environment=["A=1"])
    assert isinstance(provider, LocalDockerProvider) and provider.transport == "http"
    assert provider.run_options["environment"] == {"A": "1", "ENVGEN_PROTOCOL": "http"}
    assert options == {"transport": "http"}
    default, options = docker_image_plan(EchoEnv)  # SPEC.transport for both
    assert default.run_options["environment"] == {"ENVGEN_PROTOCOL": "websocket"}
    assert options == {"transport": "websocket"}
    hub, _ = hub_plan(EchoEnv, "openenv/echo-env", transport="http")
    assert hub.run_options["environment"] == {"ENVGEN_PROTOCOL": "http"}


def test_a_protocol_set_by_hand_must_agree_with_the_transport() -> None:
    with pytest.raises(ValueError, match=r"pass transport='http' instead"):
        EchoEnv.from_docker_image(environment={"ENVGEN_PROTOCOL": "http"})  # SPEC: websocket
    with pytest.raises(ValueError, match="transport must be one of"):
        LocalDockerProvider("img:1", transport="grpc")
    running = LocalDockerProvider("img:1", transport="http")
    with pytest.raises(ValueError, match="starts its server with transport 'http'"):
        EchoEnv.from_docker_image(provider=running, transport="websocket")


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
    package = REPO / "runtime" / "envgen_runtime"
    importing = [
        path.relative_to(package).as_posix()
        for path in sorted(package.rglob("*.py"))
        if re.search(r"^\s*(import docker|from docker)", path.read_text(), re.M)
    ]
    assert importing == ["providers/docker.py"]


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
    monkeypatch.setattr("generator.cli.containers.docker_client", lambda: engine)
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
    monkeypatch.setattr("generator.cli.containers.docker_client", lambda: engine)
    result = CliRunner().invoke(main, ["containers", "list"])
    assert (result.exit_code, result.output) == (0, "no envgen containers\n")


# --------------------------------------------------------------------------- images


def test_image_lists_every_example_env_with_its_env_toml_tag() -> None:
    manifests = image_envs(EXAMPLES)
    names = [m.name for m in manifests]
    assert names == sorted(
        p.name for p in (REPO / "examples").iterdir() if (p / "server.py").is_file()
    )
    for manifest in manifests:
        docker = tomllib.loads((REPO / "schemas" / manifest.name / "env.toml").read_text())
        assert (manifest.docker_image, manifest.docker_port) == (
            f"{docker['docker']['image']}:{docker['version']}",  # the tag is the version
            docker["docker"]["port"],
        )
    result = CliRunner().invoke(main, ["--root", str(REPO), "image", "--list"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [f"{m.name}\t{m.docker_image}" for m in manifests]


def test_a_lean_env_s_image_installs_no_openenv_and_the_examples_keep_theirs(
    tmp_path: Path,
) -> None:
    # What `envgen image` pip-installs into the deps layer: the manifest's requirements.
    assert CliRunner().invoke(main, ["--root", str(tmp_path), "new", "card_env"]).exit_code == 0
    (lean,) = image_envs(Layout.at(tmp_path), ["card_env"])
    assert lean.backend == "lean"
    assert "uvicorn" in lean.docker_requirements
    assert not {"openenv", "openenv-core", "gradio"} & set(lean.docker_requirements)
    for example in image_envs(EXAMPLES):  # no backend key: openenv, installed as before
        assert example.backend == "openenv"
        assert any(r.startswith("openenv") for r in example.docker_requirements), example.name


def test_env_image_dockerfile_needs_no_shell_and_serves_the_env_toml_command() -> None:
    (manifest,) = image_envs(EXAMPLES, ["echo_env"])
    text = dockerfile(manifest, "envgen/server-deps:3.11-abc")
    assert text.startswith("FROM envgen/server-deps:3.11-abc\n")
    cmd = json.loads(next(ln for ln in text.splitlines() if ln.startswith("CMD "))[4:])
    assert cmd == ["python", "/app/.envgen/serve.py", *manifest.server_command]
    assert "ENV ENVGEN_PROTOCOL=websocket ENVGEN_HOST=0.0.0.0 ENVGEN_PORT=8000" in text
    assert "RUN" not in text


def test_default_include_is_the_server_package_and_the_generated_client() -> None:
    (manifest,) = image_envs(EXAMPLES, ["echo_env"])
    assert default_include(EXAMPLES, manifest) == [
        "examples",
        "generated/__init__.py",
        "generated/echo_env",
    ]


def test_the_runtime_package_goes_in_at_the_app_root() -> None:
    """Generated server modules import envgen_runtime.server, which no registry serves."""
    names = [name for _, name in runtime_files()]
    assert "envgen_runtime/__init__.py" in names and "envgen_runtime/server/__init__.py" in names
    assert "envgen_runtime/py.typed" in names
    assert not any("__pycache__" in name for name in names)
    assert names == sorted(names)


def test_image_of_an_env_without_docker_image_is_an_input_error(tmp_path: Path) -> None:
    write_env(tmp_path, "plain_env")
    result = CliRunner().invoke(main, ["--root", str(tmp_path), "image", "plain_env"])
    assert result.exit_code == 2
    assert "schemas/plain_env/env.toml at /docker/image" in result.output


def test_include_paths_must_exist_and_stay_inside_the_project(tmp_path: Path) -> None:
    write_env(tmp_path, "inc_env", toml=manifest_text("inc_env") + _DOCKER_TABLE.format('"nope/"'))
    (manifest,) = image_envs(Layout.at(tmp_path), ["inc_env"])
    with pytest.raises(ManifestError) as caught:
        included_files(Layout.at(tmp_path), manifest, "schemas/inc_env/env.toml")
    assert caught.value.pointer == "/docker/include/0"
    write_env(tmp_path, "out_env", toml=manifest_text("out_env") + _DOCKER_TABLE.format('"../x"'))
    result = CliRunner().invoke(main, ["--root", str(tmp_path), "image", "out_env"])
    assert result.exit_code == 2
    assert "/docker/include/0" in result.output and "inside the project" in result.output


_DOCKER_TABLE = '\n[docker]\nimage = "me/inc"\ninclude = [{}]\n'


def test_serve_entry_fills_placeholders_from_the_environment(tmp_path: Path) -> None:
    out = tmp_path / "argv.json"
    code = f"import json, sys; open({str(out)!r}, 'w').write(json.dumps(sys.argv[1:]))"
    env = {**os.environ, "ENVGEN_HOST": "0.0.0.0", "ENVGEN_PORT": "9001", "ENVGEN_PROTOCOL": "http"}
    subprocess.run(
        [sys.executable, str(SERVE), "{python}", "-c", code, "{host}", "{port}", "{transport}"],
        env=env,
        check=True,
        timeout=60,
    )
    assert json.loads(out.read_text()) == ["0.0.0.0", "9001", "http"]


def test_shared_libraries_come_from_ldd() -> None:
    libs = shared_libraries([os.path.realpath(sys.executable)])
    assert any(Path(lib).name.startswith("libc.so") for lib in libs)
    assert all(os.path.isabs(lib) for lib in libs)


@pytest.mark.parametrize("env", [m.name for m in image_envs(EXAMPLES)])
def test_registry_dockerfile_per_env(env: str) -> None:
    text = (REPO / "examples" / env / "Dockerfile").read_text()
    assert "\nFROM python:3.11-slim\n" in text
    (manifest,) = image_envs(EXAMPLES, [env])
    for pin in manifest.docker_requirements:
        assert f'"{pin}"' in text, pin
    assert f"ENVGEN_PROTOCOL={manifest.transport} " in text  # env.toml's default protocol
    cmd = json.loads(next(ln for ln in text.splitlines() if ln.startswith("CMD "))[4:])
    assert cmd == ["python", "/app/.envgen/serve.py", *manifest.server_command]
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


def test_the_deps_layer_leaves_out_packages_test_suites(tmp_path: Path) -> None:
    import tarfile

    from generator.image.deps import DEPS_DIR_IN_IMAGE, _without_tests

    site = tmp_path / "site-packages"
    for rel in ("pandas/tests/frame/test_x.py", "pandas/core/a.py", "jinja2/tests.py",
                "numpy/_core/tests/t.py", "numpy/testing/u.py", "test/top.py"):  # fmt: skip
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text("")
    with tarfile.open(tmp_path / "layer.tar", "w") as tar:
        tar.add(site, arcname=DEPS_DIR_IN_IMAGE.lstrip("/"), filter=_without_tests)
        names = {n.removeprefix(DEPS_DIR_IN_IMAGE.lstrip("/") + "/") for n in tar.getnames()}
        assert all(m.uid == 0 and m.uname == "root" for m in tar.getmembers())
    files = {n for n in names if n.endswith(".py")}
    assert files == {"pandas/core/a.py", "jinja2/tests.py", "numpy/testing/u.py", "test/top.py"}
