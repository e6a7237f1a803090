"""The class either backend serves: the env's own, with reset parameters validated and steps
after ``done`` refused. No openenv here: both backends use it."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping
from typing import Any

from .episode import refusing_steps_after_done

DEFAULT_MAX_CONCURRENT_ENVS = 16
ASYNC_METHODS = ("reset_async", "step_async")
OPENENV_INTERFACES = "openenv.core.env_server.interfaces"


def inherited_async_methods() -> dict[str, Any]:
    """openenv's ``Environment.reset_async``/``step_async``: defaults that call the sync
    methods inline, so an env that inherits them has no async methods of its own (openenv
    calls the async ones only when they are overridden). Read from ``sys.modules``, never
    imported: an env on openenv's base has loaded it, and without it there are none."""
    base = getattr(sys.modules.get(OPENENV_INTERFACES), "Environment", None)
    return {name: getattr(base, name) for name in ASYNC_METHODS if hasattr(base, name)}


def accepted(method: Any, kwargs: dict[str, Any]) -> Any:
    """The keyword arguments `method` accepts (all of them when it takes **kwargs)."""
    params = inspect.signature(method).parameters
    anything = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return {k: v for k, v in kwargs.items() if anything or k in params}


def serving_class(
    environment_cls: type[Any],
    reset_cls: type[Any] | None,
    inherited: Mapping[str, Any] | None = None,
) -> type[Any]:
    """`environment_cls` whose reset validates its other keyword arguments as `reset_cls`,
    and whose steps after `done` are refused (`episode.refusing_steps_after_done`, which
    `inherited` async defaults are left to).

    The env's reset gets the validated values under their wire names; invalid ones raise
    pydantic's ValidationError first (WebSocket `VALIDATION_ERROR`, HTTP 422).
    """
    environment_cls = refusing_steps_after_done(environment_cls, inherited)
    if reset_cls is None:
        return environment_cls
    own_reset = environment_cls.reset
    params_cls = reset_cls

    class WithResetParams(environment_cls):  # type: ignore[misc]
        def reset(
            self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
        ) -> Any:
            params = params_cls.model_validate(kwargs)
            fields = type(params).model_fields.items()
            values = {info.alias or name: getattr(params, name) for name, info in fields}
            given = {"seed": seed, "episode_id": episode_id, **values}
            return own_reset(self, **accepted(own_reset, given))

    WithResetParams.__name__ = WithResetParams.__qualname__ = environment_cls.__name__
    return WithResetParams
