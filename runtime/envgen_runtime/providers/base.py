"""What every provider (local process, Docker, Ray) shares: the interface, argument checks,
where to reach a server bound to a wildcard, and the health wait with its errors."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol, Self, runtime_checkable

from ..core.checks import positive
from ..core.errors import ProviderError

OUTPUT_TAIL_LINES = 40
"""How many lines of a server's output (or a container's log) a start failure quotes."""


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
