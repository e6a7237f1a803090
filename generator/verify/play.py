"""One seeded episode against the server, checked reply by reply against the schemas.

`play` returns the first violation it meets (or None). Checks named in `skip` count as
passing, so that a later search can look past problems already reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from generator.diff.model import Role
from generator.verify.model import Violation
from generator.verify.schemas import CommittedSchemas, reward_problem
from generator.verify.session import Outcome, WireSession


@dataclass
class Counters:
    episodes: int = 0
    steps: int = 0


class ServerDown(Exception):
    """The server stopped answering and cannot be brought back: no further checks can run."""


def episode_id_for(seed: int) -> str:
    return f"envgen-verify-{seed}"


class Player:
    """Plays episodes on one session; `revive` restarts a dead server verify owns."""

    def __init__(
        self,
        session: WireSession,
        schemas: CommittedSchemas,
        counters: Counters,
        revive: Callable[[], str] | None,
    ) -> None:
        self.session = session
        self.schemas = schemas
        self.counters = counters
        self._revive = revive

    def play(
        self,
        actions: Sequence[Any],
        seed: int,
        skip: frozenset[str],
        reset_params: dict[str, Any] | None = None,
    ) -> Violation | None:
        """Reset with `seed` (and `reset_params`), then step `actions` until one fails a check
        or `done`."""
        self.counters.episodes += 1
        episode_id = episode_id_for(seed)
        done_so_far: list[Any] = []

        def violation(check: str, message: str, pointer: str = "", value: Any = None) -> Violation:
            role: Role = "state" if check.startswith("state.") else "observation"
            if check == "server.rejected-valid":
                role = "reset" if reset_params and not done_so_far else "action"
            return Violation(
                check=check,
                message=message,
                pointer=pointer,
                value=value,
                seed=seed,
                actions=tuple(done_so_far),
                file=self.schemas.files[role],
                reset_params=reset_params,
            )

        outcome = self.reset(seed, episode_id, reset_params)
        found = self._failed("reset", outcome, violation, skip)
        if found is not None or outcome.reply is None:
            return found
        reply = outcome.reply
        for problem in self.schemas.envelope_problems(reply):
            if "reset.observation" not in skip:
                return violation(
                    "reset.observation", problem.message, problem.pointer, problem.value
                )
        if reply.get("done") is True and "reset.done" not in skip:
            return violation("reset.done", "a reset reply says done: true", "/done", True)
        found = self._check_state(0, episode_id, violation, skip)
        if found is not None:
            return found
        for step_number, action in enumerate(actions, start=1):
            done_so_far.append(action)
            self.counters.steps += 1
            outcome = self.session.step(action)
            found = self._failed("step", outcome, violation, skip)
            if found is not None or outcome.reply is None:
                return found
            reply = outcome.reply
            for problem in self.schemas.envelope_problems(reply):
                if "step.observation" not in skip:
                    return violation(
                        "step.observation", problem.message, problem.pointer, problem.value
                    )
            bad_reward = reward_problem(reply)
            if bad_reward is not None and "step.reward" not in skip:
                return violation(
                    "step.reward", bad_reward.message, bad_reward.pointer, bad_reward.value
                )
            found = self._check_state(step_number, episode_id, violation, skip)
            if found is not None or reply.get("done") is True:
                return found
        return None

    def reset(self, seed: int, episode_id: str, params: dict[str, Any] | None) -> Outcome:
        """Reset the session; a session lost before the episode began revives the server
        (when verify owns it) and tries once more, else raises ServerDown."""
        outcome = self.session.reset(seed, episode_id, params)
        if outcome.kind != "lost":
            return outcome
        # The session dropped before the episode began: the server may be gone.
        if self._revive is None:
            raise ServerDown(f"the server stopped answering: {outcome.message}")
        self.session.base_url = self._revive()
        self.session.reopen()
        return self.session.reset(seed, episode_id, params)

    @staticmethod
    def _failed(
        op: str, outcome: Outcome, violation: Callable[..., Violation], skip: frozenset[str]
    ) -> Violation | None:
        checks = {
            "rejected": "server.rejected-valid",
            "server-error": "server.error",
            "lost": "server.session-lost",
            "protocol": f"{op}.observation",
        }
        if outcome.kind == "ok":
            return None
        check = checks[outcome.kind]
        if check in skip:
            return None
        return violation(check, f"{op}: {outcome.message}")

    def _check_state(
        self,
        steps: int,
        episode_id: str,
        violation: Callable[..., Violation],
        skip: frozenset[str],
    ) -> Violation | None:
        outcome = self.session.state()
        found = self._failed("state", outcome, violation, skip)
        if found is not None or outcome.reply is None:
            return found
        state = outcome.reply
        for problem in self.schemas.problems("state", state):
            if "state.schema" not in skip:
                return violation("state.schema", problem.message, problem.pointer, problem.value)
        missing = sorted(set(self.schemas.declared("state", state)) - set(state))
        if missing and "state.missing-field" not in skip:
            return violation(
                "state.missing-field",
                f"state() has no {missing[0]!r}, which the state schema declares",
                f"/{missing[0]}",
            )
        count = state.get("step_count")
        if isinstance(count, int) and count != steps and "state.step-count" not in skip:
            return violation(
                "state.step-count",
                f"step_count is {count} after {steps} step(s) of the episode",
                "/step_count",
                count,
            )
        kept = state.get("episode_id", episode_id) == episode_id
        if not kept and "state.episode-id" not in skip:
            return violation(
                "state.episode-id",
                f"episode_id is not {episode_id!r}, the id given to reset()",
                "/episode_id",
                state["episode_id"],
            )
        return None
