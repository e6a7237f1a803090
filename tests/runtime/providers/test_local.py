"""LocalProcessProvider and the client's ownership of the server it starts."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from envgen_runtime import (
    EnvgenRuntimeError,
    LocalProcessProvider,
    Provider,
    ProviderError,
)

from tests.helpers import REPO
from tests.runtime.clients import CounterAction, LegacyCounterEnv, MiniEnv, server_command
from tests.runtime.fakes import pid_alive, wait_gone

REPO_ROOT = REPO


def test_early_exit_reports_code_and_output() -> None:
    provider = LocalProcessProvider(
        ["{python}", "-c", "import sys; print('boom'); sys.exit(3)"], startup_timeout_s=10
    )
    with pytest.raises(ProviderError) as info:
        provider.start()
    err = info.value
    assert err.exit_code == 3
    assert "boom" in str(err) and "boom" in err.output
    assert "exited with code 3" in str(err)
    assert provider.base_url is None and provider.pid is None
    assert provider.start_attempts == 1  # not an address clash: no retry


def test_early_exit_quotes_only_the_last_lines() -> None:
    code = "import sys\nfor i in range(100): print('line', i)\nsys.exit(5)"
    provider = LocalProcessProvider(["{python}", "-c", code], startup_timeout_s=10)
    with pytest.raises(ProviderError) as info:
        provider.start()
    assert "line 99" in info.value.output and "line 59" not in info.value.output
    assert len(info.value.output.splitlines()) == 40


def test_killed_by_signal() -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    with pytest.raises(ProviderError, match="killed by signal 9") as info:
        LocalProcessProvider(["{python}", "-c", code], startup_timeout_s=10).start()
    assert info.value.exit_code == -9


def test_readiness_timeout_stops_the_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    code = (
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
        "print('waiting', flush=True); time.sleep(60)"
    )
    provider = LocalProcessProvider(["{python}", "-c", code], startup_timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(ProviderError) as info:
        provider.start()
    assert time.monotonic() - started < 8
    assert "still running after 1 s" in str(info.value)
    assert info.value.exit_code is None and "waiting" in info.value.output
    assert wait_gone(int(pid_file.read_text()))


def test_missing_executable() -> None:
    provider = LocalProcessProvider(["/nonexistent/envgen-server"], startup_timeout_s=5)
    with pytest.raises(ProviderError, match="cannot run server command"):
        provider.start()


def test_start_stop_and_placeholders(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    command = [*server_command("mini"), "--pid-file", str(pid_file)]
    provider = LocalProcessProvider(command, startup_timeout_s=20, transport="http")
    assert isinstance(provider, Provider)
    url = provider.start()
    try:
        assert url == f"http://127.0.0.1:{provider.port}"
        assert provider.base_url == url
        assert provider.argv[0] == sys.executable and str(provider.port) in provider.argv
        assert provider.start() == url  # already running: same server
        assert "mini server" in provider.output_tail()
        pid = int(pid_file.read_text())
        assert pid == provider.pid and pid_alive(pid)
    finally:
        provider.stop()
    assert wait_gone(pid)
    assert provider.base_url is None
    provider.stop()  # idempotent


def test_transport_placeholder_and_env(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = (
        "import os, sys; open(sys.argv[1], 'w').write(sys.argv[2] + ' ' + os.environ['ENVGEN_T']);"
        " sys.exit(1)"
    )
    provider = LocalProcessProvider(
        ["{python}", "-c", code, str(out), "{transport}"],
        transport="http",
        env={"ENVGEN_T": "yes"},
        cwd=tmp_path,
        startup_timeout_s=10,
    )
    with pytest.raises(ProviderError):
        provider.start()
    assert out.read_text() == "http yes"


def test_address_in_use_is_retried_on_a_new_port(tmp_path: Path) -> None:
    marker = tmp_path / "failed-once"
    command = [*server_command("mini"), "--fail-once-marker", str(marker)]
    with LocalProcessProvider(command, startup_timeout_s=20) as provider:
        assert marker.exists()
        assert provider.start_attempts == 2
        assert provider.base_url is not None


def test_address_in_use_with_fixed_port_is_not_retried(tmp_path: Path) -> None:
    marker = tmp_path / "failed-once"
    command = [*server_command("mini"), "--fail-once-marker", str(marker)]
    provider = LocalProcessProvider(command, port=1, startup_timeout_s=10)
    with pytest.raises(ProviderError, match="address already in use"):
        provider.start()
    assert provider.start_attempts == 1


def test_stop_kills_children_too(tmp_path: Path) -> None:
    child_file = tmp_path / "child"
    command = [*server_command("mini"), "--child-pid-file", str(child_file)]
    provider = LocalProcessProvider(command, startup_timeout_s=20)
    provider.start()
    child = int(child_file.read_text())
    assert pid_alive(child)
    provider.stop()
    assert wait_gone(child)


def test_live_providers_are_stopped_at_interpreter_exit(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(REPO_ROOT)!r})
        from envgen_runtime import LocalProcessProvider
        command = ["{{python}}", {str(server_command("mini")[1])!r}, "mini", "--host", "{{host}}",
                   "--port", "{{port}}", "--pid-file", {str(pid_file)!r}]
        provider = LocalProcessProvider(command, startup_timeout_s=20)
        print(provider.start())
        # no stop(): the atexit hook must do it
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60, capture_output=True)
    assert wait_gone(int(pid_file.read_text()))


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        ("python -m x", {}, TypeError),
        ([], {}, ValueError),
        (["x"], {"health_path": "health"}, ValueError),
        (["x"], {"startup_timeout_s": 0}, ValueError),
        (["x"], {"port": 70000}, ValueError),
    ],
)
def test_provider_argument_checks(args: object, kwargs: dict[str, object], error: type) -> None:
    with pytest.raises(error):
        LocalProcessProvider(args, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- client ownership


def test_from_local_process_runs_an_episode_and_stops_on_close() -> None:
    env = LegacyCounterEnv.from_local_process()
    provider = env.provider
    assert isinstance(provider, LocalProcessProvider)
    pid = provider.pid
    assert pid is not None and pid_alive(pid)
    try:
        assert env.base_url == provider.base_url
        env.reset()
        assert env.step(CounterAction(message="local", delta=2)).observation.total == 2
        assert env.state().step_count == 1
    finally:
        env.close()
    assert wait_gone(pid)
    env.close()  # idempotent


def test_context_exit_stops_the_server(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    command = [*server_command("mini"), "--pid-file", str(pid_file)]
    with MiniEnv.from_local_process(command) as env:
        pid = int(pid_file.read_text())
        assert pid_alive(pid) and env.transport_name == "http"
    assert wait_gone(pid)


def test_context_exit_on_error_stops_the_server(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    command = [*server_command("mini"), "--pid-file", str(pid_file)]
    with pytest.raises(RuntimeError, match="user code failed"), MiniEnv.from_local_process(command):
        raise RuntimeError("user code failed")
    assert wait_gone(int(pid_file.read_text()))


def test_failed_construction_stops_the_server(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    command = [*server_command("mini"), "--pid-file", str(pid_file)]
    with pytest.raises(ValueError, match="request_timeout_s"):
        MiniEnv.from_local_process(command, request_timeout_s=0)
    assert pid_file.exists()
    assert wait_gone(int(pid_file.read_text()))


def test_failed_transport_construction_stops_a_provider_the_client_started(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"

    class BrokenTransportEnv(MiniEnv):
        def _make_transport(self) -> object:  # type: ignore[override]
            raise RuntimeError("no transport today")

    provider = LocalProcessProvider(
        [*server_command("mini"), "--pid-file", str(pid_file)], startup_timeout_s=20
    )
    with pytest.raises(RuntimeError, match="no transport today"):
        BrokenTransportEnv(provider=provider)
    assert wait_gone(int(pid_file.read_text()))
    assert provider.base_url is None


def test_client_started_provider_is_owned_but_running_one_is_not(tmp_path: Path) -> None:
    provider = LocalProcessProvider(server_command("mini"), startup_timeout_s=20)
    with MiniEnv(provider=provider) as env:  # the client starts it, so it owns it
        assert env.provider is provider and provider.base_url == env.base_url
    assert provider.base_url is None
    url = provider.start()
    try:
        with MiniEnv(provider=provider) as env:  # already running: borrowed, not owned
            assert env.base_url == url
        assert provider.base_url == url
    finally:
        provider.stop()


def test_running_provider_handed_over_with_owns_provider_is_stopped_by_close() -> None:
    provider = LocalProcessProvider(server_command("mini"), startup_timeout_s=20)
    url = provider.start()
    try:
        with MiniEnv(provider=provider, owns_provider=True) as env:
            assert env.base_url == url
        assert provider.base_url is None
    finally:
        provider.stop()


def test_from_local_process_needs_a_command() -> None:
    class NoCommandEnv(MiniEnv):
        SPEC = MiniEnv.SPEC.__class__(name="none", version="0", transport="http")

    with pytest.raises(ValueError, match="server_command"):
        NoCommandEnv.from_local_process()


def test_from_local_process_start_failure_propagates() -> None:
    with pytest.raises(ProviderError, match="exited with code 2"):
        MiniEnv.from_local_process(["{python}", "-c", "raise SystemExit(2)"])


def test_closed_client_reports_closed() -> None:
    env = MiniEnv("http://127.0.0.1:1")
    env.close()
    with pytest.raises(EnvgenRuntimeError, match="is closed"):
        env.reset()


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), True])
def test_startup_timeout_must_be_a_positive_number(value: float) -> None:
    # NaN passed the old `<= 0` check, and a deadline of NaN never comes: start() would
    # wait forever for a server that never answers.
    with pytest.raises(ValueError, match="startup_timeout_s must be positive"):
        LocalProcessProvider(["{python}", "-c", "pass"], startup_timeout_s=value)


# What a trainer's venv runs: the env's [server] command, whose code is not installed there.
_NOT_HERE = ["{python}", "-m", "servers.nowhere_env.server", "--port", "{port}"]


def test_a_server_whose_code_is_missing_says_so_and_how_to_get_one(tmp_path: Path) -> None:
    provider = LocalProcessProvider(_NOT_HERE, cwd=tmp_path, startup_timeout_s=10)
    with pytest.raises(ProviderError) as info:
        provider.start()
    message = str(info.value)
    first, explained = message.splitlines()[:2]
    assert "exited with code 1" in first
    assert f"cannot import 'servers' (run from {tmp_path})" in explained
    assert "cwd=" in explained and "command=" in explained and "Docker image" in explained
    assert "No module named 'servers'" in info.value.output  # the traceback is still quoted


def test_from_local_process_names_the_envs_class_and_image_when_its_code_is_missing(
    tmp_path: Path,
) -> None:
    from generated.echo_env import EchoEnv

    with pytest.raises(ProviderError) as info:
        EchoEnv.from_local_process(_NOT_HERE, cwd=tmp_path)
    message = str(info.value)
    assert "EchoEnv.from_docker_image()" in message
    assert "envgen/echo-env:0.1.0" in message and "envgen image echo_env" in message
    assert "EchoEnv.from_local_process(command=[...], cwd=" in message
