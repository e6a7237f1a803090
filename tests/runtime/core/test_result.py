"""Reply envelopes: OpenEnv's observation metadata reads the same from every server kind."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from envgen_runtime import EnvModel, ModelCodec
from envgen_runtime.core.result import build_step_result
from pydantic import ConfigDict


class WithMetadata(EnvModel):
    text: str
    metadata: dict[str, Any] | None = None


class Closed(EnvModel):
    model_config = ConfigDict(extra="forbid")
    text: str


OBS = {"text": "hi"}


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"observation": {**OBS, "metadata": {}}, "reward": None, "done": False}, {}),
        ({"observation": OBS, "reward": None, "done": False}, {}),  # openenv-core 0.1
        ({"observation": {**OBS, "metadata": None}, "done": False}, {}),
        ({"observation": OBS, "done": False, "metadata": {"k": 1}}, {"k": 1}),
        ({"observation": {**OBS, "metadata": {"k": 1}}, "metadata": {"k": 1}}, {"k": 1}),
        ({"observation": {**OBS, "metadata": {"in": 1}}, "metadata": {"top": 2}}, {"in": 1}),
    ],
)
def test_observation_metadata_is_never_missing(payload: dict[str, Any], expected: Any) -> None:
    received = copy.deepcopy(payload)
    for strict in (False, True):
        result = build_step_result(payload, ModelCodec(WithMetadata, "observation"), strict=strict)
        assert result.observation.metadata == expected
        assert result.raw == received  # the reply as received
    assert payload == received  # and not changed in place


def test_models_without_metadata_get_none_added() -> None:
    payload = {"observation": OBS, "reward": 1, "done": True}
    result = build_step_result(payload, ModelCodec(Closed, "observation"), strict=True)
    assert result.observation == Closed(text="hi")
    assert result.reward == 1.0
