"""Negative cases: actions that break the action schema must be refused, harmlessly.

Each case starts from the simplest valid action (shrunk by hypothesis) and breaks one rule of
the branch it belongs to: a value just past a bound (one past the last value the boundary
phase tries), a value of the wrong type, an unknown union
tag, a required field left out, an unknown field where none is allowed. A case the committed
schema would still accept is dropped. The server must answer each with a validation error
(HTTP 422, WebSocket VALIDATION_ERROR) and still play a new episode afterwards.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from generator.verify.boundaries import numeric_bounds
from generator.verify.model import VerifyReport, Violation
from generator.verify.play import Player
from generator.verify.schemas import branches, resolve, validator_for
from generator.verify.strategies import MISSING, simplest
from generator.verify.textvalues import string_of_length

UNKNOWN_TAG = "envgen-verify-unknown-tag"
UNKNOWN_FIELD = "envgen_verify_unknown_field"
MAX_CASES = 40


@dataclass(frozen=True)
class Case:
    """One invalid action and what makes it invalid."""

    action: dict[str, Any]
    pointer: str
    value: Any
    why: str


def _types(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    if "enum" in schema or "const" in schema:
        values = schema.get("enum", [schema.get("const")])
        return {type(v).__name__ for v in values}
    return set()


_WRONG_TYPE = {
    "integer": "not a number",
    "number": "not a number",
    "string": 12345,
    "boolean": "not a boolean",
    "array": {"not": "an array"},
    "object": ["not", "an", "object"],
}


def _past(schema: dict[str, Any], integer: bool) -> Iterator[tuple[Any, str]]:
    """One past each numeric bound: the last allowed value (`numeric_bounds`) and one step out
    (+-1 for an integer, the next multiple, or the next representable float)."""
    step = schema.get("multipleOf")
    for name, last in numeric_bounds(schema, integer):
        up = not name.startswith(("minimum", "exclusiveMinimum"))
        if isinstance(step, int | float) and not isinstance(step, bool) and step > 0:
            value = last + step if up else last - step
        elif integer:
            value = last + 1 if up else last - 1
        else:
            value = math.nextafter(last, math.inf if up else -math.inf)
        yield value, f"one past its {name} {last}"


def _value_cases(
    name: str, schema: dict[str, Any], defs: dict[str, Any]
) -> Iterator[tuple[Any, str]]:
    """Values that break the property schema `schema`, with why: where a bound is broken, the
    value just past it (a string one character too long, an array one item too short)."""
    kinds = _types(schema)
    for kind in sorted(kinds):
        if kind in _WRONG_TYPE:
            yield _WRONG_TYPE[kind], f"{name}: a value of the wrong type (not {kind})"
    if kinds & {"integer", "number"}:
        for value, why in _past(schema, integer="number" not in kinds):
            yield value, f"{name}: {why}"
    for key, delta in (("maxLength", 1), ("minLength", -1)):
        bound = schema.get(key)
        if isinstance(bound, int) and bound + delta >= 0:
            text = string_of_length(schema, bound + delta)[0] or "a" * (bound + delta)
            yield text, f"{name}: {bound + delta} characters, one past its {key} {bound}"
    item = None
    for key, delta in (("maxItems", 1), ("minItems", -1)):
        bound = schema.get(key)
        if isinstance(bound, int) and bound + delta >= 0:
            if item is None:
                found = simplest(schema.get("items", True), defs)
                item = [None if found is MISSING else found]
            yield (
                item * (bound + delta),
                f"{name}: {bound + delta} items, one past its {key} {bound}",
            )
    if isinstance(schema.get("enum"), list):
        yield "envgen-verify-not-in-enum", f"{name}: a value outside its enum"


def cases(action: dict[str, Any], action_schema: dict[str, Any]) -> list[Case]:
    """Invalid variants of the valid `action`, at most MAX_CASES, in a stable order."""
    defs = action_schema.get("$defs", {})
    branch = next(
        (
            b
            for b in branches(action_schema, defs)
            if validator_for({**b, "$defs": defs}).is_valid(action)
        ),
        {},
    )
    props: dict[str, Any] = branch.get("properties", {})
    found: list[Case] = []

    def variant(pointer: str, value: Any, why: str, drop: str | None = None) -> None:
        mutated = copy.deepcopy(action)
        if drop is not None:
            mutated.pop(drop, None)
        else:
            mutated[pointer.lstrip("/")] = value
        found.append(Case(mutated, pointer, value, why))

    for name in sorted(props):
        prop = resolve(props[name], defs)
        if not isinstance(prop, dict):
            continue
        if "const" in prop:
            variant(f"/{name}", UNKNOWN_TAG, f"{name}: a tag no union member has")
            continue
        for value, why in _value_cases(name, prop, defs):
            variant(f"/{name}", value, why)
    for name in sorted(branch.get("required", [])):
        if name in action:
            variant(f"/{name}", None, f"{name}: a required field left out", drop=name)
    if branch.get("additionalProperties") is False:
        variant(f"/{UNKNOWN_FIELD}", 1, "an unknown field where none is allowed")
    return found[:MAX_CASES]


def simplest_action(action_schema: dict[str, Any]) -> dict[str, Any] | None:
    """The minimal valid action hypothesis finds, or None when none can be drawn."""
    value = simplest(action_schema, action_schema.get("$defs", {}))
    return value if isinstance(value, dict) else None


def check_negative(player: Player, report: VerifyReport, seed: int) -> None:
    """Send every case after a reset; each must be refused and leave the server usable."""
    schemas = player.schemas
    action_schema = schemas.documents["action"]
    base = simplest_action(action_schema)
    if base is None:
        report.notes.append("negative cases skipped: no valid action could be drawn")
        return
    for case in cases(base, action_schema):
        if not schemas.problems("action", case.action):
            continue  # the committed schema accepts it: not a negative case
        report.negative_cases += 1
        found = _check_case(player, case, seed)
        if found is not None:
            report.add(found)


def _check_case(player: Player, case: Case, seed: int) -> Violation | None:
    session = player.session
    file = player.schemas.files["action"]

    def violation(check: str, message: str) -> Violation:
        return Violation(
            check=check,
            message=f"{case.why}: {message}",
            pointer=case.pointer,
            value=case.value,
            seed=seed,
            actions=(case.action,),
            file=file,
        )

    start = session.reset(seed, None)
    if start.kind != "ok":
        return None  # the positive checks report a server that cannot reset
    outcome = session.step(case.action)
    found: Violation | None = None
    if outcome.kind == "ok":
        found = violation("negative.accepted", "the server accepted it")
    elif outcome.kind in ("server-error", "protocol"):
        found = violation(
            "negative.server-error", f"expected a validation error, got: {outcome.message}"
        )
    after = session.reset(seed, None)
    if after.kind == "lost":  # the session went with the bad action; a new one must work
        session.reopen()
        after = session.reset(seed, None)
    if found is None and after.kind != "ok":
        found = violation("negative.unusable", f"a new episode failed: {after.message}")
    return found
