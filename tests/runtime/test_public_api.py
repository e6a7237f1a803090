"""The runtime's public API stays as recorded: names, where they are imported from, signatures."""

from __future__ import annotations

import difflib

from tests.runtime.public_api import SNAPSHOT, describe


def test_the_public_api_is_the_recorded_one() -> None:
    recorded = SNAPSHOT.read_text(encoding="utf-8")
    now = describe()
    changed = "".join(
        difflib.unified_diff(
            recorded.splitlines(keepends=True), now.splitlines(keepends=True), "recorded", "now"
        )
    )
    assert not changed, (
        "the runtime's public API changed; if that was meant, run "
        "`python -m tests.runtime.public_api --write` and say so in the CHANGELOG:\n" + changed
    )
