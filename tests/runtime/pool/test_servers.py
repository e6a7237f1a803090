"""pool/servers.py: the providers the pool makes, started for the pool's transport."""

from __future__ import annotations

import pytest
from envgen_runtime.pool.servers import provider_factory

from generated.echo_env import EchoEnv


@pytest.mark.parametrize("transport", ["http", "websocket"])
def test_a_docker_server_is_started_with_the_pools_transport(transport: str) -> None:
    pytest.importorskip("docker")
    make = provider_factory("docker", {}, EchoEnv.SPEC, transport, "EchoEnvPool")
    provider = make()
    assert provider.transport == transport  # type: ignore[attr-defined]
    assert provider.run_options["environment"]["ENVGEN_PROTOCOL"] == transport  # type: ignore[attr-defined]


def test_options_for_a_callable_provider_are_refused() -> None:
    with pytest.raises(TypeError, match="provider_options apply to"):
        provider_factory(lambda: None, {"image": "x"}, EchoEnv.SPEC, "http", "P")  # type: ignore[arg-type, return-value]
