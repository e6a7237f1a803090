"""The pre-commit hooks, installed and run by pre-commit itself in a user's repository.

pre-commit installs this repository with `pip install .` plus the hook's
`additional_dependencies` (the runtime in runtime/), in a venv of its own, so this is the one
test that sees what a user of the hooks gets. tests/generator/diff/test_ci_helpers.py runs
the entries.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.generator.diff.gitrepo import commit, make_repo
from tests.helpers import REPO

pytestmark = pytest.mark.e2e


def _pre_commit(repo: Path, home: Path, hook: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), hook, "--all-files"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_envgen_check_hook_installs_and_passes_then_fails_on_a_stale_client(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "user", ("echo_env",))
    generate = [str(Path(sys.executable).parent / "envgen"), "generate"]
    subprocess.run(generate, cwd=repo, check=True, capture_output=True)
    commit(repo, "generated")  # `git add -A`, as a user would: the cache must not go in
    home = tmp_path / "pre-commit-home"

    ok = _pre_commit(repo, home, "envgen-check")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "envgen check" in ok.stdout and "Passed" in ok.stdout

    client = repo / "generated" / "echo_env" / "client.py"
    client.write_text(client.read_text() + "# edited by hand\n")
    stale = _pre_commit(repo, home, "envgen-check")
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "Failed" in stale.stdout and "generated/echo_env/client.py" in stale.stdout
