"""The boundary phase: every boundary action (`boundaries`) played before any random example.

Each boundary is one episode: `reset(seed)`, then the one boundary action. That is already
the minimal reproduction (the simplest action of its kind with one field changed, one step),
so nothing is left to shrink. One violation is reported per check and field; the checks found
are handed to the random search, which then looks past them.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from generator.verify.boundaries import Boundary, boundary_actions
from generator.verify.fuzz import FuzzOptions
from generator.verify.model import VerifyReport
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


def probe(player: Player, report: VerifyReport, options: FuzzOptions) -> set[str]:
    """Play every boundary action; return the checks it reported."""
    boundaries, notes = plan(player.schemas.documents["action"])
    report.notes += notes
    reported: set[str] = set()
    seen: set[tuple[str, str]] = set()
    for done, boundary in enumerate(boundaries):
        if time.monotonic() >= options.deadline:
            report.notes.append(
                f"{len(boundaries) - done} of {len(boundaries)} boundary actions not tried: "
                "the time budget was spent"
            )
            break
        report.boundaries += 1
        found = player.play([boundary.action], options.seed, frozenset())
        if found is None:
            continue
        if found.actions:  # the boundary step itself failed
            found = replace(
                found,
                message=f"at the boundary {boundary.describe()}: {found.message}",
                boundary={
                    "pointer": boundary.pointer,
                    "bound": boundary.bound,
                    "value": boundary.value,
                },
            )
        key = (found.check, boundary.pointer if found.actions else "")
        if key in seen:
            continue
        seen.add(key)
        reported.add(found.check)
        report.add(found)
    return reported
