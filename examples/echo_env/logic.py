"""Echo logic: the reply is the message; the reward grows with its length."""

from __future__ import annotations

from typing import Any

from examples._logic import EpisodeLogic, Outcome

REWARD_PER_CHAR = 0.1


class EchoLogic(EpisodeLogic):
    """Never ends on its own: the plainest fixture for a client's string handling."""

    def _reset(self, seed: int) -> Outcome:
        return Outcome({"echoed_message": "", "message_length": 0})

    def _step(self, action: dict[str, Any]) -> Outcome:
        message = str(action["message"])
        return Outcome(
            {"echoed_message": message, "message_length": len(message)},
            reward=len(message) * REWARD_PER_CHAR,
        )
