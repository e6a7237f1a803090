"""Server lifecycle: start an environment server, wait until it is healthy, always stop it.

Also what every provider (local process, Docker, Ray) shares: argument checks, where to
reach a server bound to a wildcard, the health wait and its errors. subprocess, socket,
signal and tempfile are imported where used, so importing a client does not pay for them.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, Self, runtime_checkable

from . import _exit_stop
from ._exceptions import ProviderError
from ._transport import positive

if TYPE_CHECKING:
    import subprocess


OUTPUT_TAIL_LINES = 40
"""How many lines of a server's output (or a container's log) a start failure quotes."""
_TERMINATE_GRACE_S = 5.0
_PLACEHOLDER = r"\{(python|host|port|transport)\}"
_ADDRESS_IN_USE = r"(?i)address already in use|errno 98\b|eaddrinuse|errno 48\b"
"""Patterns compiled (and cached by ``re``) on first use: a client's import skips them."""


@runtime_checkable
class Provider(Protocol):
    """Something that runs a server and knows its base URL (local process, Docker, ...)."""

    @property
    def base_url(self) -> str | None:
        """The running server's base URL, or None when it is not running."""
        ...

    def start(self) -> str:
        """Start the server (if needed), wait until it is healthy, return its base URL."""
        ...

    def stop(self) -> None:
        """Stop the server; idempotent."""
        ...


class ProviderContext:
    """``with provider:`` starts the server and always stops it; also ``base_url`` and repr."""

    _base_url: str | None = None
    _command: tuple[str, ...] = ()
    _health_path: str
    _startup_timeout_s: float
    start: Callable[[], str]
    stop: Callable[[], None]

    @property
    def base_url(self) -> str | None:
        """``http://host:port`` of the running server, or None."""
        return self._base_url

    def _target(self) -> str:
        """What runs, for the repr: the server command (Docker names its image instead)."""
        import shlex

        return repr(shlex.join(self._command))

    def __repr__(self) -> str:
        state = f"running at {self._base_url}" if self._base_url else "stopped"
        return f"{type(self).__name__}({self._target()}, {state})"

    def _wait_healthy(
        self,
        name: str,
        started: float,
        host: str,
        exited: Callable[[], tuple[str, int | None] | None],
        port: Callable[[], int | None],
        tail: Callable[[], str],
        running: Callable[[], str] = lambda: "still running",
        source: str = "output",
        hint: str = "",
    ) -> str:
        """Poll ``GET health_path`` with growing pauses until it answers 200; the base URL.

        Shared by the local and Docker providers so their failures read alike: a
        ProviderError quoting ``tail()`` when ``exited()`` says how the server ended, or when
        the startup timeout passes. ``port()`` is None until the port is published.
        """
        published = port()
        delay, deadline = 0.05, started + self._startup_timeout_s

        def fail(before: str, after: str, code: int | None) -> ProviderError:
            shown = published if published is not None else "<port not published>"
            message = f"{name} {before} GET http://{url_host(host)}:{shown}{self._health_path}"
            message, output = message + after, tail()
            if output.strip():
                message += f"\n--- last {OUTPUT_TAIL_LINES} lines of its {source} ---\n{output}"
            else:
                message += "\nIt printed nothing."
            return ProviderError(message, output=output, exit_code=code)

        while True:
            state = exited()
            if state is not None:
                elapsed = f"{time.monotonic() - started:.1f}"
                raise fail(f"{state[0]} after {elapsed} s, before answering", ".", state[1])
            published = port()
            if published is not None and probe_health(host, published, self._health_path):
                return f"http://{url_host(host)}:{published}"
            now = time.monotonic()
            if now >= deadline:
                raise fail(
                    f"{running()} after {self._startup_timeout_s:g} s but never answered",
                    f" with 200 (raise startup_timeout_s if it is just slow{hint}).",
                    None,
                )
            time.sleep(min(delay, deadline - now))
            delay = min(delay * 1.5, 0.5)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def check_port(name: str, port: int | None) -> None:
    """Refuse a port outside 1..65535 (None means "pick one")."""
    if port is not None and not 0 < port < 65536:
        raise ValueError(f"{name} must be in 1..65535, got {port}")


def check_health_options(health_path: str, startup_timeout_s: float) -> None:
    """Refuse a health path that is not absolute and a startup timeout that is not positive."""
    if not health_path.startswith("/"):
        raise ValueError(f"health_path must start with '/', got {health_path!r}")
    positive("startup_timeout_s", startup_timeout_s)


def check_server_options(
    command: Sequence[str], health_path: str, startup_timeout_s: float
) -> tuple[str, ...]:
    """The argv of a server command, after the checks every provider makes."""
    if isinstance(command, str | bytes):
        raise TypeError("command must be an argv sequence such as ['{python}', '-m', 'x']")
    if not command:
        raise ValueError("command must not be empty")
    check_health_options(health_path, startup_timeout_s)
    return tuple(command)


def free_loopback_port(host: str) -> int:
    """A port that was free a moment ago (another process may take it before the server)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def connect_host(host: str) -> str:
    """Where to reach a server bound to ``host`` (wildcards become loopback)."""
    return {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)


def url_host(host: str) -> str:
    """``host`` as it stands in a URL (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


def probe_health(host: str, port: int, path: str) -> bool:
    """Whether ``GET path`` on ``host:port`` answers 200 within a second."""
    import http.client  # only needed while a server starts; it pulls in ssl and email

    conn = http.client.HTTPConnection(host, port, timeout=1.0)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


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
    first) is retried on a new port.
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
    ) -> None:
        self._command = check_server_options(command, health_path, startup_timeout_s)
        check_port("port", port)
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
        _exit_stop.register(self)

        def exited() -> tuple[str, int] | None:
            code = process.poll()
            return None if code is None else (_describe_exit(code), code)

        host = connect_host(self._host)
        try:
            name = f"server `{shlex.join(argv)}`"
            self._base_url = self._wait_healthy(
                name, started, host, exited, lambda: port, self.output_tail
            )
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
                _exit_stop.unregister(self)


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
