"""The pre-commit hook and the example CI workflow, run for real in a temporary repo."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from click.testing import CliRunner

from generator.cli import main
from tests.generator.diff.gitrepo import add_facing, commit, edit_json, git, make_repo
from tests.helpers import REPO

BIN = Path(sys.executable).parent


def _env(summary: Path | None = None) -> dict[str, str]:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if summary is not None:
        env["GITHUB_STEP_SUMMARY"] = str(summary)
    return env


def _generate(root: Path) -> None:
    result = CliRunner().invoke(main, ["--root", str(root), "generate"], catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.fixture
def generated_repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", ("echo_env", "grid_env"))
    _generate(root)
    commit(root, "generated")
    return root


def _hooks() -> dict[str, dict[str, Any]]:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    return {hook["id"]: hook for hook in hooks}


def test_pre_commit_hooks_are_well_formed() -> None:
    hooks = _hooks()
    assert hooks["envgen-check"]["entry"] == "envgen check"
    for hook in hooks.values():
        assert {"id", "name", "entry", "language"} <= set(hook)
        assert hook["language"] == "python" and hook["pass_filenames"] is False
        assert shlex.split(hook["entry"])[0] == "envgen"


def test_check_hook_entry_passes_then_catches_a_stale_tree(generated_repo: Path) -> None:
    entry = shlex.split(_hooks()["envgen-check"]["entry"])
    ok = subprocess.run(entry, cwd=generated_repo, env=_env(), capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "up to date" in ok.stdout
    edit_json(generated_repo / "schemas/grid_env/observation.schema.json", add_facing)
    stale = CliRunner().invoke(main, ["--root", str(generated_repo), *entry[1:]])
    assert stale.exit_code == 1 and "out of date" in stale.output


def test_diff_hook_entry_compares_the_tree_with_head(generated_repo: Path) -> None:
    entry = shlex.split(_hooks()["envgen-diff"]["entry"])
    assert CliRunner().invoke(main, ["--root", str(generated_repo), *entry[1:]]).exit_code == 0
    edit_json(generated_repo / "schemas/grid_env/observation.schema.json", add_facing)
    result = CliRunner().invoke(main, ["--root", str(generated_repo), *entry[1:]])
    assert result.exit_code == 1 and "enum.value-added" in result.output


def test_example_workflow_runs_check_and_diff_on_a_pull_request(
    generated_repo: Path, tmp_path: Path
) -> None:
    workflow_path = REPO / "docs/ci/envgen.yml"
    assert not str(workflow_path).startswith(str(REPO / ".github"))  # never runs by itself
    workflow = yaml.safe_load(workflow_path.read_text())
    assert "pull_request" in workflow[True]  # YAML 1.1 reads the `on` key as True
    steps = workflow["jobs"]["schemas"]["steps"]
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0
    commands = [s for s in steps if "envgen" in s.get("run", "") and "pip" not in s["run"]]
    assert [c["name"] for c in commands] == [
        "Generated clients match the schemas",
        "Breaking schema changes",
        "Schema change report",
    ]
    # The pull request: grid_env's observation gains a facing, clients regenerated.
    base = git(generated_repo, "rev-parse", "HEAD").strip()
    git(generated_repo, "update-ref", "refs/remotes/origin/main", base)
    edit_json(generated_repo / "schemas/grid_env/observation.schema.json", add_facing)
    _generate(generated_repo)
    commit(generated_repo, "grid: facing can be up")
    summary = tmp_path / "summary.md"
    codes = []
    for step in commands:
        script = step["run"].replace("${{ github.base_ref }}", "main")
        done = subprocess.run(
            ["bash", "-e", "-c", script],
            cwd=generated_repo,
            env=_env(summary),
            capture_output=True,
            text=True,
        )
        codes.append(done.returncode)
        if step["name"] == "Breaking schema changes":
            assert "::error file=schemas/grid_env/observation.schema.json,line=45" in done.stdout
    assert codes == [0, 1, 0]
    assert "## ❌ envgen diff" in summary.read_text()
    assert "enum.value-added" in summary.read_text()
