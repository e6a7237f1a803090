"""One ``/ws`` session's protocol: a text frame in, the reply frame out, no sockets.

The rules are openenv 0.10's WebSocket handler's (``http_server.websocket_endpoint``): the
same message types, reply shapes, error codes and messages, and the env's methods called the
same way (``reset`` with the keyword arguments it accepts, ``step`` with the action alone,
``reset_async``/``step_async`` awaited when the class defines them other than as openenv's
defaults, which only call the plain ones). Sync methods run on the session's own thread
(``threads``), so a slow env blocks no other session; ``state`` is read on the loop, as
openenv does.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import to_json

from ...core.jsonbody import loads_json
from ..serving import accepted
from .messages import CloseMessage, ResetMessage, StateMessage, StepMessage
from .threads import OnLoop, Runner

INVALID_JSON = "INVALID_JSON"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
EXECUTION_ERROR = "EXECUTION_ERROR"
CAPACITY_REACHED = "CAPACITY_REACHED"
FACTORY_ERROR = "FACTORY_ERROR"
SESSION_ERROR = "SESSION_ERROR"


openenv_json = functools.partial(to_json, inf_nan_mode="null")
"""`content` as openenv's app writes JSON (a frame's ``model_dump_json``, a route's
``dump_json``): compact, pydantic's JSON (1e-7, not 1e-07), and NaN and infinities as ``null``
(a model's default ``ser_json_inf_nan``, not to_json's); to_json's other options (`exclude`)
as they are. A partial, not a function: no Python frame of its own for each reply."""


def frame(kind: str, data: dict[str, Any]) -> str:
    """A reply frame as openenv's ``model_dump_json`` writes it (``openenv_json``)."""
    return openenv_json({"type": kind, "data": data}).decode()


def error(message: str, code: str, **extra: Any) -> str:
    """An ``error`` frame: ``message`` and ``code`` first, then `extra`."""
    return frame("error", {"message": message, "code": code, **extra})


_BESIDE = {"observation": {"reward", "done"}}
"""What a payload leaves out of its observation: reward and done, which travel beside it
(a set of field names, which pydantic-core reads in a sixth fewer instructions per frame
than a dict of them)."""
_BESIDE_IN_FRAME = {"data": _BESIDE}


def observation_payload(observation: Any) -> dict[str, Any]:
    """openenv's ``serialize_observation`` (fields, then reward and done beside them, and
    metadata both inside and, when not empty, beside), with the observation model itself in
    place of its ``model_dump``: ``payload_json`` and ``observation_frame`` write it in one
    pydantic-core call, the model in JSON mode, which for a model (every generated one)
    whose serializers do not depend on the mode is what openenv's dump and then JSON give."""
    payload: dict[str, Any] = {
        "observation": observation,
        "reward": observation.reward,
        "done": observation.done,
    }
    if observation.metadata:
        payload["metadata"] = observation.metadata
    return payload


def payload_json(observation: Any) -> bytes:
    """The observation payload as openenv's HTTP routes write it."""
    return openenv_json(observation_payload(observation), exclude=_BESIDE)


def observation_frame(observation: Any) -> str:
    """The ``observation`` frame openenv's ``/ws`` sends for `observation`."""
    content = {"type": "observation", "data": observation_payload(observation)}
    return openenv_json(content, exclude=_BESIDE_IN_FRAME).decode()


def capacity_error(active: int, limit: int) -> str:
    """The frame a connection past `max_concurrent_envs` gets before it is closed."""
    message = (
        f"Server at capacity: {active}/{limit} sessions active. Cannot accept new connections."
    )
    return error(message, CAPACITY_REACHED, active_sessions=active, max_sessions=limit)


def factory_error(factory: Any) -> str:
    """The frame a connection gets when the env class fails to construct."""
    name = getattr(factory, "__name__", str(factory))
    message = f"Environment factory '{name}' failed to create instance."
    return error(message, FACTORY_ERROR, factory_name=name)


class Session:
    """One environment, the thread its sync methods run on, and the messages that drive it.

    `handle` answers a frame with the frame to send back (None: nothing); once it has set
    `closed`, the session ends after that reply. `inherited` maps ``reset_async`` and
    ``step_async`` to the defaults the env's base supplies (openenv's, which call the sync
    methods inline): inherited ones count as absent.
    """

    def __init__(
        self,
        env: Any,
        action_cls: type[Any],
        thread: Runner,
        inherited: Mapping[str, Any] | None = None,
    ) -> None:
        self.env = env
        self.action_cls = action_cls
        self.thread = thread
        self.closed = False
        self._reset_async = _own(env, "reset_async", inherited or {})
        self._step_async = _own(env, "step_async", inherited or {})
        self._validate = _validator(action_cls)
        # On the loop (``OnLoop``) a sync step is called here, without two coroutines a step.
        on_loop = isinstance(thread, OnLoop) and self._step_async is None
        self._step_here: Callable[[Any], Any] | None = env.step if on_loop else None

    async def handle(self, text: str) -> str | None:
        """The reply to one text frame; a non-object message ends the session, as in openenv."""
        try:
            message = loads_json(text)
        except json.JSONDecodeError as exc:
            return error(f"Invalid JSON: {exc}", INVALID_JSON)
        if not isinstance(message, dict):  # openenv fails on `.get` and ends the session
            attribute = f"'{type(message).__name__}' object has no attribute 'get'"
            self.closed = True
            return error(attribute, SESSION_ERROR)
        kind = message.get("type", "")
        try:
            if kind == "reset":
                data = ResetMessage(**message).data
                observation = await self._reset(data)
                return observation_frame(observation)
            if kind == "step":
                step_data = message.get("data")  # a dict and nothing beside: valid as it is
                if len(message) != 2 or not isinstance(step_data, dict):
                    step_data = StepMessage(**message).data
                action = self._validate(step_data)
                if self._step_here is not None:
                    return observation_frame(self._step_here(action))
                return observation_frame(await self._step(action))
            if kind == "state":
                StateMessage(**message)
                state = self.env.state
                data = state.model_dump() if hasattr(state, "model_dump") else dict(state or {})
                return frame("state", data)
            if kind == "close":
                CloseMessage(**message)
                self.closed = True
                return None
            return error(f"Unknown message type: {kind}", UNKNOWN_TYPE)
        except ValidationError as exc:
            return error("Invalid message", VALIDATION_ERROR, errors=exc.errors())
        except Exception as exc:
            return error(str(exc), EXECUTION_ERROR)

    async def _reset(self, data: dict[str, Any]) -> Any:
        if self._reset_async is not None:
            return await self._reset_async(**accepted(self._reset_async, data))
        return await self.thread.run(self.env.reset, **accepted(self.env.reset, data))

    async def _step(self, action: Any) -> Any:
        if self._step_async is not None:
            return await self._step_async(action)
        return await self.thread.run(self.env.step, action)

    async def close(self) -> None:
        """Release the env: its ``close``, when it has one, on its thread."""
        closing = getattr(self.env, "close", None)
        if callable(closing):
            await self.thread.run(closing)


def _validator(action_cls: type[Any]) -> Callable[[Any], Any]:
    """`action_cls.model_validate`, or when that is pydantic's own, the validator it calls
    with the same (default) arguments: a Python frame less a step."""
    own = getattr(action_cls.model_validate, "__func__", None)
    if own is BaseModel.model_validate.__func__:  # type: ignore[attr-defined]
        validate: Callable[[Any], Any] = action_cls.__pydantic_validator__.validate_python
        return validate
    return action_cls.model_validate  # type: ignore[no-any-return]


def _own(env: Any, name: str, inherited: Mapping[str, Any]) -> Any:
    """`env`'s bound method `name` when its class defines one other than `inherited`'s."""
    method = getattr(type(env), name, None)
    if not callable(method) or method is inherited.get(name):
        return None
    return getattr(env, name)
