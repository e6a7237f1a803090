"""Run an environment server in a local Docker container: the runtime's only docker SDK user.

``docker`` is imported on first use, so ``import envgen_runtime`` stays free of it. Every
container is labelled with who started it, so that ``envgen_runtime.containers`` can find
leftovers. Docker SDK errors become ``ProviderError`` here, in ``translate_docker``.
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

from ..core.errors import EnvgenRuntimeError, ProviderError
from ..core.extras import require
from ..core.text import truncate
from ..transport.errormap import exception_chain, reason_of
from . import exit_stop
from .base import (
    OUTPUT_TAIL_LINES,
    ProviderContext,
    check_health_options,
    check_port,
    connect_host,
)
from .container_env import with_protocol

LABEL_ENV = "envgen.env"
LABEL_SESSION = "envgen.session"
LABEL_PID = "envgen.pid"
LABEL_HOST = "envgen.host"
LABEL_PID_START = "envgen.pid-start"
"""The owner's start time (Linux clock ticks since boot), so a reused pid is not mistaken
for the owner by ``prune``."""

SESSION_ID = os.urandom(16).hex()
"""Identifies this interpreter's containers (the ``envgen.session`` label)."""

_NO_REMOVE = "a removed container's logs cannot be read for the error message"
_OWN_LOGS = "the provider reads logs itself"
_RESERVED = {
    "auto_remove": _NO_REMOVE,
    "remove": _NO_REMOVE,
    "detach": "the provider always runs containers detached",
    "stdout": _OWN_LOGS,
    "stderr": _OWN_LOGS,
    "stream": _OWN_LOGS,
}
"""Options that would break the provider, which needs a dead container's logs."""


def map_docker_exception(
    exc: BaseException, *, action: str, engine: str
) -> EnvgenRuntimeError | None:
    """The ProviderError for an exception from the docker SDK, or None for a bug.

    ``action`` says what was being done (``starting container of image 'x'``), ``engine``
    where the engine was expected. docker's exceptions (and those of requests, which it
    uses) are looked up in ``sys.modules``: a library never imported raised nothing.
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
    requests = sys.modules.get("requests")
    timeouts = (TimeoutError, requests.Timeout) if requests else (TimeoutError,)
    unreachable = (FileNotFoundError, ConnectionError)
    unreachable += (requests.ConnectionError,) if requests else ()

    def caused_by(types: type[BaseException] | tuple[type[BaseException], ...]) -> bool:
        return any(isinstance(e, types) for e in chain)

    if caused_by(PermissionError):
        return ProviderError(
            f"{action} failed: permission denied on the Docker engine's socket {engine}: "
            "run as root or add this user to the docker group"
        )
    if caused_by(timeouts) and not caused_by(ConnectionRefusedError):
        return ProviderError(
            f"{action} failed: the Docker engine at {engine} did not answer in time "
            f"({reason_of(exc)})"
        )
    # docker.from_env() probes the API version and wraps what went wrong in a message.
    if caused_by(unreachable) or "Error while fetching server API version" in str(exc):
        return ProviderError(
            f"{action} failed: cannot reach the Docker engine at {engine} ({reason_of(exc)}). "
            "Start an engine: as root run `dockerd &` (on Debian install it first with "
            "`apt-get install docker.io`) or `systemctl start docker`; in the envgen repository "
            "`scripts/ensure-docker.sh` does both. For a remote engine set DOCKER_HOST."
        )
    if errors is not None and isinstance(exc, errors.DockerException):
        return ProviderError(f"{action} failed: {truncate(str(exc), 1000)}")
    return None


@contextlib.contextmanager
def translate_docker(action: str) -> Iterator[None]:
    """Re-raise docker SDK (and underlying I/O) exceptions from the block as ProviderError."""
    try:
        yield
    except Exception as exc:
        mapped = map_docker_exception(exc, action=action, engine=engine_address())
        if mapped is None or mapped is exc:
            raise
        raise mapped from exc


def engine_address() -> str:
    """Where the docker SDK looks for the engine (``DOCKER_HOST`` or the default socket)."""
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def docker_client(timeout_s: float = 60.0) -> Any:
    """A docker-py client for the engine named by the environment, or ProviderError."""
    docker = require("docker", "running environment servers in Docker")
    with translate_docker("connecting to the Docker engine"):
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

    with translate_docker(f"removing container {container_id[:12]}"):
        try:
            client.api.remove_container(container_id, force=True, v=True)
        except docker.errors.NotFound:
            return False
    return True


def _published_host(host: str, client: Any) -> str:
    """Where to reach a port published on ``host`` (a wildcard means the engine's host)."""
    if host in ("", "0.0.0.0", "::"):
        parts = urlsplit(str(getattr(getattr(client, "api", None), "base_url", "") or ""))
        if parts.scheme in ("http", "https") and parts.hostname not in (None, "localhost"):
            return parts.hostname  # a remote engine publishes ports on its own host
    return connect_host(host)


class LocalDockerProvider(ProviderContext):
    """Runs an environment server in a container on a local (or ``DOCKER_HOST``) engine.

    ``start()`` uses the image only if it is present locally (``pull=True`` pulls it) and
    publishes container ``port`` on ``host`` at a port the engine picks; a container that
    exits or misses ``startup_timeout_s`` is removed (its last log lines are in the error).
    ``docker_client`` replaces ``docker.from_env()`` (and is not closed here);
    ``missing_image_hint`` replaces the advice given when the image is not present locally.
    ``transport`` (``"http"`` or ``"websocket"``) picks the protocol the server speaks: it is
    set as ``ENVGEN_PROTOCOL`` in the container (what envgen's images serve by); None keeps
    the image's own default. Every other keyword goes to docker-py's ``containers.create``
    (``ports`` and ``labels`` are merged with envgen's; envgen's labels win). Nothing talks to
    the engine until ``start()``.
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
        transport: str | None = None,
        **run_options: Any,
    ) -> None:
        if not image or not isinstance(image, str):
            raise ValueError(f"image must be a non-empty string, got {image!r}")
        if transport is not None:
            run_options["environment"] = with_protocol(run_options.get("environment"), transport)
        check_port("port", port)
        check_port("host_port", host_port)
        check_health_options(health_path, startup_timeout_s)
        if not stop_timeout_s >= 0:  # NaN too
            raise ValueError("stop_timeout_s must not be negative")
        for key, why in _RESERVED.items():
            if key in run_options:
                raise ValueError(f"run option {key!r} is not supported: {why}")
        self.image = image
        """The image the container runs."""
        self.transport = transport
        """The protocol the server is started with (``ENVGEN_PROTOCOL``), or None."""
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
        self.run_options: Mapping[str, Any] = MappingProxyType(dict(run_options))
        """The options passed through to ``containers.create`` (read-only view)."""
        self._lock = threading.RLock()
        self._client: Any | None = None
        self._container: Any | None = None
        self.labels: Mapping[str, str] = MappingProxyType({})
        """The labels put on the last container started."""
        self.host_port: int | None = None
        """The host port the engine published the server on, or None."""
        self.ready_after_s: float | None = None
        """Seconds from creating the container to its first healthy answer (last start)."""

    def _target(self) -> str:
        return repr(self.image)

    @property
    def container_id(self) -> str | None:
        """The running container's id, or None."""
        container = self._container
        return str(container.id) if container is not None else None

    def logs(self, tail: int = OUTPUT_TAIL_LINES) -> str:
        """The last ``tail`` lines the container printed (stdout and stderr), or ``""``."""
        container = self._container
        if container is None:
            return ""
        try:
            data = container.logs(stdout=True, stderr=True, tail=tail)
        except Exception:  # the logs only decorate a start error: never mask it
            return ""
        text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else str(data)
        return "\n".join(text.splitlines()[-tail:])

    def start(self) -> str:
        """Create and start the container, wait until it is healthy, return its base URL."""
        with self._lock:
            if self._base_url is not None and self._container is not None:
                return self._base_url
            if self._given_client is None and self._client is None:
                self._client = docker_client()
            client = self._given_client or self._client
            try:
                self._ensure_image(client)
                return self._start_container(client)
            except BaseException:
                self._release_client()
                raise

    def _release_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()

    def _ensure_image(self, client: Any) -> None:
        import docker.errors

        lookup = translate_docker(f"looking up image {self.image!r}")
        with lookup, contextlib.suppress(docker.errors.ImageNotFound):
            client.images.get(self.image)
            return
        if not self._pull:
            hint = self._missing_hint or (
                "Build it first: `envgen image ENV` builds an env's image without any registry "
                "(`make images` builds every example env's); or "
                f"`docker build -t {self.image} .` with a Dockerfile of your own; or pass "
                "pull=True to pull it from its registry."
            )
            raise ProviderError(
                f"Docker image {self.image!r} is not available locally (on the engine at "
                f"{engine_address()}), and envgen does not pull unless asked (pull=False). {hint}"
            )
        try:
            with translate_docker(f"pulling image {self.image!r}"):
                client.images.pull(self.image)
        except ProviderError as exc:
            raise ProviderError(
                f"{str(exc).rstrip('.')}. The image is not available locally and could not "
                "be pulled from its registry: check the name and tag and that the registry can "
                f"be reached, or `docker load` a saved copy of {self.image} (then nothing is "
                "pulled)."
            ) from exc

    def _create_options(self) -> dict[str, Any]:
        options = dict(self.run_options)
        user_labels = options.pop("labels", None) or {}
        if not isinstance(user_labels, Mapping):
            user_labels = dict.fromkeys(user_labels, "")
        options["labels"] = {**user_labels, **owner_labels(self._env_name)}
        self.labels = MappingProxyType(options["labels"])
        if options.get("network_mode") != "host":
            ports = dict(options.pop("ports", None) or {})
            ports[f"{self._port}/tcp"] = (self._host, self._requested_host_port)
            options["ports"] = ports
        return options

    def _published_port(self, container: Any) -> int | None:
        if self.run_options.get("network_mode") == "host":
            return self._port
        ports = (container.attrs.get("NetworkSettings") or {}).get("Ports") or {}
        for binding in ports.get(f"{self._port}/tcp") or []:
            if binding.get("HostPort"):
                return int(binding["HostPort"])
        return None

    def _start_container(self, client: Any) -> str:
        import docker.errors

        started = time.monotonic()
        with translate_docker(f"creating a container of image {self.image!r}"):
            container = client.containers.create(self.image, **self._create_options())
        self._container = container
        exit_stop.register(self)
        name = f"container {container.short_id} of image {self.image!r}"

        def exited() -> tuple[str, int | None] | None:
            with translate_docker(f"inspecting container {container.short_id}"):
                try:
                    container.reload()
                except docker.errors.NotFound:
                    raise ProviderError(
                        f"{name} disappeared while starting (removed by someone else?)"
                    ) from None
            if container.status not in ("exited", "dead"):
                return None
            state = container.attrs.get("State") or {}
            code = state.get("ExitCode") if isinstance(state.get("ExitCode"), int) else None
            how = f"exited with code {code}" if code is not None else "exited"
            if state.get("OOMKilled"):
                how += " (killed for running out of memory: raise mem_limit)"
            if state.get("Error"):
                how += f" ({state['Error']})"
            return how, code

        def port() -> int | None:
            self.host_port = self._published_port(container)
            return self.host_port

        try:
            with translate_docker(f"starting container {container.short_id}"):
                container.start()
            host = _published_host(self._host, client)
            self._base_url = self._wait_healthy(
                name,
                started,
                host,
                exited,
                port,
                self.logs,
                lambda: f"is still {container.status}",
                "log",
                f"; the server must listen on 0.0.0.0:{self._port} inside the container",
            )
        except BaseException:
            self._remove_quietly()
            raise
        self.ready_after_s = time.monotonic() - started
        return self._base_url

    def _remove_quietly(self) -> None:
        """Remove a container that failed to start; the start error is what matters."""
        container, self._container = self._container, None
        self._base_url = None
        exit_stop.unregister(self)
        if container is not None:
            with contextlib.suppress(Exception):
                container.remove(force=True, v=True)

    def stop(self) -> None:
        """Stop the container (SIGKILL after ``stop_timeout_s``) and remove it; idempotent.

        ProviderError when the engine cannot: ``envgen containers prune`` removes it later.
        """
        import docker.errors

        with self._lock:
            container: Any = self._container  # only a real container can fail to stop
            self._container = self._base_url = self.host_port = None
            exit_stop.unregister(self)
            try:
                if container is not None:
                    with translate_docker(f"stopping container {container.short_id}"):
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
