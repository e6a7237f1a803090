"""``GymVectorEnv``: a ``gymnasium.vector.VectorEnv`` over an ``EnvPool``, next-step autoreset.

The pool steps every slot at once and, with ``auto_reset=True``, resets a slot whose
episode ended on its next step without sending that step's action: gymnasium 1.x's
``AutoresetMode.NEXT_STEP`` exactly, so the vector env builds its pool that way and only
translates (``batch``). What the pool cannot give in one step, the vector env adds: a slot
due for a reset whose server is still being replaced is waited for (``wait_ready``, at most
``recovery_timeout_s``) and reset here, so a step after a truncation always starts a new
episode when the slot can hold one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Self, Unpack

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from ..core.checks import positive
from ..core.errors import EnvgenRuntimeError, EnvValidationError
from ..pool.args import PoolOptions, seeds_for
from ..pool.slots import SlotResult
from ..pool.sync import EnvPool
from .batch import Episodes, Outcome
from .spaces import ModelSpace, types_of

__all__ = ["GymVectorEnv"]

Floats = NDArray[np.float64]
Flags = NDArray[np.bool_]

Seeds = int | Sequence[int | None] | None


class GymVectorEnv(gymnasium.vector.VectorEnv[tuple[Any, ...], Sequence[Any], NDArray[Any]]):
    """``num_envs`` env sessions of one generated pool class as a gymnasium vector env.

    ``pool`` is a generated pool class (``GridEnvPool``) or ``EnvPool`` with ``client=`` in
    ``options``; ``options`` are the pool's (provider, sessions_per_server, ...), with
    ``auto_reset`` always on. Observations are a tuple of model instances, one per slot;
    actions a sequence of models (or dicts the action type validates), one per slot;
    ``single_observation_space`` and ``single_action_space`` are ``ModelSpace`` s of the
    pool's types (``action_type`` / ``observation_type`` override them). ``reset`` takes
    ``seed`` (int ``s``: slot ``i`` gets ``s + i``; or one per slot) and ``options`` (the
    env's reset parameters, and gymnasium's ``reset_mask``). Servers start on the first
    ``reset``; ``close()`` stops them.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012

    def __init__(
        self,
        pool: type[EnvPool[Any, Any, Any]],
        num_envs: int,
        *,
        action_type: Any = None,
        observation_type: Any = None,
        recovery_timeout_s: float = 120.0,
        **options: Unpack[PoolOptions],
    ) -> None:
        positive("recovery_timeout_s", recovery_timeout_s)
        if options.get("auto_reset") is False:
            raise ValueError(
                "GymVectorEnv resets finished slots on their next step (gymnasium's next-step "
                "autoreset): auto_reset cannot be turned off"
            )
        options["auto_reset"] = True
        client = options.get("client")
        actions, observations = types_of(pool if client is None else client)
        self.single_action_space: ModelSpace = ModelSpace(action_type or actions, "action")
        self.single_observation_space: ModelSpace = ModelSpace(
            observation_type or observations, "observation"
        )
        self._pool = pool(num_envs, **options)
        self.num_envs = num_envs
        self.action_space = batch_space(self.single_action_space, num_envs)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.recovery_timeout_s = recovery_timeout_s
        self._episodes = Episodes(num_envs)

    @property
    def pool(self) -> EnvPool[Any, Any, Any]:
        """The pool underneath (its ``slots``, ``servers`` and ``replacements``)."""
        return self._pool

    def reset(
        self,
        *,
        seed: Seeds = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Start new episodes in every slot (or those ``options["reset_mask"]`` marks).

        ``seed``: None, an int ``s`` (slot ``i`` gets ``s + i``, and the vector env's own
        ``np_random`` is seeded with ``s``) or one per slot. The other ``options`` are the
        env's reset parameters, validated before anything is sent. A slot that cannot
        start an episode after its server's replacement is waited for raises its error.
        """
        kwargs = dict(options or {})
        slots = _mask(kwargs.pop("reset_mask", None), self.num_envs)
        seeds = seeds_for(seed, self.num_envs)
        if isinstance(seed, int) and not isinstance(seed, bool):
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        chosen = [seeds[slot] for slot in slots]
        results = self._pool.reset(chosen, slots=slots, **kwargs)
        self._episodes.reset_kwargs = kwargs
        self._episodes.started(slots, chosen)
        outcomes = [self._episodes.reset_outcome(result) for result in results]
        failed = [r for r, o in zip(results, outcomes, strict=True) if o is None]
        if failed:
            self._wait_ready()
            retried = self._pool.reset(
                [seeds[r.slot] for r in failed], slots=[r.slot for r in failed], **kwargs
            )
            for result in retried:
                if (outcome := self._episodes.reset_outcome(result)) is None:
                    assert result.error is not None
                    raise EnvgenRuntimeError(
                        f"slot {result.slot} could not start an episode: {result.error.message}"
                    ) from result.error
                outcomes[slots.index(result.slot)] = outcome
        infos: dict[str, Any] = {}
        for slot, outcome in zip(slots, outcomes, strict=True):
            assert outcome is not None
            infos = self._add_info(infos, outcome.info, slot)
        return tuple(self._episodes.last), infos

    def step(
        self, actions: Sequence[Any]
    ) -> tuple[
        tuple[Any, ...], NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_], dict[str, Any]
    ]:
        """Step every slot; a slot due for a reset is reset instead and its action ignored.

        Every action of a slot that is not due is validated first: one that the action
        type rejects raises ``EnvValidationError`` naming its slot, and nothing is sent.
        """
        listed = list(actions)
        if len(listed) != self.num_envs:
            raise ValueError(
                f"step needs {self.num_envs} actions (one per slot), got {len(listed)}"
            )
        due = list(self._episodes.due)
        sent = [
            action if due[slot] else self._validated(slot, action)
            for slot, action in enumerate(listed)
        ]
        results = self._pool.step(sent)
        outcomes = [self._episodes.step_outcome(result) for result in results]
        stuck = [slot for slot, outcome in enumerate(outcomes) if outcome is None]
        if stuck:
            for slot, outcome in zip(stuck, self._recover(stuck), strict=True):
                outcomes[slot] = outcome
        done = [o for o in outcomes if o is not None]
        assert len(done) == self.num_envs
        infos: dict[str, Any] = {}
        for slot, outcome in enumerate(done):
            infos = self._add_info(infos, outcome.info, slot)
        return (
            tuple(o.observation for o in done),
            np.array([o.reward for o in done], dtype=np.float64),
            np.array([o.terminated for o in done], dtype=np.bool_),
            np.array([o.truncated for o in done], dtype=np.bool_),
            infos,
        )

    def _validated(self, slot: int, action: Any) -> Any:
        try:
            return self.single_action_space.validate(action)
        except EnvValidationError as exc:
            raise EnvValidationError(
                f"the action for slot {slot}", exc.errors, hint="nothing was sent to any slot"
            ) from exc

    def _recover(self, slots: list[int]) -> list[Outcome]:
        """Reset due slots the pool could not: after waiting for server replacements."""
        self._wait_ready()
        seeds = [self._episodes.next_seed(slot) for slot in slots]
        results: list[SlotResult[Any]] = self._pool.reset(
            seeds, slots=slots, **self._episodes.reset_kwargs
        )
        return [
            self._episodes.recovered(result, seed)
            for result, seed in zip(results, seeds, strict=True)
        ]

    def _wait_ready(self) -> None:
        with contextlib.suppress(TimeoutError):  # the reset that follows reports the error
            self._pool.wait_ready(self.recovery_timeout_s)

    def close_extras(self, **kwargs: Any) -> None:
        """Stop every server and the pool's loop thread."""
        self._pool.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"GymVectorEnv({type(self._pool).__name__}, num_envs={self.num_envs})"


def _mask(mask: Any, count: int) -> list[int]:
    """The slots gymnasium's ``options["reset_mask"]`` marks (every slot when None)."""
    if mask is None:
        return list(range(count))
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"options['reset_mask'] must be a numpy array, got {type(mask)}")
    if mask.shape != (count,) or mask.dtype != np.bool_:
        raise ValueError(
            f"options['reset_mask'] must be a bool array of shape ({count},), got "
            f"{mask.dtype} {mask.shape}"
        )
    if not mask.any():
        raise ValueError("options['reset_mask'] must mark at least one env")
    return [int(index) for index in np.flatnonzero(mask)]
