"""`envgen pull` and `envgen import`: an environment made elsewhere, added to the project."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import click

from generator.cli.common import Context, fail
from generator.cli.options import CLASS_PREFIX, check_semver, detail, say, verbosity_options
from generator.errors import EnvgenError

if TYPE_CHECKING:
    from generator.interop.adopt import AdoptReport


def _report_adopted(obj: Context, report: AdoptReport) -> None:
    verb = "replaced" if report.replaced else "created"
    shown = obj.layout.display(report.target)
    say(
        f"{verb} {shown}/ and generated {obj.layout.display(obj.layout.generated)}/"
        f"{report.target.name}/"
    )
    for path in sorted(report.target.iterdir()):
        detail(f"  {obj.layout.display(path)}")
    if not report.replaced:
        return
    if not report.changes:
        say("schemas unchanged")
        return
    say("\n".join(report.changes))
    _report_classified(report)


def _report_classified(report: AdoptReport) -> None:
    """Summarise the replacement as `envgen diff` classes it, loudest first."""
    from generator.diff.model import CLASS_ORDER

    if report.unclassified_reason:
        say(f"not classified: {report.unclassified_reason}")
        return
    counts: Counter[str] = Counter(change.change_class for change in report.classified)
    loudest = sorted(CLASS_ORDER, key=CLASS_ORDER.__getitem__, reverse=True)
    say("classified as envgen diff would: " + ", ".join(f"{counts[cls]} {cls}" for cls in loudest))
    for change in sorted(report.classified, key=lambda c: -CLASS_ORDER[c.change_class]):
        role = change.role or "env"
        say(f"  {change.change_class:13} {role:11} {change.rule}  {change.pointer or '/'}")
        say(f"      {change.message}")
    breaking = sum(change.is_breaking for change in report.classified)
    if breaking and report.old_version == report.new_version:
        click.secho(
            f"warning: {breaking} breaking change(s) but the version stayed "
            f"{report.new_version}; clients generated from the old schemas may break",
            fg="yellow",
            err=True,
        )


def _url_argument(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Check URL before anything runs: a malformed one is a usage error naming URL (exit 2)."""
    from generator.interop.pull import BadURLError, server_url

    try:
        return server_url(value)
    except BadURLError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


@click.command()
@click.argument("url", callback=_url_argument)
@click.option("--name", help="Env name (default: the server's name in snake case).")
@CLASS_PREFIX
@click.option(
    "--version",
    "version",
    callback=check_semver,
    metavar="SEMVER",
    help="Env version for env.toml (default: the server's /metadata version, else 0.1.0).",
)
@click.option("--force", is_flag=True, help="Replace an existing env and show what changed.")
@verbosity_options
@click.pass_obj
def pull(
    obj: Context,
    url: str,
    name: str | None,
    class_prefix: str | None,
    version: str | None,
    force: bool,
) -> None:
    """Write schemas/NAME/ from a running OpenEnv server and generate its client.

    URL is the server's base address, http:// or https:// (a bare HOST:PORT means
    http://HOST:PORT). Reads GET URL/schema and GET URL/metadata; a "reset" entry in
    /schema (envgen_runtime.server publishes one) becomes reset.schema.json. A tool env
    (its /schema action is OpenEnv's CallToolAction) also gets tools/<tool>.json per tool,
    from POST URL/mcp tools/list (else a list_tools step on POST URL/step). Nothing is
    written unless every reply is usable and the schemas generate. --verbose also names the URLs
    read and the files written; --quiet prints only warnings.
    """
    from generator.interop.adopt import adopt
    from generator.interop.pull import pull as pull_schemas
    from generator.schema.env_folder import EnvFiles

    try:
        detail(f"reading {url}/schema and {url}/metadata")
        pulled = pull_schemas(url, name)
        report = adopt(
            obj.layout,
            EnvFiles(
                name=pulled.name,
                version=version or pulled.version,
                description=pulled.description,
                transport="websocket",
                schemas=pulled.schemas,
                extra_files=pulled.extra_files,
                class_prefix=class_prefix,
            ),
            force=force,
        )
    except EnvgenError as exc:
        fail(exc)
    _report_adopted(obj, report)
    if pulled.tools:
        shown = obj.layout.display(report.target)
        say(f"a tool env: {pulled.tools} tool(s) written to {shown}/tools/")
    for note in pulled.notes:
        say(f"note: {note}")


@click.command(name="import")
@click.argument("action")
@click.argument("observation")
@click.argument("state", required=False)
@click.option("--name", required=True, help="Env name for schemas/NAME/.")
@click.option(
    "--version",
    "version",
    default="0.1.0",
    show_default=True,
    callback=check_semver,
    metavar="SEMVER",
    help="Env version for env.toml.",
)
@click.option("--description", default="", help="One line for env.toml.")
@click.option(
    "--transport", type=click.Choice(["websocket", "http"]), default="websocket", show_default=True
)
@CLASS_PREFIX
@click.option("--force", is_flag=True, help="Replace an existing env and show what changed.")
@verbosity_options
@click.pass_obj
def import_cmd(
    obj: Context,
    action: str,
    observation: str,
    state: str | None,
    name: str,
    version: str,
    description: str,
    transport: str,
    class_prefix: str | None,
    force: bool,
) -> None:
    """Write schemas/NAME/ from pydantic models given as MODULE:CLASS, and generate.

    ACTION, OBSERVATION and (optionally) STATE name pydantic v2 model classes, imported
    with the project root on sys.path. Without STATE, OpenEnv's base state is used.
    """
    from generator.interop.adopt import adopt
    from generator.interop.importer import schemas_from_models
    from generator.schema.env_folder import EnvFiles

    try:
        schemas = schemas_from_models(action, observation, state, obj.layout.root)
        report = adopt(
            obj.layout,
            EnvFiles(
                name=name,
                version=version,
                description=description,
                transport=transport,
                schemas=schemas,
                class_prefix=class_prefix,
            ),
            force=force,
        )
    except EnvgenError as exc:
        fail(exc)
    _report_adopted(obj, report)
