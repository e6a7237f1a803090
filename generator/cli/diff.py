"""`envgen diff`: the click command.

    envgen diff --base REF [--head REF] [ENV...]      git revisions (head: the working tree)
    envgen diff --base REF --role ROLE [ENV...]       the same, only ROLE's changes
    envgen diff --role ROLE OLD.json NEW.json         two schema files for one role
    envgen diff --role tool OLD.json NEW.json         two tool files (tools/<tool>.json)

Exit codes: 0 nothing fails; 1 something fails (see --fail-on); 2 usage or input error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from generator.cli.common import fail
from generator.cli.options import verbosity, verbosity_options
from generator.diff.formats import FORMATS, render, text
from generator.diff.gate import FAIL_ON
from generator.diff.model import REPORT_ROLES, Report, ReportRole
from generator.diff.rules import RULES
from generator.diff.run import Options, diff_files, diff_revisions
from generator.errors import InputError
from generator.schema.loader import Layout

EXIT_FAILED = 1

_POLICY_FLAGS = (
    (
        "readers_ignore_unknown_fields",
        "--readers-ignore-unknown/--readers-reject-unknown",
        "Observation/state readers keep fields their schema does not name (default: yes, as "
        "generated clients do).",
    ),
    (
        "server_ignores_unknown_fields",
        "--server-ignores-unknown/--server-rejects-unknown",
        "The server accepts unknown action fields even where the schema closes the object "
        "(default: no).",
    ),
    (
        "default_satisfies_required",
        "--default-satisfies-required/--default-not-required",
        "A field with a default counts as present (default: no; generated models still "
        "require it).",
    ),
    (
        "extensible_enums",
        "--extensible-enums/--closed-enums",
        "Readers accept enum values they do not know (default: no; generated models use "
        "Literal types).",
    ),
)


def _policy_options(func: Any) -> Any:
    for key, flags, help_text in reversed(_POLICY_FLAGS):
        func = click.option(flags, key, default=None, help=help_text)(func)
    return func


@click.command(name="diff")
@click.option("--base", metavar="REF", help="Git revision to compare against.")
@click.option("--head", metavar="REF", help="Git revision to compare (default: working tree).")
@click.option(
    "--role",
    type=click.Choice(REPORT_ROLES),
    help="Compare two schema files (OLD NEW) for this role (tool: two tool files); with "
    "--base, report only this role's changes (tool: the tool files').",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Report format.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="breaking-code",
    show_default=True,
    help="Which classes fail: wire breaks only, also generated-API breaks, or nothing.",
)
@click.option(
    "--ignore",
    "ignore_files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Extra ignore file (repo-level format); may be repeated.",
)
@_policy_options
@click.option("--no-code", is_flag=True, help="Skip the generated-API (breaking-code) check.")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report to this file instead of standard output.",
)
@click.option("--rules", "list_rules", is_flag=True, help="List every rule id and exit.")
@verbosity_options
@click.argument("args", nargs=-1)
@click.pass_context
def diff(
    ctx: click.Context,
    /,
    base: str | None,
    head: str | None,
    role: str | None,
    fmt: str,
    fail_on: str,
    ignore_files: tuple[Path, ...],
    no_code: bool,
    output: Path | None,
    list_rules: bool,
    args: tuple[str, ...],
    **policy: bool | None,
) -> None:
    """Report schema changes that break existing clients, and fail CI on them.

    With --base, compares schemas/ at a git revision with --head (default: the working
    tree), for ENV... or every env; envs added or removed are reported. With --role,
    compares two files, OLD NEW; with --base too, reports only that role's changes.
    The action is written by clients and read by the server:
    a change breaks when the new schema rejects what the old accepted. Observation and
    state are written by the server: a change breaks when the new schema allows what the
    old rejected. A tool env's tools (`--role tool`) go both ways: a tool's input schema is
    judged as the action, its output schema as the observation, and a removed tool
    breaks. Each change gets a rule id, a JSON pointer, a class (breaking,
    breaking-code, safe) and, for wire breaks, a witness value. A failing change says how
    to resolve it: the version to raise to, or the ignore-file entry to add.

    With --format text, --quiet prints only the failing changes and the summary line, and
    --verbose adds each env's reader policy; the other formats are unaffected.
    """
    if list_rules:
        click.echo(_rules_table())
        return
    options = Options(
        fail_on=fail_on, overrides=dict(policy), ignore_files=ignore_files, code=not no_code
    )
    layout: Layout = getattr(ctx.obj, "layout", None) or Layout.at(Path("."))
    if role is not None and base is None:
        if head:
            raise click.UsageError("--head needs --base")
        if len(args) != 2:
            raise click.UsageError("--role needs exactly two files: OLD NEW")
        chosen = _role(role)

        def run() -> Report:
            return diff_files(chosen, Path(args[0]), Path(args[1]), options, Path.cwd())

    elif base is None:
        raise click.UsageError("give --base REF (git revisions) or --role ROLE OLD NEW (files)")
    else:
        revision = base
        if role is not None:
            options.roles = (_role(role),)

        def run() -> Report:
            return diff_revisions(layout, revision, head, list(args), options)

    try:
        report = run()
    except InputError as exc:
        fail(exc)
    level = verbosity()
    shown = text.render(report, level) if fmt == "text" else render(report, fmt)
    if output is not None:
        output.write_text(click.unstyle(shown), encoding="utf-8")
    else:
        click.echo(shown, nl=False)
    if report.failed:
        sys.exit(EXIT_FAILED)


def _role(name: str) -> ReportRole:
    for role in REPORT_ROLES:
        if role == name:
            return role
    raise click.BadParameter(name, param_hint="--role")


def _rules_table() -> str:
    width = max(len(rule) for rule in RULES)
    lines = [f"{'rule':{width}}  {'action':13}  {'observation/state':17}  policy"]
    for rule in RULES.values():
        lines.append(
            f"{rule.id:{width}}  {rule.action or '-':13}  {rule.reader or '-':17}  {rule.policy}"
        )
    return "\n".join(lines)
