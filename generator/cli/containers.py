"""``envgen containers``: list the Docker containers envgen started, prune the orphans.

Every container a ``LocalDockerProvider`` starts carries the labels ``envgen.session``,
``envgen.pid``, ``envgen.host`` (and ``envgen.pid-start``). Containers are normally removed
by their owner (on ``close()``, context exit or interpreter exit); one whose owner was killed
outright is left behind, and ``prune`` removes it once that process is gone. Containers of
other hosts' processes are never touched: their liveness cannot be checked from here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
from envgen_runtime import ProviderError
from envgen_runtime.containers import (
    LABEL_HOST,
    ContainerRecord,
    docker_client,
    list_containers,
    remove_container,
)

from generator.cli.options import detail, say, verbosity, verbosity_options
from generator.verbosity import Verbosity

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


def _as_json(record: ContainerRecord) -> dict[str, object]:
    return {
        "id": record.id,
        "name": record.name,
        "env": record.env,
        "status": record.status,
        "image": record.image,
        "owner": record.owner,
        "pid": record.pid,
        "host": record.labels.get(LABEL_HOST, ""),
        "session": record.session,
        "labels": dict(record.labels),
    }


@click.group()
@verbosity_options
def containers() -> None:
    """List or prune the Docker containers started by envgen (labelled envgen.session)."""


@containers.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array, one object each.")
@verbosity_options
def list_cmd(as_json: bool) -> None:
    """Show every envgen container with its env, status and owning process.

    --quiet prints only the container ids; --verbose adds each one's session; --json gives
    every field (id, name, env, status, image, owner, pid, host, session, labels).
    """
    with _engine() as client:
        records = list_containers(client)
    if as_json:
        click.echo(json.dumps([_as_json(r) for r in records], indent=2))
        return
    if verbosity() == Verbosity.QUIET:
        for record in records:
            click.echo(record.short_id)
        return
    if not records:
        click.echo("no envgen containers")
        return
    verbose = verbosity() == Verbosity.VERBOSE
    rows = [("CONTAINER", "ENV", "STATUS", "OWNER", *(("SESSION",) if verbose else ()), "IMAGE")]
    rows += [
        (
            r.short_id,
            r.env or "-",
            r.status,
            _owner(r),
            *((r.session or "-",) if verbose else ()),
            r.image,
        )
        for r in records
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        click.echo("  ".join([*cells, row[-1]]))


@containers.command()
@click.option("--dry-run", is_flag=True, help="Only say which containers would be removed.")
@verbosity_options
def prune(dry_run: bool) -> None:
    """Remove envgen containers whose owning process (on this host) has exited.

    Prints one line per container removed and a tally (--quiet: no tally; --verbose: also
    each container kept, and why).
    """
    removed = 0
    kept = 0
    with _engine() as client:
        for record in list_containers(client):
            if record.owner != "gone":
                kept += 1
                detail(f"kept {record.short_id} ({record.env or 'unknown env'}, {_owner(record)})")
                continue
            what = f"{record.short_id} ({record.env or 'unknown env'}, {_owner(record)})"
            if dry_run:
                click.echo(f"would remove {what}")
                removed += 1
            elif remove_container(client, record.id):
                click.echo(f"removed {what}")
                removed += 1
    verb = "would remove" if dry_run else "removed"
    say(
        f"{verb} {removed} container(s); kept {kept} whose owner is running, "
        "unknown or on another host"
    )
