"""Options shared by envgen's commands: output verbosity and checked naming/version values.

Verbosity (``generator.verbosity``) is set for every command by ``-q``/``--quiet`` and
``-v``/``--verbose``, on the group or the command (``envgen -q CMD`` or ``envgen CMD -q``);
``--quiet`` also drops progress and "next:" lines. Errors always print, on standard error.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any, TypeVar

import click

from generator.schema.manifest import CLASS_PREFIX_RE, SEMVER_RE
from generator.verbosity import Verbosity

_KEY = "envgen.verbosity"
F = TypeVar("F", bound=Callable[..., Any])


def _set(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value:
        return
    wanted = Verbosity.QUIET if param.name == "quiet" else Verbosity.VERBOSE
    chosen = ctx.meta.get(_KEY)
    if chosen is not None and chosen != wanted:
        raise click.UsageError("--quiet and --verbose cannot be used together", ctx=ctx)
    ctx.meta[_KEY] = wanted


def verbosity_options(func: F) -> F:
    """Add -q/--quiet and -v/--verbose to a command (or the group)."""
    quiet = click.option(
        "-q",
        "--quiet",
        "quiet",
        is_flag=True,
        expose_value=False,
        callback=_set,
        help="Print only the result; errors still print.",
    )
    verbose = click.option(
        "-v",
        "--verbose",
        "verbose",
        is_flag=True,
        expose_value=False,
        callback=_set,
        help="Also print the detail behind each line.",
    )
    return quiet(verbose(func))


def verbosity() -> Verbosity:
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return Verbosity.NORMAL
    value = ctx.meta.get(_KEY)
    return value if isinstance(value, Verbosity) else Verbosity.NORMAL


def say(message: str) -> None:
    """A status line: shown unless --quiet."""
    if verbosity() >= Verbosity.NORMAL:
        click.echo(message)


def detail(message: str) -> None:
    """A detail line: shown only with --verbose."""
    if verbosity() >= Verbosity.VERBOSE:
        click.echo(message)


def class_prefix_problem(prefix: str) -> str | None:
    """Why `prefix` cannot start envgen's class names (Action, Observation, ...), or None."""
    if not CLASS_PREFIX_RE.match(prefix):
        return "must be letters and digits starting with an upper-case letter, e.g. MyGame"
    if keyword.iskeyword(prefix):
        return "must not be a Python keyword"
    return None


def check_class_prefix(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Click callback: a bad --class-prefix is a usage error naming the option (exit 2)."""
    if value is None:
        return None
    problem = class_prefix_problem(value)
    if problem:
        raise click.BadParameter(f"{value!r} {problem}", ctx=ctx, param=param)
    return value


def check_semver(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Click callback: a --version that is not semantic (1.2.3) is a usage error (exit 2)."""
    if value is None:
        return None
    if not SEMVER_RE.match(value):
        raise click.BadParameter(
            f"{value!r} is not a semantic version (MAJOR.MINOR.PATCH, e.g. 0.1.0)",
            ctx=ctx,
            param=param,
        )
    return value


NO_CACHE = click.option(
    "--no-cache",
    is_flag=True,
    help="Render every env even when the cache proves its output current.",
)
"""`generate` and `check`: skip the generation cache."""

CLASS_PREFIX = click.option(
    "--class-prefix",
    callback=check_class_prefix,
    metavar="PREFIX",
    help="Start of the generated class names (PREFIXAction, PREFIXEnv, ...): letters and "
    "digits, upper-case first. Default: derived from the env name (echo_env -> Echo).",
)
"""`new`, `pull` and `import`: the generated classes' name prefix."""
