"""The `envgen` program forks its warm model worker first thing, and never leaves it behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.codegen import warm_worker
from generator.codegen.warm_worker import JOBS_VARIABLE, wants_early_worker
from tests.helpers import REPO

# Runs the `envgen` program (generator.entry.run) with ARGV, noting each fork of a worker
# (its PID, the forking process and whether the CLI was imported yet) and the process each
# model-generator call runs in; WARMUP=block makes the warm-up never finish on its own.
_PROGRAM = """
import json, os, sys, threading
from pathlib import Path
from generator import entry
from generator.codegen import datamodel, warm_worker
from generator.codegen.model_call import ModelCall
log = Path(os.environ["LOG"])
def note(**fields):
    with log.open("a") as out:
        out.write(json.dumps(fields) + "\\n")
note(main=os.getpid())
real_fork = warm_worker.fork
def fork(*args):
    worker = real_fork(*args)
    note(fork=worker.pid, by=os.getpid(), cli_loaded="generator.cli" in sys.modules)
    return worker
warm_worker.fork = fork
run = ModelCall.run
def noting(call):
    half = "server" if "base_class_map" in call.options else "client"
    note(half=half, pid=os.getpid(), loader="generator.schema.loader" in sys.modules)
    return run(call)
ModelCall.run = noting
if os.environ.get("WARMUP") == "block":
    datamodel.warm_up = threading.Event().wait
sys.argv = ["envgen", *sys.argv[1:]]
entry.run()
"""


def _program(
    root: Path, *argv: str, warmup: str = "", jobs: str = ""
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, object]]]:
    log = root / "log.jsonl"
    log.unlink(missing_ok=True)
    env = dict(os.environ, LOG=str(log), WARMUP=warmup, **{JOBS_VARIABLE: jobs})
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROGRAM, "--root", str(root), *argv],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        notes = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        for pid in [n["fork"] for n in notes if "fork" in n]:  # whatever a failure left behind
            if _alive(int(str(pid))):
                os.kill(int(str(pid)), signal.SIGKILL)
    return done, notes


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _wait_gone(pid: int) -> None:
    """The twin is the worker's child: it ends on its own once the worker has gone."""
    deadline = time.monotonic() + 10
    while _alive(pid):
        assert time.monotonic() < deadline, f"process {pid} outlived its worker"
        time.sleep(0.05)


def _project(root: Path) -> None:
    shutil.copytree(REPO / "schemas", root / "schemas")


def _edit(root: Path, env: str) -> None:
    path = root / "schemas" / env / "observation.schema.json"
    schema = json.loads(path.read_text())
    schema["properties"]["added_later"] = {"type": "integer", "description": "new"}
    path.write_text(json.dumps(schema, indent=2))


def _tree(root: Path) -> dict[str, bytes]:
    out = root / "generated"
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and ".envgen-cache" not in p.parts
    }


def test_the_worker_is_forked_before_the_cli_loads_and_makes_the_changed_envs_models(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    assert CliRunner().invoke(main, ["--root", str(tmp_path), "generate"]).exit_code == 0
    serial = tmp_path / "serial"
    _project(serial)
    _edit(tmp_path, "grid_env")
    _edit(serial, "grid_env")

    done, notes = _program(tmp_path, "generate")

    assert done.returncode == 0, done.stderr
    forks = [n for n in notes if "fork" in n]
    early, twin = forks  # the warm worker, forked first thing; its twin, forked once warm
    (program,) = [n["main"] for n in notes if "main" in n]
    assert (early["by"], early["cli_loaded"]) == (program, False)
    assert twin["by"] == early["fork"]
    made = [(n["half"], n["pid"]) for n in notes if "half" in n]  # only grid_env's models
    assert [n["loader"] for n in notes if "half" in n] == [False, False]  # no env was sent
    assert made in (
        [("client", early["fork"]), ("server", twin["fork"])],
        [("server", twin["fork"]), ("client", early["fork"])],
    )
    assert not _alive(int(str(early["fork"])))
    _wait_gone(int(str(twin["fork"])))
    runner = CliRunner(env={JOBS_VARIABLE: "1"})
    assert runner.invoke(main, ["--root", str(serial), "generate"]).exit_code == 0
    assert _tree(tmp_path) == _tree(serial)


@pytest.mark.parametrize(
    "argv",
    [
        ["generate"],  # no cache yet: many envs to render, the worker is stopped at once
        ["generate", "no_such_env"],  # an input error (exit 2) before any rendering
        ["check"],  # nothing is current (no output): check fails, having rendered
    ],
)
def test_a_worker_the_run_does_not_use_is_stopped_without_waiting_for_its_warm_up(
    tmp_path: Path, argv: list[str]
) -> None:
    _project(tmp_path)
    done, notes = _program(tmp_path, *argv, warmup="block")
    assert done.returncode in (0, 1, 2), done.stderr
    assert "Traceback" not in done.stderr
    (fork,) = [n for n in notes if "fork" in n]
    assert fork["cli_loaded"] is False
    assert not _alive(int(str(fork["fork"])))


def test_jobs_one_no_cache_and_help_fork_nothing_early(tmp_path: Path) -> None:
    _project(tmp_path)
    for argv, jobs in ((["generate"], "1"), (["generate", "--no-cache"], ""), (["--help"], "")):
        done, notes = _program(tmp_path, *argv, jobs=jobs)
        assert done.returncode == 0, done.stderr
        assert not [n for n in notes if "fork" in n and n["cli_loaded"] is False], argv


@pytest.mark.parametrize(
    ("argv", "environ", "wanted"),
    [
        (["generate"], {}, True),
        (["-q", "--root", "x", "check", "echo_env"], {}, True),
        (["generate"], {JOBS_VARIABLE: "0"}, True),
        (["generate"], {JOBS_VARIABLE: "4"}, True),
        (["generate"], {JOBS_VARIABLE: "1"}, False),
        (["generate"], {JOBS_VARIABLE: " 01 "}, False),  # read as the renderer reads it: 1
        (["generate"], {JOBS_VARIABLE: "two"}, False),  # the CLI reports that, not us
        (["generate", "--no-cache"], {}, False),
        (["generate", "--help"], {}, False),
        (["--version"], {}, False),
        (["diff", "HEAD"], {}, False),
        ([], {}, False),
    ],
)
def test_which_commands_fork_the_worker_early(
    argv: list[str], environ: dict[str, str], wanted: bool
) -> None:
    assert wants_early_worker(argv, environ) is wanted


def test_the_early_worker_is_taken_once(monkeypatch: pytest.MonkeyPatch) -> None:
    forked: list[object] = []

    def fork() -> object:
        forked.append(object())
        return forked[-1]

    monkeypatch.setattr(warm_worker, "fork", fork)
    monkeypatch.setattr("atexit.register", lambda hook: None)
    warm_worker.start_early(["generate"])
    assert warm_worker.take_early() is forked[0]
    assert warm_worker.take_early() is None
    warm_worker.start_early(["list"])
    assert warm_worker.take_early() is None and len(forked) == 1
