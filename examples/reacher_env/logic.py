"""Reacher logic: torque-driven two-link arm with simple damped Euler dynamics.

Not a physics engine: just enough continuous control to produce bounded float arrays.
Reward is minus the fingertip's distance to the target; the episode ends after `MAX_STEPS`
steps or once the fingertip is within `REACHED` of the target.
"""

from __future__ import annotations

import math
import random
from typing import Any

from examples._logic import EpisodeError, EpisodeLogic, Outcome

LINK_LENGTHS = (1.0, 1.0)
DT = 0.1
GAIN = 4.0
DAMPING = 0.5
MAX_VELOCITY = 5.0
MAX_STEPS = 50
REACHED = 0.05
TARGET_RADIUS = (0.3, 1.8)


def _wrap(angle: float) -> float:
    """Map an angle into [-pi, pi]."""
    return math.remainder(angle, math.tau)


def _clip(value: float, bound: float) -> float:
    return max(-bound, min(bound, value))


class ReacherLogic(EpisodeLogic):
    """All state is floats updated in a fixed order, so a replay is bit-for-bit identical."""

    def _reset(self, seed: int) -> Outcome:
        rng = random.Random(seed)
        self.angles = [rng.uniform(-0.1, 0.1), rng.uniform(-0.1, 0.1)]
        self.velocities = [0.0, 0.0]
        radius = rng.uniform(*TARGET_RADIUS)
        bearing = rng.uniform(-math.pi, math.pi)
        self.target = [radius * math.cos(bearing), radius * math.sin(bearing)]
        return self._outcome(reward=None, done=False)

    def _step(self, action: dict[str, Any]) -> Outcome:
        torques = action.get("torques")
        if (
            not isinstance(torques, list | tuple)
            or len(torques) != 2
            or not all(
                isinstance(t, int | float) and not isinstance(t, bool) and -1.0 <= t <= 1.0
                for t in torques
            )
        ):
            raise EpisodeError("torques must be two numbers between -1 and 1")
        for joint, torque in enumerate(torques):
            velocity = self.velocities[joint]
            velocity += (GAIN * torque - DAMPING * velocity) * DT
            self.velocities[joint] = _clip(velocity, MAX_VELOCITY)
            self.angles[joint] = _wrap(self.angles[joint] + self.velocities[joint] * DT)
        distance = self._distance()
        done = distance < REACHED or self.step_count >= MAX_STEPS
        return self._outcome(reward=-distance, done=done)

    def fingertip(self) -> list[float]:
        """Forward kinematics of the two links."""
        a1 = self.angles[0]
        a2 = a1 + self.angles[1]
        l1, l2 = LINK_LENGTHS
        return [l1 * math.cos(a1) + l2 * math.cos(a2), l1 * math.sin(a1) + l2 * math.sin(a2)]

    def _distance(self) -> float:
        tip = self.fingertip()
        return math.hypot(tip[0] - self.target[0], tip[1] - self.target[1])

    def _outcome(self, reward: float | None, done: bool) -> Outcome:
        return Outcome(
            {
                "joint_angles": list(self.angles),
                "joint_velocities": list(self.velocities),
                "target": list(self.target),
                "fingertip": self.fingertip(),
                "distance": self._distance(),
            },
            reward=reward,
            done=done,
        )

    def _state(self) -> dict[str, Any]:
        return {"target": list(self.target), "max_steps": MAX_STEPS}
