"""Git mode: `envgen diff --base REV` on a temporary repository of example envs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from jsonschema import Draft202012Validator

from generator.cli import main
from tests.generator.diff.gitrepo import add_facing, commit, edit_json, git, make_repo, set_version

GRID_OBS = "schemas/grid_env/observation.schema.json"


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--root", str(root), "diff", *args], catch_exceptions=False)


def facing_added(repo: Path) -> None:
    edit_json(repo / GRID_OBS, add_facing)
    commit(repo, "grid: facing can be up")


def test_enum_value_added_in_all_four_formats(repo: Path) -> None:
    old_obs = json.loads((repo / GRID_OBS).read_text())
    facing_added(repo)
    text = run(repo, "--base", "HEAD~1")
    assert text.exit_code == 1, text.output
    assert "grid_env 0.1.0: changed" in text.output
    assert "FAIL" in text.output and "enum.value-added" in text.output
    assert f"{GRID_OBS}:45 /properties/facing/enum" in text.output
    assert "echo_env 0.1.0: unchanged" in text.output
    assert "\x1b[" not in text.output  # not a terminal: no colour

    result = run(repo, "--base", "HEAD~1", "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.output)
    # The wider Literal also breaks code reading `facing`: reported as both (issue 10).
    assert report["result"] == "fail" and report["counts"]["failing"] == 2
    grid = next(e for e in report["envs"] if e["env"] == "grid_env")
    code, change = grid["changes"]
    assert code["rule"] == "code.type-changed" and code["class"] == "breaking-code"
    assert code["pointer"] == "/properties/facing" and code["path"] == "/facing"
    assert change["rule"] == "enum.value-added" and change["class"] == "breaking"
    assert change["role"] == "observation" and change["status"] == "fails"
    assert change["pointer"] == "/properties/facing/enum" and change["line"] == 45
    new_obs = json.loads((repo / GRID_OBS).read_text())
    assert Draft202012Validator(new_obs).is_valid(change["witness"])
    assert not Draft202012Validator(old_obs).is_valid(change["witness"])
    assert change["witness"]["facing"] == "up"

    markdown = run(repo, "--base", "HEAD~1", "--format", "markdown")
    assert markdown.exit_code == 1
    assert markdown.output.startswith("## ❌ envgen diff")
    assert "| ❌ fails | breaking | observation | `enum.value-added` |" in markdown.output
    assert '"facing": "up"' in markdown.output

    github = run(repo, "--base", "HEAD~1", "--format", "github")
    assert github.exit_code == 1
    assert (
        f"::error file={GRID_OBS},line=45,title=envgen diff grid_env%3A enum.value-added "
        '(breaking%2C fails)::enum values added: "up"' in github.output
    )


def test_safe_change_passes_in_every_format(repo: Path) -> None:
    def add_optional(doc: dict[str, Any]) -> None:
        doc["properties"]["note"] = {"type": "string"}

    edit_json(repo / "schemas/echo_env/action.schema.json", add_optional)
    commit(repo, "echo: optional note")
    for fmt in ("text", "json", "markdown", "github"):
        result = run(repo, "--base", "HEAD~1", "--format", fmt)
        assert result.exit_code == 0, result.output
    report = json.loads(run(repo, "--base", "HEAD~1", "--format", "json").output)
    echo = next(e for e in report["envs"] if e["env"] == "echo_env")
    assert {c["rule"] for c in echo["changes"]} == {"property.added", "code.attribute-added"}
    assert report["result"] == "pass"


def test_major_version_bump_allows_the_break(repo: Path) -> None:
    facing_added(repo)
    set_version(repo, "grid_env", "0.1.1")
    commit(repo, "patch bump is not enough")
    assert run(repo, "--base", "HEAD~2").exit_code == 1
    set_version(repo, "grid_env", "0.2.0")
    commit(repo, "0.x: a minor bump raises the compatibility level")
    result = run(repo, "--base", "HEAD~3", "--format", "json")
    assert result.exit_code == 0, result.output
    grid = next(e for e in json.loads(result.output)["envs"] if e["env"] == "grid_env")
    assert grid["version"] == {"base": "0.1.0", "head": "0.2.0", "major_bumped": True}
    assert grid["changes"][0]["status"] == "allowed"
    assert "allowed" in run(repo, "--base", "HEAD~3").output


def test_env_ignore_file_accepts_the_break_with_its_reason(repo: Path) -> None:
    facing_added(repo)
    (repo / "schemas/grid_env/compat-ignore.toml").write_text(
        '[[ignore]]\nrule = "enum.value-added"\npointer = "/properties/facing/enum"\n'
        'reason = "every client in use maps unknown facings to north"\n'
        '\n[[ignore]]\nrule = "type.changed"\npointer = "/properties/nothing"\nreason = "old"\n'
    )
    result = run(repo, "--base", "HEAD~1")
    assert result.exit_code == 0, result.output
    assert "ignored because: every client in use maps unknown facings to north" in result.output
    assert (
        "ignore entry matched nothing" in result.output and "/properties/nothing" in result.output
    )


def test_repo_ignore_file_needs_env_and_can_use_head_revision(repo: Path) -> None:
    facing_added(repo)
    ignore = repo / ".envgen-diff-ignore.toml"
    ignore.write_text(
        '[[ignore]]\nenv = "grid_env"\nrule = "enum.value-added"\n'
        'pointer = "/properties/facing/enum"\nreason = "accepted in review"\nrole = "observation"\n'
    )
    assert run(repo, "--base", "HEAD~1").exit_code == 0
    # --head reads the ignore file from that revision, where it does not exist yet.
    assert run(repo, "--base", "HEAD~1", "--head", "HEAD").exit_code == 1
    ignore.write_text('[[ignore]]\nrule = "enum.value-added"\npointer = ""\nreason = "x"\n')
    result = run(repo, "--base", "HEAD~1")
    assert result.exit_code == 2
    assert ".envgen-diff-ignore.toml at /ignore/0/env (JSON pointer)" in result.output


def test_bad_ignore_entries_exit_2_with_a_pointer(repo: Path) -> None:
    path = repo / "schemas/grid_env/compat-ignore.toml"
    for text, where in (
        ('[[ignore]]\nrule = "enum.value-added"\npointer = "/x"\n', "/ignore/0/reason"),
        ('[[ignore]]\nrule = "no.such-rule"\npointer = "/x"\nreason = "r"\n', "/ignore/0/rule"),
        (
            '[[ignore]]\nrule = "enum.value-added"\npointer = "x"\nreason = "r"\n',
            "/ignore/0/pointer",
        ),
        (
            '[[ignore]]\nrule = "enum.value-added"\npointer = "/x"\nreason = " "\n',
            "/ignore/0/reason",
        ),
        ("[[ignore]\n", None),
    ):
        path.write_text(text)
        result = run(repo, "--base", "HEAD")
        assert result.exit_code == 2, (text, result.output)
        assert "schemas/grid_env/compat-ignore.toml" in result.output
        if where:
            assert f"at {where} (JSON pointer)" in result.output


def test_envs_added_and_removed(repo: Path) -> None:
    git(repo, "rm", "-q", "-r", "schemas/quiz_env")
    new = repo / "schemas/echo2_env"
    new.mkdir()
    for path in (repo / "schemas/echo_env").iterdir():
        (new / path.name).write_text(path.read_text().replace("echo_env", "echo2_env"))
    commit(repo, "quiz gone, echo2 added")
    result = run(repo, "--base", "HEAD~1", "--format", "json")
    assert result.exit_code == 1
    envs = {e["env"]: e for e in json.loads(result.output)["envs"]}
    assert envs["echo2_env"]["status"] == "added"
    assert envs["echo2_env"]["changes"][0]["rule"] == "env.added"
    assert envs["quiz_env"]["status"] == "removed"
    assert envs["quiz_env"]["changes"][0]["class"] == "breaking"
    assert envs["quiz_env"]["changes"][0]["status"] == "fails"


def test_working_tree_is_the_default_head(repo: Path) -> None:
    facing_added(repo)
    assert run(repo, "--base", "HEAD").exit_code == 0  # committed: no difference
    edit_json(
        repo / "schemas/echo_env/action.schema.json", lambda d: d["required"].append("metadata")
    )
    result = run(repo, "--base", "HEAD", "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["head"] == "working tree"
    echo = next(e for e in report["envs"] if e["env"] == "echo_env")
    # The wire break, and the code breaks of a field losing its default (issue 10).
    rules = [c["rule"] for c in echo["changes"]]
    assert rules == ["code.attribute-now-required", "code.type-changed", "required.added"]
    assert echo["changes"][2]["witness"] == {"message": "a"}
    assert {c["path"] for c in echo["changes"]} == {"/metadata"}
    # Comparing two commits ignores the working tree.
    assert run(repo, "--base", "HEAD~1", "--head", "HEAD", "echo_env").exit_code == 0


def test_fail_on_thresholds_and_env_selection(repo: Path) -> None:
    edit_json(
        repo / "schemas/quiz_env/observation.schema.json", lambda d: d["properties"].pop("feedback")
    )
    commit(repo, "quiz: feedback gone (wire-safe, API change)")
    result = run(repo, "--base", "HEAD~1", "--format", "json")
    assert result.exit_code == 1
    quiz = next(e for e in json.loads(result.output)["envs"] if e["env"] == "quiz_env")
    rules = {(c["rule"], c["class"]) for c in quiz["changes"]}
    assert rules == {("property.removed", "safe"), ("code.attribute-removed", "breaking-code")}
    assert "QuizObservation.feedback is no longer generated" in result.output
    assert run(repo, "--base", "HEAD~1", "--fail-on", "breaking").exit_code == 0
    facing_added(repo)
    assert run(repo, "--base", "HEAD~2", "--fail-on", "breaking").exit_code == 1
    assert run(repo, "--base", "HEAD~2", "--fail-on", "none").exit_code == 0
    only = run(repo, "--base", "HEAD~2", "echo_env")
    assert only.exit_code == 0 and "grid_env" not in only.output


def test_compat_table_and_flags_set_the_policy(repo: Path) -> None:
    facing_added(repo)
    toml = repo / "schemas/grid_env/env.toml"
    toml.write_text(toml.read_text() + "\n[compat]\nextensible_enums = true\n")
    result = run(repo, "--base", "HEAD~1", "--format", "json", "--fail-on", "breaking")
    assert result.exit_code == 0, result.output
    grid = next(e for e in json.loads(result.output)["envs"] if e["env"] == "grid_env")
    assert grid["policy"]["extensible_enums"] is True
    classes = {c["rule"]: c["class"] for c in grid["changes"]}
    # The wire is fine for readers that accept unknown values; the generated Literal type
    # still widened under code that reads it.
    assert classes == {"enum.value-added": "safe", "code.type-changed": "breaking-code"}
    assert run(repo, "--base", "HEAD~1", "--fail-on", "breaking", "--closed-enums").exit_code == 1
    toml.write_text(toml.read_text().replace("true", '"yes"'))
    bad = run(repo, "--base", "HEAD~1")
    assert bad.exit_code == 2
    assert "schemas/grid_env/env.toml at /compat/extensible_enums (JSON pointer)" in bad.output


def test_input_errors_exit_2(repo: Path, tmp_path: Path) -> None:
    unknown = run(repo, "--base", "no-such-branch")
    assert unknown.exit_code == 2 and "unknown git revision 'no-such-branch'" in unknown.output
    missing_env = run(repo, "--base", "HEAD", "nope_env")
    assert missing_env.exit_code == 2 and "no environment named 'nope_env'" in missing_env.output
    not_git = tmp_path / "plain"
    (not_git / "schemas").mkdir(parents=True)
    assert "not inside a git repository" in run(not_git, "--base", "HEAD").output
    (repo / GRID_OBS).write_text('{\n  "type": "object",\n  oops\n}\n')
    commit(repo, "broken")
    broken_base = run(repo, "--base", "HEAD", "--head", "HEAD")
    assert broken_base.exit_code == 2
    assert f"HEAD:{GRID_OBS}:3:3: invalid JSON" in broken_base.output
    assert run(repo, "--base", "HEAD~1").exit_code == 2


def test_head_revision_changes_are_compared_without_touching_the_tree(repo: Path) -> None:
    facing_added(repo)
    before = (repo / GRID_OBS).read_text()
    result = run(repo, "--base", "HEAD~1", "--head", "HEAD", "--format", "json")
    assert json.loads(result.output)["head"] == "HEAD"
    assert result.exit_code == 1
    assert (repo / GRID_OBS).read_text() == before
    assert git(repo, "status", "--porcelain") == ""


def test_unknown_compat_key_is_an_input_error(repo: Path) -> None:
    toml = repo / "schemas/grid_env/env.toml"
    toml.write_text(toml.read_text() + "\n[compat]\nenums_open = true\n")
    result = run(repo, "--base", "HEAD")
    assert result.exit_code == 2
    assert "at /compat/enums_open (JSON pointer): unknown key 'enums_open'" in result.output


def test_project_in_a_subfolder_of_the_repository(tmp_path: Path) -> None:
    top = tmp_path / "top"
    make_repo(top / "project", ("grid_env",))
    shutil.rmtree(top / "project" / ".git")  # the outer folder is the repository instead
    git(top, "init", "-q", "-b", "main")
    commit(top, "base")
    edit_json(top / "project" / GRID_OBS, add_facing)
    result = run(top / "project", "--base", "HEAD", "--format", "github")
    assert result.exit_code == 1
    assert f"::error file=project/{GRID_OBS},line=45," in result.output
