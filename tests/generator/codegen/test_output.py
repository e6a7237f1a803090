from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from generator.codegen import output
from generator.codegen.output import build, check, write
from generator.errors import SchemaError
from generator.schema.loader import Layout
from tests.helpers import snapshot, write_env


def _generate(root: Path, names: list[str] | None = None) -> list[str]:
    layout = Layout.at(root)
    return write(layout, build(layout, names))


def test_generate_then_check_is_clean(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha")
    write_env(tmp_path, "beta")
    assert _generate(tmp_path) == ["alpha", "beta"]
    layout = Layout.at(tmp_path)
    assert check(layout, build(layout)).ok
    assert sorted(p.name for p in (tmp_path / "generated").iterdir() if p.name[0] != ".") == [
        "__init__.py",
        "alpha",
        "beta",
    ]
    assert sorted(p.name for p in (tmp_path / "generated" / "alpha").iterdir()) == [
        "README.md",
        "__init__.py",
        "_runtime.py",
        "client.py",
        "models.py",
        "py.typed",
        "pyproject.toml",
        "schemas.json",
        "server.py",
        "trl.py",
    ]
    assert _generate(tmp_path) == []  # nothing changed, nothing rewritten


def test_output_is_deterministic_across_locations(tmp_path: Path) -> None:
    for where in ("one", "two/deeper"):
        write_env(tmp_path / where, "alpha")
        _generate(tmp_path / where)
    assert snapshot(tmp_path / "one" / "generated") == snapshot(
        tmp_path / "two/deeper" / "generated"
    )
    text = (tmp_path / "one/generated/alpha/models.py").read_text()
    assert str(tmp_path) not in text


def test_bad_input_writes_nothing(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha")
    write_env(tmp_path, "beta")
    _generate(tmp_path)
    before = snapshot(tmp_path / "generated")
    write_env(
        tmp_path, "alpha", observation={"type": "object", "properties": {"n": {"type": "integer"}}}
    )
    (tmp_path / "schemas/beta/action.schema.json").write_text("{ not json")
    with pytest.raises(SchemaError):
        _generate(tmp_path)
    assert snapshot(tmp_path / "generated") == before


def test_errors_in_several_envs_are_all_reported(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha")
    write_env(tmp_path, "beta")
    (tmp_path / "schemas/alpha/state.schema.json").write_text("[")
    (tmp_path / "schemas/beta/state.schema.json").write_text("{}")
    with pytest.raises(output.InputErrors) as info:
        _generate(tmp_path)
    files = [e.file for e in info.value.errors]
    assert files == ["schemas/alpha/state.schema.json", "schemas/beta/state.schema.json"]


def test_failure_during_swap_rolls_back_on_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_env(tmp_path, "alpha")
    _generate(tmp_path)
    before = snapshot(tmp_path / "generated")
    write_env(tmp_path, "alpha", action={"type": "object", "properties": {"z": {"type": "string"}}})
    real_rename = os.rename
    calls: list[tuple[str, str]] = []

    def crash_on_second(src: str, dst: str) -> None:
        calls.append((str(src), str(dst)))
        if len(calls) == 2:
            raise KeyboardInterrupt  # the process dies between the two renames
        real_rename(src, dst)

    monkeypatch.setattr(output.os, "rename", crash_on_second)
    monkeypatch.setattr(output.shutil, "rmtree", lambda *a, **k: None)  # as if killed
    with pytest.raises(KeyboardInterrupt):
        _generate(tmp_path)
    monkeypatch.undo()
    assert not (tmp_path / "generated/alpha").exists()  # mid-swap state on disk
    layout = Layout.at(tmp_path)
    output._repair(layout.generated)
    assert snapshot(tmp_path / "generated") == before


@pytest.mark.parametrize("other_thread", [False, True])
def test_sigint_during_swap_is_delivered_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, other_thread: bool
) -> None:
    # With another thread alive the kernel may hand the signal to it rather than to the
    # main thread: holding must not depend on which thread receives it.
    release = threading.Event()
    waiter = threading.Thread(target=release.wait, daemon=True)
    if other_thread:
        waiter.start()
    try:
        _sigint_during_swap(tmp_path, monkeypatch)
    finally:
        release.set()


def _sigint_during_swap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_env(tmp_path, "alpha")
    _generate(tmp_path)
    write_env(tmp_path, "alpha", action={"type": "object", "properties": {"z": {"type": "string"}}})
    real_rename = os.rename

    def interrupting_rename(src: str, dst: str) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # arrives while signals are held
        real_rename(src, dst)

    assert threading.current_thread() is threading.main_thread()
    monkeypatch.setattr(output.os, "rename", interrupting_rename)
    with pytest.raises(KeyboardInterrupt):
        _generate(tmp_path)
    monkeypatch.undo()
    # the swap finished before the interrupt was delivered: the new output is complete
    assert (
        '"z"' in (tmp_path / "generated/alpha/README.md").read_text()
        or "z" in (tmp_path / "generated/alpha/models.py").read_text()
    )
    layout = Layout.at(tmp_path)
    assert check(layout, build(layout)).ok
    leftovers = [
        p.name for p in (tmp_path / "generated").iterdir() if p.name.startswith(".envgen-")
    ]
    assert leftovers == [".envgen-cache"]  # no stage or aside folder survives


def test_check_reports_diff_missing_and_stale(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha")
    write_env(tmp_path, "gone")
    _generate(tmp_path)
    (tmp_path / "generated/alpha/models.py").write_text("# edited by hand\n")
    (tmp_path / "generated/alpha/client.py").unlink()
    (tmp_path / "generated/alpha/extra.py").write_text("x = 1\n")
    for p in sorted((tmp_path / "schemas/gone").iterdir()):
        p.unlink()
    (tmp_path / "schemas/gone").rmdir()
    layout = Layout.at(tmp_path)
    report = check(layout, build(layout))
    assert list(report.diffs) == ["generated/alpha/models.py"]
    assert "-# edited by hand" in report.diffs["generated/alpha/models.py"]
    assert report.missing == ["generated/alpha/client.py"]
    assert report.stale == ["generated/alpha/extra.py", "generated/gone"]
    # generate repairs everything, and removes the env whose schemas are gone
    changed = _generate(tmp_path)
    assert changed == ["alpha", "gone (removed)"]
    assert check(layout, build(layout)).ok
    assert not (tmp_path / "generated/gone").exists()


def test_hand_made_folders_are_never_removed(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha")
    (tmp_path / "generated/notes").mkdir(parents=True)
    (tmp_path / "generated/notes/n.txt").write_text("mine")
    _generate(tmp_path)
    assert (tmp_path / "generated/notes/n.txt").read_text() == "mine"


def test_unknown_env_is_an_input_error(tmp_path: Path) -> None:
    write_env(tmp_path, "alpha")
    with pytest.raises(Exception, match="no environment named 'nope'"):
        _generate(tmp_path, ["nope"])
