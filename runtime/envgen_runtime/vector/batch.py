"""What each slot's ``SlotResult`` means in gymnasium's terms: the vector env's decisions.

``Episodes`` keeps, per slot, what gymnasium's next-step autoreset needs and the pool does
not say: the last observation (the one a truncated episode ends on), whether the slot is
due for a reset on the next step (it terminated or was truncated), and which seed a reset
the vector env makes itself gets. ``reset_outcome`` and ``step_outcome`` turn one result
into one ``Outcome``; a due slot whose reset did not happen comes back as None, for the
vector env to recover (``recovered``). No I/O and no gymnasium here, so the rules can be
tested result by result.

The rules (the README's "Gymnasium vector API" says the same):

- a step's answer: reward (None as 0.0), ``terminated`` = the server's ``done``;
- a due slot's reset (the pool's auto-reset): the new episode's first observation, reward
  0.0, neither flag: gymnasium's next-step autoreset, the action not sent;
- a slot the pool lost (``SlotLostError``) or could not place (``ProviderError``):
  ``truncated``, on the slot's last observation, reward 0.0, the error in ``info``;
- an error the server answered (or any error with the episode going on): a step that did
  nothing: the last observation, reward 0.0, neither flag, the error in ``info``;
- a reset the pool made on its own in a slot not due (it moved the slot): the new episode's
  first observation, neither flag, ``info["restarted"]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import EnvgenRuntimeError
from ..pool.slots import SlotResult

__all__ = ["Episodes", "Outcome"]


@dataclass
class Outcome:
    """One slot's share of a gymnasium ``step`` (or ``reset``: the flags stay False)."""

    observation: Any
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = field(default_factory=dict)


def _info(result: SlotResult[Any]) -> dict[str, Any]:
    """Every reply key beyond observation, reward and done (``metadata``, ...), copied."""
    return {key: _copied(value) for key, value in result.extras.items()}


def _copied(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


class Episodes:
    """Per slot: its last observation, whether a reset is due, and its reset seeds.

    Seeds follow the pool's rule: after ``started`` gave slot ``i`` seed ``s``, its k-th
    reset since uses ``s + k * size`` (unseeded when ``s`` is None), whether the pool's
    auto-reset or the vector env's recovery makes it.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.last: list[Any] = [None] * size
        self.due = [False] * size
        self._seed: list[int | None] = [None] * size
        self._resets = [0] * size
        self.reset_kwargs: dict[str, Any] = {}

    def started(self, slots: Sequence[int], seeds: Sequence[int | None]) -> None:
        """``slots`` were reset with ``seeds`` (one each) by the trainer's ``reset``."""
        for slot, seed in zip(slots, seeds, strict=True):
            self._seed[slot], self._resets[slot], self.due[slot] = seed, 0, False

    def next_seed(self, slot: int) -> int | None:
        """The seed of the vector env's own next reset of ``slot``."""
        seed = self._seed[slot]
        return None if seed is None else seed + (self._resets[slot] + 1) * self.size

    def reset_outcome(self, result: SlotResult[Any]) -> Outcome | None:
        """A reset's result as the slot's first observation; None when it failed."""
        if not result.ok:
            return None
        self.last[result.slot] = result.observation
        self.due[result.slot] = False
        return Outcome(result.observation, info=_info(result))

    def recovered(self, result: SlotResult[Any], seed: int | None) -> Outcome:
        """The vector env's own reset of a due slot (seeded ``seed``), failed or not."""
        outcome = self.reset_outcome(result)
        if outcome is not None:
            self._seed[result.slot], self._resets[result.slot] = seed, 0
            return outcome
        return self._ended(result)

    def step_outcome(self, result: SlotResult[Any]) -> Outcome | None:
        """One step's result for its slot; None for a due slot the pool did not reset."""
        slot = result.slot
        if self.due[slot]:
            if result.ok and result.reset:
                self._resets[slot] += 1
                return self.reset_outcome(result)
            return None
        if result.ok and result.reset:  # the pool restarted the episode (moved the slot)
            self._resets[slot] += 1
            outcome = self.reset_outcome(result)
            assert outcome is not None
            outcome.info["restarted"] = True
            return outcome
        if result.ok:
            self.last[slot] = result.observation
            self.due[slot] = result.done
            reward = 0.0 if result.reward is None else float(result.reward)
            return Outcome(result.observation, reward, result.done, False, _info(result))
        if result.done:  # the episode is gone (SlotLostError, ProviderError)
            return self._ended(result)
        assert result.error is not None
        return Outcome(self.last[slot], info={"error": result.error})  # nothing happened

    def _ended(self, result: SlotResult[Any]) -> Outcome:
        """``result``'s slot lost its episode: truncated, on its last observation."""
        self.due[result.slot] = True
        error: EnvgenRuntimeError | None = result.error
        return Outcome(self.last[result.slot], truncated=True, info={"error": error})
