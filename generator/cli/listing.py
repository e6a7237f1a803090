"""`envgen list`: the environments under schemas/, and why a folder is not one."""

from __future__ import annotations

import json

import click

from generator.cli.common import Context
from generator.cli.options import verbosity, verbosity_options
from generator.verbosity import Verbosity


@click.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array, one object per folder.")
@verbosity_options
@click.pass_obj
def list_cmd(obj: Context, as_json: bool) -> None:
    """List the environments under schemas/, marking folders that are not valid envs.

    One name a line; a folder that is not a valid env is shown as `NAME  (not an env:
    REASON)`. --quiet prints only the valid names; --verbose adds each env's version,
    transport and class prefix. --json gives every folder with `valid` and, when false,
    `reason`. Folders starting with `_` or `.` hold shared schemas and are not listed.
    """
    from generator.schema.listing import list_envs

    listed = list_envs(obj.layout)
    if as_json:
        click.echo(json.dumps([item.as_json() for item in listed], indent=2))
        return
    for item in listed:
        if not item.valid:
            if verbosity() >= Verbosity.NORMAL:
                click.echo(f"{item.name}  (not an env: {item.reason})")
        elif verbosity() >= Verbosity.VERBOSE:
            click.echo(
                f"{item.name}  {item.version}  {item.transport}  {item.class_prefix}  ({item.path})"
            )
        else:
            click.echo(item.name)
