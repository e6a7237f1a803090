"""Property-based checks of the verdicts.

For every change classed safe on the wire, values drawn from the writer's schema validate
against the reader's (as its policy reads it). For every breaking change, the witness is
valid for the writer and rejected by the reader. The second group mutates schemas at random
and checks the same two properties on whatever the diff says.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from envgen_runtime.schemadiff import Policy
from envgen_runtime.schemadiff.validation import formats
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from generator.diff.model import Change, Role
from tests.generator.diff.cases import BASE, CASES, CLOSED, NESTED, TUPLE, UNION, Case
from tests.generator.diff.helpers import (
    NO_WITNESS,
    accepts,
    assert_witness,
    diff,
    reader_view,
    writer_reader,
)
from tests.generator.diff.strategies import values_of

# DIFF_EXAMPLES raises the example count for a longer hunt (e.g. 5000).
_SETTINGS = settings(
    max_examples=int(__import__("os").environ.get("DIFF_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
_SAFE: list[tuple[Case, Role]] = []
_TMP = Path(tempfile.mkdtemp(prefix="envgen-diff-props-"))


def _safe_directions() -> list[tuple[Case, Role]]:
    if not _SAFE:
        for case in CASES:
            if case.files:
                continue
            for role in ("action", "observation"):
                changes = diff(_TMP, role, case.old, case.new, case.policy)
                if not any(c.change_class == "breaking" for c in changes):
                    _SAFE.append((case, role))
    return _SAFE


def _draw_valid(data: st.DataObject, schema: Any) -> Any:
    validator = Draft202012Validator(schema, format_checker=formats())
    value = data.draw(values_of(schema, schema))
    assume(validator.is_valid(value))
    return json.loads(json.dumps(value))


@pytest.mark.parametrize(
    ("case", "role"),
    _safe_directions(),
    ids=[f"{c.id}-{r}" for c, r in _safe_directions()],
)
@_SETTINGS
@given(data=st.data())
def test_safe_changes_accept_every_writer_value(
    case: Case, role: Role, data: st.DataObject
) -> None:
    writer, reader = writer_reader(role, case.old, case.new)
    value = _draw_valid(data, writer)
    assert accepts(reader_view(role, reader, case.policy), value), value


def test_some_directions_are_safe_and_some_break() -> None:
    assert len(_safe_directions()) >= 50
    assert len(_safe_directions()) < 2 * len(CASES)


# -- random mutations -----------------------------------------------------------------------------

_MUTATIONS: list[tuple[str, Any]] = [
    ("/properties/name/maxLength", 3),
    ("/properties/name/type", ["string", "null"]),
    ("/properties/name/enum", ["a", "b"]),
    ("/properties/count/minimum", 10),
    ("/properties/count/maximum", 50),
    ("/properties/count/type", "number"),
    ("/properties/count/multipleOf", 3),
    ("/properties/ratio/type", "integer"),
    ("/properties/ratio/exclusiveMinimum", 0),
    ("/properties/mode/enum", ["fast", "slow", "turbo"]),
    ("/properties/mode/enum", ["fast"]),
    ("/properties/tags/minItems", 1),
    ("/properties/tags/maxItems", 1),
    ("/properties/tags/uniqueItems", True),
    ("/properties/tags/items", {"type": "integer"}),
    ("/properties/extra", {"type": "boolean"}),
    ("/required", ["name"]),
    ("/required", ["name", "count", "ratio"]),
    ("/additionalProperties", False),
    ("/properties/flag", {"anyOf": [{"type": "boolean"}, {"type": "null"}]}),
]


def _check_witnesses(role: Role, old: Any, new: Any, changes: list[Change], policy: Policy) -> None:
    """Every witness holds, and a breaking verdict is proven by at least one witness."""
    breaking = [c for c in changes if c.change_class == "breaking"]
    for change in breaking:
        if change.has_witness:
            assert_witness(role, old, new, change, policy)
    provable = [c for c in breaking if c.rule not in NO_WITNESS]
    if provable:
        assert any(c.has_witness for c in provable), [(c.rule, c.pointer) for c in provable]


def _apply(doc: dict[str, Any], pointer: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    parts = pointer.split("/")[1:]
    node = out
    for part in parts[:-1]:
        node = node[part]
    node[parts[-1]] = copy.deepcopy(value)
    return out


@_SETTINGS
@given(
    base=st.sampled_from([BASE, CLOSED]),
    old_ops=st.lists(st.sampled_from(_MUTATIONS), max_size=2),
    new_ops=st.lists(st.sampled_from(_MUTATIONS), min_size=1, max_size=3),
    role=st.sampled_from(["action", "observation"]),
    policy=st.sampled_from([Policy(), Policy(readers_ignore_unknown_fields=False)]),
    data=st.data(),
)
def test_random_mutations(
    base: dict[str, Any],
    old_ops: list[tuple[str, Any]],
    new_ops: list[tuple[str, Any]],
    role: Role,
    policy: Policy,
    data: st.DataObject,
) -> None:
    old = base
    for op in old_ops:
        old = _apply(old, *op)
    new = old
    for op in new_ops:
        new = _apply(new, *op)
    changes = diff(_TMP, role, old, new, policy)
    _check_witnesses(role, old, new, changes, policy)
    breaking = [c for c in changes if c.change_class == "breaking"]
    if not breaking:
        writer, reader = writer_reader(role, old, new)
        value = _draw_valid(data, writer)
        assert accepts(reader_view(role, reader, policy), value), (value, changes)


_SHAPED: list[tuple[dict[str, Any], list[tuple[str, Any]]]] = [
    (
        UNION,
        [
            ("/$defs/Move/properties/steps/minimum", 1),
            ("/$defs/Move/properties/steps/type", "number"),
            ("/$defs/Move/required", ["type"]),
            ("/$defs/Move/additionalProperties", True),
            ("/$defs/Turn/properties/left", {"type": ["boolean", "null"]}),
            ("/$defs/Turn/properties/type", {"const": "spin"}),
            ("/oneOf", [{"$ref": "#/$defs/Move"}]),
            ("/oneOf", [{"$ref": "#/$defs/Move"}, {"$ref": "#/$defs/Turn"}, {"type": "object"}]),
        ],
    ),
    (
        NESTED,
        [
            ("/$defs/Position/properties/row/minimum", 2),
            ("/$defs/Position/properties/row/maximum", 9),
            ("/$defs/Position/properties/col", {"type": "integer"}),
            ("/$defs/Position/required", []),
            ("/$defs/Position/additionalProperties", False),
            ("/properties/position", {"$ref": "#/$defs/Position", "description": "Where."}),
        ],
    ),
    (
        TUPLE,
        [
            ("/properties/pair/items", True),
            ("/properties/pair/prefixItems", [{"type": "integer"}]),
            ("/properties/pair/prefixItems", [{"type": "number"}, {"type": "string"}]),
            ("/properties/pair/minItems", 2),
            ("/properties/pair/uniqueItems", True),
        ],
    ),
]


@_SETTINGS
@given(
    shaped=st.sampled_from(_SHAPED),
    picks=st.tuples(
        st.lists(st.integers(0, 7), max_size=2), st.lists(st.integers(0, 7), min_size=1, max_size=3)
    ),
    role=st.sampled_from(["action", "observation"]),
    data=st.data(),
)
def test_random_mutations_of_unions_refs_and_tuples(
    shaped: tuple[dict[str, Any], list[tuple[str, Any]]],
    picks: tuple[list[int], list[int]],
    role: Role,
    data: st.DataObject,
) -> None:
    base, mutations = shaped
    old = base
    for index in picks[0]:
        old = _apply(old, *mutations[index % len(mutations)])
    new = old
    for index in picks[1]:
        new = _apply(new, *mutations[index % len(mutations)])
    policy = Policy()
    changes = diff(_TMP, role, old, new, policy)
    _check_witnesses(role, old, new, changes, policy)
    breaking = [c for c in changes if c.change_class == "breaking"]
    if not breaking:
        writer, reader = writer_reader(role, old, new)
        value = _draw_valid(data, writer)
        assert accepts(reader_view(role, reader, policy), value), (value, changes)


@_SETTINGS
@given(
    doc=st.sampled_from([NESTED, TUPLE, UNION]),
    role=st.sampled_from(["action", "observation", "state"]),
    data=st.data(),
)
def test_unchanged_schemas_accept_their_own_values(
    doc: Any, role: Role, data: st.DataObject
) -> None:
    assert diff(_TMP, role, doc, copy.deepcopy(doc)) == []
    value = _draw_valid(data, doc)
    assert accepts(doc, value)
