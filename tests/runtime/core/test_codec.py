"""ModelCodec, EnvModel and the reply envelope: pure unit tests (no network)."""

from __future__ import annotations

import dataclasses
import math
from typing import Annotated, Any, Literal

import pydantic
import pytest
from envgen_runtime import (
    EnvClient,
    EnvModel,
    EnvValidationError,
    ModelCodec,
    ProtocolError,
    StepResult,
    ValidationIssue,
)
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypeAliasType

from tests.runtime.clients import CounterAction, CounterObservation

# --------------------------------------------------------------------------- models


class Point(EnvModel):
    x: int
    y: int | None = None
    label: str = "p"


class Move(EnvModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["move"] = "move"
    to: Point
    speed: float | None = None
    path: list[Point] = Field(default_factory=list)


class Say(EnvModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["say"] = "say"
    text: str
    volume: int | None = None


Command = TypeAliasType("Command", Annotated[Move | Say, Field(discriminator="type")])


class Aliased(EnvModel):
    class_: str = Field(alias="class")
    max_speed: float | None = Field(default=None, alias="max-speed")
    mode: str = Field(default="fast", alias="Mode")


class Plan(EnvModel):
    steps: list[Command]
    named: dict[str, Point] = Field(default_factory=dict)
    note: str | None = None


@dataclasses.dataclass
class DcInner:
    a: int
    b: int | None = None


@dataclasses.dataclass
class DcOuter:
    inner: DcInner
    items: list[DcInner] = dataclasses.field(default_factory=list)
    tag: str = "outer"
    maybe: str | None = None


@pydantic.dataclasses.dataclass
class PydDc:
    n: int
    when: str | None = None
    kind: Literal["k"] = "k"


class Plain(BaseModel):
    """A plain pydantic model (not EnvModel): the codec must handle it too."""

    v: int
    opt: int | None = None


# --------------------------------------------------------------------------- encode


def test_encode_omits_unset_none_defaults_but_keeps_other_defaults() -> None:
    codec: ModelCodec[CounterAction] = ModelCodec(CounterAction, "action")
    assert codec.encode(CounterAction(message="hi")) == {"message": "hi", "delta": 1}


def test_encode_sends_explicit_none() -> None:
    codec: ModelCodec[Point] = ModelCodec(Point, "action")
    assert codec.encode(Point(x=1, y=None)) == {"x": 1, "y": None, "label": "p"}


def test_encode_nested_models_and_lists() -> None:
    codec: ModelCodec[Move] = ModelCodec(Move, "action")
    move = Move(to=Point(x=1), path=[Point(x=2, y=3), Point(x=4)])
    assert codec.encode(move) == {
        "type": "move",
        "to": {"x": 1, "label": "p"},
        "path": [{"x": 2, "y": 3, "label": "p"}, {"x": 4, "label": "p"}],
    }


def test_encode_root_model_prunes_inside_its_root() -> None:
    # The runtime tells a RootModel apart without importing pydantic.RootModel (import cost).
    wrapped = pydantic.RootModel[Point]
    codec: ModelCodec[Any] = ModelCodec(wrapped, "action")
    assert codec.encode(wrapped(Point(x=1))) == {"x": 1, "label": "p"}
    assert codec.encode(wrapped(Point(x=2, y=None))) == {"x": 2, "y": None, "label": "p"}


def test_env_models_build_their_validators_on_first_use() -> None:
    # Generated models are many; building each validator at import time made importing a
    # generated client slow, so EnvModel defers it until a model is first used.
    class Late(EnvModel):
        n: int

    assert not Late.__pydantic_complete__
    assert Late(n=1).n == 1
    assert Late.__pydantic_complete__


def test_encode_discriminated_union_alias_keeps_tag() -> None:
    codec: ModelCodec[Any] = ModelCodec(Command, "action")
    assert codec.encode(Say(text="hello")) == {"type": "say", "text": "hello"}
    assert codec.encode(Move(to=Point(x=0), speed=2.5)) == {
        "type": "move",
        "to": {"x": 0, "label": "p"},
        "speed": 2.5,
        "path": [],
    }


def test_encode_union_inside_list_and_dict() -> None:
    codec: ModelCodec[Plan] = ModelCodec(Plan, "action")
    plan = Plan(steps=[Say(text="a"), Move(to=Point(x=1))], named={"home": Point(x=9)})
    assert codec.encode(plan) == {
        "steps": [
            {"type": "say", "text": "a"},
            {"type": "move", "to": {"x": 1, "label": "p"}, "path": []},
        ],
        "named": {"home": {"x": 9, "label": "p"}},
    }


def test_encode_uses_wire_names() -> None:
    codec: ModelCodec[Aliased] = ModelCodec(Aliased, "action")
    assert codec.encode(Aliased(class_="a")) == {"class": "a", "Mode": "fast"}
    assert codec.encode(Aliased.model_validate({"class": "b", "max-speed": 3})) == {
        "class": "b",
        "max-speed": 3.0,
        "Mode": "fast",
    }


def test_encode_stdlib_dataclasses() -> None:
    codec: ModelCodec[DcOuter] = ModelCodec(DcOuter, "action")
    value = DcOuter(inner=DcInner(a=1), items=[DcInner(a=2, b=3), DcInner(a=4)])
    assert codec.encode(value) == {
        "inner": {"a": 1},
        "items": [{"a": 2, "b": 3}, {"a": 4}],
        "tag": "outer",
    }


def test_encode_pydantic_dataclass() -> None:
    codec: ModelCodec[PydDc] = ModelCodec(PydDc, "action")
    assert codec.encode(PydDc(n=1)) == {"n": 1, "kind": "k"}


def test_encode_plain_base_model_and_extras() -> None:
    assert ModelCodec(Plain, "action").encode(Plain(v=1)) == {"v": 1}
    point = Point(x=1, extra_field="kept")
    assert ModelCodec(Point, "action").encode(point) == {
        "x": 1,
        "label": "p",
        "extra_field": "kept",
    }


def test_encode_validates_model_construct() -> None:
    codec: ModelCodec[CounterAction] = ModelCodec(CounterAction, "action")
    bad = CounterAction.model_construct(delta=2)  # type: ignore[call-arg]  # no message
    with pytest.raises(EnvValidationError) as info:
        codec.encode(bad)
    err = info.value
    assert err.role == "action"
    assert [issue.path for issue in err.errors] == ["message"]
    assert "message" in str(err) and "Field required" in str(err)
    assert "nothing was sent" in str(err)


def test_encode_validates_wrong_assignment_in_nested_model() -> None:
    codec: ModelCodec[Move] = ModelCodec(Move, "action")
    move = Move(to=Point(x=1), path=[Point(x=2)])
    move.path[0].x = "not a number"  # type: ignore[assignment]
    with pytest.raises(EnvValidationError) as info:
        codec.encode(move)
    (issue,) = info.value.errors
    assert issue.loc == ("path", 0, "x")
    assert issue.path == "path[0].x"
    assert issue.pointer == "/path/0/x"
    assert "valid integer" in issue.message
    assert "path[0].x" in str(info.value)


def test_encode_rejects_non_finite_float() -> None:
    codec: ModelCodec[Move] = ModelCodec(Move, "action")
    with pytest.raises(EnvValidationError):
        codec.encode(Move(to=Point(x=1), speed=math.inf))


def test_encode_rejects_non_object_payload() -> None:
    codec: ModelCodec[list[int]] = ModelCodec(list[int], "action")
    with pytest.raises(EnvValidationError, match="JSON object"):
        codec.encode([1, 2])


def test_adapter_is_built_lazily_once() -> None:
    codec: ModelCodec[Point] = ModelCodec(Point, "observation")
    assert codec._adapter is None
    first = codec.adapter
    assert codec.adapter is first
    assert codec.role == "observation" and codec.type is Point
    assert "Point" in repr(codec)


# --------------------------------------------------------------------------- decode


def test_decode_keeps_unknown_fields() -> None:
    codec: ModelCodec[CounterObservation] = ModelCodec(CounterObservation, "observation")
    obs = codec.decode({"echoed": "a", "total": 1, "step": 1, "server_only": "x"})
    assert obs.model_extra == {"server_only": "x"}


def test_decode_errors_name_every_field() -> None:
    codec: ModelCodec[Plan] = ModelCodec(Plan, "observation")
    payload = {"steps": [{"type": "say"}, {"type": "move", "to": {"x": "q"}}]}
    with pytest.raises(EnvValidationError) as info:
        codec.decode(payload)
    err = info.value
    assert err.role == "observation"
    paths = sorted(issue.path for issue in err.errors)
    assert paths == ["steps[0].say.text", "steps[1].move.to.x"]
    assert all(issue.message for issue in err.errors)
    text = str(err)
    assert "observation failed validation (2 errors)" in text
    assert "steps[0].say.text" in text and "steps[1].move.to.x" in text


def test_decode_union_bad_tag() -> None:
    codec: ModelCodec[Any] = ModelCodec(Command, "action")
    with pytest.raises(EnvValidationError) as info:
        codec.decode({"type": "jump"})
    assert "jump" in str(info.value)
    assert isinstance(codec.decode({"type": "say", "text": "x"}), Say)


def test_decode_dataclass() -> None:
    codec: ModelCodec[DcOuter] = ModelCodec(DcOuter, "state")
    assert codec.decode({"inner": {"a": 1}}) == DcOuter(inner=DcInner(a=1))
    with pytest.raises(EnvValidationError) as info:
        codec.decode({"inner": {}})
    assert info.value.errors[0].path == "inner.a"


def test_env_model_populates_by_name_and_alias() -> None:
    assert Aliased(class_="x").class_ == "x"
    assert Aliased.model_validate({"class": "y"}).class_ == "y"
    assert EnvModel.model_config["extra"] == "allow"


# --------------------------------------------------------------------------- envelope


_OBS: ModelCodec[CounterObservation] = ModelCodec(CounterObservation, "observation")
_GOOD_OBS = {"echoed": "a", "total": 2, "step": 1}


def test_build_result_keeps_extra_keys_and_raw() -> None:
    payload = {
        "observation": _GOOD_OBS,
        "reward": 2,
        "done": False,
        "metadata": None,
        "info": {"k": 1},
    }
    result = EnvClient._build_result(payload, _OBS)
    assert result.reward == 2.0 and isinstance(result.reward, float)
    assert result.done is False
    assert result.extra == {"metadata": None, "info": {"k": 1}}
    assert result.metadata is None
    assert result.raw == payload
    assert result.observation.total == 2


@pytest.mark.parametrize(("reward", "expected"), [(None, None), (True, 1.0), (1, 1.0), (0.5, 0.5)])
def test_build_result_reward_conversion(reward: Any, expected: float | None) -> None:
    result = EnvClient._build_result({"observation": _GOOD_OBS, "reward": reward}, _OBS)
    assert result.reward == expected
    assert result.done is False  # missing done reads as False


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ({"reward": 1, "done": False}, "no 'observation' key"),
        ({"observation": [1], "done": False}, "not an object"),
        ({"observation": _GOOD_OBS, "reward": "1"}, "non-numeric reward"),
        ({"observation": _GOOD_OBS, "done": "yes"}, "non-boolean done"),
    ],
)
def test_build_result_rejects_bad_envelopes(payload: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ProtocolError) as info:
        EnvClient._build_result(payload, _OBS)
    assert fragment in str(info.value)
    assert info.value.received.startswith("{")


def test_build_result_observation_validation_error() -> None:
    with pytest.raises(EnvValidationError) as info:
        EnvClient._build_result({"observation": {"echoed": "a"}, "done": False}, _OBS)
    assert {i.path for i in info.value.errors} == {"total", "step"}


def test_step_result_is_frozen() -> None:
    result: StepResult[int] = StepResult(observation=1, reward=None, done=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.done = True  # type: ignore[misc]
    assert result.metadata is None and result.extra == {} and result.raw == {}


def test_validation_issue_paths() -> None:
    assert ValidationIssue(loc=(), message="m").path == "<root>"
    assert ValidationIssue(loc=(), message="m").pointer == ""
    issue = ValidationIssue(loc=("a/b", 0, "c~d"), message="m", type="t", input_repr="1")
    assert issue.path == "a/b[0].c~d"
    assert issue.pointer == "/a~1b/0/c~0d"
    assert issue.describe() == "a/b[0].c~d: m [t; input: 1]"
