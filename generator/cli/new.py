"""`envgen new`: a new environment's schemas and server module, generating with no edits."""

from __future__ import annotations

import click

from generator.cli.common import Context, fail
from generator.cli.options import CLASS_PREFIX, detail, say, verbosity_options
from generator.errors import EnvgenError


@click.command()
@click.argument("name")
@click.option(
    "--transport",
    type=click.Choice(["websocket", "http"]),
    default="websocket",
    show_default=True,
    help="How the generated client talks to the server (env.toml `transport`).",
)
@CLASS_PREFIX
@click.option(
    "--server-dir",
    metavar="DIR",
    help="Folder (inside the project, parts Python identifiers) for the server module. "
    "Default: servers/NAME, served as `python -m servers.NAME.server`.",
)
@click.option(
    "--tools",
    is_flag=True,
    help="A tool env: OpenEnv's call-tool action, tools/echo.json and tools/add.json, and a "
    "server module whose tools are plain functions on envgen_runtime.server.ToolEnvironment "
    '(an openenv MCPEnvironment on FastMCP). Served on backend "openenv" (needs '
    "envgen-runtime[openenv]): the lean backend does not serve MCP envs yet.",
)
@verbosity_options
@click.pass_obj
def new(
    obj: Context,
    name: str,
    transport: str,
    class_prefix: str | None,
    server_dir: str | None,
    tools: bool,
) -> None:
    """Create schemas/NAME/ and a server module: an environment that runs with no edits.

    After `envgen generate NAME`, the client's from_local_process() plays episodes against
    the server module, whose env logic is a small working example to edit. Prints what was
    created and the next step (nothing with --quiet; every file with --verbose).
    """
    from generator.errors import EnvExistsError
    from generator.scaffold.env import ServerDirError, new_env, server_file

    try:
        target = new_env(
            obj.layout,
            name,
            transport=transport,
            class_prefix=class_prefix,
            server_dir=server_dir,
            tools=tools,
        )
    except EnvExistsError as exc:
        fail(exc)
    except ServerDirError as exc:
        raise click.BadParameter(str(exc), param_hint="--server-dir") from None
    except EnvgenError as exc:
        raise click.BadParameter(str(exc), param_hint="NAME") from None
    module = server_file(obj.layout, name, server_dir)
    say(f"created {obj.layout.display(target)}/ and {obj.layout.display(module)}")
    for path in sorted(p for p in target.rglob("*") if p.is_file()):
        detail(f"  {obj.layout.display(path)}")
    detail(f"  {obj.layout.display(module)}")
    say(
        f"next: run `envgen generate {name}`; then edit the schemas and the env logic in "
        f"{obj.layout.display(module)}"
    )
