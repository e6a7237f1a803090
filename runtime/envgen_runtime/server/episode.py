"""Refusing a step after the episode ended, the same way on both protocols.

An openenv ``Environment`` keeps accepting steps after one returned ``done``, so a client bug
(stepping on) plays on in an episode that is over. ``refusing_steps_after_done`` wraps the
env's class: once a step's observation has ``done`` set, every step raises ``EpisodeEnded``
until the next reset. The message starts with ``EPISODE_ENDED``, which is all openenv's
WebSocket app passes on (``EXECUTION_ERROR`` with the exception's text); envgen's HTTP app
answers 409 with ``code`` set. The client maps both to ``EpisodeEndedError``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ..core.errors import EPISODE_ENDED

ENDED_MESSAGE = (
    f"{EPISODE_ENDED}: the episode has ended (the last step returned done=true); "
    "reset before stepping again"
)


class EpisodeEnded(RuntimeError):
    """A step after the episode ended (raised in the server; the client's EpisodeEndedError)."""

    code = EPISODE_ENDED

    def __init__(self) -> None:
        super().__init__(ENDED_MESSAGE)


_ENDED = "_envgen_episode_ended"


def _guard_step(step: Any) -> Any:
    @functools.wraps(step)  # keeps the signature: the apps pass only what it accepts
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(self, _ENDED, False):
            raise EpisodeEnded
        observation = step(self, *args, **kwargs)
        setattr(self, _ENDED, bool(getattr(observation, "done", False)))
        return observation

    return guarded


def _guard_step_async(step: Any) -> Any:
    @functools.wraps(step)
    async def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(self, _ENDED, False):
            raise EpisodeEnded
        observation = await step(self, *args, **kwargs)
        setattr(self, _ENDED, bool(getattr(observation, "done", False)))
        return observation

    return guarded


def _clear_on_reset(reset: Any) -> Any:
    @functools.wraps(reset)
    def cleared(self: Any, *args: Any, **kwargs: Any) -> Any:
        observation = reset(self, *args, **kwargs)
        setattr(self, _ENDED, False)
        return observation

    return cleared


def _clear_on_reset_async(reset: Any) -> Any:
    @functools.wraps(reset)
    async def cleared(self: Any, *args: Any, **kwargs: Any) -> Any:
        observation = await reset(self, *args, **kwargs)
        setattr(self, _ENDED, False)
        return observation

    return cleared


def refusing_steps_after_done(
    environment_cls: type[Any], inherited: Mapping[str, Any] | None = None
) -> type[Any]:
    """``environment_cls`` whose steps raise ``EpisodeEnded`` from ``done`` until a reset.

    The async methods are wrapped only where the env defines them other than as `inherited`
    (openenv's defaults, which call the plain ones): openenv calls ``step_async``/``reset_async``
    instead of the plain ones exactly when they are overridden, the lean backend whenever the
    class has them.
    """
    inherited = inherited or {}
    namespace: dict[str, Any] = {}
    for name, wrap in (("step", _guard_step), ("reset", _clear_on_reset)):
        if callable(getattr(environment_cls, name, None)):  # an openenv Environment has both
            namespace[name] = wrap(getattr(environment_cls, name))
    for name, wrap in (("step_async", _guard_step_async), ("reset_async", _clear_on_reset_async)):
        method = getattr(environment_cls, name, None)
        if callable(method) and method is not inherited.get(name):
            namespace[name] = wrap(method)
    guarded = type(environment_cls.__name__, (environment_cls,), namespace)
    guarded.__qualname__ = environment_cls.__qualname__
    guarded.__module__ = environment_cls.__module__
    return guarded
