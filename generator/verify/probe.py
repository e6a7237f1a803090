"""The boundary phase: every boundary (`boundaries`) played before any random example.

Each boundary is one episode: `reset(seed)`, then the one boundary action (the simplest action
of its kind with one field changed). The reset parameters' boundaries (an env with
reset.schema.json) are episodes too: `reset(seed, params)` with one parameter at a bound, then
the simplest action. When one fails, its plain episode (no field at a bound) is played too: if
that fails the same way, the bound has nothing to do with it and the plain reproduction is
reported, once, and later boundaries look past that check. Otherwise the boundary is named.
One violation is reported per check and field; the checks found are handed to the random
search, which then looks past them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from typing import Any

from generator.verify.boundaries import Boundary, boundary_actions
from generator.verify.fuzz import FuzzOptions
from generator.verify.model import VerifyReport, Violation
from generator.verify.play import Player
from generator.verify.schemas import validator_for
from generator.verify.strategies import simplest


def plan(action_schema: dict[str, Any]) -> tuple[list[Boundary], list[str]]:
    """The boundary actions of `action_schema`, and notes on the bounds that cannot be built."""
    defs = action_schema.get("$defs", {})
    whole = validator_for(action_schema)
    found = boundary_actions(
        action_schema,
        simplest=lambda schema: simplest(schema, defs),
        is_valid=whole.is_valid,
        fits=lambda schema, value: validator_for({**schema, "$defs": defs}).is_valid(value),
    )
    return found.boundaries, found.notes


@dataclass(frozen=True)
class _Episode:
    """What one boundary episode sends: its steps and its reset parameters."""

    steps: tuple[Any, ...]
    params: dict[str, Any] | None


class _Probe:
    """The boundary episodes of one run, each failure compared with its plain episode."""

    def __init__(self, player: Player, report: VerifyReport, options: FuzzOptions) -> None:
        self.player, self.report, self.options = player, report, options
        self.seen: set[tuple[str, str]] = set()
        self.plain: dict[str, Violation | None] = {}
        """What each plain episode (no field at a bound) comes to, by its JSON."""
        self.unbound: set[str] = set()
        """Checks a plain episode fails as well: no bound's doing."""

    def run(self, role: str, boundary: Boundary, episode: _Episode, plain: _Episode) -> None:
        skip = frozenset(self.unbound)
        seed = self.options.seed
        self.report.boundaries += 1
        found = self.player.play(episode.steps, seed, skip, episode.params)
        if found is None:
            return
        key = json.dumps([plain.steps, plain.params], sort_keys=True, default=repr)
        if key not in self.plain:
            self.plain[key] = self.player.play(plain.steps, seed, skip, plain.params)
        alone = self.plain[key]
        if alone is not None and alone.check == found.check:
            found = alone
            self.unbound.add(found.check)
        else:
            found = _named(found, boundary, role)
        where = (found.check, f"{role}:{boundary.pointer}" if found.boundary else "")
        if where not in self.seen:
            self.seen.add(where)
            self.report.add(found)


def probe(player: Player, report: VerifyReport, options: FuzzOptions) -> set[str]:
    """Play every boundary action, then every boundary of the reset parameters (with the
    simplest action as the one step); return the checks reported."""
    actions, notes = plan(player.schemas.documents["action"])
    report.notes += notes
    todo: list[tuple[str, Boundary, _Episode, _Episode]] = [
        ("action", b, _Episode((b.action,), None), _Episode((b.base,), None)) for b in actions
    ]
    reset_document = player.schemas.reset_document
    if reset_document is not None:
        params, notes = plan(reset_document)
        report.notes += [f"reset parameters: {note}" for note in notes]
        step = (actions[0].base,) if actions else ()
        todo += [("reset", b, _Episode(step, b.action), _Episode(step, b.base)) for b in params]
    probing = _Probe(player, report, options)
    for done, (role, boundary, episode, plain) in enumerate(todo):
        if time.monotonic() >= options.deadline:
            report.notes.append(
                f"{len(todo) - done} of {len(todo)} boundary episodes not tried: "
                "the time budget was spent"
            )
            break
        probing.run(role, boundary, episode, plain)
    return {check for check, _ in probing.seen}


def _named(found: Violation, boundary: Boundary, role: str) -> Violation:
    of = "" if role == "action" else f"{role} "
    return replace(
        found,
        message=f"at the {of}boundary {boundary.describe()}: {found.message}",
        boundary={
            "role": role,
            "pointer": boundary.pointer,
            "bound": boundary.bound,
            "value": boundary.value,
        },
    )
