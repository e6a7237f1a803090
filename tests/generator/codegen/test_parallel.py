"""Rendering envs in worker processes gives the bytes and the errors of a serial run."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.codegen import datamodel, parallel, render, warm_worker
from generator.codegen.model_call import ModelCall
from generator.codegen.output import InputErrors, build
from generator.codegen.parallel import WarmRenderer, render_all, worker_count
from generator.codegen.render_constants import TEMPLATES_DIR
from generator.codegen.warm_worker import JOBS_VARIABLE
from generator.errors import EnvgenError, SchemaError
from generator.schema.loader import Layout, load_env
from tests.helpers import REPO, write_env

EXAMPLES = ("calc_env", "coding_env", "echo_env", "grid_env", "quiz_env", "reacher_env")


@pytest.fixture(autouse=True)
def _no_native_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Earlier tests in this process may leave native threads (Ray's gRPC clients), which make
    envgen refuse to fork; these tests are about the workers, so they see only Python's."""
    monkeypatch.setattr(parallel, "_os_threads", lambda: threading.active_count())


def _children() -> set[str]:
    """This process's child processes (Linux), whoever forked them."""
    return set(Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split())


@pytest.fixture
def started() -> Callable[[], set[str]]:
    """The child processes started since the test began (a session's servers are children too)."""
    before = _children()
    return lambda: _children() - before


def _project(root: Path, extra: int = 3) -> list[str]:
    """The repository's example envs plus `extra` small ones: enough for two workers."""
    shutil.copytree(REPO / "schemas", root / "schemas")
    for i in range(extra):
        write_env(root, f"small_{i}")
    return sorted([*EXAMPLES, *(f"small_{i}" for i in range(extra))])


def test_workers_write_the_bytes_of_a_serial_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = _project(tmp_path)
    layout = Layout.at(tmp_path)
    assert worker_count(len(names), 2) == 2
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    serial = build(layout, use_cache=False)
    monkeypatch.setenv(JOBS_VARIABLE, "2")
    parallel = build(layout, use_cache=False)
    assert list(parallel.files.items()) == list(serial.files.items())  # order too
    assert [env.name for env in parallel.envs] == names
    assert [env.sources for env in parallel.envs] == [env.sources for env in serial.envs]


def test_each_error_names_its_own_file(tmp_path: Path) -> None:
    _project(tmp_path, extra=6)
    (tmp_path / "schemas/small_1/env.toml").write_text('name = "small_1"\nversion = "x"\n')
    (tmp_path / "schemas/small_4/state.schema.json").write_text('{"type": 5}')
    layout = Layout.at(tmp_path)
    results = render_all(
        layout, sorted(p.parent.name for p in layout.schemas.glob("*/env.toml")), 2
    )
    failed = {r.name: r.load_error for r in results if r.load_error is not None}
    assert set(failed) == {"small_1", "small_4"}
    assert failed["small_1"] is not None and failed["small_1"].file == "schemas/small_1/env.toml"
    assert failed["small_4"] is not None
    assert failed["small_4"].file == "schemas/small_4/state.schema.json"
    assert failed["small_4"].pointer == "/type"
    with pytest.raises(InputErrors) as caught:
        build(layout, use_cache=False)
    assert [e.file for e in caught.value.errors] == [
        "schemas/small_1/env.toml",
        "schemas/small_4/state.schema.json",
    ]


def test_a_render_error_in_a_worker_names_its_file(tmp_path: Path) -> None:
    names = _project(tmp_path, extra=6)
    clash = {
        "$defs": {"Small5Env": {"type": "object"}},
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/Small5Env"}},
    }
    write_env(tmp_path, "small_5", observation=clash)
    results = render_all(Layout.at(tmp_path), names, 2)
    errors = {r.name: r.render_error for r in results if r.render_error is not None}
    assert list(errors) == ["small_5"]
    error = errors["small_5"]
    assert isinstance(error, SchemaError)
    assert error.file == "schemas/small_5/observation.schema.json"
    assert error.pointer == "/$defs/Small5Env"


def test_jobs_one_few_envs_or_running_threads_render_in_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert worker_count(100, 1) == 1
    assert worker_count(3, 8) == 1  # too few envs to pay for a fork
    assert worker_count(8, 8) == 2
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    assert worker_count(100) == 1
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert worker_count(100, 2) == 1  # forking beside a thread can deadlock the child
    finally:
        stop.set()
        thread.join()
    assert worker_count(100, 2) == 2


def test_a_bad_jobs_variable_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_env(tmp_path, "foo")
    monkeypatch.setenv(JOBS_VARIABLE, "two")
    with pytest.raises(EnvgenError, match=JOBS_VARIABLE):
        worker_count(10)
    result = CliRunner().invoke(main, ["--root", str(tmp_path), "generate"])
    assert result.exit_code == 2
    assert f"${JOBS_VARIABLE} must be a whole number" in result.output
    assert not (tmp_path / "generated").exists()


def _half(call: ModelCall) -> str:
    """Which of an env's two model calls `call` is: the server's maps base classes."""
    return "server" if "base_class_map" in call.options else "client"


def _record_pids(monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    """Make each model-generator call note its half (client or server models) and its process
    (a worker forked later inherits this)."""
    run = ModelCall.run

    def noting(call: ModelCall) -> str:
        with log.open("a") as out:
            out.write(f"{_half(call)} {os.getpid()}\n")
        return run(call)

    monkeypatch.setattr(ModelCall, "run", noting)


def _made_where(log: Path) -> list[tuple[str, str]]:
    return [(half, pid) for half, pid in (line.split() for line in log.read_text().splitlines())]


@pytest.mark.parametrize("worker_dies", [False, True])
def test_models_come_from_the_warm_worker_or_here_if_it_dies_with_a_serial_runs_bytes(
    started: Callable[[], set[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    worker_dies: bool,
) -> None:
    names = _project(tmp_path, extra=0)[:2]
    layout = Layout.at(tmp_path)
    serial = render_all(layout, names, 1)
    log = tmp_path / "pids"
    _record_pids(monkeypatch, log)
    if worker_dies:
        monkeypatch.setattr(datamodel, "warm_up", lambda: os._exit(3))
    with WarmRenderer(layout) as renderer:
        warm = renderer.render(names)
    assert [(r.name, r.files) for r in warm] == [(r.name, r.files) for r in serial]
    made = _made_where(log)
    here = str(os.getpid())
    if worker_dies:
        assert made == [("client", here), ("server", here)] * 2
    else:  # client models in the worker, server models in its twin, meanwhile
        clients = {pid for half, pid in made if half == "client"}
        servers = {pid for half, pid in made if half == "server"}
        assert len(made) == 4 and len(clients) == 1 and len(servers) == 1
        assert here not in clients | servers and clients != servers
    assert started() == set()


def test_the_worker_has_the_model_calls_before_the_templates_load_and_they_load_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Loading them (compiling, without a template cache) takes ~0.1 s: done while the
    # worker runs the calls, not before they are sent nor after the reply.
    names = _project(tmp_path, extra=0)[:1]
    layout = Layout.at(tmp_path)
    render._environment.cache_clear()
    loaded: dict[str, int] = {}
    sending, receiving = warm_worker.Worker.send, warm_worker.Worker.receive

    def count(step: str) -> None:
        cache = render._environment(TEMPLATES_DIR, layout.generated).cache
        loaded[step] = len(cache or {})

    def send(self: warm_worker.Worker, *job: Any) -> None:
        count("sent")
        sending(self, *job)

    def receive(self: warm_worker.Worker) -> Any:
        count("awaited")
        return receiving(self)

    monkeypatch.setattr(warm_worker.Worker, "send", send)
    monkeypatch.setattr(warm_worker.Worker, "receive", receive)
    with WarmRenderer(layout) as renderer:
        renderer.render(names)
    templates = list(TEMPLATES_DIR.glob("*.jinja"))
    # when sent: only the two headers' templates (and the macros they import)
    assert loaded["sent"] < loaded["awaited"] == len(templates)


def test_when_the_twin_dies_the_worker_makes_both_halves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = _project(tmp_path, extra=0)[:2]
    layout = Layout.at(tmp_path)
    serial = render_all(layout, names, 1)
    log = tmp_path / "pids"
    _record_pids(monkeypatch, log)
    monkeypatch.setattr(warm_worker, "_run_calls", lambda inbox, outbox: None)
    with WarmRenderer(layout) as renderer:
        warm = renderer.render(names)
    assert [(r.name, r.files) for r in warm] == [(r.name, r.files) for r in serial]
    made = _made_where(log)
    assert len(made) == 4 and len({pid for _, pid in made}) == 1
    assert made[0][1] != str(os.getpid())


@pytest.mark.parametrize("half", ["client", "server"])
def test_an_error_in_the_warm_worker_is_reported_as_a_serial_run_reports_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, half: str
) -> None:
    # the client models' error comes from the worker, the server models' from its twin
    _project(tmp_path, extra=2)
    (tmp_path / "schemas/small_1/state.schema.json").write_text('{"type": 5}')
    run = ModelCall.run

    def refuse(call: ModelCall) -> str:
        if _half(call) == half:
            raise SchemaError("no models today", file=call.expected[0], pointer="/x")
        return run(call)

    monkeypatch.setattr(ModelCall, "run", refuse)
    with WarmRenderer(Layout.at(tmp_path)) as renderer:
        results = renderer.render(["small_0", "small_1"])
    error = results[0].render_error
    assert isinstance(error, SchemaError)
    action = load_env(Layout.at(tmp_path), "small_0").class_name("action")
    assert (str(error.file), error.pointer) == (action, "/x")
    assert "no models today" in str(error)
    load_error = results[1].load_error  # found while loading, before the worker is asked
    assert load_error is not None
    assert (load_error.file, load_error.pointer) == ("schemas/small_1/state.schema.json", "/type")


def test_a_warm_worker_left_unused_is_stopped_without_waiting_for_its_warm_up(
    started: Callable[[], set[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(tmp_path, extra=0)
    warming = threading.Event()
    monkeypatch.setattr(datamodel, "warm_up", warming.wait)  # would never finish alone
    with WarmRenderer(Layout.at(tmp_path)) as renderer:
        assert started() != set()
        assert renderer.render([]) == []
    assert started() == set()


def test_jobs_one_or_no_warm_flag_forks_no_worker(
    started: Callable[[], set[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = _project(tmp_path, extra=0)[:1]
    layout = Layout.at(tmp_path)
    log = tmp_path / "pids"
    _record_pids(monkeypatch, log)
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    with WarmRenderer(layout) as renderer:
        assert started() == set()
        renderer.render(names)
    monkeypatch.delenv(JOBS_VARIABLE)
    with WarmRenderer(layout, warm=False) as renderer:
        assert started() == set()
        renderer.render(names)
    assert {pid for _, pid in _made_where(log)} == {str(os.getpid())}
    assert len(_made_where(log)) == 4


def test_native_threads_invisible_to_threading_also_prevent_forking(
    started: Callable[[], set[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert parallel._os_threads() >= threading.active_count() >= 1
    monkeypatch.setattr(parallel, "_os_threads", lambda: 3)  # e.g. Ray's gRPC threads
    assert worker_count(100, 2) == 1
    with WarmRenderer(Layout.at(tmp_path)):
        assert started() == set()


_IGNORES_SIGTERM = """
import signal, sys, threading
from pathlib import Path
from generator.codegen import datamodel
from generator.schema.loader import Layout
from generator.codegen.parallel import WarmRenderer, render_all
signal.signal(signal.SIGTERM, lambda *_: None)  # as a calling program (or Ray) may install
layout = Layout.at(Path(sys.argv[1]))
if sys.argv[2] == "pool":
    render_all(layout, sys.argv[3:], 2)
else:
    datamodel.warm_up = threading.Event().wait  # still warming up when it is stopped
    with WarmRenderer(layout) as renderer:
        renderer.render([])
print("stopped", flush=True)
"""


@pytest.mark.parametrize("workers", ["warm", "pool"])
def test_workers_that_inherited_a_sigterm_handler_are_still_stopped(
    tmp_path: Path, workers: str
) -> None:
    names = _project(tmp_path, extra=3) if workers == "pool" else []
    argv = [sys.executable, "-c", _IGNORES_SIGTERM, str(tmp_path), workers, *names]
    with subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, text=True) as caller:
        try:
            out, _ = caller.communicate(timeout=120)
        except subprocess.TimeoutExpired:  # before the fix: the caller waited forever
            for child in Path(f"/proc/{caller.pid}/task/{caller.pid}/children").read_text().split():
                os.kill(int(child), signal.SIGKILL)  # the workers it would leave behind
            caller.kill()
            caller.communicate()
            raise AssertionError("a worker outlived its stop") from None
    assert caller.returncode == 0
    assert out.split() == ["stopped"]
