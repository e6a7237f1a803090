"""LocalDockerProvider and from_docker_image against a real engine and the example images."""

from __future__ import annotations

import asyncio
import importlib
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from envgen_runtime import LocalDockerProvider, ProviderError
from envgen_runtime.core.spec import TransportName
from envgen_runtime.providers.docker import (
    LABEL_ENV,
    LABEL_HOST,
    LABEL_PID,
    LABEL_SESSION,
    SESSION_ID,
)

from generated.echo_env import EchoAction, EchoEnv

from .conftest import record

pytestmark = pytest.mark.docker

ECHO_IMAGE = "envgen/echo-env:0.1.0"
ENVS = ["coding_env", "echo_env", "grid_env", "quiz_env", "reacher_env"]


def sync_client_class(env: str) -> Any:
    """The generated blocking client class of ``env`` (``EchoEnv`` for echo_env)."""
    module = importlib.import_module(f"generated.{env}")
    names = [n for n in module.__all__ if n.endswith("Env") and not n.startswith("Async")]
    assert len(names) == 1, names
    return getattr(module, names[0])


def echo_http(**options: Any) -> EchoEnv:
    """An echo_env container serving stateful HTTP (openenv-core), the fastest to start."""
    return EchoEnv.from_docker_image(transport="http", **options)


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_episode_in_a_container_over_each_transport(
    transport: TransportName,
    example_images: dict[str, str],
    session_containers: Any,
    docker_engine: Any,
) -> None:
    started = time.monotonic()
    # transport= alone starts the matching server (ENVGEN_PROTOCOL in the container)
    with EchoEnv.from_docker_image(transport=transport) as env:
        record(f"start-to-ready {transport} (echo_env)", time.monotonic() - started)
        provider = env.provider
        assert isinstance(provider, LocalDockerProvider)
        assert provider.image == example_images["echo_env"] == ECHO_IMAGE
        assert env.base_url == f"http://127.0.0.1:{provider.host_port}"

        first = env.reset(seed=7, episode_id="ep-docker")
        assert first.done is False
        result = env.step(EchoAction(message="hello from a container"))
        assert result.observation.echoed_message == "hello from a container"
        assert result.observation.message_length == len("hello from a container")
        assert env.state().step_count == 1

        (container,) = session_containers()
        assert container.id == provider.container_id
        assert f"ENVGEN_PROTOCOL={transport}" in container.attrs["Config"]["Env"]
        assert env.transport_name == transport
        labels = container.labels
        assert labels[LABEL_ENV] == "echo_env"
        assert labels[LABEL_SESSION] == SESSION_ID
        assert labels[LABEL_PID].isdigit() and labels[LABEL_HOST]
        bindings = container.attrs["HostConfig"]["PortBindings"]["8000/tcp"]
        assert bindings == [{"HostIp": "127.0.0.1", "HostPort": ""}]  # engine picks the port
    assert session_containers() == []
    assert env.closed and provider.base_url is None


def test_several_containers_at_once_one_per_env(
    example_images: dict[str, str], session_containers: Any
) -> None:
    def run(env: str) -> tuple[str, str, float]:
        started = time.monotonic()
        client = sync_client_class(env).from_docker_image()  # each env's own default
        try:
            ready = time.monotonic() - started
            client.reset(seed=1)
            client.state()
            return env, client.base_url, ready
        finally:
            client.close()

    started = time.monotonic()
    with ThreadPoolExecutor(len(ENVS)) as pool:
        results = list(pool.map(run, ENVS))
    record(f"{len(ENVS)} containers started at once, all ready", max(r[2] for r in results))
    record("5 containers: start, reset, state, close (wall)", time.monotonic() - started)
    assert [env for env, _, _ in results] == ENVS
    assert len({url for _, url, _ in results}) == len(ENVS), "each container has its own port"
    assert session_containers() == []


def test_run_options_are_passed_through(
    example_images: dict[str, str], session_containers: Any, docker_engine: Any, tmp_path: Path
) -> None:
    network = docker_engine.networks.create(f"envgen-test-{uuid.uuid4().hex[:8]}")
    (tmp_path / "hello.txt").write_text("mounted\n")
    try:
        with echo_http(
            environment={"EXTRA_SETTING": "on"},
            mem_limit="512m",
            nano_cpus=1_000_000_000,
            network=network.name,
            volumes={str(tmp_path): {"bind": "/data", "mode": "ro"}},
            labels={"team": "rl", LABEL_SESSION: "spoofed"},
        ) as env:
            assert env.reset().done is False
            (container,) = session_containers()
            config = container.attrs
            assert "EXTRA_SETTING=on" in config["Config"]["Env"]
            assert "ENVGEN_PROTOCOL=http" in config["Config"]["Env"]  # merged with the given
            assert config["HostConfig"]["Memory"] == 512 * 1024 * 1024
            assert config["HostConfig"]["NanoCpus"] == 1_000_000_000
            assert network.name in config["NetworkSettings"]["Networks"]
            assert any(m["Destination"] == "/data" for m in config["Mounts"])
            assert container.labels["team"] == "rl"
            assert container.labels[LABEL_SESSION] == SESSION_ID  # envgen's labels win
            exit_code, output = container.exec_run(
                ["python", "-c", "print(open('/data/hello.txt').read())"]
            )
            assert exit_code == 0 and b"mounted" in output
    finally:
        network.remove()


def test_command_run_option_and_a_server_that_exits_at_start(
    example_images: dict[str, str], session_containers: Any
) -> None:
    code = "import sys; print('bad config: FOO is not set', flush=True); sys.exit(3)"
    with pytest.raises(ProviderError) as caught:
        EchoEnv.from_docker_image(command=["python", "-c", code], startup_timeout_s=30)
    error = caught.value
    assert error.exit_code == 3
    assert "exited with code 3" in str(error)
    assert "bad config: FOO is not set" in str(error) and "bad config" in error.output
    assert ECHO_IMAGE in str(error)
    assert session_containers() == []  # removed, logs read first


def test_real_server_that_cannot_import_its_module(
    example_images: dict[str, str], session_containers: Any
) -> None:
    with pytest.raises(ProviderError) as caught:
        # The image's own entry point, serving a module that does not exist.
        command = ["python", "/app/.envgen/serve.py", "{python}", "-m", "examples.nope.server"]
        EchoEnv.from_docker_image(command=command)
    assert caught.value.exit_code == 1
    assert "No module named 'examples.nope'" in str(caught.value)
    assert session_containers() == []


def test_readiness_timeout_removes_the_container(
    example_images: dict[str, str], session_containers: Any
) -> None:
    code = "import time; print('still booting', flush=True); time.sleep(600)"
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        EchoEnv.from_docker_image(command=["python", "-c", code], startup_timeout_s=2)
    elapsed = time.monotonic() - started
    error = caught.value
    assert error.exit_code is None
    assert "still running after 2 s but never answered GET" in str(error)
    assert "/health" in str(error) and "still booting" in error.output
    assert elapsed < 15, f"timeout plus removal took {elapsed:.1f} s"
    assert session_containers() == []


def test_wrong_health_path_times_out(
    example_images: dict[str, str], session_containers: Any
) -> None:
    with pytest.raises(ProviderError, match=r"never answered GET http://127\.0\.0\.1:[0-9]+/nope"):
        echo_http(health_path="/nope", startup_timeout_s=3)
    assert session_containers() == []


def test_cleanup_when_the_body_raises(
    example_images: dict[str, str], session_containers: Any
) -> None:
    with pytest.raises(RuntimeError, match="the test body failed"), echo_http() as env:
        assert len(session_containers()) == 1
        env.reset()
        raise RuntimeError("the test body failed")
    assert session_containers() == []


def test_container_removed_when_building_the_client_fails(
    example_images: dict[str, str], session_containers: Any
) -> None:
    class BrokenEcho(EchoEnv):
        def _make_transport(self) -> Any:
            assert len(session_containers()) == 1  # the container was running
            raise RuntimeError("transport construction failed")

    with pytest.raises(RuntimeError, match="transport construction failed"):
        BrokenEcho.from_docker_image(transport="http")
    assert session_containers() == []


def test_provider_on_its_own_is_idempotent(
    example_images: dict[str, str], session_containers: Any
) -> None:
    provider = LocalDockerProvider(
        ECHO_IMAGE, environment={"ENVGEN_PROTOCOL": "http"}, env_name="echo_env"
    )
    with provider:
        url = provider.base_url
        assert url is not None and provider.start() == url  # already running: same URL
        assert provider.ready_after_s is not None and provider.ready_after_s > 0
        assert "Uvicorn" in provider.logs() or provider.logs() == ""
        borrowed = EchoEnv(provider=provider, transport="http")
        borrowed.close()  # a running provider is only borrowed by the client
        assert len(session_containers()) == 1
    assert provider.base_url is None
    provider.stop()
    provider.stop()
    assert session_containers() == []


def test_missing_image_is_not_pulled(docker_engine: Any, session_containers: Any) -> None:
    import docker.errors

    image = "envgen/does-not-exist:0.0.0"
    with pytest.raises(ProviderError) as caught:
        EchoEnv.from_docker_image(image)
    message = str(caught.value)
    assert f"Docker image {image!r} is not available locally" in message
    assert "envgen image ENV" in message and "make images" in message
    assert "pull=True" in message
    with pytest.raises(docker.errors.ImageNotFound):
        docker_engine.images.get(image)
    assert session_containers() == []


def test_from_hub_without_the_image_says_what_to_do(
    docker_engine: Any, session_containers: Any
) -> None:
    with pytest.raises(ProviderError) as caught:
        EchoEnv.from_hub("openenv/Echo_Env.v2", tag="v1", pull=False)
    message = str(caught.value)
    assert "'registry.hf.space/openenv-echo-env-v2:v1' is not available locally" in message
    assert (
        "unless pull=False" in message
        and "docker pull registry.hf.space/openenv-echo-env-v2:v1" in message
    )
    assert session_containers() == []


def test_from_hub_pulls_by_default_and_fails_cleanly_without_a_registry(
    docker_engine: Any, session_containers: Any
) -> None:
    """No registry is reachable here: the real pull is tried, and fails with a clear error."""
    import docker.errors

    image = "registry.hf.space/openenv-echo-env-v2:v1"
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        EchoEnv.from_hub("openenv/Echo_Env.v2", tag="v1")
    record("from_hub failed pull", time.monotonic() - started)
    message = str(caught.value)
    assert f"pulling image {image!r} failed" in message
    assert "could not be pulled from its registry" in message and "docker load" in message
    with pytest.raises(docker.errors.ImageNotFound):
        docker_engine.images.get(image)
    assert session_containers() == []


def _async_echo_class() -> Any:
    """The generated AsyncEchoEnv, which must carry the asyncio launchers."""
    from envgen_runtime.client.launchers import AsyncProviderLaunchers

    from generated.echo_env import AsyncEchoEnv

    assert issubclass(AsyncEchoEnv, AsyncProviderLaunchers)
    return AsyncEchoEnv


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_async_client_runs_the_episode_in_a_container(
    transport: TransportName, example_images: dict[str, str], session_containers: Any
) -> None:
    async_echo = _async_echo_class()

    async def episode() -> tuple[str, int]:
        async with async_echo.from_docker_image(transport=transport) as env:
            assert len(session_containers()) == 1
            await env.reset(seed=3)
            result = await env.step(EchoAction(message="async"))
            state = await env.state()
            return result.observation.echoed_message, state.step_count

    assert asyncio.run(episode()) == ("async", 1)
    assert session_containers() == []


def test_async_start_failure_removes_the_container(
    example_images: dict[str, str], session_containers: Any
) -> None:
    async_echo = _async_echo_class()
    code = "import sys; print('async boom', flush=True); sys.exit(4)"

    async def start() -> None:
        await async_echo.from_docker_image(command=["python", "-c", code])

    with pytest.raises(ProviderError, match="exited with code 4") as caught:
        asyncio.run(start())
    assert "async boom" in caught.value.output
    assert session_containers() == []  # removed by the provider before it raised
