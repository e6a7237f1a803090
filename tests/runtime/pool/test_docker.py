"""EnvPool over Docker containers: sessions shared per container, a stopped container replaced."""

from __future__ import annotations

from typing import Any

import pytest
from envgen_runtime import LocalDockerProvider, SlotLostError

from generated.echo_env import EchoAction, EchoEnvPool

pytestmark = pytest.mark.docker


def test_pool_over_containers_replaces_a_stopped_container(
    docker_engine: Any, example_images: dict[str, str], session_containers: Any
) -> None:
    image = example_images["echo_env"]
    with EchoEnvPool(
        4, sessions_per_server=2, provider="docker", provider_options={"image": image}
    ) as pool:
        containers = [p for p in pool.servers if isinstance(p, LocalDockerProvider)]
        assert len(containers) == 2 and len(session_containers()) == 2
        assert all(r.ok for r in pool.reset())
        stepped = pool.step([EchoAction(message=f"m{i}") for i in range(4)])
        assert [r.observation.echoed_message for r in stepped if r.observation] == [
            "m0",
            "m1",
            "m2",
            "m3",
        ]

        victim = containers[0]
        lost = {s.slot for s in pool.slots if s.base_url == victim.base_url}
        assert victim.container_id is not None
        docker_engine.containers.get(victim.container_id).stop(timeout=1)
        results = pool.step([EchoAction(message="after")] * 4)
        assert {r.slot for r in results if isinstance(r.error, SlotLostError)} == lost
        assert all(r.ok for r in results if r.slot not in lost)

        pool.wait_ready(timeout_s=120)
        assert pool.replacements == 1
        recovered = pool.step([EchoAction(message="again")] * 4)
        assert all(r.ok for r in recovered)
        assert {r.slot for r in recovered if r.reset} == lost
        assert len(session_containers()) == 2  # the stopped one was removed
    assert session_containers() == []


def test_a_pool_over_the_envs_image_packs_its_slots_into_one_container(
    example_images: dict[str, str], session_containers: Any
) -> None:
    # The trainer's way (README "For trainers"): the image's server publishes its capacity.
    options = {"image": example_images["echo_env"]}
    with EchoEnvPool(8, provider="docker", provider_options=options) as pool:
        assert len(pool.servers) == 1 and len(session_containers()) == 1
        assert all(r.ok for r in pool.reset(seeds=0))
        stepped = pool.step([EchoAction(message=f"m{i}") for i in range(8)])
        assert [r.observation.echoed_message for r in stepped if r.observation] == [
            f"m{i}" for i in range(8)
        ]
    assert session_containers() == []
