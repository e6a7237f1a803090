"""Golden files: generated output must match the committed expectation byte for byte."""

from __future__ import annotations

import pytest

from generator.schema.loader import Layout
from generator.codegen.output import build, check
from tests.golden.regenerate import case_layouts


@pytest.mark.parametrize("layout", case_layouts(), ids=lambda layout: layout.root.name)
def test_golden_case(layout: Layout) -> None:
    report = check(layout, build(layout))
    problems = [
        *report.diffs.values(),
        *(f"missing {m}" for m in report.missing),
        *(f"stale {s}" for s in report.stale),
    ]
    assert report.ok, "golden output changed; review and run `make golden`:\n" + "\n".join(problems)
