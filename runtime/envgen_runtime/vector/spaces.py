"""``ModelSpace``: a gymnasium space whose members are the values of one generated model type.

An env's action and observation are JSON objects described by its schemas, with generated
pydantic types (a model class, or a tagged union alias such as ``GridAction``). Most do not
fit gymnasium's array spaces (strings, nested objects, unions of differently shaped
actions), so the space is the type itself: ``contains`` is "the type validates it, as it
would be sent" (a JSON round trip through the type, as ``ModelCodec.encode`` checks an
action before it leaves), ``sample`` draws a random JSON value from the type's JSON Schema
(``sampling``) with the space's seeded generator and validates it into a model instance.
Batched, it is a ``Tuple`` of copies (gymnasium's rule for spaces that are not arrays), so
a vector env's observations are a tuple of model instances and its actions a sequence.

``types_of`` reads the action and observation types from a generated client or pool class
(its generic arguments), so spaces need no configuration.
"""

from __future__ import annotations

import copy
import typing
from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium
import numpy as np
import pydantic

from ..core.codec import ModelCodec
from ..core.errors import EnvValidationError
from .sampling import sample_json

__all__ = ["SAMPLE_ATTEMPTS", "ModelSpace", "types_of"]

SAMPLE_ATTEMPTS = 50
"""How many JSON values ``sample`` draws before it reports that the type rejects them all."""


class ModelSpace(gymnasium.Space[Any]):
    """The values of a pydantic type (a generated model class or union alias) as a space.

    ``role`` names the values in messages (``"action"``, ``"observation"``). ``contains``
    accepts a model instance or a plain JSON-like value (a dict) that the type validates
    exactly as it would be sent; ``validate`` returns that value as the type's instance or
    raises ``EnvValidationError`` naming the field. Not flattenable to a ``Box``.
    """

    def __init__(
        self, model: Any, role: str = "value", seed: int | np.random.Generator | None = None
    ) -> None:
        self.model = model
        self.role = role
        self._codec: ModelCodec[Any] = ModelCodec(model, role)
        self._schema: dict[str, Any] | None = None
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def name(self) -> str:
        """The type's name (``GridAction``, ``EchoObservation``)."""
        return str(getattr(self.model, "__name__", None) or repr(self.model))

    @property
    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema pydantic writes for the type (what ``sample`` draws from)."""
        if self._schema is None:
            self._schema = self._codec.adapter.json_schema()
        return self._schema

    @property
    def is_np_flattenable(self) -> bool:
        """False: the values are models, not arrays."""
        return False

    def validate(self, value: Any) -> Any:
        """``value`` as the type's instance, checked as it would be sent; else raise.

        Raises ``EnvValidationError`` (with one issue per wrong field) when the type rejects
        ``value``.
        """
        encoded = self._codec.encode(value)
        if isinstance(value, self.model if isinstance(self.model, type) else ()):
            return value
        return self._codec.adapter.validate_python(encoded)

    def contains(self, x: Any) -> bool:
        """Whether the type accepts ``x`` as it would be sent (see ``validate``)."""
        try:
            self._codec.encode(x)
        except EnvValidationError:
            return False
        return True

    def sample(self, mask: Any | None = None, probability: Any | None = None) -> Any:
        """A random instance of the type, drawn with this space's generator (``seed()``).

        Masks and probabilities have no meaning for a model type and are refused.
        """
        if mask is not None or probability is not None:
            raise ValueError(f"{type(self).__name__}.sample takes no mask or probability")
        error: Exception | None = None
        for _ in range(SAMPLE_ATTEMPTS):
            try:
                return self.validate(sample_json(self.json_schema, self.np_random))
            except (EnvValidationError, pydantic.ValidationError) as exc:
                error = exc
            except ValueError as exc:  # a keyword the sampler cannot satisfy: no retry helps
                raise ValueError(f"cannot sample {self.name}: {exc}") from exc
        raise ValueError(
            f"cannot sample {self.name}: {SAMPLE_ATTEMPTS} random values were all rejected "
            f"(last: {error}); the type has constraints the sampler does not read"
        )

    def to_jsonable(self, sample_n: Iterable[Any]) -> list[Any]:
        """Each value as the JSON the type would send."""
        return [self._codec.encode(value) for value in sample_n]

    def from_jsonable(self, sample_n: list[Any]) -> list[Any]:
        """Each JSON value validated into the type."""
        return [self._codec.decode(value) for value in sample_n]

    def __deepcopy__(self, memo: dict[int, Any]) -> ModelSpace:
        """A copy with its own generator that shares the type's codec (it holds a lock)."""
        twin = ModelSpace.__new__(ModelSpace)
        twin.__dict__.update(self.__dict__)
        twin._np_random = copy.deepcopy(self._np_random, memo)
        return twin

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelSpace) and other.model is self.model

    def __hash__(self) -> int:
        return hash((ModelSpace, id(self.model)))

    def __repr__(self) -> str:
        return f"ModelSpace({self.name})"


def types_of(cls: type[Any]) -> tuple[Any, Any]:
    """The action and observation types of a generated client or pool class.

    Read from its generic base (``EnvPool[GridAction, GridObservation, GridState]``); a
    pool's ``CLIENT`` is read when the pool class itself names none.
    """
    for klass in cls.__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            args: Sequence[Any] = typing.get_args(base)
            if len(args) == 3 and not any(isinstance(a, typing.TypeVar) for a in args):
                return args[0], args[1]
    client = getattr(cls, "CLIENT", None)
    if client is not None and client is not cls:
        return types_of(client)
    raise TypeError(
        f"{cls.__name__} does not name its action and observation types (a generated "
        "client or pool class does); pass action_type= and observation_type="
    )
