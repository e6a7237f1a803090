"""The `envgen` command line.

Exit codes: 0 success; 1 `check` found generated/ out of date; 2 bad input or usage (the
message names the file and JSON pointer, or the argument); 3 generation failed inside envgen.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from generator import __version__
from generator.check_formats import CHECK_FORMATS
from generator.cli_options import (
    Verbosity,
    check_class_prefix,
    check_semver,
    detail,
    say,
    verbosity,
    verbosity_options,
)
from generator.errors import EnvgenError, GenerationError, InputError
from generator.loader import Layout

if TYPE_CHECKING:
    from generator.adopt import AdoptReport

EXIT_CHECK_FAILED = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3


class _LazyGroup(click.Group):
    """A group whose bigger commands are imported only when one of them is asked for.

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


LAZY_COMMANDS = {
    "containers": "generator.containers_cli:containers",
    "diff": "generator.diff.command:diff",
    "image": "generator.image.command:image_command",
    "verify": "generator.verify.command:verify_command",
}


class _Context:
    def __init__(self, layout: Layout) -> None:
        self.layout = layout


def _fail(exc: EnvgenError) -> None:
    from generator.output import InputErrors

    errors = exc.errors if isinstance(exc, InputErrors) else [exc]
    for error in errors:
        click.secho(f"error: {error}", fg="red", err=True)
    code = EXIT_INTERNAL if isinstance(exc, GenerationError) else EXIT_INPUT
    sys.exit(code)


@click.group(
    cls=_LazyGroup, lazy=LAZY_COMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
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
    ctx.obj = _Context(Layout.at(root, schemas_dir, generated_dir))


_NO_CACHE = click.option(
    "--no-cache",
    is_flag=True,
    help="Render every env even when the cache proves its output current.",
)


@main.command()
@click.argument("envs", nargs=-1)
@_NO_CACHE
@verbosity_options
@click.pass_obj
def generate(obj: _Context, envs: tuple[str, ...], no_cache: bool) -> None:
    """Generate clients for ENVS (default: every env under schemas/).

    Nothing is written unless every env renders; each env's folder is replaced atomically.
    Envs whose schemas, templates and envgen version are unchanged since they were last
    rendered, and whose output is untouched, are skipped (see --no-cache). Envs render in
    parallel, one process per core ($ENVGEN_JOBS caps it; 1 renders in this process).
    Prints one line per env (none with --quiet); --verbose also lists each file written.
    """
    from generator.output import build, write

    try:
        result = build(obj.layout, list(envs) or None, use_cache=not no_cache)
        changed = write(obj.layout, result)
    except EnvgenError as exc:
        _fail(exc)
        return
    for name in result.names:
        state = "written" if name in changed else "unchanged"
        say(f"{name}: {state} ({obj.layout.display(obj.layout.generated / name)})")
        if name in changed:
            for rel in sorted(result.env_files(name)):
                detail(f"  {obj.layout.display(obj.layout.generated / name / rel)}")
    for name in changed:
        if name.endswith("(removed)"):
            say(f"{name.removesuffix(' (removed)')}: removed (its schemas are gone)")


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _repo_prefix(root: Path) -> str:
    """Where the project sits in its git repository ("" at the top, or outside git)."""
    from generator.diff.gitrev import toplevel
    from generator.errors import InputError as GitProblem

    try:
        top = toplevel(root)
    except GitProblem:
        return ""
    rel = Path(os.path.relpath(root, top)).as_posix()
    return "" if rel == "." else rel + "/"


@main.command(name="check")
@click.argument("envs", nargs=-1)
@_NO_CACHE
@click.option(
    "--format",
    "fmt",
    type=click.Choice(CHECK_FORMATS),
    default="text",
    show_default=True,
    help="text: diffs for people; json: one document; github: GitHub Actions ::error "
    "annotations, one per differing, missing or stale file.",
)
@verbosity_options
@click.pass_obj
def check_cmd(obj: _Context, envs: tuple[str, ...], no_cache: bool, fmt: str) -> None:
    """Exit 1 unless generated/ is exactly what `generate` would write.

    Prints a unified diff for each differing file, then the missing and stale files (with
    --quiet, only the file names). Envs the cache proves byte-identical to a fresh render
    are not rendered again (see --no-cache); --verbose names each env checked.
    """
    from generator.check_formats import render_github, render_json
    from generator.output import build, check

    try:
        result = build(obj.layout, list(envs) or None, use_cache=not no_cache)
    except EnvgenError as exc:
        _fail(exc)
        return
    report = check(obj.layout, result)
    if fmt == "json":
        click.echo(render_json(report, result.names), nl=False)
    elif fmt == "github":
        click.echo(render_github(report, _repo_prefix(obj.layout.root)), nl=False)
    if fmt != "text":
        if not report.ok:
            sys.exit(EXIT_CHECK_FAILED)
        return
    for name in result.names:
        detail(f"checked {name}")
    if report.ok:
        say(f"generated/ is up to date ({_plural(len(result.names), 'env')} checked)")
        return
    for path, diff in report.diffs.items():
        click.echo(f"differs: {path}")
        if verbosity() >= Verbosity.NORMAL:
            click.echo(diff, nl=not diff.endswith("\n"))
    for path in report.missing:
        click.echo(f"missing: {path}")
    for path in report.stale:
        click.echo(f"stale: {path}")
    click.secho(
        f"generated/ is out of date: {len(report.diffs)} differ, {len(report.missing)} missing, "
        f"{len(report.stale)} stale. Run `envgen generate` and commit the result.",
        fg="red",
        err=True,
    )
    sys.exit(EXIT_CHECK_FAILED)


_CLASS_PREFIX = click.option(
    "--class-prefix",
    callback=check_class_prefix,
    metavar="PREFIX",
    help="Start of the generated class names (PREFIXAction, PREFIXEnv, ...): letters and "
    "digits, upper-case first. Default: derived from the env name (echo_env -> Echo).",
)


@main.command()
@click.argument("name")
@click.option(
    "--transport",
    type=click.Choice(["websocket", "http"]),
    default="websocket",
    show_default=True,
    help="How the generated client talks to the server (env.toml `transport`).",
)
@_CLASS_PREFIX
@click.option(
    "--server-dir",
    metavar="DIR",
    help="Folder (inside the project, parts Python identifiers) for the server module. "
    "Default: servers/NAME, served as `python -m servers.NAME.server`.",
)
@verbosity_options
@click.pass_obj
def new(
    obj: _Context, name: str, transport: str, class_prefix: str | None, server_dir: str | None
) -> None:
    """Create schemas/NAME/ and a server module: an environment that runs with no edits.

    After `envgen generate NAME`, the client's from_local_process() plays episodes against
    the server module, whose env logic is a small working example to edit. Prints what was
    created and the next step (nothing with --quiet; every file with --verbose).
    """
    from generator.errors import EnvExistsError
    from generator.scaffold import ServerDirError, new_env, server_file

    try:
        target = new_env(
            obj.layout, name, transport=transport, class_prefix=class_prefix, server_dir=server_dir
        )
    except EnvExistsError as exc:
        _fail(exc)
        return
    except ServerDirError as exc:
        raise click.BadParameter(str(exc), param_hint="--server-dir") from None
    except EnvgenError as exc:
        raise click.BadParameter(str(exc), param_hint="NAME") from None
    module = server_file(obj.layout, name, server_dir)
    say(f"created {obj.layout.display(target)}/ and {obj.layout.display(module)}")
    for path in sorted(target.iterdir()):
        detail(f"  {obj.layout.display(path)}")
    detail(f"  {obj.layout.display(module)}")
    say(
        f"next: run `envgen generate {name}`; then edit the schemas and the env logic in "
        f"{obj.layout.display(module)}"
    )


@main.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array, one object per folder.")
@verbosity_options
@click.pass_obj
def list_cmd(obj: _Context, as_json: bool) -> None:
    """List the environments under schemas/, marking folders that are not valid envs.

    One name a line; a folder that is not a valid env is shown as `NAME  (not an env:
    REASON)`. --quiet prints only the valid names; --verbose adds each env's version,
    transport and class prefix. --json gives every folder with `valid` and, when false,
    `reason`. Folders starting with `_` or `.` hold shared schemas and are not listed.
    """
    from generator.listing import list_envs

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


def _report_adopted(obj: _Context, report: AdoptReport) -> None:
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
    from generator.pull import BadURLError, server_url

    try:
        return server_url(value)
    except BadURLError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


@main.command()
@click.argument("url", callback=_url_argument)
@click.option("--name", help="Env name (default: the server's name in snake case).")
@_CLASS_PREFIX
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
    obj: _Context,
    url: str,
    name: str | None,
    class_prefix: str | None,
    version: str | None,
    force: bool,
) -> None:
    """Write schemas/NAME/ from a running OpenEnv server and generate its client.

    URL is the server's base address, http:// or https:// (a bare HOST:PORT means
    http://HOST:PORT). Reads GET URL/schema and GET URL/metadata; a "reset" entry in
    /schema (envgen_runtime.server publishes one) becomes reset.schema.json. Nothing is
    written unless both replies are usable and the schemas generate. --verbose also names the URLs
    read and the files written; --quiet prints only warnings.
    """
    from generator.adopt import adopt
    from generator.env_folder import EnvFiles
    from generator.pull import pull as pull_schemas

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
        _fail(exc)
        return
    _report_adopted(obj, report)


@main.command(name="import")
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
@_CLASS_PREFIX
@click.option("--force", is_flag=True, help="Replace an existing env and show what changed.")
@verbosity_options
@click.pass_obj
def import_cmd(
    obj: _Context,
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
    from generator.adopt import adopt
    from generator.env_folder import EnvFiles
    from generator.importer import schemas_from_models

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
        _fail(exc)
        return
    _report_adopted(obj, report)


__all__ = ["InputError", "main"]
