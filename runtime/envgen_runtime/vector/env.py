"""``GymEnv``: one generated client as a ``gymnasium.Env``, for code (and checkers) that want one.

The adapter is thin: ``reset`` and ``step`` call the client and put its ``StepResult`` in
gymnasium's shape (``terminated`` is the server's ``done``; the wire has no truncation, so
``truncated`` is always False), and the spaces are ``ModelSpace`` s of the client's types.
Seeds follow gymnasium's rule for ``Env.reset``: a seed is sent as given and seeds the env's
``np_random``; a reset without one sends a seed drawn from ``np_random``, so episodes after
a seeded reset replay too. Errors are the client's own (``SessionLostError``, ...): one env
has no other slots to keep going.
"""

from __future__ import annotations

from typing import Any

import gymnasium

from ..client.sync import EnvClient
from .spaces import ModelSpace, types_of

__all__ = ["GymEnv"]

_SEED_BOUND = 2**31  # seeds drawn for unseeded resets: non-negative 32-bit ints, as servers take


class GymEnv(gymnasium.Env[Any, Any]):
    """A generated blocking client (``GridEnv(...)``, ``EchoEnv.from_local_process()``) as an Env.

    ``action_type`` / ``observation_type`` override the types read from the client's class.
    ``reset(options=...)`` passes the env's reset parameters. ``close()`` closes the client
    (and so stops a server it started).
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        client: EnvClient[Any, Any, Any],
        *,
        action_type: Any = None,
        observation_type: Any = None,
    ) -> None:
        actions, observations = types_of(type(client))
        self.client = client
        self.action_space: ModelSpace = ModelSpace(action_type or actions, "action")
        self.observation_space: ModelSpace = ModelSpace(
            observation_type or observations, "observation"
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start an episode; ``options`` are the env's reset parameters."""
        super().reset(seed=seed)
        if seed is None:
            seed = int(self.np_random.integers(_SEED_BOUND))
        result = self.client.reset(seed=seed, **(options or {}))
        return result.observation, dict(result.extra)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """One step; ``action`` a model instance or a value the action type validates."""
        result = self.client.step(self.action_space.validate(action))
        reward = 0.0 if result.reward is None else float(result.reward)
        return result.observation, reward, result.done, False, dict(result.extra)

    def close(self) -> None:
        """Close the client (stopping the server it started, if any)."""
        self.client.close()
