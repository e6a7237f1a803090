"""JSON Schema's `pattern` is ECMA-262: verify neither sends nor accepts what Python's `re`
alone would let through (a final newline before `$`, non-ASCII digits for `\\d`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample

from generator.schema.loader import Layout
from generator.verify.schemas import CommittedSchemas
from generator.verify.strategies import from_schema
from generator.verify.textvalues import ecma_pattern, string_of_length

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        ("^abc$", r"^abc\Z"),
        (r"^\d+$", r"^[0-9]+\Z"),
        (r"[\d_]\w", r"[0-9_][A-Za-z0-9_]"),
        (r"\W\D", r"[^A-Za-z0-9_][^0-9]"),
        (r"^a\$[$]", r"^a\$[$]"),  # an escaped $ and one in a class are literal
        (r"[\]$]x$", r"[\]$]x\Z"),
    ],
)
def test_patterns_are_rewritten_to_match_as_ecma_262_does(pattern: str, python: str) -> None:
    assert ecma_pattern(pattern) == python


def test_generated_strings_never_end_in_a_newline_a_dollar_forbids() -> None:
    strings = from_schema({"type": "string", "pattern": "^a+$"})
    with pytest.raises(NoSuchExample):
        find(
            strings,
            lambda s: s.endswith("\n"),
            settings=settings(
                max_examples=60,
                database=None,
                derandomize=True,
                phases=(Phase.generate,),
                suppress_health_check=list(HealthCheck),
            ),
        )


def test_replies_are_held_to_ecma_262_patterns(tmp_path: Path) -> None:
    env = tmp_path / "schemas" / "counter_env"
    shutil.copytree(HERE / "counter_env", env)
    observation = json.loads((env / "observation.schema.json").read_text())
    observation["properties"]["code"] = {"type": "string", "pattern": r"^\d{2}$"}
    (env / "observation.schema.json").write_text(json.dumps(observation))
    schemas = CommittedSchemas(Layout.at(tmp_path), "counter_env")
    reply = {"value": 1, "parity": "odd"}
    assert schemas.problems("observation", {**reply, "code": "12"}) == []
    for bad in ("12\n", "\u0661\u0662"):  # a final newline; ARABIC-INDIC digits
        (problem,) = schemas.problems("observation", {**reply, "code": bad})
        assert problem.pointer == "/code"


def test_a_string_of_a_length_matches_the_pattern_or_is_refused_with_why() -> None:
    text, _ = string_of_length({"pattern": "^[a-c]{2}[0-9]*$"}, 7)
    assert (
        text is not None
        and len(text) == 7
        and text[:2] in {"aa", "ab", "ac", "ba", "bb", "bc", "ca", "cb", "cc"}
    )
    assert string_of_length({"pattern": "^x$"}, 3) == (None, "no match of pattern '^x$' found")
    assert string_of_length({"format": "uuid"}, 5) == (
        None,
        "no uuid string of 5 characters is built",
    )
    assert string_of_length({}, 3) == ("aaa", "")
