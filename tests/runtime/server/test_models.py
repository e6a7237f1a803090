"""envgen_runtime.server.models: OMIT_NONE fields left out while None, with no Python
serializer on the models that have none."""

from __future__ import annotations

from typing import Annotated, Any

from envgen_runtime.server import OMIT_NONE, ServerModel, ServerObservation
from pydantic import Field
from pydantic_core import to_json

MARK: Any = {OMIT_NONE: True}


class Plain(ServerModel):
    value: int
    maybe: str | None = None  # optional and nullable: always sent


class Marked(ServerModel):
    note: Annotated[str | None, Field(json_schema_extra=MARK)] = None
    from_: Annotated[str | None, Field(alias="from", json_schema_extra=MARK)] = None


class Holder(ServerObservation):
    """Unmarked itself; its nested model and the subclass below carry the marks."""

    inner: Marked
    plain: Plain


class MarkedHolder(Holder):
    extra: Annotated[int | None, Field(json_schema_extra=MARK)] = None


class Later(ServerModel):
    """Marked, and completed only once `Ahead` is defined (a forward reference)."""

    ahead: Ahead | None = None
    tag: Annotated[str | None, Field(json_schema_extra=MARK)] = None


class Ahead(ServerModel):
    value: int = 0


Later.model_rebuild()


def _holder(cls: type[Holder], **values: Any) -> Holder:
    return cls(inner=Marked(), plain=Plain(value=1), **values)


def test_a_model_without_marked_fields_has_no_python_serializer() -> None:
    for cls in (Plain, Holder):
        assert "serialization" not in cls.__pydantic_core_schema__, cls  # no model_serializer
        assert "function" not in repr(cls.__pydantic_serializer__), cls


def test_marked_fields_are_left_out_while_none_in_python_and_json() -> None:
    assert Marked().model_dump() == {}
    assert Marked().model_dump_json() == "{}"
    set_ = Marked(note="n", **{"from": "me"})
    assert set_.model_dump() == {"note": "n", "from": "me"}
    assert set_.model_dump(by_alias=False) == {"note": "n", "from_": "me"}
    assert Plain(value=1).model_dump() == {"value": 1, "maybe": None}


def test_nested_and_inherited_marks_apply_wherever_the_model_is_serialized() -> None:
    holder = _holder(MarkedHolder)
    dumped = holder.model_dump(exclude={"reward", "done"})
    assert dumped == {"metadata": {}, "inner": {}, "plain": {"value": 1, "maybe": None}}
    assert _holder(MarkedHolder, extra=2).model_dump()["extra"] == 2
    assert b'"inner":{}' in to_json({"observation": _holder(Holder)})


def test_a_model_completed_after_a_forward_reference_still_omits_its_marked_fields() -> None:
    assert Later().model_dump() == {"ahead": None}
    assert Later(tag="t", ahead=Ahead()).model_dump_json() == '{"ahead":{"value":0},"tag":"t"}'


def test_the_published_schema_drops_the_mark_and_the_null_branch() -> None:
    props = Marked.model_json_schema()["properties"]
    assert props["note"] == {"title": "Note", "type": "string"}
    assert props["from"] == {"title": "From", "type": "string"}
