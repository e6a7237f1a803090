"""`envgen generate` and `envgen check`: write generated/, or prove it is current."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from generator.cli.check_formats import CHECK_FORMATS
from generator.cli.common import EXIT_CHECK_FAILED, Context, fail, plural
from generator.cli.options import NO_CACHE, detail, say, verbosity, verbosity_options
from generator.errors import EnvgenError
from generator.verbosity import Verbosity


@click.command()
@click.argument("envs", nargs=-1)
@NO_CACHE
@verbosity_options
@click.pass_obj
def generate(obj: Context, envs: tuple[str, ...], no_cache: bool) -> None:
    """Generate clients for ENVS (default: every env under schemas/).

    Nothing is written unless every env renders; each env's folder is replaced atomically.
    Envs whose schemas, templates and envgen version are unchanged since they were last
    rendered, and whose output is untouched, are skipped (see --no-cache). Envs render in
    parallel, one process per core ($ENVGEN_JOBS caps it; 1 renders in this process).
    Prints one line per env (none with --quiet); --verbose also lists each file written.
    """
    from generator.codegen.output import build, write

    try:
        result = build(obj.layout, list(envs) or None, use_cache=not no_cache)
        changed = write(obj.layout, result)
    except EnvgenError as exc:
        fail(exc)
    for name in result.names:
        state = "written" if name in changed else "unchanged"
        say(f"{name}: {state} ({obj.layout.display(obj.layout.generated / name)})")
        if name in changed:
            for rel in sorted(result.env_files(name)):
                detail(f"  {obj.layout.display(obj.layout.generated / name / rel)}")
    for name in changed:
        if name.endswith("(removed)"):
            say(f"{name.removesuffix(' (removed)')}: removed (its schemas are gone)")


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


@click.command(name="check")
@click.argument("envs", nargs=-1)
@NO_CACHE
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
def check_cmd(obj: Context, envs: tuple[str, ...], no_cache: bool, fmt: str) -> None:
    """Exit 1 unless generated/ is exactly what `generate` would write.

    Leads with the command that fixes it, then prints a unified diff for each differing file
    and the missing and stale files (with --quiet, only the file names). Envs the cache
    proves byte-identical to a fresh render are not rendered again (see --no-cache);
    --verbose names each env checked.
    """
    from generator.cli.check_formats import render_github, render_json
    from generator.codegen.output import build, check

    try:
        result = build(obj.layout, list(envs) or None, use_cache=not no_cache)
    except EnvgenError as exc:
        fail(exc)
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
        say(f"generated/ is up to date ({plural(len(result.names), 'env')} checked)")
        return
    command = " ".join(["envgen generate", *report.envs])
    click.secho(
        f"generated/ is out of date: {len(report.diffs)} differ, {len(report.missing)} missing, "
        f"{len(report.stale)} stale. Run `{command}` and commit the result.",
        fg="red",
        err=True,
    )
    for path, diff in report.diffs.items():
        click.echo(f"differs: {path}")
        if verbosity() >= Verbosity.NORMAL:
            click.echo(diff, nl=not diff.endswith("\n"))
    for path in report.missing:
        click.echo(f"missing: {path}")
    for path in report.stale:
        click.echo(f"stale: {path}")
    sys.exit(EXIT_CHECK_FAILED)
