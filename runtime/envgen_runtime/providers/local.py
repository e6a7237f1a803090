"""``LocalProcessProvider``: an environment server as a local subprocess, always stopped.

subprocess, socket, signal and tempfile are imported where used, so importing a client does
not pay for them.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..core.errors import ProviderError
from . import exit_stop
from .base import (
    OUTPUT_TAIL_LINES,
    ProviderContext,
    check_port,
    check_server_options,
    connect_host,
    free_loopback_port,
)

if TYPE_CHECKING:
    import subprocess


_TERMINATE_GRACE_S = 5.0
_PLACEHOLDER = r"\{(python|host|port|transport)\}"
_ADDRESS_IN_USE = r"(?i)address already in use|errno 98\b|eaddrinuse|errno 48\b"
_MISSING_MODULE = r"ModuleNotFoundError: No module named '([^']+)'"
"""Patterns compiled (and cached by ``re``) on first use: a client's import skips them."""


def server_hint(env: str, image: str | None, docker_way: str, local_way: str) -> str:
    """The two ways a trainer gets ``env``'s server, for ``missing_module_hint``.

    A trainer's venv holds the runtime and the env's client, not the server's code: run the
    env's image (``docker_way``), or a server checkout with its requirements (``local_way``).
    """
    if image:
        docker = (
            f"run the env's image {image}: {docker_way} (pull it, or build it in the env's "
            f"repository with `envgen image {env}`)"
        )
    else:
        docker = "the env names no image ([docker] image in its env.toml): ask its author, or"
    return (
        f"A trainer's venv has {env}'s client, not its server. Either {docker}, or run a "
        f"server from the env's repository: {local_way}, with a Python that has its "
        "requirements."
    )


def _explain_missing_module(
    exc: ProviderError, hint: str | None, cwd: str | os.PathLike[str] | None
) -> ProviderError:
    """``exc`` with a line saying the server could not import its own code, and the ways on."""
    found = re.search(_MISSING_MODULE, exc.output) if exc.exit_code is not None else None
    if found is None:
        return exc
    where = os.fspath(cwd) if cwd is not None else os.getcwd()
    ways = hint or (
        "Run it with cwd= set to the server's repository and command= naming a Python that "
        "has its requirements, or run the env's Docker image instead."
    )
    first, _, rest = exc.message.partition("\n")
    explained = f"The server cannot import {found[1]!r} (run from {where}). {ways}"
    return ProviderError(
        f"{first}\n{explained}\n{rest}", output=exc.output, exit_code=exc.exit_code
    )


def _describe_exit(code: int) -> str:
    import signal

    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "unknown signal"
        return f"was killed by signal {-code} ({name})"
    return f"exited with code {code}"


class LocalProcessProvider(ProviderContext):
    """Runs an environment server as a local subprocess.

    The argv may use ``{python}`` (this interpreter), ``{host}``, ``{port}`` and
    ``{transport}``; ``env`` overrides this process's environment. Output goes to a
    temporary file (a pipe could fill up and stall the server). The server runs in its own
    process group so that ``stop()`` also ends its children. Without a fixed ``port``, a
    start that fails with "address already in use" (another process took the free port
    first) is retried on a new port. A server that exits because it cannot import its own
    code gets a ProviderError saying so, followed by ``missing_module_hint`` (the env's ways
    to a server, from ``server_hint``) or a generic one.
    """

    MAX_PORT_RETRIES = 3

    def __init__(
        self,
        command: Sequence[str],
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        health_path: str = "/health",
        startup_timeout_s: float = 60.0,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        transport: str = "websocket",
        missing_module_hint: str | None = None,
    ) -> None:
        self._command = check_server_options(command, health_path, startup_timeout_s)
        check_port("port", port)
        self._missing_module_hint = missing_module_hint
        self._host = host
        self._requested_port = port
        self._health_path = health_path
        self._startup_timeout_s = startup_timeout_s
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self._transport = transport
        self._lock = threading.RLock()
        self._process: subprocess.Popen[bytes] | None = None
        self.log_path: str | None = None
        """The temporary file holding the server's output while it runs."""
        self.port: int | None = None
        """The port the server was started on, or None."""
        self.argv: tuple[str, ...] = ()
        """The command as last launched, placeholders filled in."""
        self.start_attempts = 0
        """How many processes the last ``start()`` launched (more than one after port clashes)."""

    @property
    def pid(self) -> int | None:
        """Process id of the server (also its process group id), or None."""
        return self._process.pid if self._process is not None else None

    def format_command(self, port: int) -> tuple[str, ...]:
        """The argv with placeholders filled in for ``port``."""
        values = {
            "python": sys.executable,
            "host": self._host,
            "port": str(port),
            "transport": self._transport,
        }
        return tuple(re.sub(_PLACEHOLDER, lambda m: values[m[1]], arg) for arg in self._command)

    def output_tail(self, lines: int = OUTPUT_TAIL_LINES) -> str:
        """The last ``lines`` lines the server printed (stdout and stderr together)."""
        if self.log_path is None:
            return ""
        try:
            with open(self.log_path, "rb") as handle:
                handle.seek(max(0, handle.seek(0, os.SEEK_END) - 64 * 1024))
                data = handle.read()
        except OSError:
            return ""
        return "\n".join(data.decode("utf-8", errors="replace").splitlines()[-lines:])

    def start(self) -> str:
        """Launch the server and wait until ``GET health_path`` answers 200.

        ProviderError (quoting its last output) when it exits or never gets healthy; the
        process is stopped then.
        """
        with self._lock:
            if self._base_url is not None and self._process is not None:
                if self._process.poll() is None:
                    return self._base_url
                self.stop()
            attempts = 1 if self._requested_port is not None else 1 + self.MAX_PORT_RETRIES
            self.start_attempts = 0
            while True:
                port = self._requested_port or free_loopback_port(connect_host(self._host))
                try:
                    return self._start_once(port)
                except ProviderError as exc:
                    clash = exc.exit_code is not None and re.search(_ADDRESS_IN_USE, exc.output)
                    if not clash or self.start_attempts >= attempts:
                        raise

    def _start_once(self, port: int) -> str:
        import shlex
        import subprocess
        import tempfile

        self.start_attempts += 1
        argv = self.argv = self.format_command(port)
        self.port = port
        log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the server
            prefix="envgen-server-", suffix=".log", delete=False
        )
        self.log_path = log.name
        started = time.monotonic()
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1", **(self._env or {})},
                cwd=self._cwd,
                start_new_session=os.name == "posix",
            )
        except OSError as exc:
            self._discard_log()
            raise ProviderError(f"cannot run server command `{shlex.join(argv)}`: {exc}") from exc
        finally:
            log.close()  # the server writes through its own descriptor
        self._process = process
        exit_stop.register(self)

        def exited() -> tuple[str, int] | None:
            code = process.poll()
            return None if code is None else (_describe_exit(code), code)

        host = connect_host(self._host)
        try:
            name = f"server `{shlex.join(argv)}`"
            self._base_url = self._wait_healthy(
                name, started, host, exited, lambda: port, self.output_tail
            )
        except ProviderError as exc:
            self.stop()
            raise _explain_missing_module(exc, self._missing_module_hint, self._cwd) from None
        except BaseException:
            self.stop()
            raise
        return self._base_url

    def _discard_log(self) -> None:
        path, self.log_path = self.log_path, None
        if path is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def stop(self) -> None:
        """Stop the server and its children (terminate, wait 5 s, kill); idempotent."""
        with self._lock:
            process, self._process = self._process, None
            self._base_url = None
            try:
                if process is not None:
                    _terminate_group(process)
            finally:
                self._discard_log()
                exit_stop.unregister(self)


def _terminate_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, wait up to the grace period, then SIGKILL what is left.

    Children may outlive the leader (or ignore SIGTERM): the group gets SIGKILL either way.
    """
    import signal
    import subprocess

    for sig in (signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
        if os.name == "posix":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
        elif process.poll() is None:
            with contextlib.suppress(OSError):
                process.terminate()  # Windows: kill() is terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=_TERMINATE_GRACE_S)
