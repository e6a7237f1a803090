"""Fixtures for the diff tests: a template git repo copied per test (cheap)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.generator.diff.gitrepo import make_repo


@pytest.fixture(scope="session")
def template_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("template") / "repo")


@pytest.fixture
def repo(template_repo: Path, tmp_path: Path) -> Path:
    """A fresh copy of the template repo (history included) for one test to change."""
    target = tmp_path / "repo"
    shutil.copytree(template_repo, target, symlinks=True)
    return target
