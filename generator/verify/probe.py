"""The boundary phase: every boundary action (`boundaries`) played before any random example.

Each boundary is one episode: `reset(seed)`, then the one boundary action: the simplest
action of its kind with one field changed, one step. When it fails, the simplest action alone
is played too: if that fails the same way, the bound has nothing to do with it and the shorter
reproduction (no boundary named) is reported, once, and later boundaries look past that check.
Otherwise the boundary is named. One violation is reported per check and field; the checks
found are handed to the random search, which then looks past them.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
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


def probe(player: Player, report: VerifyReport, options: FuzzOptions) -> set[str]:
    """Play every boundary action; return the checks it reported."""
    boundaries, notes = plan(player.schemas.documents["action"])
    report.notes += notes
    seen: set[tuple[str, str]] = set()
    plain: dict[str, Violation | None] = {}
    """What the simplest action of a kind alone comes to, by its JSON."""
    unbound: set[str] = set()
    """Checks the simplest actions fail as well: no bound's doing."""
    for done, boundary in enumerate(boundaries):
        if time.monotonic() >= options.deadline:
            report.notes.append(
                f"{len(boundaries) - done} of {len(boundaries)} boundary actions not tried: "
                "the time budget was spent"
            )
            break
        report.boundaries += 1
        found = player.play([boundary.action], options.seed, frozenset(unbound))
        if found is not None and found.actions:  # the boundary step itself failed
            key = json.dumps(boundary.base, sort_keys=True, default=repr)
            if key not in plain:
                plain[key] = player.play([boundary.base], options.seed, frozenset(unbound))
            alone = plain[key]
            if alone is not None and alone.check == found.check:
                found = alone
                unbound.add(found.check)
            else:
                found = _named(found, boundary)
        if found is None:
            continue
        where = (found.check, boundary.pointer if found.boundary is not None else "")
        if where not in seen:
            seen.add(where)
            report.add(found)
    return {check for check, _ in seen}


def _named(found: Violation, boundary: Boundary) -> Violation:
    return replace(
        found,
        message=f"at the boundary {boundary.describe()}: {found.message}",
        boundary={"pointer": boundary.pointer, "bound": boundary.bound, "value": boundary.value},
    )
