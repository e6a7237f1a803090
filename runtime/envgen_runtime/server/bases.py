"""The wire bases of generated server models and env classes, without openenv.

openenv 0.10's ``Action``, ``Observation`` and ``State`` fix the fields every env's messages
carry (``metadata``; ``done``, ``reward``; ``episode_id``, ``step_count``) and their
published schema. They are restated here, field for field, so that serving on the lean
backend needs neither openenv nor the gradio it imports; ``tests/runtime/server`` checks that
each one's config and JSON Schema equal openenv's, so the restatement cannot drift.
``Environment`` is the duck-typed interface both backends serve: ``reset``, ``step``,
``state``, optionally ``reset_async``/``step_async`` and ``close``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field


class Action(BaseModel):
    """Base class for all environment actions.

    All action subclasses should inherit from this base class.
    Uses Pydantic for automatic validation and serialization.
    """

    model_config = ConfigDict(
        extra="forbid",
        validate_assignment=True,
        arbitrary_types_allowed=True,
    )

    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Additional metadata for the action"
    )


class Observation(BaseModel):
    """Base class for all environment observations.

    All observation subclasses should inherit from this base class.
    Uses Pydantic for automatic validation and serialization.
    """

    model_config = ConfigDict(
        extra="forbid",
        validate_assignment=True,
        arbitrary_types_allowed=True,
    )

    done: bool = Field(default=False, description="Whether the episode has terminated")
    reward: bool | int | float | None = Field(
        default=None, description="Reward signal from the last action"
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Additional metadata for the observation"
    )


class State(BaseModel):
    """Base class for environment state.

    Represents internal environment state, separate from observations.
    """

    model_config = ConfigDict(
        extra="allow",
        validate_assignment=True,
        arbitrary_types_allowed=True,
    )

    episode_id: str | None = Field(
        default=None, description="Unique identifier for the current episode"
    )
    step_count: int = Field(
        default=0,
        ge=0,
        description="Number of steps taken in the current episode",
    )


class Environment:
    """Base of an env class either backend serves; subclass it and override all three.

    The lean backend calls ``reset_async``/``step_async`` when a class defines them and
    ``close`` when it has one; the openenv backend mixes openenv's ``Environment`` in behind
    this class, so the same class serves there unchanged.
    """

    SUPPORTS_CONCURRENT_SESSIONS: ClassVar[bool] = False
    RUNS_ON_EVENT_LOOP: ClassVar[bool] = False
    """Set True when the env never blocks (its steps are pure computation, no I/O, sleeps or
    locks): the lean backend then calls its sync methods on the event loop, saving a thread
    round trip per call (most of a small env's server CPU per step); openenv's app ignores it."""

    def __init__(self) -> None:
        super().__init__()  # openenv's Environment.__init__ when the openenv backend mixes it in

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> Any:
        """Start an episode; returns its first observation."""
        raise NotImplementedError(f"{type(self).__name__} must define reset")

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Any:
        """Apply one action; returns the observation."""
        raise NotImplementedError(f"{type(self).__name__} must define step")

    @property
    def state(self) -> Any:
        """The episode's state model."""
        raise NotImplementedError(f"{type(self).__name__} must define state")
