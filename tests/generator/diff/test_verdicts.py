"""The verdict table (tests/generator/diff/cases.py) in both directions, every witness checked."""

from __future__ import annotations

from pathlib import Path

import pytest
from envgen_runtime.schemadiff import Policy

from generator.diff.model import Change, Role
from generator.diff.rules import RULES
from tests.generator.diff.cases import CASES, Case
from tests.generator.diff.helpers import NO_WITNESS, assert_witness, diff, worst

DIRECTIONS = ("action", "reader")
# Breaking only where the field may be absent (documented in the rule's policy note).
CONTEXTUAL = {"default.changed", "default.removed"}


def _role(case: Case, direction: str) -> Role:
    return (
        "action"
        if direction == "action"
        else "state"
        if case.reader_role == "state"
        else "observation"
    )


def _run(tmp_path: Path, case: Case, direction: str) -> list[Change]:
    return diff(
        tmp_path, _role(case, direction), case.old, case.new, case.policy, case.code, case.files
    )


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_verdict(tmp_path: Path, case: Case, direction: str) -> None:
    changes = _run(tmp_path, case, direction)
    expected_class, expected_rules = case.expected(direction)
    shown = [(c.rule, c.change_class, c.pointer) for c in changes]
    assert worst(changes) == expected_class, shown
    found = {c.rule for c in changes}
    for rule in expected_rules:
        assert rule in found, (rule, shown)
    role = _role(case, direction)
    for change in changes:
        assert change.rule in RULES, change.rule
        needs_witness = change.rule not in NO_WITNESS or change.has_witness
        if change.change_class == "breaking" and needs_witness:
            assert_witness(role, case.old, case.new, change, case.policy, case.files)
        contextual = change.rule in CONTEXTUAL and change.change_class == "safe"
        if case.policy == Policy() and not change.rule.startswith("code.") and not contextual:
            assert change.change_class == RULES[change.rule].class_for(role), (
                f"{change.rule} is documented as {RULES[change.rule].class_for(role)} for {role}"
            )


def test_enough_cases() -> None:
    assert len(CASES) * len(DIRECTIONS) >= 120
    assert len(CASES) >= 60
