# mypy: disallow-subclassing-any=False
"""The bases of generated server models: openenv 0.10's Action, Observation and State (as
``bases`` restates them, so serving needs no openenv) with the env's wire format (wire names
kept, absent optionals left out, the schema published as the env's own says), and
``UnionAction`` for a tagged-union action."""

from __future__ import annotations

import functools
import inspect
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic.fields import FieldInfo

from .bases import Action, Observation, State

OMIT_NONE = "x-envgen-omit-none"
"""The mark generated server models put on an optional property whose schema refuses null."""


def _is_none(value: Any) -> bool:
    return value is None


def _omits_none(info: FieldInfo) -> bool:
    extra = info.json_schema_extra
    return isinstance(extra, dict) and extra.get(OMIT_NONE) is True


def _published(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the env's own says: marked fields not nullable, union tags required.

    Union members default their tag to its constant (`Move(direction=...)` needs no `type=`),
    so pydantic leaves it out of `required`; on the wire it is required, as the env's schema
    says. Data keywords (const, default, enum) are not walked.
    """
    defs = schema.get("$defs", {})
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        props = node.get("properties")
        for prop in props.values() if isinstance(props, dict) else []:
            if isinstance(prop, dict) and prop.pop(OMIT_NONE, None) is True:
                _drop_null(prop)
        stack.extend(v for k, v in node.items() if k not in ("const", "default", "enum"))
        discriminator = node.get("discriminator")
        tag = discriminator.get("propertyName") if isinstance(discriminator, dict) else None
        if not isinstance(tag, str):
            continue
        members = node.get("oneOf", node.get("anyOf"))
        for member in members if isinstance(members, list) else []:
            ref = member.get("$ref", "") if isinstance(member, dict) else ""
            target = defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith("#/$defs/") else member
            prop = target.get("properties", {}).get(tag) if isinstance(target, dict) else None
            if isinstance(prop, dict) and "const" in prop and prop.get("default") == prop["const"]:
                del prop["default"]
                required = target.setdefault("required", [])
                if tag not in required:
                    required.insert(0, tag)
    return schema


def _drop_null(prop: dict[str, Any]) -> None:
    branches = prop.get("anyOf")
    if isinstance(branches, list):
        kept = [b for b in branches if b != {"type": "null"}]
        if len(kept) == 1 and isinstance(kept[0], dict):
            del prop["anyOf"]
            prop.update({k: v for k, v in kept[0].items() if k not in prop})
        else:
            prop["anyOf"] = kept
    if "default" in prop and prop["default"] is None:
        del prop["default"]


class _WireFormat(BaseModel):
    """What every generated server model adds to its base: wire names kept, absent optionals
    left out of replies, and a published schema that says so."""

    # Wire names such as `class` or `time-left` must survive openenv's bare `model_dump()`.
    model_config = ConfigDict(validate_by_name=True, serialize_by_alias=True)

    @classmethod
    def __pydantic_on_complete__(cls) -> None:
        """Leave out OMIT_NONE fields while they are None (optional on the wire but never
        null: the generated `x: T | None = None` of a non-required property that refuses
        null), with pydantic's `exclude_if` on those fields alone, so that a model without
        one (most) serializes in pydantic-core with no Python call: a wrap serializer on
        every model cost two Python round trips a step. The fields are known only once the
        class is complete, so a class that has one is built again with it."""
        marked = [
            info
            for info in cls.__pydantic_fields__.values()
            if _omits_none(info) and info.exclude_if is None
        ]
        for info in marked:
            info.exclude_if = _is_none
        if marked:
            cls.model_rebuild(force=True)

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return _published(super().model_json_schema(*args, **kwargs))


class ServerModel(_WireFormat):
    """Base of every nested model in a generated server module."""


class ServerAction(Action, _WireFormat):
    """openenv's Action (unknown fields forbidden, `metadata`) with wire names kept."""


class ServerObservation(Observation, _WireFormat):
    """openenv's Observation (`done`, `reward`, `metadata`) with wire names kept."""


class ServerState(State, _WireFormat):
    """openenv's State (`episode_id`, `step_count`, extra fields allowed) with wire names kept."""


class UnionAction(ServerAction):
    """An action that is one of several tagged models; `union` holds the tagged union.

    openenv validates actions with ``action_cls.model_validate`` and publishes
    ``action_cls.model_json_schema()``; both go through a TypeAdapter over ``union`` here, so
    validation returns the member model the tag names. Never instantiated itself.
    """

    union: ClassVar[Any]

    @classmethod
    def model_validate(cls, obj: Any, *args: Any, **kwargs: Any) -> Any:
        return _adapter(cls).validate_python(obj, *args, **kwargs)

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        schema: dict[str, Any] = _adapter(cls).json_schema(*args, **kwargs)
        head = {"title": cls.__name__}
        if cls.__doc__:
            head["description"] = inspect.cleandoc(cls.__doc__)
        return _published({**head, **schema})


@functools.cache
def _adapter(cls: type[UnionAction]) -> TypeAdapter[Any]:
    return TypeAdapter(cls.union)
