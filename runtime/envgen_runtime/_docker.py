"""Run an environment server in a local Docker container: the runtime's only docker SDK user.

``docker`` is imported when a provider first talks to the engine, never at module import, so
``import envgen_runtime`` stays free of it. Every container is labelled with who started
it (``envgen.env``, ``envgen.session``, ``envgen.pid``, ``envgen.host``), so that leftovers
can be found (``envgen_runtime.containers`` lists and removes them). Docker SDK errors
become ``ProviderError`` here, in ``translate_docker``.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from . import _exit_stop
from ._errormap import exception_chain, reason_of
from ._exceptions import EnvgenRuntimeError, ProviderError
from ._extras import require
from ._provider import (
    OUTPUT_TAIL_LINES,
    ProviderContext,
    check_health_options,
    connect_host,
    output_section,
    probe_health,
    url_host,
)
from ._text import truncate

__all__ = [
    "DOCKER_START_HINT",
    "LABEL_ENV",
    "LABEL_HOST",
    "LABEL_PID",
    "LABEL_PID_START",
    "LABEL_SESSION",
    "SESSION_ID",
    "LocalDockerProvider",
    "docker_client",
    "engine_address",
    "map_docker_exception",
    "owner_labels",
    "proc_stat_fields",
    "process_start_time",
    "remove_container",
    "translate_docker",
]

LABEL_ENV = "envgen.env"
LABEL_SESSION = "envgen.session"
LABEL_PID = "envgen.pid"
LABEL_HOST = "envgen.host"
LABEL_PID_START = "envgen.pid-start"
"""The owner's start time (Linux clock ticks since boot), so a reused pid is not mistaken
for the owner by ``prune``."""

SESSION_ID = os.urandom(16).hex()
"""Identifies this interpreter's containers (the ``envgen.session`` label)."""

_DEFAULT_SOCKET = "unix:///var/run/docker.sock"
# Options that would break the provider: the logs of a dead container must stay readable,
# and the provider always needs a container object.
_RESERVED = {
    "auto_remove": "a removed container's logs cannot be read for the error message",
    "remove": "a removed container's logs cannot be read for the error message",
    "detach": "the provider always runs containers detached",
    "stdout": "the provider reads logs itself",
    "stderr": "the provider reads logs itself",
    "stream": "the provider reads logs itself",
}

# --------------------------------------------------------------------------- errors
# docker's exceptions (and those of requests, which it uses) are looked up in ``sys.modules``:
# an exception from a library that was never imported cannot occur.

DOCKER_START_HINT = (
    "Start an engine: as root run `dockerd &` (on Debian install it first with "
    "`apt-get install docker.io`) or `systemctl start docker`; in the envgen repository "
    "`scripts/ensure-docker.sh` does both. For a remote engine set DOCKER_HOST."
)


def _docker_unreachable(exc: BaseException, chain: list[BaseException]) -> bool:
    requests_mod = sys.modules.get("requests")
    if requests_mod is not None and any(isinstance(e, requests_mod.ConnectionError) for e in chain):
        return True
    if any(isinstance(e, FileNotFoundError | ConnectionError) for e in chain):
        return True
    # docker.from_env() probes the API version and wraps what went wrong in a message.
    return "Error while fetching server API version" in str(exc)


def map_docker_exception(
    exc: BaseException, *, action: str, engine: str
) -> EnvgenRuntimeError | None:
    """The ProviderError for an exception from the docker SDK, or None for a bug.

    ``action`` says what was being done (``starting container of image 'x'``), ``engine``
    where the engine was expected (``unix:///var/run/docker.sock``). An unreachable engine
    gets a message that says how to start one.
    """
    if isinstance(exc, EnvgenRuntimeError):
        return exc
    errors = sys.modules.get("docker.errors")
    if errors is not None and isinstance(exc, errors.APIError):
        explanation = exc.explanation or str(exc)
        if isinstance(explanation, bytes):
            explanation = explanation.decode("utf-8", errors="replace")
        status = f" HTTP {exc.status_code}" if exc.status_code else " with an error"
        return ProviderError(
            f"{action} failed: the Docker engine answered{status}: "
            f"{truncate(str(explanation).strip(), 1000)}"
        )
    chain = exception_chain(exc)
    if any(isinstance(e, PermissionError) for e in chain):
        return ProviderError(
            f"{action} failed: permission denied on the Docker engine's socket {engine}: "
            "run as root or add this user to the docker group"
        )
    requests_mod = sys.modules.get("requests")
    timed_out = any(isinstance(e, TimeoutError) for e in chain) or (
        requests_mod is not None and any(isinstance(e, requests_mod.Timeout) for e in chain)
    )
    if timed_out and not any(isinstance(e, ConnectionRefusedError) for e in chain):
        return ProviderError(
            f"{action} failed: the Docker engine at {engine} did not answer in time "
            f"({reason_of(exc)})"
        )
    if _docker_unreachable(exc, chain):
        return ProviderError(
            f"{action} failed: cannot reach the Docker engine at {engine} ({reason_of(exc)}). "
            + DOCKER_START_HINT
        )
    if errors is not None and isinstance(exc, errors.DockerException):
        return ProviderError(f"{action} failed: {truncate(str(exc), 1000)}")
    return None


@contextlib.contextmanager
def translate_docker(action: str, engine: str) -> Iterator[None]:
    """Re-raise docker SDK (and underlying I/O) exceptions from the block as ProviderError."""
    try:
        yield
    except EnvgenRuntimeError:
        raise
    except Exception as exc:
        mapped = map_docker_exception(exc, action=action, engine=engine)
        if mapped is None:
            raise
        raise mapped from exc


# --------------------------------------------------------------------------- engine, labels


def engine_address() -> str:
    """Where the docker SDK looks for the engine (``DOCKER_HOST`` or the default socket)."""
    return os.environ.get("DOCKER_HOST") or _DEFAULT_SOCKET


def docker_client(timeout_s: float = 60.0) -> Any:
    """A docker-py client for the engine named by the environment, or ProviderError.

    Importing docker here (not at module level) keeps ``import envgen_runtime`` cheap.
    """
    docker = require("docker", "running environment servers in Docker")
    with translate_docker("connecting to the Docker engine", engine_address()):
        return docker.from_env(timeout=int(max(1, timeout_s)))


def proc_stat_fields(pid: int) -> list[str]:
    """Fields 3 on of ``/proc/<pid>/stat`` (Linux; state first), or [] when unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read().decode("ascii", errors="replace")
    except OSError:
        return []
    # Counted after the parenthesised command name (which may contain spaces).
    return data.rsplit(")", 1)[-1].split()


def process_start_time(pid: int) -> str | None:
    """The start time of ``pid`` in clock ticks since boot (Linux), or None."""
    fields = proc_stat_fields(pid)
    return fields[19] if len(fields) > 19 else None  # field 22


def owner_labels(env_name: str) -> dict[str, str]:
    """The labels that say which process, session and env a container belongs to."""
    import socket

    pid = os.getpid()
    labels = {
        LABEL_ENV: env_name,
        LABEL_SESSION: SESSION_ID,
        LABEL_PID: str(pid),
        LABEL_HOST: socket.gethostname(),
    }
    start = process_start_time(pid)
    if start is not None:
        labels[LABEL_PID_START] = start
    return labels


def remove_container(client: Any, container_id: str) -> bool:
    """Force-remove a container and its anonymous volumes; False when it was already gone."""
    import docker.errors

    with translate_docker(f"removing container {container_id[:12]}", engine_address()):
        try:
            client.api.remove_container(container_id, force=True, v=True)
        except docker.errors.NotFound:
            return False
    return True


def _published_host(host: str, client: Any) -> str:
    """Where to reach a port published on ``host`` (a wildcard means the engine's host)."""
    if host in ("", "0.0.0.0", "::"):
        base = str(getattr(getattr(client, "api", None), "base_url", "") or "")
        parts = urlsplit(base)
        if parts.scheme in ("http", "https") and parts.hostname not in (None, "localhost"):
            return parts.hostname  # a remote engine publishes ports on its own host
    return connect_host(host)


def default_missing_hint(image: str) -> str:
    """What to do about an image that is not available locally."""
    return (
        "Build it first: `envgen image ENV` builds an env's image without any registry "
        "(`make images` builds every example env's); or "
        f"`docker build -t {image} .` with a Dockerfile of your own; or pass "
        "pull=True to pull it from its registry."
    )


class LocalDockerProvider(ProviderContext):
    """Runs an environment server in a container on a local (or ``DOCKER_HOST``) engine.

    ``start()`` uses the image only if it is present locally (``pull=True`` pulls a missing
    one), publishes container ``port`` on ``host`` (loopback by default) at a port the
    engine picks, and polls ``health_path`` until it answers 200 while watching the
    container: if it exits or ``startup_timeout_s`` passes, the container is removed and a
    ``ProviderError`` carries its exit code and last log lines. ``stop()`` (also run by a
    client's ``close()``, context exit and interpreter exit) stops and removes it.

    Every other keyword is passed to docker-py's ``containers.create``: ``environment``,
    ``volumes``, ``command``, ``mem_limit``, ``nano_cpus``, ``network``, ``ports`` (merged
    with the server's), ``labels`` (merged; envgen's own labels win), and so on.
    """

    def __init__(
        self,
        image: str,
        *,
        port: int = 8000,
        health_path: str = "/health",
        startup_timeout_s: float = 60.0,
        host: str = "127.0.0.1",
        host_port: int | None = None,
        env_name: str | None = None,
        pull: bool = False,
        stop_timeout_s: float = 5.0,
        docker_client: Any | None = None,
        missing_image_hint: str | None = None,
        **run_options: Any,
    ) -> None:
        """Configure the container; nothing talks to the engine until ``start()``.

        ``docker_client`` is a docker-py ``DockerClient`` to use instead of
        ``docker.from_env()`` (it is not closed by the provider). ``missing_image_hint``
        replaces the advice given when the image is not present locally.
        """
        if not image or not isinstance(image, str):
            raise ValueError(f"image must be a non-empty string, got {image!r}")
        if not 0 < port < 65536:
            raise ValueError(f"port must be in 1..65535, got {port}")
        if host_port is not None and not 0 < host_port < 65536:
            raise ValueError(f"host_port must be in 1..65535, got {host_port}")
        check_health_options(health_path, startup_timeout_s)
        if stop_timeout_s < 0:
            raise ValueError("stop_timeout_s must not be negative")
        for key, why in _RESERVED.items():
            if key in run_options:
                raise ValueError(f"run option {key!r} is not supported: {why}")
        self._image = image
        self._port = port
        self._health_path = health_path
        self._startup_timeout_s = startup_timeout_s
        self._host = host
        self._requested_host_port = host_port
        self._env_name = env_name if env_name is not None else image
        self._pull = pull
        self._stop_timeout_s = stop_timeout_s
        self._given_client = docker_client
        self._missing_hint = missing_image_hint
        self._run_options = dict(run_options)
        self._lock = threading.RLock()
        self._client: Any | None = None
        self._container: Any | None = None
        self._base_url: str | None = None
        self._host_port: int | None = None
        self._labels: dict[str, str] = {}
        self.ready_after_s: float | None = None
        """Seconds from creating the container to its first healthy answer (last start)."""

    def _target(self) -> str:
        return repr(self._image)

    # ------------------------------------------------------------------ properties

    @property
    def image(self) -> str:
        """The image the container runs."""
        return self._image

    @property
    def host_port(self) -> int | None:
        """The host port the engine published the server on, or None."""
        return self._host_port

    @property
    def container_id(self) -> str | None:
        """The running container's id, or None."""
        container = self._container
        return str(container.id) if container is not None else None

    @property
    def labels(self) -> Mapping[str, str]:
        """The labels put on the last container started."""
        return MappingProxyType(self._labels)

    @property
    def run_options(self) -> Mapping[str, Any]:
        """The options passed through to ``containers.create`` (read-only view)."""
        return MappingProxyType(self._run_options)

    def logs(self, tail: int = OUTPUT_TAIL_LINES) -> str:
        """The last ``tail`` lines the container printed (stdout and stderr), or ``""``."""
        container = self._container
        return _container_logs(container, tail) if container is not None else ""

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> str:
        """Create and start the container, wait until it is healthy, return its base URL."""
        with self._lock:
            if self._base_url is not None and self._container is not None:
                return self._base_url
            client = self._engine()
            try:
                self._ensure_image(client)
                return self._start_container(client)
            except BaseException:
                self._release_client()
                raise

    def _engine(self) -> Any:
        if self._given_client is not None:
            return self._given_client
        if self._client is None:
            self._client = docker_client()
        return self._client

    def _release_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()

    def _ensure_image(self, client: Any) -> None:
        import docker.errors

        where = engine_address()
        with translate_docker(f"looking up image {self._image!r}", where):
            try:
                client.images.get(self._image)
                return
            except docker.errors.ImageNotFound:
                pass
        if not self._pull:
            hint = self._missing_hint or default_missing_hint(self._image)
            raise ProviderError(
                f"Docker image {self._image!r} is not available locally (on the engine at "
                f"{where}), and envgen does not pull unless asked (pull=False). {hint}"
            )
        try:
            with translate_docker(f"pulling image {self._image!r}", where):
                client.images.pull(self._image)
        except ProviderError as exc:
            raise ProviderError(
                f"{str(exc).rstrip('.')}. The image is not available locally and could not "
                "be pulled from its registry: check the name and tag and that the registry can "
                "be reached, or "
                f"`docker load` a saved copy of {self._image} (then nothing is pulled)."
            ) from exc

    def _create_options(self) -> dict[str, Any]:
        options = dict(self._run_options)
        user_labels = options.pop("labels", None) or {}
        if not isinstance(user_labels, Mapping):
            user_labels = dict.fromkeys(user_labels, "")
        self._labels = {**user_labels, **owner_labels(self._env_name)}
        options["labels"] = self._labels
        if options.get("network_mode") != "host":
            ports = dict(options.pop("ports", None) or {})
            ports[f"{self._port}/tcp"] = (self._host, self._requested_host_port)
            options["ports"] = ports
        return options

    def _start_container(self, client: Any) -> str:
        where = engine_address()
        started = time.monotonic()
        with translate_docker(f"creating a container of image {self._image!r}", where):
            container = client.containers.create(self._image, **self._create_options())
        self._container = container
        _exit_stop.register(self)
        try:
            with translate_docker(f"starting container {container.short_id}", where):
                container.start()
            base_url = self._wait_ready(client, container, started)
        except BaseException:
            self._remove_quietly()
            raise
        self._base_url = base_url
        self.ready_after_s = time.monotonic() - started
        return base_url

    def _published_port(self, container: Any) -> int | None:
        if self._run_options.get("network_mode") == "host":
            return self._port
        ports = (container.attrs.get("NetworkSettings") or {}).get("Ports") or {}
        for binding in ports.get(f"{self._port}/tcp") or []:
            host_port = binding.get("HostPort")
            if host_port:
                return int(host_port)
        return None

    def _wait_ready(self, client: Any, container: Any, started: float) -> str:
        import docker.errors

        where = engine_address()
        host = _published_host(self._host, client)
        connect = url_host(host)
        deadline = started + self._startup_timeout_s
        delay = 0.05
        url = f"http://{connect}:<port not published>{self._health_path}"
        while True:
            with translate_docker(f"inspecting container {container.short_id}", where):
                try:
                    container.reload()
                except docker.errors.NotFound:
                    raise ProviderError(
                        f"container {container.short_id} of image {self._image!r} disappeared "
                        "while starting (removed by someone else?)"
                    ) from None
            status = container.status
            if status in ("exited", "dead"):
                raise self._exited_error(container, started, url)
            self._host_port = self._published_port(container)
            if self._host_port is not None:
                url = f"http://{connect}:{self._host_port}{self._health_path}"
                if probe_health(host, self._host_port, self._health_path):
                    return f"http://{connect}:{self._host_port}"
            now = time.monotonic()
            if now >= deadline:
                output = _container_logs(container, OUTPUT_TAIL_LINES)
                raise ProviderError(
                    f"container {container.short_id} of image {self._image!r} is still "
                    f"{status} after {self._startup_timeout_s:g} s but never answered GET "
                    f"{url} with 200 (raise startup_timeout_s if it is just slow; the server "
                    f"must listen on 0.0.0.0:{self._port} inside the container)."
                    + output_section(output, "log"),
                    output=output,
                    exit_code=None,
                )
            time.sleep(min(delay, max(0.0, deadline - now)))
            delay = min(delay * 1.5, 0.5)

    def _exited_error(self, container: Any, started: float, url: str) -> ProviderError:
        state = container.attrs.get("State") or {}
        code = state.get("ExitCode")
        exit_code = int(code) if isinstance(code, int) else None
        how = f"exited with code {exit_code}" if exit_code is not None else "exited"
        if state.get("OOMKilled"):
            how += " (killed for running out of memory: raise mem_limit)"
        if state.get("Error"):
            how += f" ({state['Error']})"
        output = _container_logs(container, OUTPUT_TAIL_LINES)
        return ProviderError(
            f"container {container.short_id} of image {self._image!r} {how} after "
            f"{time.monotonic() - started:.1f} s, before answering GET {url}."
            + output_section(output, "log"),
            output=output,
            exit_code=exit_code,
        )

    def _remove_quietly(self) -> None:
        """Remove a container that failed to start; the start error is what matters."""
        container, self._container = self._container, None
        self._base_url = None
        _exit_stop.unregister(self)
        if container is not None:
            with contextlib.suppress(Exception):
                container.remove(force=True, v=True)

    def stop(self) -> None:
        """Stop the container (SIGTERM, then SIGKILL after ``stop_timeout_s``) and remove it.

        Idempotent. Raises ProviderError when the engine cannot remove it; the container is
        then left for ``envgen containers prune`` once this process has exited.
        """
        import docker.errors

        with self._lock:
            container, self._container = self._container, None
            self._base_url = None
            self._host_port = None
            _exit_stop.unregister(self)
            if container is None:
                self._release_client()
                return
            try:
                with translate_docker(f"stopping container {container.short_id}", engine_address()):
                    with contextlib.suppress(docker.errors.NotFound):
                        container.stop(timeout=int(self._stop_timeout_s))
                    with contextlib.suppress(docker.errors.NotFound):
                        container.remove(force=True, v=True)
            except ProviderError as exc:
                raise ProviderError(
                    f"{exc} (container {container.short_id} may be left behind: "
                    "`envgen containers prune` removes it once this process has exited)"
                ) from exc
            finally:
                self._release_client()


def _container_logs(container: Any, tail: int) -> str:
    try:
        data = container.logs(stdout=True, stderr=True, tail=tail)
    except Exception:  # the logs only decorate an error: never mask it
        return ""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else str(data)
    return "\n".join(text.splitlines()[-tail:])
