"""Turning a finding's local counterexample into a whole message, and proving it.

A finding knows a value that breaks at its own level (say, an enum value) and the chain of
writer-side objects and arrays above it. The value is wrapped level by level into a complete
action, observation or state; it is reported only if `jsonschema` accepts it under the
writer's schema and rejects it under the reader's (as the reader's policy sees it).
"""

from __future__ import annotations

import json
from typing import Any

from .compare import Context, Finding
from .examples import MISSING, Examples
from .walk import Frame


def embed(examples: Examples, frames: tuple[Frame, ...], value: Any) -> Any:
    """Wrap `value` into each enclosing level, innermost first."""
    for frame in reversed(frames):
        if value is MISSING:
            return MISSING
        if frame.is_item and isinstance(frame.key, int):
            value = examples.array_with(frame.schema, frame.key, value)
        else:
            value = examples.object_with(frame.schema, force={str(frame.key): value})
    return value


def prove(ctx: Context, finding: Finding, writer_root: str, reader_root: str) -> Any:
    """A complete witness for `finding`, checked both ways, or MISSING."""
    if finding.witness is None:
        return MISSING
    try:
        local = finding.witness()
        value = embed(ctx.examples, finding.frames, local)
        if value is MISSING:
            return MISSING
        value = json.loads(json.dumps(value, allow_nan=False))
    except (ValueError, TypeError, RecursionError):
        return MISSING
    writer = ctx.examples.validation
    if not writer.valid(writer.root(writer_root), value):
        return MISSING
    if ctx.reader_check.valid(ctx.reader_check.root(reader_root), value):
        return MISSING
    return value
