"""Reading `schemas/` (and the repo-level ignore file) as they were at a git revision.

The files are exported with `git archive` into a temporary folder laid out like the work
tree, so the very same loader and bundler read them; nothing in the work tree is touched.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from generator.diff.errors import GitError
from generator.schema.loader import Layout


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", "-C", str(cwd), *args], capture_output=True, check=False, timeout=120
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH", file=str(cwd)) from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args)} timed out", file=str(cwd)) from None


def _text(result: subprocess.CompletedProcess[bytes]) -> str:
    return result.stdout.decode("utf-8", "replace").strip()


def toplevel(root: Path) -> Path:
    result = _git(root, "rev-parse", "--show-toplevel")
    if result.returncode != 0:
        raise GitError(
            "not inside a git repository",
            file=str(root),
            hint="--base needs git history; compare two files with --role instead",
        )
    return Path(_text(result)).resolve()


def resolve_commit(top: Path, rev: str) -> str:
    result = _git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    if result.returncode != 0 or not _text(result):
        raise GitError(
            f"unknown git revision {rev!r}",
            file=str(top),
            hint="in CI, fetch enough history (actions/checkout with fetch-depth: 0)",
        )
    return _text(result)


@contextmanager
def checkout(layout: Layout, rev: str, extra: tuple[str, ...] = ()) -> Iterator[Layout]:
    """A Layout whose schemas/ (and `extra` paths, relative to root) are those of `rev`."""
    top = toplevel(layout.root)
    commit = resolve_commit(top, rev)
    root_rel = Path(os.path.relpath(layout.root, top))
    schemas_rel = os.path.relpath(layout.schemas, layout.root)
    generated_rel = os.path.relpath(layout.generated, layout.root)
    wanted = [(root_rel / schemas_rel).as_posix(), *((root_rel / p).as_posix() for p in extra)]
    wanted = [os.path.normpath(p).replace(os.sep, "/") for p in wanted]
    present = [p for p in wanted if _exists(top, commit, p)]
    with tempfile.TemporaryDirectory(prefix="envgen-diff-") as tmp:
        if present:
            result = _git(top, "archive", "--format=tar", commit, "--", *present)
            if result.returncode != 0:
                message = result.stderr.decode("utf-8", "replace").strip()
                raise GitError(f"git archive {rev} failed: {message}", file=str(top))
            with tarfile.open(fileobj=io.BytesIO(result.stdout)) as archive:
                archive.extractall(tmp, filter="data")
        root = Path(tmp) / root_rel
        root.mkdir(parents=True, exist_ok=True)
        yield Layout.at(root, schemas_rel, generated_rel)


def _exists(top: Path, commit: str, path: str) -> bool:
    result = _git(top, "ls-tree", "--name-only", commit, "--", path)
    return result.returncode == 0 and bool(_text(result))
