"""``ModelSpace`` over generated types, and the random JSON values its ``sample`` draws."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium
import jsonschema
import numpy as np
import pytest
from envgen_runtime import ModelSpace
from envgen_runtime.vector.sampling import sample_json
from envgen_runtime.vector.spaces import types_of
from gymnasium.vector.utils import batch_space

from generated.echo_env import AsyncEchoEnv, EchoAction, EchoEnv, EchoEnvPool, EchoObservation
from generated.grid_env import GridAction, GridEnvPool, GridObservation, MoveAction, PickAction
from generated.reacher_env import ReacherEnvPool


@pytest.mark.parametrize("pool", [EchoEnvPool, GridEnvPool, ReacherEnvPool])
def test_samples_are_valid_instances_drawn_from_the_seeded_generator(pool: type[Any]) -> None:
    for model in types_of(pool):
        space = ModelSpace(model, seed=3)
        drawn = [space.sample() for _ in range(30)]
        assert all(value in space for value in drawn)
        for value in drawn:  # what would be sent fits the JSON Schema as well
            jsonschema.validate(space.to_jsonable([value])[0], space.json_schema)
        space.seed(3)
        assert [space.sample() for _ in range(30)] == drawn
        assert space.from_jsonable(space.to_jsonable(drawn)) == drawn


def test_a_union_action_samples_each_branch_and_contains_checks_as_sent() -> None:
    space = ModelSpace(GridAction, "action", seed=0)
    kinds = {type(space.sample()) for _ in range(60)}
    assert len(kinds) == 3 and PickAction in kinds
    assert {"type": "move", "direction": "east"} in space
    assert {"type": "move", "direction": "up"} not in space
    assert {"type": "jump"} not in space and "move" not in space
    up: Any = "up"
    bad = MoveAction.model_construct(type="move", direction=up, steps=1)  # never validated
    assert bad not in space
    assert space.validate({"type": "move", "direction": "east"}) == MoveAction(direction="east")


def test_types_are_read_from_clients_and_pools_and_spaces_batch_to_tuples() -> None:
    assert types_of(EchoEnv) == types_of(AsyncEchoEnv) == types_of(EchoEnvPool)
    assert types_of(EchoEnvPool) == (EchoAction, EchoObservation)
    assert types_of(GridEnvPool) == (GridAction, GridObservation)
    with pytest.raises(TypeError, match="action_type= and observation_type="):
        types_of(dict)
    single = ModelSpace(EchoObservation, "observation", seed=1)
    batched = batch_space(single, 3)
    assert isinstance(batched, gymnasium.spaces.Tuple) and batched.spaces[0] == single
    values = batched.sample()
    assert len(values) == 3 and values in batched
    twin = copy.deepcopy(single)
    assert [twin.sample() for _ in range(3)] == [single.sample() for _ in range(3)]
    assert repr(single) == "ModelSpace(EchoObservation)" and not single.is_np_flattenable
    with pytest.raises(ValueError, match="no mask"):
        single.sample(mask=np.ones(2, dtype=np.int8))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "integer", "minimum": 3, "exclusiveMaximum": 6, "multipleOf": 2},
        {"type": "number", "exclusiveMinimum": 0, "maximum": 0.5},
        {"type": "string", "pattern": "^[a-c]{2}-[0-9]$"},
        {"type": "string", "format": "date-time"},
        {"type": "string", "minLength": 2, "maxLength": 3},
        {"type": "array", "prefixItems": [{"const": 1}], "items": False, "minItems": 1},
        {"type": ["integer", "null"], "maximum": -5},
        {
            "$defs": {"A": {"enum": ["x", "y"]}},
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "required": ["a"],
        },
        {"allOf": [{"type": "boolean"}]},
    ],
)
def test_sample_json_meets_each_keyword_it_reads(schema: dict[str, Any]) -> None:
    rng = np.random.default_rng(5)
    for _ in range(40):
        jsonschema.validate(sample_json(schema, rng), schema)


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"allOf": [{"type": "string"}, {"minLength": 2}]}, "allOf of several"),
        ({"$ref": "other.json#/x"}, r"\$ref other.json"),
        ({"type": "integer", "minimum": 3, "maximum": 2}, "empty integer range"),
        ({"type": "weird"}, "type 'weird'"),
    ],
)
def test_sample_json_refuses_what_it_cannot_meet(schema: dict[str, Any], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        sample_json(schema, np.random.default_rng(0))
