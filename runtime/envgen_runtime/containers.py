"""The containers envgen started: list them, tell whose owner is gone, remove them.

The API behind ``envgen containers list`` and ``prune``, for any tool that cleans up after
killed trainers: every container a ``LocalDockerProvider`` starts carries the ``LABEL_*``
labels, and ``ContainerRecord.owner`` says whether the process that started it still runs
(knowable on its own host only). Needs the ``docker`` extra. Example::

    from envgen_runtime.containers import docker_client, list_containers, remove_container

    client = docker_client()
    for record in list_containers(client):
        if record.owner == "gone":
            remove_container(client, record.id)
    client.close()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from .providers.docker import (
    LABEL_ENV,
    LABEL_HOST,
    LABEL_PID,
    LABEL_PID_START,
    LABEL_SESSION,
    SESSION_ID,
    docker_client,
    proc_stat_fields,
    process_start_time,
    remove_container,
    translate_docker,
)
from .providers.orphan_guard import pid_alive

__all__ = [
    "LABEL_ENV",
    "LABEL_HOST",
    "LABEL_PID",
    "LABEL_PID_START",
    "LABEL_SESSION",
    "SESSION_ID",
    "ContainerRecord",
    "OwnerState",
    "docker_client",
    "list_containers",
    "owner_state",
    "remove_container",
]

OwnerState = Literal["running", "gone", "other host", "unknown"]


def owner_state(labels: Mapping[str, str]) -> OwnerState:
    """Whether the process that started a container still runs (only knowable on its host)."""
    import socket

    if labels.get(LABEL_HOST) != socket.gethostname():
        return "other host"
    try:
        pid = int(labels.get(LABEL_PID, ""))
    except ValueError:
        return "unknown"
    if pid <= 0:
        return "unknown"
    if not pid_alive(pid):
        return "gone"
    started, current = labels.get(LABEL_PID_START), process_start_time(pid)
    if started is not None and current is not None and started != current:
        return "gone"  # the pid was reused by a newer process
    zombie = proc_stat_fields(pid)[:1] == ["Z"]  # exited, not yet reaped
    return "gone" if zombie else "running"


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
    with translate_docker("listing envgen containers"):
        containers = engine.containers.list(all=True, filters={"label": label}, ignore_removed=True)
    records = [
        ContainerRecord(  # from the inspect data: list(sparse=False) reloads each container
            id=str(container.id),
            name=str(container.attrs.get("Name") or "").lstrip("/"),
            image=str((container.attrs.get("Config") or {}).get("Image") or ""),
            status=str((container.attrs.get("State") or {}).get("Status") or ""),
            labels=MappingProxyType(dict(container.labels or {})),
        )
        for container in containers
    ]
    if client is None:
        engine.close()
    return records
