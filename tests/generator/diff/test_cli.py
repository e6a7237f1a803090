"""`envgen diff --role`, usage errors, options and the rule list, through click."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from generator.cli import main
from generator.diff.rules import RULES
from tests.generator.diff.cases import BASE, CLOSED
from tests.helpers import REPO


def run(*args: str, color: bool = False) -> Result:
    return CliRunner().invoke(main, ["diff", *args], catch_exceptions=False, color=color)


def write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc, indent=2))
    return str(path)


def test_role_mode_direction_decides(tmp_path: Path) -> None:
    old, new = write(tmp_path / "old.json", BASE), write(tmp_path / "new.json", CLOSED)
    action = run("--role", "action", old, new, "--format", "json")
    assert action.exit_code == 1
    (change,) = json.loads(action.output)["envs"][0]["changes"]
    assert (change["rule"], change["class"]) == ("object.closed", "breaking")
    assert change["file"].endswith("new.json") and change["pointer"] == "/additionalProperties"
    lines = Path(new).read_text().splitlines()
    assert lines[change["line"] - 1].strip().startswith('"additionalProperties"')
    assert "x_envgen_extension" in change["witness"]
    observation = run("--role", "observation", old, new)
    assert observation.exit_code == 0, observation.output
    assert "object.closed" in observation.output and "PASS" in observation.output


def test_role_mode_on_an_example_schema(tmp_path: Path) -> None:
    source = REPO / "schemas/quiz_env/observation.schema.json"
    doc = json.loads(source.read_text())
    doc["properties"]["time-left"]["type"] = "string"
    new = write(tmp_path / "new.json", doc)
    result = run("--role", "observation", str(source), new, "--format", "json")
    assert result.exit_code == 1
    rules = [c["rule"] for c in json.loads(result.output)["envs"][0]["changes"]]
    # The wire break, and the generated attribute's type change for code reading it.
    assert rules == ["code.type-changed", "type.changed"]


def test_colour_only_on_a_terminal(tmp_path: Path) -> None:
    old, new = write(tmp_path / "old.json", BASE), write(tmp_path / "new.json", CLOSED)
    assert "\x1b[" not in run("--role", "action", old, new).output
    assert "\x1b[31m" in run("--role", "action", old, new, color=True).output


def test_output_file_and_fail_on_none(tmp_path: Path) -> None:
    old, new = write(tmp_path / "old.json", BASE), write(tmp_path / "new.json", CLOSED)
    target = tmp_path / "report.md"
    result = run(
        "--role", "action", old, new, "--format", "markdown", "--fail-on", "none", "-o", str(target)
    )
    assert result.exit_code == 0 and result.output == ""
    assert target.read_text().startswith("## ✅ envgen diff")
    assert "⚠️ reported" in target.read_text()


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    old = write(tmp_path / "old.json", BASE)
    for args, text in (
        ((), "give --base REF"),
        (("--role", "action", old), "exactly two files"),
        (("--role", "action", old, old, "--head", "HEAD"), "--head needs --base"),
        (("--role", "nothing", old, old), "Invalid value for '--role'"),
        (("--base", "HEAD", "--format", "xml"), "Invalid value for '--format'"),
    ):
        result = run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert text in result.output


def test_input_errors_name_file_and_place(tmp_path: Path) -> None:
    good = write(tmp_path / "good.json", BASE)
    (tmp_path / "bad.json").write_text('{"type": "object",\n "properties": }')
    result = run("--role", "action", good, str(tmp_path / "bad.json"))
    assert result.exit_code == 2
    assert "bad.json:2:16: invalid JSON" in result.output
    scalar = write(tmp_path / "scalar.json", {"type": "string"})
    result = run("--role", "state", good, scalar)
    assert result.exit_code == 2
    assert "scalar.json at /type (JSON pointer)" in result.output
    result = run("--role", "state", good, str(tmp_path / "missing.json"))
    assert result.exit_code == 2 and "file not found" in result.output
    ref = write(
        tmp_path / "ref.json", {"type": "object", "properties": {"a": {"$ref": "#/$defs/No"}}}
    )
    result = run("--role", "state", good, ref)
    assert (
        result.exit_code == 2 and "ref.json at /properties/a/$ref (JSON pointer)" in result.output
    )


def test_rules_lists_every_rule_with_both_directions() -> None:
    result = run("--rules")
    assert result.exit_code == 0
    for rule in RULES.values():
        line = next(line for line in result.output.splitlines() if line.startswith(rule.id + " "))
        assert (rule.action or "-") in line and (rule.reader or "-") in line


def test_diff_is_listed_in_help() -> None:
    assert "diff" in CliRunner().invoke(main, ["--help"]).output
