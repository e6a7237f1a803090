"""EnvClient construction and EnvSpec: argument handling without a server."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest
from envgen_runtime import (
    EnvClient,
    EnvConnectionError,
    EnvSpec,
    HttpTransport,
    RetryPolicy,
    StepResult,
    Transport,
    WebSocketTransport,
)

from tests.runtime.clients import CounterEnv
from tests.runtime.transport.http.test_sync import closed_port


def test_transport_defaults_to_spec_and_can_be_overridden() -> None:
    with CounterEnv("http://127.0.0.1:9/") as ws_env:
        assert ws_env.transport_name == "websocket"
        assert isinstance(ws_env.transport, WebSocketTransport)
        assert isinstance(ws_env.transport, Transport)
        assert ws_env.base_url == "http://127.0.0.1:9"
    with CounterEnv("http://127.0.0.1:9", transport="http") as http_env:
        assert http_env.transport_name == "http"
        assert isinstance(http_env.transport, HttpTransport)


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_a_bare_host_port_means_http(transport: str) -> None:
    with CounterEnv("127.0.0.1:9", transport=transport) as env:  # type: ignore[arg-type]
        assert env.base_url == "http://127.0.0.1:9"
        assert env.transport.base_url.endswith(
            "://127.0.0.1:9" + "/ws" * (transport == "websocket")
        )
    with pytest.raises(ValueError, match=r"'ftp://h:1' must start with http://"):
        CounterEnv("ftp://h:1")


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_connection_refused_suggests_the_envs_own_launcher(transport: str) -> None:
    url = f"127.0.0.1:{closed_port()}"
    env = CounterEnv(url, transport=transport, retry=RetryPolicy.never())  # type: ignore[arg-type]
    with env, pytest.raises(EnvConnectionError) as info:
        env.reset()
    assert "(CounterEnv.from_local_process(...) can start it for you)" in str(info.value)
    assert "EnvClient" not in str(info.value)


def test_properties_and_repr_hide_headers() -> None:
    headers = {"Authorization": "Bearer hidden-token"}
    env = CounterEnv("http://u:pw@127.0.0.1:9", 3.5, headers)
    try:
        assert env.request_timeout_s == 3.5
        assert dict(env.default_headers) == headers
        with pytest.raises(TypeError):
            env.default_headers["X"] = "y"  # type: ignore[index]
        assert env.provider is None and not env.closed
        text = repr(env) + repr(env.transport)
        assert "hidden-token" not in text and "pw" not in text
    finally:
        env.close()


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({}, ValueError, "pass base_url or provider"),
        ({"base_url": "http://h", "transport": "grpc"}, ValueError, "transport"),
        ({"base_url": "http://h", "request_timeout_s": 0}, ValueError, "request_timeout_s"),
        ({"base_url": "http://h", "step_timeout_s": -1}, ValueError, "step_timeout_s"),
    ],
)
def test_constructor_checks(kwargs: dict[str, Any], error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        CounterEnv(**kwargs)


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "10"])
def test_max_message_bytes_must_be_a_positive_int(value: Any) -> None:
    with pytest.raises(ValueError, match="max_message_bytes must be a positive int or None"):
        CounterEnv("http://h", max_message_bytes=value)
    for accepted in (None, 1):
        CounterEnv("http://h", max_message_bytes=accepted).close()


def test_subclass_without_spec() -> None:
    class NoSpec(EnvClient[Any, Any, Any]):
        def _step_payload(self, action: Any) -> dict[str, Any]:
            return {}

        def _parse_result(self, payload: Mapping[str, Any]) -> StepResult[Any]:
            raise NotImplementedError

        def _parse_state(self, payload: Mapping[str, Any]) -> Any:
            return payload

    with pytest.raises(TypeError, match="SPEC"):
        NoSpec("http://h")
    with pytest.raises(TypeError, match="SPEC"):
        NoSpec.from_local_process(["x"])


def test_env_spec() -> None:
    spec = EnvSpec(name="e", version="1", transport="http", server_command=["a", "b"])  # type: ignore[arg-type]
    assert spec.server_command == ("a", "b")
    assert spec.health_path == "/health" and spec.docker_port == 8000 and spec.schema_hash == ""
    hash(spec)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "x"  # type: ignore[misc]
    with pytest.raises(ValueError):
        EnvSpec(name="e", version="1", transport="grpc")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        EnvSpec(name="e", version="1", transport="http", health_path="health")
    with pytest.raises(ValueError):
        EnvSpec(name="e", version="1", transport="http", startup_timeout_s=0)


def test_env_spec_startup_timeout_must_be_a_positive_number() -> None:
    # NaN passed the old `<= 0` check: a provider would then give up at once.
    for value in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="startup_timeout_s must be positive"):
            EnvSpec(name="e", version="1", transport="http", startup_timeout_s=value)


def test_a_reset_whose_reply_fails_to_parse_still_ends_the_old_episode() -> None:
    """The server did reset: the old episode's id must not outlive a reply the model rejects."""
    from envgen_runtime import EnvValidationError

    from generated.echo_env import EchoEnv

    client = EchoEnv("http://127.0.0.1:9", transport="http")
    good = {"echoed_message": "x", "message_length": 1, "metadata": {"episode_id": "ep1"}}
    client._after_reset(None, {"observation": good, "reward": None, "done": False})
    assert client.episode_id == "ep1"
    with pytest.raises(EnvValidationError):
        client._after_reset(None, {"observation": {"bogus": 1}, "done": False})
    assert client.episode_id is None
    with pytest.raises(EnvValidationError):
        client._after_reset("mine", {"observation": {"bogus": 1}, "done": False})
    assert client.episode_id == "mine"
