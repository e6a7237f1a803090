"""mypy --strict and ruff over the generator, the committed clients and the golden clients."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.codegen.formatting import LINT_RULES, RUFF_SETTINGS
from tests.golden.regenerate import CASES
from tests.helpers import REPO


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MYPYPATH": str(REPO)}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def _mypy(targets: list[str], cwd: Path, *options: str) -> None:
    proc = _run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            *options,
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",
            str(REPO / ".mypy_cache"),
            *targets,
        ],
        cwd,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_generator_and_committed_clients() -> None:
    targets = ["generator"]
    if any((REPO / "generated").glob("*/client.py")):
        targets.append("generated")
    _mypy(targets, REPO)


def test_mypy_strict_as_python_3_12() -> None:
    """No Python 3.12 here (3.11 runs the suite, 3.13 `make test-py313`): checked statically."""
    targets = ["generator", "runtime/envgen_runtime"]
    if any((REPO / "generated").glob("*/client.py")):
        targets.append("generated")
    _mypy(targets, REPO, "--python-version", "3.12")


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_mypy_strict_golden_clients(case: str) -> None:
    _mypy(["generated"], CASES / case)


def test_ruff_clean_generated_code() -> None:
    folders = [str(REPO / "generated"), *(str(p / "generated") for p in CASES.iterdir())]
    ruff = [sys.executable, "-m", "ruff"]
    check = _run([*ruff, "check", *RUFF_SETTINGS, *LINT_RULES, *folders], REPO)
    assert check.returncode == 0, check.stdout + check.stderr
    fmt = _run([*ruff, "format", *RUFF_SETTINGS, "--check", *folders], REPO)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_ruff_clean_project_code() -> None:
    """The whole tree as pyproject.toml configures ruff: the runtime, scripts and the README's
    code blocks too (ruff formats Markdown), not only the generator's folders."""
    check = _run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], REPO)
    assert check.returncode == 0, check.stdout + check.stderr
    fmt = _run([sys.executable, "-m", "ruff", "format", "--no-cache", "--check", "."], REPO)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_scaffolded_env_generates_a_client_that_imports_and_type_checks(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from generator.cli import main

    runner = CliRunner()
    assert runner.invoke(main, ["--root", str(tmp_path), "new", "foo"]).exit_code == 0
    result = runner.invoke(main, ["--root", str(tmp_path), "generate", "foo"])
    assert result.exit_code == 0, result.output
    _mypy(["generated"], tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    probe = (
        "from generated.foo import FooAction, FooEnv, FooObservation, FooState\n"
        "print(FooEnv.SPEC.name, FooAction(message='hi').message)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "foo hi"
