"""`envgen diff` on a tool env's tool files: the verdict table, both file modes, git mode."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from envgen_runtime.schemadiff import Policy

from generator.cli import main
from generator.diff.engine import compare_sides
from generator.diff.model import Change, Role, tool_direction
from generator.diff.rules import RULES
from generator.diff.sides import load_env_side
from generator.schema.loader import Layout
from tests.generator.diff.gitrepo import commit, edit_json, make_repo, set_version
from tests.generator.diff.helpers import NO_WITNESS, assert_witness, worst
from tests.generator.diff.tool_cases import SCHEMA, SCHEMA_CASES, TOOL_CASES, SchemaCase, tool
from tests.helpers import REPO

_counter = itertools.count()
ENV = "calc_env"
DIVIDE = "schemas/calc_env/tools/divide.json"
NO_WITNESS_TOOL = NO_WITNESS | {"tool.removed", "tool.output-removed"}


def env_side(tmp: Path, tools: dict[str, Any], label: str) -> Any:
    """calc_env's manifest and role schemas with `tools` as its tool files, loaded."""
    root = tmp / f"{label}{next(_counter)}"
    env_dir = root / "schemas" / ENV
    (env_dir / "tools").mkdir(parents=True)
    for name in ("env.toml", "action.schema.json", "observation.schema.json", "state.schema.json"):
        shutil.copy(REPO / "schemas" / ENV / name, env_dir / name)
    for name, doc in tools.items():
        (env_dir / "tools" / name).write_text(json.dumps(doc, indent=2))
    return load_env_side(Layout.at(root), ENV, label)


def tool_diff(tmp: Path, old: dict[str, Any], new: dict[str, Any], code: bool) -> list[Change]:
    before, after = env_side(tmp, old, "old"), env_side(tmp, new, "new")
    return compare_sides(before, after, Policy(), roles=("tool",), code=code)


def check(changes: list[Change], verdict: str) -> None:
    expected_class, *expected_rules = verdict.split()
    shown = [(c.rule, c.change_class, c.file, c.pointer) for c in changes]
    assert worst(changes) == expected_class, shown
    found = {c.rule for c in changes}
    for rule in expected_rules:
        assert rule in found, (rule, shown)
    for change in changes:
        assert change.role == "tool" and "/tools/" in change.file, shown
        assert change.rule in RULES, change.rule
        if not change.rule.startswith("code."):
            documented = RULES[change.rule].class_for("tool", change.pointer)
            assert change.change_class == documented, (change.rule, change.pointer)


@pytest.mark.parametrize("position", ["input", "output"])
@pytest.mark.parametrize("case", SCHEMA_CASES, ids=[c.id for c in SCHEMA_CASES])
def test_schema_verdict(tmp_path: Path, case: SchemaCase, position: str) -> None:
    def divide(schema: Any) -> dict[str, Any]:
        if position == "input":
            return {"divide.json": tool("divide", schema, SCHEMA)}
        return {"divide.json": tool("divide", SCHEMA, schema)}

    changes = tool_diff(tmp_path, divide(case.old), divide(case.new), case.code)
    check(changes, case.input if position == "input" else case.output)
    root = "/inputSchema" if position == "input" else "/outputSchema"
    role: Role = "action" if position == "input" else "observation"
    for change in changes:
        assert change.file == f"schemas/{ENV}/tools/divide.json"
        assert change.pointer.startswith(root), change.pointer
        assert tool_direction(change.pointer) == role
        needs_witness = change.rule not in NO_WITNESS_TOOL or change.has_witness
        if change.change_class == "breaking" and needs_witness:
            assert_witness(role, case.old, case.new, change, Policy())


@pytest.mark.parametrize("case", TOOL_CASES, ids=[c.id for c in TOOL_CASES])
def test_tool_verdict(tmp_path: Path, case: Any) -> None:
    check(tool_diff(tmp_path, case.old, case.new, case.code), case.verdict)


def test_tool_changes_point_into_the_tool_file(tmp_path: Path) -> None:
    old = {"divide.json": tool("divide"), "add.json": tool("add")}
    narrowed = tool("divide", {**SCHEMA, "properties": {**SCHEMA["properties"]}})
    narrowed["inputSchema"]["properties"]["denominator"] = {"type": "integer"}
    changes = tool_diff(tmp_path, old, {"divide.json": narrowed}, code=False)
    where = {(c.rule, c.file, c.pointer, c.path) for c in changes}
    assert where == {
        ("tool.removed", f"schemas/{ENV}/tools/add.json", "", ""),
        (
            "type.narrowed",
            f"schemas/{ENV}/tools/divide.json",
            "/inputSchema/properties/denominator/type",
            "/denominator",
        ),
    }


def test_wire_roles_ignore_the_tools(tmp_path: Path) -> None:
    old = {"divide.json": tool("divide")}
    changes = tool_diff(tmp_path, old, {}, code=False)
    assert [c.rule for c in changes] == ["tool.removed"]
    before, after = env_side(tmp_path, old, "old"), env_side(tmp_path, {}, "new")
    assert compare_sides(before, after, Policy(), roles=("action", "observation")) == []


# -- the command line: two tool files -------------------------------------------------------------


def run(*args: str, root: Path | None = None) -> Result:
    prefix = ["--root", str(root)] if root else []
    return CliRunner().invoke(main, [*prefix, "diff", *args], catch_exceptions=False)


def write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc, indent=2))
    return str(path)


def test_role_tool_on_two_tool_files(tmp_path: Path) -> None:
    source = REPO / DIVIDE
    doc = json.loads(source.read_text())
    doc["inputSchema"]["properties"]["denominator"]["type"] = "integer"
    new = write(tmp_path / "divide.json", doc)
    result = run("--role", "tool", str(source), new, "--format", "json")
    assert result.exit_code == 1, result.output
    changes = json.loads(result.output)["envs"][0]["changes"]
    wire = next(c for c in changes if c["rule"] == "type.narrowed")
    assert wire["role"] == "tool" and wire["class"] == "breaking"
    assert wire["pointer"] == "/inputSchema/properties/denominator/type"
    assert wire["file"].endswith("divide.json") and wire["witness"]["denominator"] == 0.5
    lines = Path(new).read_text().splitlines()
    assert lines[wire["line"] - 1].strip().startswith('"type": "integer"')
    assert "code.type-changed" in {c["rule"] for c in changes}  # DivideArguments is built

    doc = json.loads(source.read_text())
    doc["inputSchema"]["properties"]["precision"] = {"type": "integer"}
    safe = run("--role", "tool", str(source), write(tmp_path / "safe.json", doc))
    assert safe.exit_code == 0, safe.output
    assert "property.added" in safe.output and "PASS" in safe.output


def test_role_tool_file_errors_exit_2(tmp_path: Path) -> None:
    good = str(REPO / DIVIDE)
    reserved = write(tmp_path / "reset.json", tool("reset"))
    result = run("--role", "tool", good, reserved)
    assert result.exit_code == 2
    assert "reset.json at /name (JSON pointer)" in result.output and "reserved" in result.output
    missing = run("--role", "tool", good, str(tmp_path / "none.json"))
    assert missing.exit_code == 2 and "file not found" in missing.output


# -- git revisions -------------------------------------------------------------------------------


@pytest.fixture
def calc_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", (ENV,))


def test_git_revisions_see_the_tool_files(calc_repo: Path) -> None:
    def narrow(doc: dict[str, Any]) -> None:
        doc["inputSchema"]["properties"]["denominator"]["type"] = "integer"

    edit_json(calc_repo / DIVIDE, narrow)
    (calc_repo / "schemas/calc_env/tools/stats.json").unlink()
    commit(calc_repo, "calc: divide takes integers, stats gone")

    result = run("--base", "HEAD~1", "--head", "HEAD", "--format", "json", root=calc_repo)
    assert result.exit_code == 1, result.output
    (env,) = json.loads(result.output)["envs"]
    assert env["env"] == ENV and env["status"] == "changed"
    found = {(c["rule"], c["file"], c["pointer"]) for c in env["changes"]}
    assert ("type.narrowed", DIVIDE, "/inputSchema/properties/denominator/type") in found
    assert ("tool.removed", "schemas/calc_env/tools/stats.json", "") in found
    assert ("code.method-removed", "schemas/calc_env/tools/stats.json", "") in found
    assert all(c["role"] == "tool" for c in env["changes"])

    text = run("--base", "HEAD~1", "--role", "tool", root=calc_repo)
    assert text.exit_code == 1
    assert f"{DIVIDE}:" in text.output and "/inputSchema/properties/denominator/type" in text.output
    assert 'file = "schemas/calc_env/tools/stats.json"' in text.output  # the ignore entry

    only_action = run("--base", "HEAD~1", "--role", "action", root=calc_repo)
    assert only_action.exit_code == 0, only_action.output
    assert "calc_env 0.1.0: unchanged" in only_action.output


def test_tool_break_allowed_by_version_or_ignore_entry(calc_repo: Path) -> None:
    (calc_repo / "schemas/calc_env/tools/stats.json").unlink()
    commit(calc_repo, "calc: stats gone")
    failing = run("--base", "HEAD~1", root=calc_repo)
    assert failing.exit_code == 1, failing.output
    # The tool's removal explains its method and models going: one entry, as the hint says.
    hint = failing.output[failing.output.index("[[ignore]]") :].split("\nFAIL")[0]
    assert hint.count("[[ignore]]") == 1 and 'rule = "tool.removed"' in hint
    ignore = calc_repo / "schemas/calc_env/compat-ignore.toml"
    ignore.write_text(hint.replace("say why existing clients can live with this", "unused"))
    ignored = run("--base", "HEAD~1", root=calc_repo)
    assert ignored.exit_code == 0, ignored.output
    assert "ignored" in ignored.output and "code.method-removed" in ignored.output
    ignore.unlink()
    set_version(calc_repo, ENV, "0.2.0")
    raised = run("--base", "HEAD~1", root=calc_repo)
    assert raised.exit_code == 0, raised.output
    assert "allowed" in raised.output


def test_unchanged_tool_env(calc_repo: Path) -> None:
    result = run("--base", "HEAD", root=calc_repo)
    assert result.exit_code == 0 and "calc_env 0.1.0: unchanged" in result.output
