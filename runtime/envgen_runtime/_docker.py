"""Run an environment server in a local Docker container: the runtime's only docker SDK user.

``docker`` is imported when a provider first talks to the engine, never at module import, so
``import envgen_runtime`` stays free of it. Every container is labelled with who started
it (``envgen.env``, ``envgen.session``, ``envgen.pid``, ``envgen.host``), so that leftovers
can be found and ``envgen containers prune`` can remove those whose owner is gone. Docker
errors become ``ProviderError`` in ``_errormap.translate_docker``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal
from urllib.parse import urlsplit

from . import _exit_stop
from ._errormap import translate_docker
from ._exceptions import ProviderError
from ._extras import require
from ._provider import ProviderContext

__all__ = [
    "LABEL_ENV",
    "LABEL_HOST",
    "LABEL_PID",
    "LABEL_PID_START",
    "LABEL_SESSION",
    "SESSION_ID",
    "ContainerRecord",
    "LocalDockerProvider",
    "docker_client",
    "engine_address",
    "list_containers",
    "remove_container",
]

LABEL_ENV = "envgen.env"
LABEL_SESSION = "envgen.session"
LABEL_PID = "envgen.pid"
LABEL_HOST = "envgen.host"
LABEL_PID_START = "envgen.pid-start"
"""The owner's start time (Linux clock ticks since boot), so a reused pid is not mistaken
for the owner by ``prune``."""

SESSION_ID = uuid.uuid4().hex
"""Identifies this interpreter's containers (the ``envgen.session`` label)."""

OUTPUT_TAIL_LINES = 40
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


def process_start_time(pid: int) -> str | None:
    """The start time of ``pid`` in clock ticks since boot (Linux), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read().decode("ascii", errors="replace")
    except OSError:
        return None
    # Field 22, counted after the parenthesised command name (which may contain spaces).
    fields = data.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def owner_labels(env_name: str) -> dict[str, str]:
    """The labels that say which process, session and env a container belongs to."""
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


OwnerState = Literal["running", "gone", "other host", "unknown"]


def owner_state(labels: Mapping[str, str]) -> OwnerState:
    """Whether the process that started a container still runs (only knowable on its host)."""
    if labels.get(LABEL_HOST) != socket.gethostname():
        return "other host"
    try:
        pid = int(labels.get(LABEL_PID, ""))
    except ValueError:
        return "unknown"
    if pid <= 0:
        return "unknown"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:
        pass  # exists, owned by another user
    started = labels.get(LABEL_PID_START)
    current = process_start_time(pid)
    if started is not None and current is not None and started != current:
        return "gone"  # the pid was reused by a newer process
    if _is_zombie(pid):
        return "gone"
    return "running"


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read().decode("ascii", errors="replace")
    except OSError:
        return False
    fields = data.rsplit(")", 1)[-1].split()
    return bool(fields) and fields[0] == "Z"


@dataclass(frozen=True)
class ContainerRecord:
    """A container started by envgen, as ``envgen containers list`` shows it."""

    id: str
    name: str
    image: str
    status: str
    labels: Mapping[str, str]

    @property
    def short_id(self) -> str:
        """The first 12 hex digits, as ``docker ps`` shows them."""
        return self.id[:12]

    @property
    def env(self) -> str:
        """The env name (``envgen.env``)."""
        return self.labels.get(LABEL_ENV, "")

    @property
    def session(self) -> str:
        """The owning interpreter's session id (``envgen.session``)."""
        return self.labels.get(LABEL_SESSION, "")

    @property
    def pid(self) -> str:
        """The owning process id on its host (``envgen.pid``)."""
        return self.labels.get(LABEL_PID, "")

    @property
    def owner(self) -> OwnerState:
        """Whether the owning process still runs."""
        return owner_state(self.labels)


def list_containers(
    client: Any | None = None, *, session: str | None = None
) -> list[ContainerRecord]:
    """Every container (running or not) labelled ``envgen.session`` (or that ``session``)."""
    engine = client if client is not None else docker_client()
    label = f"{LABEL_SESSION}={session}" if session else LABEL_SESSION
    with translate_docker("listing envgen containers", engine_address()):
        containers = engine.containers.list(all=True, filters={"label": label}, ignore_removed=True)
        records = []
        for container in containers:
            attrs = container.attrs or {}
            config = attrs.get("Config") or {}
            state = attrs.get("State")
            status = state.get("Status") if isinstance(state, dict) else attrs.get("State", "")
            records.append(
                ContainerRecord(
                    id=str(container.id),
                    name=str(attrs.get("Name") or (attrs.get("Names") or [""])[0]).lstrip("/"),
                    image=str(config.get("Image") or attrs.get("Image") or ""),
                    status=str(status or ""),
                    labels=MappingProxyType(dict(container.labels or {})),
                )
            )
    if client is None:
        engine.close()
    return records


def remove_container(client: Any, container_id: str) -> bool:
    """Force-remove a container and its anonymous volumes; False when it was already gone."""
    import docker.errors

    with translate_docker(f"removing container {container_id[:12]}", engine_address()):
        try:
            client.api.remove_container(container_id, force=True, v=True)
        except docker.errors.NotFound:
            return False
    return True


def _connect_host(host: str, client: Any) -> str:
    """Where to reach a port published on ``host`` (a wildcard means the engine's host)."""
    if host not in ("", "0.0.0.0", "::"):
        return host
    base = str(getattr(getattr(client, "api", None), "base_url", "") or "")
    parts = urlsplit(base)
    if parts.scheme in ("http", "https") and parts.hostname not in (None, "localhost"):
        return parts.hostname  # a remote engine publishes ports on its own host
    return "::1" if host == "::" else "127.0.0.1"


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


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
        if not health_path.startswith("/"):
            raise ValueError(f"health_path must start with '/', got {health_path!r}")
        if startup_timeout_s <= 0:
            raise ValueError("startup_timeout_s must be positive")
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

    def __repr__(self) -> str:
        state = f"running at {self._base_url}" if self._base_url else "stopped"
        return f"LocalDockerProvider({self._image!r}, {state})"

    # ------------------------------------------------------------------ properties

    @property
    def image(self) -> str:
        """The image the container runs."""
        return self._image

    @property
    def base_url(self) -> str | None:
        """``http://host:port`` of the running server, or None."""
        return self._base_url

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
        connect = _url_host(_connect_host(self._host, client))
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
                if _probe(url):
                    return f"http://{connect}:{self._host_port}"
            now = time.monotonic()
            if now >= deadline:
                output = _container_logs(container, OUTPUT_TAIL_LINES)
                raise ProviderError(
                    f"container {container.short_id} of image {self._image!r} is still "
                    f"{status} after {self._startup_timeout_s:g} s but never answered GET "
                    f"{url} with 200 (raise startup_timeout_s if it is just slow; the server "
                    f"must listen on 0.0.0.0:{self._port} inside the container)."
                    + _output_section(output),
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
            + _output_section(output),
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


def _probe(url: str) -> bool:
    import http.client  # only needed while a server starts

    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=1.0)
    try:
        conn.request("GET", parts.path or "/")
        response = conn.getresponse()
        response.read()
        return response.status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def _container_logs(container: Any, tail: int) -> str:
    try:
        data = container.logs(stdout=True, stderr=True, tail=tail)
    except Exception:  # the logs only decorate an error: never mask it
        return ""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else str(data)
    return "\n".join(text.splitlines()[-tail:])


def _output_section(output: str) -> str:
    if not output.strip():
        return "\nIt printed nothing."
    return f"\n--- last {OUTPUT_TAIL_LINES} lines of its log ---\n{output}"
