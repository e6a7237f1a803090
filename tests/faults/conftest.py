"""The fault server (``faultserver.py``), started once per test session, and its helpers."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from envgen_runtime import LocalProcessProvider

FAULTSERVER_PY = str(Path(__file__).with_name("faultserver.py"))
_CASE_IDS = itertools.count(1)


def faultserver_command() -> tuple[str, ...]:
    """argv template that starts the fault server on a chosen port."""
    return ("{python}", FAULTSERVER_PY, "--host", "{host}", "--port", "{port}", "--prebuild")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "load: many clients x many steps against the fault server (see test_load.py)"
    )


@pytest.fixture(scope="session")
def faultserver() -> Iterator[str]:
    """Base URL of the shared fault server (one process for the whole session)."""
    provider = LocalProcessProvider(faultserver_command(), startup_timeout_s=30.0)
    provider.start()
    try:
        assert provider.base_url is not None
        yield provider.base_url
    finally:
        provider.stop()


def fault_url(base: str, fault: str, at: str | None = None) -> str:
    """A base URL whose requests hit ``fault`` with a case state of their own.

    ``at`` pins the fault to one route: it fires once, on that route's first request.
    """
    pinned = f"{fault}@{at}" if at is not None else fault
    return f"{base}/{pinned}/c{next(_CASE_IDS)}"


class OwnFaultServer:
    """A fault server process of a test's own, for faults that kill or restart it."""

    def __init__(self, port: int = 0) -> None:
        handle, port_file = tempfile.mkstemp(prefix="faultserver-port-")
        os.close(handle)
        os.unlink(port_file)
        self.process = subprocess.Popen(
            [sys.executable, FAULTSERVER_PY, "--port", str(port), "--port-file", port_file],
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30.0
        path = Path(port_file)
        while not path.exists() or not path.read_text().strip():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the fault server did not start")
            time.sleep(0.02)
        self.port = int(path.read_text())
        path.unlink()
        self.url = f"http://127.0.0.1:{self.port}"

    def freeze(self) -> None:
        """SIGSTOP: the process stops, its TCP connections stay up (the kernel still ACKs)."""
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL, as a crash: no connection is closed politely."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.thaw()
            self.process.kill()
        self.process.wait(10)
