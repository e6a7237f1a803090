"""`envgen verify`: the click command.

    envgen verify ENV --url URL        a server that is already running
    envgen verify ENV --local          serve it with env.toml's [server] command
    envgen verify ENV --docker         run env.toml's [docker] image

Exit codes: 0 the server conforms; 1 violations found; 2 usage or input error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from generator.cli.common import Context, fail
from generator.cli.options import verbosity_options
from generator.errors import EnvgenError
from generator.interop.pull import BadURLError, server_url
from generator.verify.formats import FORMATS, render_github, render_json, render_text

EXIT_VIOLATIONS = 1


@click.command(name="verify")
@click.argument("env")
@click.option("--url", help="Verify the server already running at this base URL.")
@click.option("--local", is_flag=True, help="Serve the env with env.toml's [server] command.")
@click.option("--docker", is_flag=True, help="Run the env's [docker] image from env.toml.")
@click.option(
    "--transport",
    type=click.Choice(["websocket", "http"]),
    help="Protocol to speak (default: env.toml's transport).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for generated data.")
@click.option(
    "--max-examples",
    type=click.IntRange(1, 100_000),
    default=50,
    show_default=True,
    help="Generated episodes per search.",
)
@click.option(
    "--max-steps",
    type=click.IntRange(1, 10_000),
    default=8,
    show_default=True,
    help="Actions per generated episode, at most.",
)
@click.option(
    "--time-budget",
    type=click.FloatRange(min=1.0),
    default=45.0,
    show_default=True,
    help="Seconds of boundary actions and fuzzing at most (drift and negative cases come on top).",
)
@click.option("--no-negative", is_flag=True, help="Skip the invalid-action cases.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report here instead of standard output.",
)
@verbosity_options
@click.pass_obj
def verify_command(
    obj: Context,
    env: str,
    url: str | None,
    local: bool,
    docker: bool,
    transport: str | None,
    seed: int,
    max_examples: int,
    max_steps: int,
    time_budget: float,
    no_negative: bool,
    fmt: str,
    output: Path | None,
) -> None:
    """Check a live server of ENV against the committed schemas.

    Compares the server's GET /schema with the committed schemas (drift); plays every
    boundary action first (the simplest action of each kind with one field, nested ones too,
    at a bound: minimum, maximum, exclusive bounds, each enum member, const, zero, booleans,
    null, min/maxLength strings, min/maxItems arrays, array items; and each reset parameter
    at its bounds), then seeded episodes of actions
    generated from the action schema, and validates every reply, state and protocol
    invariant (failures shrunk to the shortest reproduction; a boundary failure names the
    field, the bound and the value); and sends actions that break the schema, each just past
    a bound or of the wrong shape, which must be refused without harm (negative cases).
    A tool env's tools are each called first (simplest, boundary and random arguments) and
    their results held to their output schemas; a tool error is a note (tool.error).
    """
    # Imported here: hypothesis (the fuzzing) costs a fifth of a second that every other
    # envgen command would otherwise pay at start-up.
    from generator.verify.runner import VerifyOptions, verify
    from generator.verify.schemas import CommittedSchemas
    from generator.verify.target import Target

    chosen = [name for name, on in (("--url", url), ("--local", local), ("--docker", docker)) if on]
    if len(chosen) != 1:
        raise click.UsageError("give exactly one of --url URL, --local or --docker")
    layout = obj.layout
    options = VerifyOptions(
        seed=seed,
        max_examples=max_examples,
        max_steps=max_steps,
        time_budget_s=time_budget,
        transport=transport,
        negative=not no_negative,
    )
    try:
        schemas = CommittedSchemas(layout, env)
        if url is not None:
            try:
                target = Target.at_url(server_url(url))
            except BadURLError as exc:
                raise click.BadParameter(exc.message, param_hint="--url") from None
        elif local:
            target = Target.local(layout, schemas.env.manifest, transport)
        else:
            target = Target.docker(schemas.env.manifest, transport)
    except EnvgenError as exc:
        fail(exc)
    try:
        report = verify(layout, schemas, target, options)
    finally:
        target.close()
    if fmt == "json":
        text = render_json(report)
    elif fmt == "github":
        text = render_github(report, layout.root)
    else:
        text = render_text(report)
    if output is not None:
        output.write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=False)
    sys.exit(0 if report.ok else EXIT_VIOLATIONS)
