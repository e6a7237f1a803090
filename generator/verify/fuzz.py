"""Generated episodes: actions drawn from the committed action schema, failures shrunk.

hypothesis draws a seed, a list of actions (`strategies.from_schema`) and, for an env with
reset.schema.json, the reset parameters; `Player.play` runs them as one episode, and a
violation fails the example, so hypothesis shrinks it to the shortest, simplest episode that
still fails. Each search reports one violation; the next search skips the checks already
reported, until one finds nothing or the budget runs out. With the same `--seed` (and a
deterministic server) the same examples are drawn, in the same order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as seeded
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from generator.verify.model import VerifyReport, Violation
from generator.verify.play import Player
from generator.verify.strategies import from_schema

MAX_SEED = 2**31 - 1


@dataclass(frozen=True)
class FuzzOptions:
    max_examples: int
    max_steps: int
    seed: int
    deadline: float
    """time.monotonic() after which no new episode starts."""


class _Found(Exception):
    def __init__(self, violation: Violation) -> None:
        super().__init__(violation.check)
        self.violation = violation


def action_strategy(action_schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    return from_schema(action_schema)


def fuzz(
    player: Player, report: VerifyReport, options: FuzzOptions, reported: set[str] | None = None
) -> None:
    """Search for violations until a search finds none or the time budget is spent; the checks
    in `reported` (found by the boundary phase) are looked past."""
    try:
        actions = action_strategy(player.schemas.documents["action"])
    except HypothesisException as exc:  # a schema no action can be drawn from
        report.notes.append(f"fuzzing skipped: no actions can be generated ({exc})")
        return
    params: st.SearchStrategy[dict[str, Any] | None] = st.none()
    reset_document = player.schemas.reset_document
    if reset_document is not None:
        try:
            params = from_schema(reset_document)
        except HypothesisException as exc:
            report.notes.append(f"reset parameters not drawn: none can be generated ({exc})")
    reported = set(reported or ())
    while time.monotonic() < options.deadline:
        found = _search(player, actions, params, options, frozenset(reported))
        if found is None:
            return
        report.add(found)
        reported.add(found.check)


def _search(
    player: Player,
    actions: st.SearchStrategy[Any],
    params: st.SearchStrategy[dict[str, Any] | None],
    options: FuzzOptions,
    skip: frozenset[str],
) -> Violation | None:
    @seeded(options.seed)
    @settings(
        max_examples=options.max_examples,
        database=None,
        deadline=None,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=Verbosity.quiet,
    )
    @given(
        st.lists(actions, min_size=1, max_size=options.max_steps),
        st.integers(0, MAX_SEED),
        params,
    )
    def episode(steps: list[Any], seed: int, reset_params: dict[str, Any] | None) -> None:
        if time.monotonic() >= options.deadline:
            return  # out of time: neither a new failure nor a shrink step
        violation = player.play(steps, seed, skip, reset_params)
        if violation is not None:
            raise _Found(violation)

    try:
        episode()
    except _Found as found:
        return found.violation  # hypothesis re-raises the shrunk (minimal) example last
    return None
