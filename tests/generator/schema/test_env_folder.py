"""Folders and files envgen writes follow the user's umask, like any other tool's."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main

MODELS = """
from pydantic import BaseModel


class Act(BaseModel):
    message: str


class Obs(BaseModel):
    reply: str
"""


@pytest.fixture(params=[0o022, 0o077, 0o002])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    mask: int = request.param
    old = os.umask(mask)
    try:
        yield mask
    finally:
        os.umask(old)


def _modes(root: Path, under: str) -> dict[str, int]:
    return {
        p.relative_to(root).as_posix(): stat.S_IMODE(p.stat().st_mode)
        for p in [root / under, *(root / under).rglob("*")]
        if "__pycache__" not in p.parts
    }


def _assert_umask(root: Path, under: str, mask: int) -> None:
    modes = _modes(root, under)
    assert modes
    for rel, mode in modes.items():
        want = (0o777 if (root / rel).is_dir() else 0o666) & ~mask
        assert mode == want, f"{rel}: {oct(mode)} != {oct(want)} under umask {oct(mask)}"


def test_new_and_generate_follow_the_umask(tmp_path: Path, umask: int) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["--root", str(tmp_path), "new", "my_env"]).exit_code == 0
    _assert_umask(tmp_path, "schemas", umask)
    result = runner.invoke(main, ["--root", str(tmp_path), "generate"])
    assert result.exit_code == 0, result.output
    _assert_umask(tmp_path, "generated", umask)


def test_import_and_forced_replace_follow_the_umask(
    tmp_path: Path, umask: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `import` puts the project root on sys.path for good: keep that to this test.
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    module = f"umask_models_{oct(umask)[2:]}"
    (tmp_path / f"{module}.py").write_text(MODELS)
    args = ["--root", str(tmp_path), "import", f"{module}:Act", f"{module}:Obs", "--name", "im_env"]
    runner = CliRunner()
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    _assert_umask(tmp_path, "schemas", umask)
    _assert_umask(tmp_path, "generated", umask)
    result = runner.invoke(main, [*args, "--force", "--version", "0.2.0"])
    assert result.exit_code == 0, result.output
    _assert_umask(tmp_path, "schemas", umask)
    _assert_umask(tmp_path, "generated", umask)
