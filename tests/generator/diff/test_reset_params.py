"""`envgen diff` on reset.schema.json: client-written like the action, so the server accepting
less (a new required parameter, a narrowed type, a removed parameter) breaks old clients."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from envgen_runtime.schemadiff import Policy

from generator.cli import main
from generator.diff.model import writer_is_old
from generator.diff.rules import RULES
from tests.generator.diff.gitrepo import commit, edit_json
from tests.generator.diff.helpers import diff

GRID_RESET = "schemas/grid_env/reset.schema.json"


def _changes(repo: Path) -> list[dict[str, Any]]:
    result = CliRunner().invoke(
        main,
        ["--root", str(repo), "diff", "--base", "HEAD~1", "--format", "json"],
        catch_exceptions=False,
    )
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.output)
    return [c for env in report["envs"] for c in env["changes"] if c["role"] == "reset"]


def _wire(changes: list[dict[str, Any]]) -> dict[str, str]:
    return {c["rule"]: c["class"] for c in changes if not c["rule"].startswith("code.")}


def _edit(repo: Path, change: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    edit_json(repo / GRID_RESET, change)
    commit(repo, "grid reset changed")
    return _changes(repo)


def test_reset_is_read_in_the_action_direction() -> None:
    assert writer_is_old("reset") and writer_is_old("action")
    assert not writer_is_old("observation")
    assert not Policy().reader_ignores_unknown("reset")  # the server rejects unknown params
    assert all(rule.class_for("reset") == rule.class_for("action") for rule in RULES.values())


def test_new_required_parameter_breaks(repo: Path) -> None:
    def add(doc: dict[str, Any]) -> None:
        doc["properties"]["theme"] = {"type": "string"}
        doc["required"] = ["theme"]

    changes = _edit(repo, add)
    assert _wire(changes) == {"property.added-required": "breaking"}
    assert all(c["file"] == GRID_RESET for c in changes)
    assert "old clients may still send" in changes[-1]["message"]


def test_narrowed_type_breaks_widened_is_safe(repo: Path) -> None:
    def narrow(doc: dict[str, Any]) -> None:
        doc["properties"]["size"]["maximum"] = 7

    assert _wire(_edit(repo, narrow)) == {"number.maximum-lowered": "breaking"}

    def widen(doc: dict[str, Any]) -> None:
        doc["properties"]["size"]["maximum"] = 12

    assert _wire(_edit(repo, widen)) == {"number.maximum-raised": "safe"}


def test_removed_parameter_breaks(repo: Path) -> None:
    def remove(doc: dict[str, Any]) -> None:
        del doc["properties"]["difficulty"]

    changes = _edit(repo, remove)
    assert _wire(changes) == {"property.removed-from-closed": "breaking"}
    assert any(c["class"] == "breaking-code" for c in changes)  # GridResetParams.difficulty


def test_new_optional_parameter_is_safe(repo: Path) -> None:
    def add(doc: dict[str, Any]) -> None:
        doc["properties"]["theme"] = {"type": "string", "default": "plain"}

    changes = _edit(repo, add)
    assert {c["class"] for c in changes} == {"safe"}
    assert _wire(changes) == {"property.added": "safe"}


def test_reset_schema_removed_breaks(repo: Path) -> None:
    (repo / GRID_RESET).unlink()
    commit(repo, "grid: no reset parameters")
    changes = _changes(repo)
    assert "breaking" in {c["class"] for c in changes}
    assert {c["file"] for c in changes} == {GRID_RESET}


@pytest.mark.parametrize(("required", "verdict"), [([], "safe"), (["level"], "breaking")])
def test_reset_schema_added(repo: Path, required: list[str], verdict: str) -> None:
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"level": {"type": "integer", "default": 1}},
        "required": required,
    }
    (repo / "schemas/echo_env/reset.schema.json").write_text(json.dumps(schema))
    commit(repo, "echo: reset parameters")
    changes = _changes(repo)
    assert changes, "adding a reset schema is a change"
    worst = "breaking" if any(c["class"] == "breaking" for c in changes) else "safe"
    assert worst == verdict


def test_role_mode_reset(tmp_path: Path) -> None:
    old = {"type": "object", "properties": {"n": {"type": "integer"}}}
    new = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}
    [change] = diff(tmp_path, "reset", old, new)
    assert change.change_class == "breaking" and change.role == "reset"
    [back] = diff(tmp_path, "reset", new, old)
    assert back.change_class == "safe"


def test_role_mode_refuses_a_bad_reset_schema(tmp_path: Path) -> None:
    (tmp_path / "old.json").write_text(json.dumps({"type": "object"}))
    (tmp_path / "new.json").write_text(
        json.dumps({"type": "object", "properties": {"seed": {"type": "integer"}}})
    )
    result = CliRunner().invoke(
        main,
        ["diff", "--role", "reset", str(tmp_path / "old.json"), str(tmp_path / "new.json")],
    )
    assert result.exit_code == 2, result.output
    assert "/properties/seed" in result.output
