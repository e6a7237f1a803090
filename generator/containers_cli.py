"""``envgen containers``: list the Docker containers envgen started, prune the orphans.

Every container a ``LocalDockerProvider`` starts carries the labels ``envgen.session``,
``envgen.pid``, ``envgen.host`` (and ``envgen.pid-start``). Containers are normally removed
by their owner (on ``close()``, context exit or interpreter exit); one whose owner was killed
outright is left behind, and ``prune`` removes it once that process is gone. Containers of
other hosts' processes are never touched: their liveness cannot be checked from here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
from envgen_runtime import ProviderError
from envgen_runtime._docker import (
    LABEL_HOST,
    ContainerRecord,
    docker_client,
    list_containers,
    remove_container,
)

__all__ = ["containers"]


@contextmanager
def _engine() -> Iterator[Any]:
    """A docker client for the command; an unreachable engine exits 1 with the reason."""
    try:
        client = docker_client()
    except ProviderError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        yield client
    except ProviderError as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        client.close()


def _owner(record: ContainerRecord) -> str:
    state = record.owner
    if state == "other host":
        return f"host {record.labels.get(LABEL_HOST) or '?'}"
    return f"pid {record.pid or '?'} ({state})"


@click.group()
def containers() -> None:
    """List or prune the Docker containers started by envgen (labelled envgen.session)."""


@containers.command(name="list")
def list_cmd() -> None:
    """Show every envgen container with its env, status and owning process."""
    with _engine() as client:
        records = list_containers(client)
    if not records:
        click.echo("no envgen containers")
        return
    rows = [("CONTAINER", "ENV", "STATUS", "OWNER", "IMAGE")]
    rows += [(r.short_id, r.env or "-", r.status, _owner(r), r.image) for r in records]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        click.echo("  ".join([*cells, row[-1]]))


@containers.command()
@click.option("--dry-run", is_flag=True, help="Only say which containers would be removed.")
def prune(dry_run: bool) -> None:
    """Remove envgen containers whose owning process (on this host) has exited."""
    removed = 0
    kept = 0
    with _engine() as client:
        for record in list_containers(client):
            if record.owner != "gone":
                kept += 1
                continue
            what = f"{record.short_id} ({record.env or 'unknown env'}, {_owner(record)})"
            if dry_run:
                click.echo(f"would remove {what}")
                removed += 1
            elif remove_container(client, record.id):
                click.echo(f"removed {what}")
                removed += 1
    verb = "would remove" if dry_run else "removed"
    click.echo(
        f"{verb} {removed} container(s); kept {kept} whose owner is running, "
        "unknown or on another host"
    )
