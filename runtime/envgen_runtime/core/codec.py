"""Turning generated model values into wire JSON and back.

A generated environment emits one of three kinds of type per role: a pydantic model, a stdlib
(or pydantic) dataclass, or a ``TypeAliasType`` alias of a discriminated union. ``ModelCodec``
handles all of them through one lazily built pydantic ``TypeAdapter``.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import weakref
from collections.abc import Sequence
from typing import Any, Generic, TypeVar, overload

import pydantic
from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic.fields import FieldInfo
from pydantic_core import PydanticSerializationError

from .errors import EnvValidationError, ValidationIssue, validation_error
from .jsonbody import compact_json
from .text import truncate

T = TypeVar("T")


class EnvModel(BaseModel):
    """Base of generated pydantic models.

    ``extra="allow"`` keeps fields a server sends that the schema did not name (reachable via
    ``model_extra``) instead of dropping them; ``populate_by_name`` lets code use the Python
    field names when wire names had to be renamed. Action-side models may override
    ``extra="forbid"`` so typos fail before anything is sent.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)


def _read_key(name: str, info: FieldInfo) -> str:
    """The key a field is read from when validating a reply."""
    alias = info.validation_alias
    return alias if isinstance(alias, str) else info.alias or name


_LEAVES = (str, int, float, bool, type(None))
"""Types of JSON values that hold no object to prune."""

_plans: weakref.WeakKeyDictionary[type, tuple[tuple[str, str, bool], ...]] = (
    weakref.WeakKeyDictionary()
)


def _plan(cls: Any) -> tuple[tuple[str, str, bool], ...]:
    """``(field name, wire key, defaults to None)`` per field of a model or dataclass, cached."""
    plan = _plans.get(cls)
    if plan is None:
        infos: dict[str, FieldInfo] = getattr(cls, "__pydantic_fields__", None) or {}
        plan = tuple(
            (
                name,
                info.serialization_alias or info.alias or name,
                info.default is None and info.default_factory is None,
            )
            for name, info in infos.items()
        )
        if not issubclass(cls, BaseModel):  # a stdlib dataclass's fields have no FieldInfo
            fields = dataclasses.fields(cls)
            plan += tuple(
                (f.name, f.name, f.default is None) for f in fields if f.name not in infos
            )
        _plans[cls] = plan
    return plan


def _prune_unset_none(value: Any, dumped: Any) -> None:
    """Drop keys of fields left at a ``None`` default that the caller never set, in place.

    A server whose schema says ``"type": "number"`` rejects ``null``; without the key it
    applies its own default. Walks the value beside its dump, so unions, lists and nested
    models go by what they hold. Non-None defaults (discriminator tags) stay. Dataclasses do
    not record what was set: a None at a None default is dropped either way.
    """
    if type(dumped) in _LEAVES:
        return  # nothing below a scalar to prune
    is_model = isinstance(value, BaseModel)
    if is_model and value.__pydantic_root_model__:
        # Not ``isinstance(value, RootModel)``: importing RootModel builds its validator and
        # loads pydantic's plugin machinery, a fifth of this package's import time.
        _prune_unset_none(getattr(value, "root", None), dumped)
    elif is_model or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        if not isinstance(dumped, dict):
            return
        fields_set = value.model_fields_set if is_model else ()
        for name, key, none_default in _plan(type(value)):
            if key not in dumped:
                continue
            item = dumped[key]
            if item is None:
                if none_default and name not in fields_set and getattr(value, name) is None:
                    del dumped[key]
            elif item and type(item) not in _LEAVES:  # an empty object or list holds none
                _prune_unset_none(getattr(value, name, None), item)
    elif isinstance(value, list | tuple) and isinstance(dumped, list):
        for item, item_dumped in zip(value, dumped, strict=False):
            _prune_unset_none(item, item_dumped)
    elif isinstance(value, dict) and isinstance(dumped, dict) and len(value) == len(dumped):
        for item, item_dumped in zip(value.values(), dumped.values(), strict=True):
            _prune_unset_none(item, item_dumped)


class ModelCodec(Generic[T]):
    """Encodes and validates one role's type (``action``, ``observation`` or ``state``).

    The TypeAdapter is built on first use: building adapters for every generated environment
    at import time would make importing a generated package slow.
    """

    # The overloads infer ``ModelCodec[SomeModel]`` from a class; aliases need an annotation.
    @overload
    def __init__(self, tp: type[T], role: str) -> None: ...

    @overload
    def __init__(self, tp: Any, role: str) -> None: ...

    def __init__(self, tp: Any, role: str) -> None:
        self._type = tp
        self._role = role
        self._adapter: TypeAdapter[T] | None = None
        self._many: TypeAdapter[list[T]] | None = None
        self._lock = threading.Lock()
        self._read_keys: frozenset[str] | None = None

    def __repr__(self) -> str:
        name = getattr(self._type, "__name__", repr(self._type))
        return f"ModelCodec({name}, {self._role!r})"

    def declares(self, key: str) -> bool:
        """Whether the model type reads a field under the wire name ``key`` (False for unions)."""
        keys = self._read_keys
        if keys is None:
            fields: dict[str, FieldInfo] = getattr(self._type, "__pydantic_fields__", None) or {}
            keys = frozenset(_read_key(name, info) for name, info in fields.items())
            self._read_keys = keys
        return key in keys

    @property
    def role(self) -> str:
        """What this codec carries, used in error messages."""
        return self._role

    @property
    def type(self) -> Any:
        """The wrapped model type."""
        return self._type

    @property
    def adapter(self) -> TypeAdapter[T]:
        """The pydantic TypeAdapter, built on first use."""
        adapter = self._adapter
        if adapter is None:
            with self._lock:
                adapter = self._adapter
                if adapter is None:
                    adapter = TypeAdapter(self._type)
                    self._adapter = adapter
        return adapter

    def encode(self, value: T) -> dict[str, Any]:
        """JSON object to send for ``value``, validated first so bad values never leave.

        Fields left at a ``None`` default that were never set are omitted; everything else,
        including non-None defaults such as discriminator tags, is sent under its wire name.
        The payload is validated exactly as it will be sent (a JSON round trip), which also
        catches values built with ``model_construct`` or assigned wrong types afterwards.
        """
        adapter = self.adapter
        dumped = self._wire_object(value, self._dump(adapter, value))
        self._check_sent(adapter, self._json_text(dumped))
        return dumped

    def encode_texts(self, values: Sequence[T]) -> list[str]:
        """The compact JSON text of what ``encode`` sends for each value, in one pass.

        One pydantic call serialises the batch and one validates it (a pool's lock-step round
        encodes every slot's action this way); the texts are what ``encode``'s objects
        serialise to. Any value ``encode`` would refuse makes the whole batch raise that
        error (its field path led by the value's index): encode them one by one to learn which.
        """
        many = self._many
        if many is None:
            many = self._many = TypeAdapter(list[self._type])  # type: ignore[name-defined]
        items = list(values)
        dumped = self._dump(many, items)
        texts = [
            self._json_text(self._wire_object(value, item))
            for value, item in zip(items, dumped, strict=True)
        ]
        self._check_sent(many, "[" + ",".join(texts) + "]")
        return texts

    def _dump(self, adapter: TypeAdapter[Any], value: Any) -> Any:
        """``value`` as JSON-ready Python under wire names; one that cannot be is refused."""
        try:
            return adapter.dump_python(value, mode="json", by_alias=True, warnings=False)
        except (PydanticSerializationError, TypeError, ValueError, AttributeError) as exc:
            why = truncate(str(exc), 300)
            text = f"{self._role} cannot be serialised to JSON: {why}"
            raise self._whole("serialization", why, text) from exc

    def _wire_object(self, value: Any, dumped: Any) -> dict[str, Any]:
        """The object sent for ``value``: unset None defaults left out; must be an object."""
        _prune_unset_none(value, dumped)
        if not isinstance(dumped, dict):
            text = f"{self._role} must encode to a JSON object, got {type(dumped).__name__}"
            raise self._whole("type", "must encode to a JSON object", text)
        return dumped

    def _json_text(self, dumped: dict[str, Any]) -> str:
        try:
            return compact_json(dumped)
        except ValueError as exc:  # NaN/inf that JSON cannot carry
            raise self._whole("json_serialization", str(exc)) from exc

    def _check_sent(self, adapter: TypeAdapter[Any], text: str) -> None:
        """Validate what will be sent exactly as sent (a JSON round trip)."""
        try:
            adapter.validate_json(text)
        except pydantic.ValidationError as exc:
            raise validation_error(self._role, exc, hint="nothing was sent") from exc

    def decode(self, payload: Any, *, strict: bool = False) -> T:
        """Validate a decoded JSON value from the server into the model type.

        Lenient by default: fields the schema does not name are kept (``model_extra``) and
        pydantic's usual conversions apply. ``strict=True`` rejects both: an unknown field
        anywhere (``extra="forbid"``) or a value of the wrong JSON type (``"3"`` for an
        integer, ``1.5`` for an integer); the same model classes, validated as JSON in
        pydantic's strict mode.
        """
        try:
            if strict:
                text = json.dumps(payload, ensure_ascii=False)
                return self.adapter.validate_json(text, strict=True, extra="forbid")
            return self.adapter.validate_python(payload)
        except pydantic.ValidationError as exc:
            if strict:
                hint = (
                    "strict parsing rejects unknown fields and values of the wrong JSON type "
                    "(regenerate the client, or parse leniently with strict=False)"
                )
            else:
                hint = "the server sent data the generated model rejects (regenerate the client?)"
            raise validation_error(self._role, exc, hint=hint) from exc
        except (TypeError, ValueError) as exc:  # not JSON at all: only reachable when strict
            raise self._whole("json_type", truncate(str(exc), 300)) from exc

    def _whole(self, kind: str, why: str, text: str | None = None) -> EnvValidationError:
        """A failure of the value as a whole (no field to name), e.g. not JSON at all."""
        issue = ValidationIssue(loc=(), message=why, type=kind)
        return EnvValidationError(self._role, [issue], message=text)
