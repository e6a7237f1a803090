"""`envgen diff` says how to resolve a failure, and reports wire and code breaks together."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from generator.cli import main
from tests.generator.diff.gitrepo import add_facing, commit, edit_json, set_version

GRID = "schemas/grid_env"


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--root", str(root), "diff", *args], catch_exceptions=False)


@pytest.mark.parametrize(
    ("version", "raised"),
    [
        ("0.1.0", "0.2.0"),
        ("0.1.7", "0.2.0"),
        ("0.0.3", "0.0.4"),
        ("1.4.2", "2.0.0"),
        ("2.0.0-rc.1", "3.0.0"),
    ],
)
def test_next_compat_version_follows_the_0x_rule(version: str, raised: str) -> None:
    from generator.diff.resolve import next_compat_version

    assert next_compat_version(version) == raised


def _facing_up(repo: Path) -> None:
    edit_json(repo / f"{GRID}/observation.schema.json", add_facing)
    commit(repo, "grid: facing can be up")


def _ignore_block(output: str) -> str:
    """The TOML the text report suggests, with the reason filled in."""
    block = re.findall(r"^    (\[\[ignore\]\]|\w+ = .*)$", output, flags=re.M)
    text = "\n".join(block) + "\n"
    return text.replace("say why existing clients can live with this", "clients map it")


def test_text_names_the_version_to_raise_to_and_the_ignore_entry(repo: Path) -> None:
    _facing_up(repo)
    result = run(repo, "--base", "HEAD~1")
    assert result.exit_code == 1
    assert (
        "  to resolve: raise the version 0.1.0 -> 0.2.0 in schemas/grid_env/env.toml (allows "
        "every break), or accept each failing change in schemas/grid_env/compat-ignore.toml:"
    ) in result.output
    block = _ignore_block(result.output)
    # One entry: ignoring the wire break also covers the code change it explains.
    assert block == (
        '[[ignore]]\nrule = "enum.value-added"\npointer = "/properties/facing/enum"\n'
        'role = "observation"\nreason = "clients map it"\n'
    )
    # Both hints are exact: following either one makes the diff pass.
    (repo / f"{GRID}/compat-ignore.toml").write_text(block)
    ignored = run(repo, "--base", "HEAD~1")
    assert ignored.exit_code == 0, ignored.output
    assert "clients map it (with enum.value-added)" in ignored.output
    (repo / f"{GRID}/compat-ignore.toml").unlink()
    set_version(repo, "grid_env", "0.2.0")
    raised = run(repo, "--base", "HEAD~1")
    assert raised.exit_code == 0, raised.output
    assert "0.1.0 -> 0.2.0 (compatibility version raised)" in raised.output
    assert "(major)" not in raised.output and "to resolve" not in raised.output


def test_markdown_lists_changed_envs_resolution_and_legend(repo: Path) -> None:
    _facing_up(repo)
    result = run(repo, "--base", "HEAD~1", "--format", "markdown")
    assert result.exit_code == 1
    rows = [line for line in result.output.splitlines() if line.startswith("| ")]
    headers = ("| env ", "| status ")
    assert [row.split(" | ")[0] for row in rows if not row.startswith(headers)] == [
        "| grid_env",
        "| ❌ fails",
        "| ❌ fails",
    ]
    assert "echo_env" not in result.output and "quiz_env" not in result.output
    assert "2 unchanged envs not listed." in result.output
    assert "**To resolve: raise the version 0.1.0 -&gt; 0.2.0 in schemas/grid_env/env.toml" in (
        result.output
    )
    assert '```toml\n[[ignore]]\nrule = "enum.value-added"\n' in result.output
    assert "the env's compatibility version was raised" in result.output
    assert "major" not in result.output


def test_markdown_with_nothing_changed_has_no_empty_table(repo: Path) -> None:
    result = run(repo, "--base", "HEAD", "--format", "markdown")
    assert result.exit_code == 0
    assert "| env |" not in result.output and "3 unchanged envs not listed." in result.output


def _write(path: Path, doc: object) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


def test_field_losing_its_default_is_a_wire_and_a_code_break(tmp_path: Path) -> None:
    old = {"type": "object", "properties": {"a": {"type": "integer", "default": 0}}}
    new = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    result = run(
        tmp_path,
        "--role",
        "action",
        _write(tmp_path / "old.json", old),
        _write(tmp_path / "new.json", new),
        "--format",
        "json",
    )
    changes = json.loads(result.output)["envs"][0]["changes"]
    classes = {(c["rule"], c["class"], c["status"]) for c in changes}
    assert ("required.added", "breaking", "fails") in classes
    assert ("code.attribute-now-required", "breaking-code", "fails") in classes
    assert all(c["path"] == "/a" for c in changes)  # never empty where a pointer exists


def test_role_mode_hint_points_at_an_ignore_file(tmp_path: Path) -> None:
    old = {"type": "object", "properties": {"a": {"type": "integer"}}}
    new = {"type": "object", "properties": {"a": {"type": "string"}}}
    args = [_write(tmp_path / "old.json", old), _write(tmp_path / "new.json", new)]
    result = run(tmp_path, "--role", "observation", *args)
    assert result.exit_code == 1
    assert "to resolve: accept each failing change in a file passed with --ignore FILE:" in (
        result.output
    )
    (tmp_path / "ignore.toml").write_text(_ignore_block(result.output))
    passed = run(
        tmp_path, "--role", "observation", *args, "--ignore", str(tmp_path / "ignore.toml")
    )
    assert passed.exit_code == 0, passed.output


def test_quiet_and_verbose_text(repo: Path) -> None:
    _facing_up(repo)
    quiet = run(repo, "--base", "HEAD~1", "-q")
    lines = quiet.output.splitlines()
    assert len(lines) == 3 and lines[-1].startswith("FAIL: 2 change(s) fail")
    assert all(line.startswith("grid_env: FAIL") for line in lines[:2])
    verbose = run(repo, "--base", "HEAD~1", "--verbose")
    assert "  policy: readers_ignore_unknown_fields=true" in verbose.output


def test_code_change_in_a_def_takes_the_wire_change_path(tmp_path: Path) -> None:
    def doc(inner: dict[str, object]) -> dict[str, object]:
        return {
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/P"}},
            "$defs": {"P": {"type": "object", "title": "P", **inner}},
        }

    old = doc({"properties": {"x": {"type": "integer", "default": 0}}})
    new = doc({"properties": {"x": {"type": "integer"}}, "required": ["x"]})
    args = [_write(tmp_path / "old.json", old), _write(tmp_path / "new.json", new)]
    result = run(tmp_path, "--role", "action", *args, "--format", "json")
    changes = json.loads(result.output)["envs"][0]["changes"]
    by_rule = {c["rule"]: c for c in changes}
    assert by_rule["required.added"]["path"] == "/p/x"
    assert by_rule["code.attribute-now-required"]["pointer"] == "/$defs/P/properties/x"
    assert by_rule["code.attribute-now-required"]["path"] == "/p/x"
