"""The generation cache saves time but never changes a verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.codegen import cache as cache_mod
from generator.codegen.cache import CACHE_FILE
from generator.codegen.output import build, check, write
from generator.schema.loader import Layout
from tests.helpers import write_env


def _layout(tmp_path: Path) -> Layout:
    write_env(tmp_path, "alpha")
    write_env(tmp_path, "beta")
    layout = Layout.at(tmp_path)
    write(layout, build(layout))
    return layout


def test_unchanged_envs_are_reused(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    result = build(layout)
    assert result.reused == ["alpha", "beta"] and result.envs == []
    assert check(layout, result).ok


def test_changed_input_renders_only_that_env(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    write_env(tmp_path, "beta", state={"type": "object", "properties": {"s": {"type": "string"}}})
    result = build(layout)
    assert result.reused == ["alpha"]
    assert [e.name for e in result.envs] == ["beta"]
    assert write(layout, result) == ["beta"]
    assert build(layout).reused == ["alpha", "beta"]


@pytest.mark.parametrize("edit", ["change", "delete", "add"])
def test_any_output_edit_is_caught_with_the_cache_on(tmp_path: Path, edit: str) -> None:
    layout = _layout(tmp_path)
    models = tmp_path / "generated/alpha/models.py"
    if edit == "change":
        models.write_text(models.read_text().replace("x: int", "x: str"))
    elif edit == "delete":
        models.unlink()
    else:
        (tmp_path / "generated/alpha/notes.py").write_text("")
    result = build(layout)
    assert result.reused == ["beta"]
    assert not check(layout, result).ok


def test_toolchain_change_invalidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = _layout(tmp_path)
    monkeypatch.setattr(cache_mod, "toolchain_fingerprint", lambda _d: "other")
    monkeypatch.setattr("generator.codegen.output.toolchain_fingerprint", lambda _d: "other")
    assert build(layout).reused == []


def test_corrupt_or_missing_cache_falls_back_to_rendering(tmp_path: Path) -> None:
    layout = _layout(tmp_path)
    (tmp_path / "generated" / CACHE_FILE).write_text("{not json")
    result = build(layout)
    assert result.reused == [] and len(result.envs) == 2
    assert check(layout, result).ok
    (tmp_path / "generated" / CACHE_FILE).unlink()
    assert build(layout, use_cache=False).reused == []


def test_removed_shared_input_invalidates(tmp_path: Path) -> None:
    obs = {"type": "object", "properties": {"p": {"$ref": "../_shared/p.json"}}}
    write_env(tmp_path, "alpha", observation=obs, raw={"_shared/p.json": '{"type": "integer"}'})
    layout = Layout.at(tmp_path)
    write(layout, build(layout))
    (tmp_path / "schemas/_shared/p.json").write_text('{"type": "string"}')
    assert build(layout).reused == []


def test_the_cache_ignores_itself_so_it_is_never_committed(tmp_path: Path) -> None:
    # A user's repository has no .gitignore for it; `git add -A` must not pick it up, or a
    # check under another toolchain (a pre-commit env) rewrites a committed file.
    import subprocess

    write_env(tmp_path, "alpha")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    layout = Layout.at(tmp_path)
    write(layout, build(layout))
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "generated"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    listed = sorted(line[3:] for line in status.splitlines())
    assert listed and all(path.startswith("generated/") for path in listed)
    assert not [path for path in listed if "cache" in path], listed
    assert cache_mod.load(tmp_path / "generated") is not None  # and it is still used


@pytest.mark.parametrize("first", [True, False])
def test_a_tool_file_that_appears_is_rendered(tmp_path: Path, first: bool) -> None:
    """A new `tools/<tool>.json` is an input no record lists yet: the env renders again."""
    tool = {"name": "t0", "description": "", "inputSchema": {"type": "object", "properties": {}}}
    raw = {"alpha/tools/t0.json": json.dumps(tool)} if not first else {}
    write_env(tmp_path, "alpha", raw=raw)
    layout = Layout.at(tmp_path)
    write(layout, build(layout))
    assert build(layout).reused == ["alpha"]
    write_env(tmp_path, "alpha", raw={"alpha/tools/t1.json": json.dumps({**tool, "name": "t1"})})
    result = build(layout)
    assert result.reused == [] and [e.name for e in result.envs] == ["alpha"]
    assert [t.name for t in result.envs[0].tools] == (["t1"] if first else ["t0", "t1"])
