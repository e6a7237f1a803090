"""Typed tool calls on a pool: one call per slot, stepped together, one outcome per slot.

A generated tool env's pool has ``tools`` (``<Prefix>PoolTools`` over ``PoolToolbox``;
asyncio: ``Async<Prefix>PoolTools`` over ``AsyncPoolToolbox``). ``pool.tools.<tool>(...)``
calls that tool with the same arguments in every slot; ``pool.tools.call(calls)`` takes one
typed call (``<Tool>Call``, e.g. from ``parse_call``) per slot. Either is one pool ``step``
(one lock-step round) of the encoded ``call_tool`` actions, so the pool's rules hold as for
any step: auto-reset, lost servers and sessions kept to their slot, ``CAPACITY_REACHED``
moves. Each slot's outcome is a ``SlotToolResult``: the tool's typed result (``value``) or
the error of that slot (``ToolError`` when the tool failed, the ``SlotResult``'s error when
the step did, ``ToolCallDroppedError`` when the pool reset the slot instead of calling),
with the step itself (reward, done, observation) as ``step``.

Arguments are validated before anything is sent, in every slot: one bad argument raises
``EnvValidationError`` (for ``call``, its field path led by the slot's index) and no slot
steps, because a pool ``step`` needs an action for every slot and a half-sent round would
leave the slots' episodes out of step with what the trainer asked for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from ..client.tools import ActionMaker, ToolSpec
from ..core.errors import EnvgenRuntimeError, EnvValidationError, ProtocolError, ValidationIssue
from ..core.text import quote
from .slots import SlotResult

if TYPE_CHECKING:
    from .aio import AsyncEnvPool
    from .sync import EnvPool

__all__ = [
    "AsyncPoolToolbox",
    "PoolToolbox",
    "SlotToolResult",
    "ToolCallDroppedError",
    "call_actions",
    "read_outcomes",
    "same_call_actions",
]

ResT = TypeVar("ResT")

Calls = Sequence[tuple[ToolSpec[Any], Any]]
"""One ``(tool spec, arguments model)`` per slot, in slot order."""


class ToolCallDroppedError(EnvgenRuntimeError):
    """A slot's tool call was not answered: the pool reset the slot instead of calling.

    The slot's episode had ended (``auto_reset``) or its session had been lost (the step
    after a ``SlotLostError``); the outcome's ``step`` holds the new episode's first
    observation. Call again to run the tool in the new episode.
    """

    def __init__(self, message: str, *, slot: int, tool: str) -> None:
        super().__init__(message)
        self.slot = slot
        self.tool = tool


@dataclass(frozen=True)
class SlotToolResult(Generic[ResT]):
    """One slot's outcome of a pool tool call.

    ``value`` is the tool's typed result when ``error`` is None. ``error`` is a
    ``ToolError`` when the tool failed (the session goes on), the step's own error when the
    step failed (``SlotLostError``, a ``ServerError``, ...), or ``ToolCallDroppedError``
    when the pool reset the slot instead of calling. ``step`` is the slot's ``SlotResult``
    of the round (``reward``, ``done``, the observation as decoded, ``reset``).
    """

    slot: int
    tool: str
    value: ResT | None
    error: EnvgenRuntimeError | None
    step: SlotResult[Any]

    @property
    def ok(self) -> bool:
        """True when the tool answered with a result (``value`` is set)."""
        return self.error is None

    @property
    def reward(self) -> float | None:
        """The step's reward."""
        return self.step.reward

    @property
    def done(self) -> bool:
        """Whether the slot's episode ended with this step."""
        return self.step.done

    def unwrap(self) -> ResT:
        """The typed result; raises the slot's error when there is one."""
        if self.error is not None:
            raise self.error
        return cast("ResT", self.value)


def same_call_actions(
    spec: ToolSpec[Any], arguments: Mapping[str, Any], action: ActionMaker, size: int
) -> list[Any]:
    """``size`` step actions calling ``spec`` with ``arguments``, validated once first
    (``EnvValidationError`` naming the argument; nothing sent)."""
    return [action(spec.name, spec.encode(arguments))] * size


def call_actions(calls: Calls, action: ActionMaker, size: int) -> list[Any]:
    """One step action per slot from its ``(spec, arguments model)``, every one validated
    before any is returned: ``EnvValidationError`` led by the slot's index when one is bad."""
    if len(calls) != size:
        raise ValueError(f"tools.call needs {size} calls (one per slot), got {len(calls)}")
    actions: list[Any] = []
    for index, (spec, arguments) in enumerate(calls):
        try:
            payload = spec.arguments.encode(arguments)
        except EnvValidationError as exc:
            raise _in_slot(exc, index) from exc
        actions.append(action(spec.name, payload))
    return actions


def _in_slot(exc: EnvValidationError, index: int) -> EnvValidationError:
    issues = [
        ValidationIssue((index, *issue.loc), issue.message, issue.type, issue.input_repr)
        for issue in exc.errors
    ]
    hint = f"the call for slot {index}; nothing was sent to any slot"
    return EnvValidationError(exc.role, issues, hint=hint)


def read_outcomes(
    specs: Sequence[ToolSpec[Any]], steps: Sequence[SlotResult[Any]], *, strict: bool = False
) -> list[SlotToolResult[Any]]:
    """Each slot's outcome from its tool's spec and its step result, in slot order."""
    return [_outcome(spec, step, strict) for spec, step in zip(specs, steps, strict=True)]


def _outcome(spec: ToolSpec[ResT], step: SlotResult[Any], strict: bool) -> SlotToolResult[ResT]:
    if step.error is not None:
        return SlotToolResult(step.slot, spec.name, None, step.error, step)
    if step.action_dropped:
        message = (
            f"tool {spec.name!r} was not called in slot {step.slot}: the pool reset the slot "
            "instead (its episode had ended under auto_reset, or its session was lost); "
            "the step holds the new episode's first observation: call again"
        )
        error = ToolCallDroppedError(message, slot=step.slot, tool=spec.name)
        return SlotToolResult(step.slot, spec.name, None, error, step)
    try:
        value = spec.read({"observation": _observation_object(step.observation)}, strict=strict)
    except EnvgenRuntimeError as exc:  # ToolError, or a reply that is not a tool's answer
        return SlotToolResult(step.slot, spec.name, None, exc, step)
    return SlotToolResult(step.slot, spec.name, value, None, step)


def _observation_object(observation: Any) -> Mapping[str, Any]:
    """The observation under its wire names, as ``ToolSpec.read`` reads a reply's."""
    if isinstance(observation, Mapping):
        return observation
    dump = getattr(observation, "model_dump", None)  # the generated pydantic model
    if dump is None:
        raise ProtocolError(
            "a tool call's observation is neither an object nor a model",
            received=quote(repr(observation)),
        )
    dumped: Mapping[str, Any] = dump(by_alias=True, warnings=False)
    return dumped


class PoolToolbox:
    """Base of a generated blocking pool's ``tools``: one typed method per tool."""

    def __init__(self, pool: EnvPool[Any, Any, Any], action: ActionMaker) -> None:
        self._pool = pool
        self._action = action

    def _call(
        self, spec: ToolSpec[ResT], arguments: Mapping[str, Any]
    ) -> list[SlotToolResult[ResT]]:
        actions = same_call_actions(spec, arguments, self._action, self._pool.size)
        steps = self._pool.step(actions)
        strict = self._pool.strict
        return [_outcome(spec, step, strict) for step in steps]

    def _call_each(self, calls: Calls) -> list[SlotToolResult[Any]]:
        actions = call_actions(calls, self._action, self._pool.size)
        steps = self._pool.step(actions)
        return read_outcomes([s for s, _ in calls], steps, strict=self._pool.strict)


class AsyncPoolToolbox:
    """Base of a generated asyncio pool's ``tools``: the methods of ``PoolToolbox``, awaited."""

    def __init__(self, pool: AsyncEnvPool[Any, Any, Any], action: ActionMaker) -> None:
        self._pool = pool
        self._action = action

    async def _call(
        self, spec: ToolSpec[ResT], arguments: Mapping[str, Any]
    ) -> list[SlotToolResult[ResT]]:
        actions = same_call_actions(spec, arguments, self._action, self._pool.size)
        steps = await self._pool.step(actions)
        strict = self._pool.strict
        return [_outcome(spec, step, strict) for step in steps]

    async def _call_each(self, calls: Calls) -> list[SlotToolResult[Any]]:
        actions = call_actions(calls, self._action, self._pool.size)
        steps = await self._pool.step(actions)
        return read_outcomes([s for s, _ in calls], steps, strict=self._pool.strict)
