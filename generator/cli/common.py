"""What every command shares: the project layout it runs on, exit codes, and how an error ends
the command.

Exit codes: 0 success; 1 `check` found generated/ out of date; 2 bad input or usage (the
message names the file and JSON pointer, or the argument); 3 generation failed inside envgen.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import NoReturn

import click

from generator.errors import EnvgenError, GenerationError
from generator.schema.loader import Layout

EXIT_CHECK_FAILED = 1
EXIT_INPUT = 2
EXIT_INTERNAL = 3


@dataclass(frozen=True)
class Context:
    """The group's options, handed to every command (``click.pass_obj``)."""

    layout: Layout


def fail(exc: EnvgenError) -> NoReturn:
    """Print each error of ``exc`` (every input error when there are several) and exit."""
    from generator.codegen.output import InputErrors

    errors = exc.errors if isinstance(exc, InputErrors) else [exc]
    for error in errors:
        click.secho(f"error: {error}", fg="red", err=True)
    sys.exit(EXIT_INTERNAL if isinstance(exc, GenerationError) else EXIT_INPUT)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")
