"""The README's rule table and JSON example stay in step with the code."""

from __future__ import annotations

import json
import re

from envgen_runtime.schemadiff import Policy

from generator.diff.rules import RULES
from tests.helpers import REPO


def _section() -> str:
    text = (REPO / "README.md").read_text()
    start = text.index("## Breaking-change checks")
    return text[start : text.index("\n## ", start + 1)]


def test_readme_lists_every_rule_with_its_classes() -> None:
    rows = {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(
            r"^\| `([^`]+)` \| [^|]+ \| ([a-z-]+) \| ([a-z-]+) \|", _section(), re.M
        )
    }
    assert set(rows) == set(RULES)
    for rule in RULES.values():
        assert rows[rule.id] == (rule.action or "-", rule.reader or "-")


def test_readme_json_example_parses_and_names_every_policy() -> None:
    block = re.search(r"```json\n(.*?)```", _section(), re.S)
    assert block is not None
    example = json.loads(block.group(1))
    assert example["schema_version"] == 1
    assert set(example["envs"][0]["policy"]) == set(Policy.setting_names())
    for key in Policy.setting_names():
        assert key in _section()
