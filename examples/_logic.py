"""What every example's logic shares: the step outcome and episode bookkeeping.

Kept free of any server framework so that the logic can be tested and reused on its own, and
so that both server flavours drive exactly the same code.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

DEFAULT_SEED = 0


@dataclass(frozen=True)
class Outcome:
    """One reply's content, before a framework wraps it.

    `observation` is keyed by Python field names; the servers map them to wire names.
    """

    observation: dict[str, Any]
    reward: float | None = None
    done: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


class EpisodeError(ValueError):
    """An action the logic refuses (bad value, or a step after the episode ended)."""


class EpisodeLogic(ABC):
    """Episode id, step count and the end-of-episode guard, common to every example.

    The constructor starts an episode with the default seed so that a client may step right
    after connecting, as OpenEnv clients sometimes do.
    """

    def __init__(self) -> None:
        self.episode_id: str | None = None
        self.step_count = 0
        self.done = False
        self.reset()

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **options: Any
    ) -> Outcome:
        """Start an episode; a missing seed means DEFAULT_SEED, so replays always match.

        `options` are the env's reset parameters (reset.schema.json), already validated.
        """
        self.episode_id = episode_id if episode_id is not None else uuid.uuid4().hex
        self.step_count = 0
        self.done = False
        return self._reset(DEFAULT_SEED if seed is None else seed, **options)

    def step(self, action: dict[str, Any]) -> Outcome:
        """Apply one action (Python field names); refuse it once the episode is over."""
        if self.done:
            raise EpisodeError("the episode is over; reset before stepping again")
        self.step_count += 1
        outcome = self._step(action)
        self.done = outcome.done
        return outcome

    def state(self) -> dict[str, Any]:
        """Base state fields plus the environment's own."""
        return {"episode_id": self.episode_id, "step_count": self.step_count, **self._state()}

    @abstractmethod
    def _reset(self, seed: int) -> Outcome: ...

    @abstractmethod
    def _step(self, action: dict[str, Any]) -> Outcome: ...

    def _state(self) -> dict[str, Any]:
        return {}
