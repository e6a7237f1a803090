"""The `envgen` command line: a thin click layer over the pipeline's stages.

One module per command group (``generate`` for generate/check, ``new``, ``listing``,
``adopt`` for pull/import, ``diff``, ``verify``, ``image``, ``containers``), each loaded only
when its command runs; shared options in ``options`` and the layout, exit codes and error
exit in ``common``. The work itself lives in the stage packages, where tests call it
directly. Exit codes are in ``common``'s docstring.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import click

from generator import __version__
from generator.cli.common import Context
from generator.cli.options import verbosity_options
from generator.schema.loader import Layout


class _LazyGroup(click.Group):
    """A group whose commands are imported only when one of them is asked for.

    Every command pays the CLI's start-up; `generate` and `check` should not pay for the
    diff engine, Docker or hypothesis. `--help` still lists them all (it imports each).
    """

    def __init__(self, *args: Any, lazy: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = lazy  # command name -> "module:attribute"

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self._lazy and cmd_name not in self.commands:
            module, attribute = self._lazy[cmd_name].split(":")
            command = getattr(importlib.import_module(module), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{self._lazy[cmd_name]} is not a click command")
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)


COMMANDS = {
    "check": "generator.cli.generate:check_cmd",
    "containers": "generator.cli.containers:containers",
    "diff": "generator.cli.diff:diff",
    "generate": "generator.cli.generate:generate",
    "image": "generator.cli.image:image_command",
    "import": "generator.cli.adopt:import_cmd",
    "list": "generator.cli.listing:list_cmd",
    "new": "generator.cli.new:new",
    "pull": "generator.cli.adopt:pull",
    "verify": "generator.cli.verify:verify_command",
}


@click.group(
    cls=_LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(__version__, "-V", "--version", prog_name="envgen")
@verbosity_options
@click.option(
    "--root",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="Project folder holding schemas/ and generated/.",
)
@click.option(
    "--schemas",
    "schemas_dir",
    default="schemas",
    show_default=True,
    help="Input folder, relative to --root.",
)
@click.option(
    "--generated",
    "generated_dir",
    default="generated",
    show_default=True,
    help="Output folder, relative to --root.",
)
@click.pass_context
def main(ctx: click.Context, root: Path, schemas_dir: str, generated_dir: str) -> None:
    """Generate typed clients for RL environment servers from JSON Schemas.

    Each environment lives in schemas/<env>/ (env.toml plus action, observation and state
    schemas); its client is written to generated/<env>/ and committed.

    -q/--quiet and -v/--verbose work here and on every command: quiet prints only each
    command's result, verbose adds detail; errors always print (on standard error).
    """
    ctx.obj = Context(Layout.at(root, schemas_dir, generated_dir))


__all__ = ["main"]
